// tools/ozgemm/cmd_accuracy.cpp — `ozgemm accuracy`: the host reference's errors over slice counts
// and input ranges, beside plain FP64.
#include <iostream>

#include "cli.hpp"
#include "ozgemm/reference/ozaki2.hpp"

namespace ozgemm {
namespace cli {

namespace {
const std::vector<double> kDefaultAccuracyPhis = {-1.0, 0.5, 2.0, 4.0};
}  // namespace

int cmd_accuracy(const CliOptions& o) {
  if (o.complex) return cmd_accuracy_complex(o);
  const Sizes sz = resolve_sizes(o, kDefaultSizeHost);
  const std::vector<double> phis = o.phi.empty() ? kDefaultAccuracyPhis : o.phi;
  const bool oz2 = o.scheme == Scheme::Ozaki2;
  const std::vector<int> sweep = oz2 ? moduli_sweep(o) : slice_sweep(o);
  check_host_work(double(phis.size()) * host_work(sz, oz2 ? std::vector<int>{} : sweep, oz2 ? sweep : std::vector<int>{}, 1),
                  "this accuracy table");

  struct Row {
    double phi;
    bool plain;
    int slices;
    ref::ErrorMetrics err;
    std::string label, bound;  // FP64 mode's row
  };
  std::vector<Row> rows;
  std::vector<std::string> notes;
  std::vector<double> C;
  for (const double phi : phis) {
    const HostProblem p = make_problem(o, sz, phi);
    const ref::AccurateResult acc = ref::accurate_gemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(),
                                                       p.lda, p.B.data(), p.ldb, p.beta, p.C0.data(), p.ldc);
    if (sz.m > 0 && sz.n > 0 && sz.k > 0) {
      const HostFp64 f = run_fp64_host(p, acc, o.scheme, 1);
      rows.push_back({phi, false, f.choice.count, f.err, fp64_label(f), fp64_bound_text(f)});
    }
    if (oz2) {
      for (const int nmod : sweep) {
        C = p.C0;
        ref::ozaki2_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta,
                          C.data(), p.ldc, nmod);
        rows.push_back({phi, false, nmod, ref::compare(C.data(), p.ldc, acc), "ozaki-II " + std::to_string(nmod), ""});
      }
    } else {
      for (const int s : sweep) {
        C = p.C0;
        ref::ozaki_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta,
                         C.data(), p.ldc, s);
        rows.push_back({phi, false, s, ref::compare(C.data(), p.ldc, acc), "", ""});
      }
    }
    C = p.C0;
    ref::plain_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta,
                     C.data(), p.ldc);
    rows.push_back({phi, true, 0, ref::compare(C.data(), p.ldc, acc), "", ""});
    const std::string nf = nonfinite_note(p, rows.back().err);
    if (!nf.empty()) notes.push_back("phi=" + fmt_g(phi) + ": " + nf);
  }

  if (o.json) {
    Json j;
    j.begin_object();
    j.field("command", "accuracy").field("backend", "host-reference");
    json_problem_fields(j, sz, o);
    j.key("phi").begin_array();
    for (const double phi : phis) j.value(phi);
    j.end_array();
    j.key(oz2 ? "moduli" : "slices").begin_array();
    for (const int s : sweep) j.value(s);
    j.end_array();
    j.key("warnings").begin_array();
    for (const auto& n : notes) j.value(n);
    j.end_array();
    j.key("rows").begin_array();
    for (const Row& r : rows) {
      j.begin_object();
      j.field("phi", r.phi).field("method", r.plain                       ? "plain_fp64"
                                            : r.label.empty()               ? "ozaki"
                                            : r.label.rfind("ozaki-II", 0) == 0 ? "ozaki2"
                                                                            : "fp64_mode");
      if (!r.label.empty()) j.field("bound_text", r.bound);
      j.key("slices");
      if (r.plain)
        j.null();
      else
        j.value(r.slices);
      j.field("default", !r.plain && r.slices == kDefaultSlices);
      json_error_fields(j, r.err);
      j.end_object();
    }
    j.end_array().end_object();
    std::cout << j.str() << std::endl;
    return kExitOk;
  }

  std::cout << "accuracy of the " << (o.scheme == Scheme::Ozaki2 ? "Ozaki-II" : "Ozaki-I")
            << " emulation (host reference) against a double-double reference\n"
            << problem_line(sz, o) << "\n"
            << "inputs: (U(0,1)-0.5)*exp(phi*N(0,1)); phi < 0: N(0,1)\n\n";
  TextTable t({"phi", "slices", "normwise", "componentwise", "elementwise", "FP64 mode's bound (x u|A||B|)"});
  bool mismatch = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (i > 0 && r.phi != rows[i - 1].phi) t.add_separator();
    t.add_row({fmt_g(r.phi), r.plain ? "plain FP64 " : !r.label.empty() ? r.label : slices_cell(r.slices),
               fmt_sci(r.err.normwise), fmt_sci(r.err.componentwise), fmt_sci(r.err.elementwise), r.bound});
    mismatch = mismatch || r.err.nonfinite_mismatch != 0;
  }
  t.print(std::cout);
  std::cout << "  * default slice count (" << kDefaultSlices << ")\n"
            << "  FP64 mode's rows: each scheme's certified count, and the run of the one " << fp64_choice_device()
            << "\n  would take for this shape (its AUTO rules; native DGEMM, plain FP64 here, where neither beats it)\n";
  if (mismatch) std::cout << "  warning: some entries differ from the reference in Inf/NaN class\n";
  for (const auto& n : notes) std::cout << "  warning: " << n << "\n";
  return kExitOk;
}

}  // namespace cli
}  // namespace ozgemm
