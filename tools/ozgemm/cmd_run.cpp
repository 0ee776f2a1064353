// tools/ozgemm/cmd_run.cpp — `ozgemm run`: the GPU path when there is a GPU (gpu/cmd_bench.cpp),
// otherwise the host reference of the same algorithm.
#include <chrono>
#include <iostream>
#include <thread>

#include "cli.hpp"

#if OZGEMM_HAVE_GPU_COMMANDS
#include "ozgemm/ozgemm.hpp"  // gpu_available
#endif

namespace ozgemm {
namespace cli {

namespace {
constexpr double kDefaultRunPhi = 0.5;
}  // namespace

void check_host_work(double work, const std::string& what) {
  const double seconds = work / (kHostOpsPerSecondPerThread * std::max(1u, std::thread::hardware_concurrency()));
  if (seconds > kHostRefuseSeconds)
    throw UsageError(what + " would take about " + fmt_fixed(seconds / 60.0, 0) + " minutes on the host (limit " +
                     fmt_fixed(kHostRefuseSeconds / 60.0, 0) + "); use a smaller --m/--n/--k, fewer slices (--slices), or a GPU");
  if (seconds > kHostWarnSeconds)
    std::cerr << "ozgemm: warning: " << what << " will take about " << fmt_fixed(seconds, 0) << " s on the host"
              << std::endl;
}

int run_on_host(const CliOptions& o, const std::string& note) {
  reject_options(o, {"--variant", "--family", "--accumulator"}, "they choose GPU kernels, and this run uses the host reference");
  const bool fp64 = resolved_accuracy(o) == AccuracyOpt::Fp64;
  const Sizes sz = resolve_sizes(o, kDefaultSizeHost);
  const double phi = o.phi.empty() ? kDefaultRunPhi : o.phi[0];
  check_host_work(host_work(sz, slice_sweep(o), 1 + (o.iters > 0 ? o.iters : 1)), "this run");
  if (!o.json) std::cout << note << std::endl;

  const HostProblem p = make_problem(o, sz, phi);
  const ref::AccurateResult acc = ref::accurate_gemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda,
                                                     p.B.data(), p.ldb, p.beta, p.C0.data(), p.ldc);
  struct Row {
    bool plain;
    int slices;
    double ms;
    ref::ErrorMetrics err;
    std::string label;  // FP64 mode's row: its method name and bound
    std::string bound;
  };
  std::vector<Row> rows;
  std::vector<double> C;
  if (fp64 && sz.m > 0 && sz.n > 0 && sz.k > 0) {
    const HostFp64 f = run_fp64_host(p, acc, o.iters);
    rows.push_back({false, f.decision.slices, f.ms, f.err, fp64_label(f.decision), fp64_bound_text(f.decision)});
  }
  for (const int s : slice_sweep(o)) {
    const double ms = time_host_gemm(p, C, o.iters, [&](double* c) {
      ref::ozaki_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta, c,
                       p.ldc, s);
    });
    rows.push_back({false, s, ms, ref::compare(C.data(), p.ldc, acc), "", ""});
  }
  {
    const double ms = time_host_gemm(p, C, o.iters, [&](double* c) {
      ref::plain_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta, c,
                       p.ldc);
    });
    rows.push_back({true, 0, ms, ref::compare(C.data(), p.ldc, acc), "", ""});
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
    j.key("rows").begin_array();
    for (const Row& r : rows) {
      j.begin_object();
      j.field("method", r.plain ? "plain_fp64" : r.label.empty() ? "ozaki" : "fp64_mode");
      if (!r.label.empty()) j.field("bound_text", r.bound);
      j.key("slices");
      if (r.plain)
        j.null();
      else
        j.value(r.slices);
      j.field("default", !r.plain && r.slices == kDefaultSlices);
      j.field("time_ms", r.ms).field("gflops", gflops(r.ms));
      json_error_fields(j, r.err);
      j.end_object();
    }
    j.end_array().end_object();
    std::cout << j.str() << std::endl;
    return kExitOk;
  }

  std::cout << problem_line(sz, o) << "; inputs phi=" << fmt_g(phi) << "\n"
            << "errors against a double-double reference (ref::accurate_gemm); GFLOPS = 2mnk/time on " << threads
            << " host thread" << (threads == 1 ? "" : "s") << "\n\n";
  TextTable t({"method", "slices", "time (ms)", "GFLOPS", "normwise", "componentwise", "elementwise"});
  bool mismatch = false;
  for (const Row& r : rows) {
    t.add_row({r.plain ? "plain FP64" : r.label.empty() ? "ozaki-I" : r.label,
               r.plain || (!r.label.empty() && r.slices == 0) ? "- " : slices_cell(r.slices), fmt_fixed(r.ms, 3),
               fmt_fixed(gflops(r.ms), 3), fmt_sci(r.err.normwise), fmt_sci(r.err.componentwise),
               fmt_sci(r.err.elementwise)});
    mismatch = mismatch || r.err.nonfinite_mismatch != 0;
  }
  t.print(std::cout);
  std::cout << "  * default slice count of FIXED mode (" << kDefaultSlices << ")\n";
  if (fp64 && !rows.empty() && !rows.front().label.empty())
    std::cout << "  FP64 mode (the library's default): " << rows.front().bound
              << " (|C - AB| <= bound * u * |A||B| entrywise; native DGEMM when no count meets it; the time"
                 " includes the decision)\n";
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
  if (ozgemm::gpu_available(&why)) return run_on_gpu(o);
  reason = "no GPU available (" + why + ")";
#else
  reason = "no GPU available (this build has no CUDA: no nvcc found, or -DOZGEMM_ENABLE_CUDA=OFF)";
#endif
  const Sizes sz = resolve_sizes(o, kDefaultSizeHost);
  return run_on_host(o, "ozgemm: " + reason + "; running the same algorithm through the host reference on a " +
                            sizes_text(sz) + " problem");
}

}  // namespace cli
}  // namespace ozgemm
