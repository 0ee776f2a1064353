// tools/ozgemm/cmd_run.cpp — `ozgemm run`: the GPU path when there is a GPU (gpu/cmd_bench.cpp),
// otherwise the host reference of the same algorithm.
#include <chrono>
#include <iostream>
#include <thread>

#include "cli.hpp"
#include "ozgemm/reference/ozaki2.hpp"

#if OZGEMM_HAVE_GPU_COMMANDS
#include "ozgemm/ozgemm.hpp"  // gpu_available
#endif

namespace ozgemm {
namespace cli {

namespace {
constexpr double kDefaultRunPhi = 0.5;

const char* path_name(Fp64Path p) {
  return p == Fp64Path::Ozaki1 ? "ozaki1" : p == Fp64Path::Ozaki2 ? "ozaki2" : "native";
}
}  // namespace

int run_on_host(const CliOptions& o, const std::string& note) {
  reject_options(o, {"--variant", "--family", "--accumulator"}, "they choose GPU kernels, and this run uses the host reference");
  const bool fp64 = resolved_accuracy(o) == AccuracyOpt::Fp64;
  const Sizes sz = resolve_sizes(o, kDefaultSizeHost);
  const double phi = o.phi.empty() ? kDefaultRunPhi : o.phi[0];
  // The rows: FP64 mode's (when it runs), then Ozaki-I over the slice sweep or, with --scheme ozaki2,
  // Ozaki-II over the moduli sweep; in FP64 mode with both schemes allowed also Ozaki-II at its
  // certified count, so both schemes' certified runs sit in the table; then plain FP64.
  const bool oz2_sweep = o.scheme == Scheme::Ozaki2;
  const std::vector<int> slices = oz2_sweep ? std::vector<int>{} : slice_sweep(o);
  std::vector<int> moduli = oz2_sweep ? moduli_sweep(o) : std::vector<int>{};
  const int reps = 1 + (o.iters > 0 ? o.iters : 1);
  std::vector<int> work_moduli = moduli;
  if (fp64 && o.scheme == Scheme::Auto) work_moduli.push_back(kMaxModuli);  // the certified count, at most
  check_host_work(host_work(sz, slices, work_moduli, reps), "this run");
  if (!o.json) std::cout << note << std::endl;

  const HostProblem p = make_problem(o, sz, phi);
  const ref::AccurateResult acc = ref::accurate_gemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda,
                                                     p.B.data(), p.ldb, p.beta, p.C0.data(), p.ldc);
  struct Row {
    std::string method;  // JSON: fp64_mode, ozaki, ozaki2, plain_fp64
    std::string label;   // the table's first column
    int slices = 0, moduli = 0;  // 0: not this row's
    double ms = 0;
    ref::ErrorMetrics err;
  };
  std::vector<Row> rows;
  std::vector<double> C;
  HostFp64 f;
  const bool fp64_ran = fp64 && sz.m > 0 && sz.n > 0 && sz.k > 0;
  if (fp64_ran) {
    f = run_fp64_host(p, acc, o.scheme, o.iters);
    rows.push_back({"fp64_mode", fp64_label(f), f.choice.path == Fp64Path::Ozaki1 ? f.choice.count : 0,
                    f.choice.path == Fp64Path::Ozaki2 ? f.choice.count : 0, f.ms, f.err});
    if (o.scheme == Scheme::Auto && f.oz2.moduli > 0) moduli.push_back(f.oz2.moduli);
  }
  for (const int s : slices) {
    const double ms = time_host_gemm(p.C0, C, o.iters, [&](double* c) {
      ref::ozaki_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta, c,
                       p.ldc, s);
    });
    rows.push_back({"ozaki", "ozaki-I", s, 0, ms, ref::compare(C.data(), p.ldc, acc)});
  }
  for (const int nm : moduli) {
    const double ms = time_host_gemm(p.C0, C, o.iters, [&](double* c) {
      ref::ozaki2_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta, c,
                        p.ldc, nm);
    });
    rows.push_back({"ozaki2", oz2_sweep ? "ozaki-II" : "ozaki-II (certified)", 0, nm, ms,
                    ref::compare(C.data(), p.ldc, acc)});
  }
  {
    const double ms = time_host_gemm(p.C0, C, o.iters, [&](double* c) {
      ref::plain_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta, c,
                       p.ldc);
    });
    rows.push_back({"plain_fp64", "plain FP64", 0, 0, ms, ref::compare(C.data(), p.ldc, acc)});
  }
  const double fl = flops(sz);
  auto gflops = [&](double ms) { return ms > 0 ? fl / (ms * 1e6) : 0.0; };
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());

  if (o.json) {
    Json j;
    j.begin_object();
    j.field("command", "run").field("backend", "host-reference").field("gpu", false).field("note", note);
    json_problem_fields(j, sz, o);
    j.field("phi", phi).field("host_threads", int64_t(threads));
    j.field("nonfinite_inputs", nonfinite_inputs(p));
    if (fp64_ran) {
      // FP64 mode's decision: each scheme's certified count (0: none meets the target; null: not
      // decided, --scheme excluded it) and the choice an H100 makes between them.
      j.key("fp64_decision").begin_object();
      j.field("device_assumed", fp64_choice_device()).field("target", f.oz1_decided ? f.oz1.target : f.oz2.target);
      j.key("ozaki1_slices");
      f.oz1_decided ? j.value(f.oz1.slices) : j.null();
      j.key("ozaki1_bound");
      f.oz1_decided ? j.value(f.oz1.bound) : j.null();
      j.key("ozaki2_moduli");
      f.oz2_decided ? j.value(f.oz2.moduli) : j.null();
      j.key("ozaki2_bound");
      f.oz2_decided ? j.value(f.oz2.bound) : j.null();
      j.field("scheme", path_name(f.choice.path)).field("count", f.choice.count).field("reason", f.choice.reason);
      j.end_object();
    }
    j.key("rows").begin_array();
    for (const Row& r : rows) {
      j.begin_object();
      j.field("method", r.method);
      if (r.method == "fp64_mode") j.field("scheme", path_name(f.choice.path)).field("bound_text", fp64_bound_text(f));
      j.key("slices");
      r.slices > 0 ? j.value(r.slices) : j.null();
      j.key("moduli");
      r.moduli > 0 ? j.value(r.moduli) : j.null();
      j.field("default", r.method == "ozaki" && r.slices == kDefaultSlices);
      json_timed_row_end(j, r.ms, gflops(r.ms), r.err);
    }
    j.end_array().end_object();
    std::cout << j.str() << std::endl;
    return kExitOk;
  }

  std::cout << problem_line(sz, o) << "; inputs phi=" << fmt_g(phi) << "\n"
            << "errors against a double-double reference (ref::accurate_gemm); GFLOPS = 2mnk/time on " << threads
            << " host thread" << (threads == 1 ? "" : "s") << "\n\n";
  TextTable t({"method", "slices", "moduli", "time (ms)", "GFLOPS", "normwise", "componentwise", "elementwise"});
  bool mismatch = false;
  for (const Row& r : rows) {
    t.add_row({r.label, r.method == "ozaki" ? slices_cell(r.slices) : r.slices > 0 ? std::to_string(r.slices) + " " : "- ",
               r.moduli > 0 ? std::to_string(r.moduli) : "-", fmt_fixed(r.ms, 3), fmt_fixed(gflops(r.ms), 3),
               fmt_sci(r.err.normwise), fmt_sci(r.err.componentwise), fmt_sci(r.err.elementwise)});
    mismatch = mismatch || r.err.nonfinite_mismatch != 0;
  }
  t.print(std::cout);
  if (!slices.empty()) std::cout << "  * default slice count of FIXED mode (" << kDefaultSlices << ")\n";
  if (fp64_ran) {
    const std::string chosen = f.choice.path == Fp64Path::Native ? std::string("native DGEMM (plain FP64 here)")
                               : f.choice.path == Fp64Path::Ozaki1
                                   ? "Ozaki-I, " + std::to_string(f.choice.count) + " slices"
                                   : "Ozaki-II, " + std::to_string(f.choice.count) + " moduli";
    std::cout << "  FP64 mode (the library's default): certified counts " << fp64_bound_text(f)
              << "\n    (|C - AB| <= bound * u * |A||B| entrywise); runs " << chosen
              << (f.choice.reason.empty() ? "" : ":\n    " + f.choice.reason) << ".\n"
              << "    The choice is the one " << fp64_choice_device()
              << "\n    makes for this shape (its AUTO rules); the time includes the decisions.\n";
  }
  if (mismatch) std::cout << "  warning: some entries differ from the reference in Inf/NaN class\n";
  const std::string nf = nonfinite_note(p, rows.back().err);
  if (!nf.empty()) std::cout << "  warning: " << nf << "\n";
  return kExitOk;
}

int cmd_run(const CliOptions& o) {
  if (o.phi.size() > 1)
    throw UsageError("run takes one --phi value (got " + std::to_string(o.phi.size()) + "); accuracy takes a list");
  std::string reason;
#if OZGEMM_HAVE_GPU_COMMANDS
  std::string why;
  if (ozgemm::gpu_available(&why)) return o.complex ? run_complex_on_gpu(o, false) : run_on_gpu(o);
  reason = "no GPU available (" + why + ")";
#else
  reason = "no GPU available (this build has no CUDA: no nvcc found, or -DOZGEMM_ENABLE_CUDA=OFF)";
#endif
  const Sizes sz = resolve_sizes(o, kDefaultSizeHost);
  const std::string note = "ozgemm: " + reason + "; running the same algorithm through the host reference on a " +
                           (o.complex ? "complex " : "") + sizes_text(sz) + " problem";
  return o.complex ? run_complex_on_host(o, note) : run_on_host(o, note);
}

}  // namespace cli
}  // namespace ozgemm
