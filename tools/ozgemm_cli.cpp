// tools/ozgemm_cli.cpp — main() of `ozgemm`, the dispatcher, and the host paths of
// `run` and `accuracy` (see cli.hpp for the commands and where the GPU parts live).
#include <algorithm>
#include <chrono>
#include <exception>
#include <iostream>
#include <new>
#include <thread>

#include "cli.hpp"

#if OZGEMM_HAVE_CUDA
#include "ozgemm/ozgemm.hpp"  // gpu_available
#endif

namespace ozgemm {
namespace cli {

namespace {

constexpr double kDefaultRunPhi = 0.5;
const std::vector<double> kDefaultAccuracyPhis = {-1.0, 0.5, 2.0, 4.0};

std::vector<int> slice_sweep(const CliOptions& o) {
  std::vector<int> s;
  if (o.slices > 0) {
    s.push_back(o.slices);
  } else {
    for (int i = kSweepFirstSlices; i <= kSweepLastSlices; ++i) s.push_back(i);
  }
  return s;
}

double flops(const Sizes& s) { return 2.0 * double(s.m) * double(s.n) * double(s.k); }

// Runs `gemm` (which writes C) on a fresh copy of C0 and times it: `iters` repetitions when
// given, otherwise once, repeated (up to 5 in all) while the runs are short. Returns the
// fastest time in ms; C holds the result.
template <class Gemm>
double time_host_gemm(const HostProblem& p, std::vector<double>& C, int iters, Gemm gemm) {
  using clock = std::chrono::steady_clock;
  double best = 0.0, total = 0.0;
  for (int it = 0;; ++it) {
    C = p.C0;
    const auto t0 = clock::now();
    gemm(C.data());
    const double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    best = it == 0 ? ms : std::min(best, ms);
    total += ms;
    if (iters > 0 ? it + 1 >= iters : (it + 1 >= 5 || total >= 200.0)) break;
  }
  return best;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  return s;
}

void print_error(const std::string& msg) {
  std::cout.flush();
  std::cerr << "ozgemm: error: " << one_line(msg) << std::endl;
}

std::string problem_line(const Sizes& s, const CliOptions& o) {
  return "C = alpha*op(A)*op(B) + beta*C with m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
         " k=" + std::to_string(s.k) + ", op(A)=" + std::string(1, static_cast<char>(o.transa)) +
         " op(B)=" + std::string(1, static_cast<char>(o.transb)) + ", alpha=" + fmt_g(o.alpha) +
         " beta=" + fmt_g(o.beta) + ", seed " + std::to_string(o.seed);
}

std::string slices_cell(int s) { return std::to_string(s) + (s == kDefaultSlices ? "*" : " "); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// ozgemm run

int run_on_host(const CliOptions& o, const std::string& note) {
  const Sizes sz = resolve_sizes(o, kDefaultSizeHost);
  const double phi = o.phi.empty() ? kDefaultRunPhi : o.phi[0];
  if (!o.json) std::cout << note << std::endl;

  const HostProblem p = make_problem(o, sz, phi);
  const ref::AccurateResult acc = ref::accurate_gemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda,
                                                     p.B.data(), p.ldb, p.beta, p.C0.data(), p.ldc);
  struct Row {
    bool plain;
    int slices;
    double ms;
    ref::ErrorMetrics err;
  };
  std::vector<Row> rows;
  std::vector<double> C;
  for (const int s : slice_sweep(o)) {
    const double ms = time_host_gemm(p, C, o.iters, [&](double* c) {
      ref::ozaki_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta, c,
                       p.ldc, s);
    });
    rows.push_back({false, s, ms, ref::compare(C.data(), p.ldc, acc)});
  }
  {
    const double ms = time_host_gemm(p, C, o.iters, [&](double* c) {
      ref::plain_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta, c,
                       p.ldc);
    });
    rows.push_back({true, 0, ms, ref::compare(C.data(), p.ldc, acc)});
  }
  const double fl = flops(sz);
  auto gflops = [&](double ms) { return ms > 0 ? fl / (ms * 1e6) : 0.0; };
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());

  if (o.json) {
    Json j;
    j.begin_object();
    j.field("command", "run").field("backend", "host-reference").field("gpu", false).field("note", note);
    json_problem_fields(j, sz, o);
    j.field("phi", phi).field("variant", variant_name(o.variant)).field("host_threads", int64_t(threads));
    j.key("rows").begin_array();
    for (const Row& r : rows) {
      j.begin_object();
      j.field("method", r.plain ? "plain_fp64" : "ozaki");
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
    t.add_row({r.plain ? "plain FP64" : "ozaki-I", r.plain ? "- " : slices_cell(r.slices), fmt_fixed(r.ms, 3),
               fmt_fixed(gflops(r.ms), 3), fmt_sci(r.err.normwise), fmt_sci(r.err.componentwise),
               fmt_sci(r.err.elementwise)});
    mismatch = mismatch || r.err.nonfinite_mismatch != 0;
  }
  t.print(std::cout);
  std::cout << "  * default slice count (" << kDefaultSlices << ")\n";
  if (mismatch) std::cout << "  warning: some entries differ from the reference in Inf/NaN class\n";
  return kExitOk;
}

int cmd_run(const CliOptions& o) {
  if (o.phi.size() > 1)
    throw UsageError("run takes one --phi value (got " + std::to_string(o.phi.size()) + "); accuracy takes a list");
  std::string reason;
#if OZGEMM_HAVE_CUDA
  std::string why;
  if (ozgemm::gpu_available(&why)) {
#ifdef OZGEMM_HAVE_BENCH_CMD
    return run_on_gpu(o);
#else
    reason = "a GPU is present but the GPU path of 'run' is not built yet (tools/bench_cmd.cpp)";
#endif
  } else {
    reason = "no GPU available (" + why + ")";
  }
#else
  reason = "no GPU available (this build has no CUDA: no nvcc found, or -DOZGEMM_ENABLE_CUDA=OFF)";
#endif
  const Sizes sz = resolve_sizes(o, kDefaultSizeHost);
  return run_on_host(o, "ozgemm: " + reason + "; running the same algorithm through the host reference on a " +
                            sizes_text(sz) + " problem");
}

// ---------------------------------------------------------------------------------------------
// ozgemm accuracy

int cmd_accuracy(const CliOptions& o) {
  const Sizes sz = resolve_sizes(o, kDefaultSizeHost);
  const std::vector<double> phis = o.phi.empty() ? kDefaultAccuracyPhis : o.phi;
  const std::vector<int> sweep = slice_sweep(o);

  struct Row {
    double phi;
    bool plain;
    int slices;
    ref::ErrorMetrics err;
  };
  std::vector<Row> rows;
  std::vector<double> C;
  for (const double phi : phis) {
    const HostProblem p = make_problem(o, sz, phi);
    const ref::AccurateResult acc = ref::accurate_gemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(),
                                                       p.lda, p.B.data(), p.ldb, p.beta, p.C0.data(), p.ldc);
    for (const int s : sweep) {
      C = p.C0;
      ref::ozaki_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta,
                       C.data(), p.ldc, s);
      rows.push_back({phi, false, s, ref::compare(C.data(), p.ldc, acc)});
    }
    C = p.C0;
    ref::plain_dgemm(p.transa, p.transb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta,
                     C.data(), p.ldc);
    rows.push_back({phi, true, 0, ref::compare(C.data(), p.ldc, acc)});
  }

  if (o.json) {
    Json j;
    j.begin_object();
    j.field("command", "accuracy").field("backend", "host-reference");
    json_problem_fields(j, sz, o);
    j.key("phi").begin_array();
    for (const double phi : phis) j.value(phi);
    j.end_array();
    j.key("slices").begin_array();
    for (const int s : sweep) j.value(s);
    j.end_array();
    j.key("rows").begin_array();
    for (const Row& r : rows) {
      j.begin_object();
      j.field("phi", r.phi).field("method", r.plain ? "plain_fp64" : "ozaki");
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

  std::cout << "accuracy of the Ozaki-I emulation (host reference) against a double-double reference\n"
            << problem_line(sz, o) << "\n"
            << "inputs: (U(0,1)-0.5)*exp(phi*N(0,1)); phi < 0: N(0,1)\n\n";
  TextTable t({"phi", "slices", "normwise", "componentwise", "elementwise"});
  bool mismatch = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (i > 0 && r.phi != rows[i - 1].phi) t.add_separator();
    t.add_row({fmt_g(r.phi), r.plain ? "plain FP64 " : slices_cell(r.slices), fmt_sci(r.err.normwise),
               fmt_sci(r.err.componentwise), fmt_sci(r.err.elementwise)});
    mismatch = mismatch || r.err.nonfinite_mismatch != 0;
  }
  t.print(std::cout);
  std::cout << "  * default slice count (" << kDefaultSlices << ")\n";
  if (mismatch) std::cout << "  warning: some entries differ from the reference in Inf/NaN class\n";
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// Dispatcher

int run_cli(int argc, const char* const* argv) {
  try {
    const CliOptions o = parse_args(argc, argv);
    if (o.help || o.command == Command::Help) {
      std::cout << usage();
      return kExitOk;
    }
    switch (o.command) {
      case Command::Run: return cmd_run(o);
      case Command::Accuracy: return cmd_accuracy(o);
      case Command::Model: return cmd_model(o);
      case Command::B2b:
#if defined(OZGEMM_HAVE_BENCH_CMD)
        return cmd_b2b(o);
#else
        print_error("b2b needs a GPU build (this build has no CUDA)");
        return kExitFailure;
#endif
      case Command::Bench:
#if OZGEMM_HAVE_CUDA
#ifdef OZGEMM_HAVE_BENCH_CMD
        return cmd_bench(o);
#else
        print_error("bench is not built into this binary yet (tools/bench_cmd.cpp)");
        return kExitFailure;
#endif
#else
        print_error("bench needs a GPU build (this build has no CUDA)");
        return kExitFailure;
#endif
      case Command::Help: break;
    }
    std::cout << usage();
    return kExitOk;
  } catch (const UsageError& e) {
    print_error(e.what());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    print_error("out of memory (try smaller --m/--n/--k)");
    return kExitFailure;
  } catch (const std::exception& e) {
    print_error(e.what());
    return kExitFailure;
  } catch (...) {
    print_error("unknown failure");
    return kExitFailure;
  }
}

}  // namespace cli
}  // namespace ozgemm

int main(int argc, char** argv) { return ozgemm::cli::run_cli(argc, argv); }
