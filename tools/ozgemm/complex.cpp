// tools/ozgemm/complex.cpp — --complex: complex problems and their errors (shared by the host and
// GPU paths), and the host paths of `run --complex` and `accuracy --complex` (the complex Ozaki-II
// host reference, ref::ozaki2_complex_reference, beside plain complex FP64).
#include <cmath>
#include <iostream>
#include <thread>

#include "cli.hpp"

namespace ozgemm {
namespace cli {

namespace {
constexpr double kDefaultRunPhi = 0.5;  // as `run`
const std::vector<double> kDefaultAccuracyPhis = {-1.0, 0.5, 2.0, 4.0};  // as `accuracy`

ref::ComplexOp complex_op(Op op, bool conj) {
  return conj ? ref::ComplexOp::C : op == Op::N ? ref::ComplexOp::N : ref::ComplexOp::T;
}

// Re + i * scale * Im, entry by entry (re and im of one layout).
std::vector<zcomplex> combine(const std::vector<double>& re, const std::vector<double>& im, double scale) {
  std::vector<zcomplex> z(re.size());
  for (size_t i = 0; i < re.size(); ++i) z[i] = {re[i], scale * im[i]};
  return z;
}

std::string complex_label(int moduli) { return "ozaki-II complex (2M), " + std::to_string(moduli) + " moduli"; }
}  // namespace

char complex_op_char(ref::ComplexOp op) { return static_cast<char>(op); }

double complex_flops(const Sizes& s) { return 8.0 * double(s.m) * double(s.n) * double(s.k); }

ComplexProblem make_complex_problem(const CliOptions& o, const Sizes& s, double phi, unsigned threads) {
  ComplexProblem p;
  p.re = make_problem(o, s, phi, threads);
  p.opa = complex_op(o.transa, o.conj_a);
  p.opb = complex_op(o.transb, o.conj_b);
  p.imag_scale = o.imag_scale;
  p.alpha = {o.alpha, 0.0};
  p.beta = {o.beta, 0.0};
  const HostProblem im_layout = make_problem_layout(o, s, phi);  // zeroed, the real problem's layout
  std::vector<double> ia = im_layout.A, ib = im_layout.B, ic = im_layout.C0;
  fill_phi_blocks(ia.data(), o.transa == Op::N ? s.m : s.k, o.transa == Op::N ? s.k : s.m, p.re.lda, phi, o.seed,
                  GenMatrix::AImag, threads);
  fill_phi_blocks(ib.data(), o.transb == Op::N ? s.k : s.n, o.transb == Op::N ? s.n : s.k, p.re.ldb, phi, o.seed,
                  GenMatrix::BImag, threads);
  if (o.beta != 0.0) fill_phi_blocks(ic.data(), s.m, s.n, p.re.ldc, phi, o.seed, GenMatrix::C0Imag, threads);
  p.A = combine(p.re.A, ia, o.imag_scale);
  p.B = combine(p.re.B, ib, o.imag_scale);
  p.C0 = combine(p.re.C0, ic, o.imag_scale);
  return p;
}

std::vector<Entry> all_entries(int64_t m, int64_t n) {
  std::vector<Entry> e;
  e.reserve(static_cast<size_t>(std::max<int64_t>(0, m * n)));
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < m; ++r) e.push_back({r, c});
  return e;
}

ref::ErrorMetrics complex_errors_on(const ComplexProblem& p, const zcomplex* C, int64_t ldc,
                                    const std::vector<Entry>& entries) {
  const int64_t k = p.re.k;
  std::vector<zcomplex> arow(static_cast<size_t>(std::max<int64_t>(1, k))), bcol(arow.size());
  ref::ErrorMetrics e;
  long double err2 = 0, ref2 = 0;
  for (const Entry& en : entries) {
    // Row r of op(A) and column c of op(B) (conjugated for op C) as a 1 x 1 x k problem.
    for (int64_t l = 0; l < k; ++l) {
      arow[l] = ref::op_zelem(p.A.data(), p.re.lda, p.opa, en.row, l);
      bcol[l] = ref::op_zelem(p.B.data(), p.re.ldb, p.opb, l, en.col);
    }
    const ref::ComplexAccurateResult acc =
        ref::accurate_zgemm(ref::ComplexOp::N, ref::ComplexOp::N, 1, 1, k, arow.data(), 1, bcol.data(),
                            std::max<int64_t>(1, k));
    // Cref = alpha (AB) + beta C0 in long double from the double-double parts.
    const long double pr = (long double)acc.re_hi[0] + acc.re_lo[0], pi = (long double)acc.im_hi[0] + acc.im_lo[0];
    const zcomplex c0 = p.beta != zcomplex(0.0, 0.0) ? p.C0[en.row + en.col * p.re.ldc] : zcomplex(0.0, 0.0);
    const long double rr = p.alpha.real() * pr - p.alpha.imag() * pi + (long double)p.beta.real() * c0.real() -
                           (long double)p.beta.imag() * c0.imag();
    const long double ri = p.alpha.real() * pi + p.alpha.imag() * pr + (long double)p.beta.real() * c0.imag() +
                           (long double)p.beta.imag() * c0.real();
    const zcomplex got = C[en.row + en.col * ldc];
    const bool got_finite = std::isfinite(got.real()) && std::isfinite(got.imag());
    const bool ref_finite = std::isfinite(double(rr)) && std::isfinite(double(ri));
    if (got_finite != ref_finite) ++e.nonfinite_mismatch;
    if (!got_finite || !ref_finite) continue;
    ++e.compared;
    const long double dr = got.real() - rr, di = got.imag() - ri;
    const double err = double(std::sqrt(dr * dr + di * di));
    const double mag = double(std::sqrt(rr * rr + ri * ri));
    const double den = std::abs(p.alpha) * acc.absprod[0] + std::abs(p.beta) * std::abs(c0);
    err2 += (long double)err * err;
    ref2 += (long double)mag * mag;
    const auto ratio = [](double num, double d) { return d > 0 ? num / d : num == 0 ? 0.0 : HUGE_VAL; };
    e.componentwise = std::max(e.componentwise, ratio(err, den));
    e.elementwise = std::max(e.elementwise, ratio(err, mag));
  }
  e.normwise = ref2 > 0 ? double(std::sqrt(err2 / ref2)) : (err2 == 0 ? 0.0 : HUGE_VAL);
  return e;
}

void json_complex_fields(Json& j, const CliOptions& o) {
  j.field("complex", true).field("imag_scale", o.imag_scale).field("default_complex_moduli", kDefaultComplexModuli);
}

namespace {
// The rows of a host table: the complex Ozaki-II reference at each count of `moduli`, then plain
// complex FP64 (ref::plain_zgemm: native ZGEMM's stand-in, and what FP64 mode runs for complex data
// until its complex decision is built), each timed and measured on every entry.
struct ComplexRow {
  std::string method;  // "ozaki2_complex" or "plain_fp64"
  int moduli = 0;      // 0: plain
  double ms = 0;
  ref::ErrorMetrics err;
};
std::vector<ComplexRow> complex_rows(const ComplexProblem& p, const std::vector<int>& moduli, int iters) {
  const auto& r = p.re;
  const auto entries = all_entries(r.m, r.n);
  std::vector<ComplexRow> rows;
  std::vector<zcomplex> C;
  for (const int nm : moduli) {
    const double ms = time_host_gemm(p.C0, C, iters, [&](zcomplex* c) {
      ref::ozaki2_complex_reference(p.opa, p.opb, r.m, r.n, r.k, p.alpha, p.A.data(), r.lda, p.B.data(), r.ldb,
                                    p.beta, c, r.ldc, nm);
    });
    rows.push_back({"ozaki2_complex", nm, ms, complex_errors_on(p, C.data(), r.ldc, entries)});
  }
  const double ms = time_host_gemm(p.C0, C, iters, [&](zcomplex* c) {
    ref::plain_zgemm(p.opa, p.opb, r.m, r.n, r.k, p.alpha, p.A.data(), r.lda, p.B.data(), r.ldb, p.beta, c, r.ldc);
  });
  rows.push_back({"plain_fp64", 0, ms, complex_errors_on(p, C.data(), r.ldc, entries)});
  return rows;
}

void json_row(Json& j, const ComplexRow& r) {
  j.field("method", r.method);
  j.key("moduli");
  r.moduli > 0 ? j.value(r.moduli) : j.null();
  j.field("default", r.moduli == kDefaultComplexModuli);
}

std::string moduli_cell(int moduli) {
  return moduli == 0 ? "plain FP64 (native's stand-in)" : complex_label(moduli) + (moduli == kDefaultComplexModuli ? "*" : "");
}

// Host work of one table: per count 2 products per modulus (the 2M scheme) of 2mnk digit
// multiply-adds, plus the double-double reference (8 real products of depth k per entry) and plain FP64.
double complex_host_work(const Sizes& s, const std::vector<int>& moduli, int reps) {
  double nm = 0;
  for (int v : moduli) nm += v;
  const double mnk = double(s.m) * double(s.n) * double(s.k);
  return reps * (4.0 * mnk * nm + 8.0 * mnk) + 16.0 * 8.0 * mnk;
}
}  // namespace

int run_complex_on_host(const CliOptions& o, const std::string& note) {
  reject_options(o, {"--variant", "--family", "--accumulator"}, "they choose GPU kernels, and this run uses the host reference");
  const Sizes sz = resolve_sizes(o, kDefaultSizeHost);
  const double phi = o.phi.empty() ? kDefaultRunPhi : o.phi[0];
  const std::vector<int> moduli = moduli_sweep(o);
  const int reps = 1 + (o.iters > 0 ? o.iters : 1);
  check_host_work(complex_host_work(sz, moduli, reps), "this run");
  if (!o.json) std::cout << note << std::endl;
  const ComplexProblem p = make_complex_problem(o, sz, phi);
  const std::vector<ComplexRow> rows = complex_rows(p, moduli, o.iters);
  const double fl = complex_flops(sz);
  auto gflops = [&](double ms) { return ms > 0 ? fl / (ms * 1e6) : 0.0; };
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const std::string fp64_note =
      "FP64 mode runs native ZGEMM for complex data (its complex decision is not built; ozgemmGetLastCallInfo says so)";
  if (o.json) {
    Json j;
    j.begin_object();
    j.field("command", "run").field("backend", "host-reference").field("gpu", false).field("note", note);
    json_problem_fields(j, sz, o);
    json_complex_fields(j, o);
    j.field("phi", phi).field("host_threads", int64_t(threads)).field("fp64_mode", fp64_note);
    j.field("nonfinite_inputs", nonfinite_inputs(p.re));
    j.key("rows").begin_array();
    for (const ComplexRow& r : rows) {
      j.begin_object();
      json_row(j, r);
      json_timed_row_end(j, r.ms, gflops(r.ms), r.err);
    }
    j.end_array().end_object();
    std::cout << j.str() << std::endl;
    return kExitOk;
  }
  std::cout << "complex " << problem_line(sz, o) << "; inputs phi=" << fmt_g(phi) << " (real parts; imaginary parts "
            << fmt_g(o.imag_scale) << " x the same family)\n"
            << "errors against a double-double reference (ref::accurate_zgemm, complex moduli); GFLOPS = 8mnk/time on "
            << threads << " host thread" << (threads == 1 ? "" : "s") << "\n\n";
  TextTable t({"method", "time (ms)", "GFLOPS", "normwise", "componentwise", "elementwise"});
  for (const ComplexRow& r : rows)
    t.add_row({moduli_cell(r.moduli), fmt_fixed(r.ms, 3), fmt_fixed(gflops(r.ms), 3), fmt_sci(r.err.normwise),
               fmt_sci(r.err.componentwise), fmt_sci(r.err.elementwise)});
  t.print(std::cout);
  std::cout << "  * default moduli count of FIXED mode for complex data (" << kDefaultComplexModuli << ")\n  "
            << fp64_note << ".\n";
  if (rows.back().err.nonfinite_mismatch != 0) std::cout << "  warning: some entries differ from the reference in Inf/NaN class\n";
  return kExitOk;
}

int cmd_accuracy_complex(const CliOptions& o) {
  const Sizes sz = resolve_sizes(o, kDefaultSizeHost);
  const std::vector<double> phis = o.phi.empty() ? kDefaultAccuracyPhis : o.phi;
  const std::vector<int> moduli = moduli_sweep(o);
  check_host_work(double(phis.size()) * complex_host_work(sz, moduli, 1), "this accuracy table");
  std::vector<std::pair<double, ComplexRow>> rows;
  for (const double phi : phis)
    for (const ComplexRow& r : complex_rows(make_complex_problem(o, sz, phi), moduli, 1)) rows.push_back({phi, r});
  if (o.json) {
    Json j;
    j.begin_object();
    j.field("command", "accuracy").field("backend", "host-reference");
    json_problem_fields(j, sz, o);
    json_complex_fields(j, o);
    j.key("phi").begin_array();
    for (const double phi : phis) j.value(phi);
    j.end_array();
    j.key("moduli").begin_array();
    for (const int nm : moduli) j.value(nm);
    j.end_array();
    j.key("rows").begin_array();
    for (const auto& pr : rows) {
      j.begin_object();
      j.field("phi", pr.first);
      json_row(j, pr.second);
      json_error_fields(j, pr.second.err);
      j.end_object();
    }
    j.end_array().end_object();
    std::cout << j.str() << std::endl;
    return kExitOk;
  }
  std::cout << "accuracy of the complex Ozaki-II emulation (2M; host reference) against a double-double reference\n"
            << "complex " << problem_line(sz, o) << "\n"
            << "inputs: real parts (U(0,1)-0.5)*exp(phi*N(0,1)) (phi < 0: N(0,1)), imaginary parts "
            << fmt_g(o.imag_scale) << " x the same family\n\n";
  TextTable t({"phi", "method", "normwise", "componentwise", "elementwise"});
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i > 0 && rows[i].first != rows[i - 1].first) t.add_separator();
    const ComplexRow& r = rows[i].second;
    t.add_row({fmt_g(rows[i].first), moduli_cell(r.moduli), fmt_sci(r.err.normwise), fmt_sci(r.err.componentwise),
               fmt_sci(r.err.elementwise)});
  }
  t.print(std::cout);
  std::cout << "  * default moduli count of FIXED mode for complex data (" << kDefaultComplexModuli << ")\n";
  return kExitOk;
}

}  // namespace cli
}  // namespace ozgemm
