// tools/ozgemm/gpu/cmd_bench.cpp — `ozgemm bench` and the GPU path of `ozgemm run`.
//
// Method (docs/benchmarking.md): CUDA events around each run on one stream, warm-up runs
// first (they also fill cuBLASLt's per-shape algorithm cache), then `iters` timed runs and
// their median. Inputs rotate over several buffer sets whose total exceeds 3x the L2 cache,
// so no run finds its operands in L2. Native cuBLAS DGEMM is timed the same way in the same
// process on the same buffers. TFLOPS = 2 m n k / time. Errors of both against the
// double-double reference on sampled entries.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <stdexcept>

#include "cli.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/event_timer.hpp"
#include "gpu/probes.hpp"
#include "ozgemm/model/perf_model.hpp"
#include "ozgemm/ozgemm.hpp"

namespace ozgemm {
namespace cli {

namespace {

struct DeviceBuffer {
  double* p = nullptr;
  explicit DeviceBuffer(size_t n) { OZ_TOOL_CUDA(cudaMalloc(&p, std::max<size_t>(1, n) * sizeof(double))); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Measured {
  double ms = 0;                  // median end to end
  double phase_ms[4] = {0, 0, 0, 0};  // max-reduce, slicing, products, epilogue (emulated only)
  double phase_call_ms = 0;       // the phase runs' whole calls (median): what the phases leave out
  double phase_lead_ms = 0;       // from the call's start to the first phase (host work the GPU waits for)
  bool phases = false;
  ref::ErrorMetrics err;
  int runs = 0;
};

// Buffer sets on the device: A, B, C per set; `sets` chosen so they exceed 3x L2.
struct Sets {
  std::vector<std::unique_ptr<DeviceBuffer>> A, B, C;
  int count = 0;
};

Sets make_sets(const HostProblem& p, int l2_bytes) {
  const size_t na = p.A.size(), nb = p.B.size(), nc = p.C0.size();
  const double set_bytes = double(na + nb + nc) * 8.0;
  int count = static_cast<int>(std::ceil(3.0 * l2_bytes / set_bytes));
  count = std::max(1, std::min(count, 16));
  Sets s;
  s.count = count;
  for (int i = 0; i < count; ++i) {
    s.A.emplace_back(new DeviceBuffer(na));
    s.B.emplace_back(new DeviceBuffer(nb));
    s.C.emplace_back(new DeviceBuffer(nc));
    // The same data in every set: the timed work is identical, only its addresses rotate.
    OZ_TOOL_CUDA(cudaMemcpy(s.A.back()->p, p.A.data(), na * 8, cudaMemcpyHostToDevice));
    OZ_TOOL_CUDA(cudaMemcpy(s.B.back()->p, p.B.data(), nb * 8, cudaMemcpyHostToDevice));
  }
  return s;
}

// Times `gemm(set)` (which enqueues one GEMM on `stream`): `warmup` untimed runs, then
// `iters` runs each between two events. C is reset from C0 before each run (not timed)
// when beta != 0 so every run computes the same thing.
template <class Gemm>
std::vector<double> time_runs(const HostProblem& p, Sets& sets, cudaStream_t stream, int warmup, int iters,
                              Gemm gemm) {
  return event_times(
      stream, warmup, iters,
      [&](int it) {
        if (p.beta != 0.0)
          OZ_TOOL_CUDA(cudaMemcpyAsync(sets.C[it % sets.count]->p, p.C0.data(), p.C0.size() * 8,
                                       cudaMemcpyHostToDevice, stream));
      },
      [&](int it) { gemm(it % sets.count); });
}

// The datasheet spec closest to the device's name (H200 before H100), with the probed copy rate
// and, when int8_tops > 0, the probed INT8 rate.
model::DeviceSpec spec_for(const std::string& device, double copy_gbs, double int8_tops) {
  const auto& specs = model::datasheet_specs();
  model::DeviceSpec d = specs[0];  // H100-SXM
  for (const auto& s : specs)
    if (device.find(s.name.substr(0, 4)) != std::string::npos) d = s;
  d.bandwidth_gbs = copy_gbs;
  if (int8_tops > 0) d.int8_tops = int8_tops;
  return d;
}

struct BenchResult {
  Sizes sizes;
  double copy_gbs = 0, int8_tops = 0;  // probed on this device
  model::DeviceSpec spec;                // datasheet rates, probed copy rate
  double model_ms = 0, model_native_ms = 0;
  double model_measured_ms = 0;          // the same model with the probed INT8 rate
  int slices = 0;                 // what ran (0: native)
  std::string accuracy;           // "fp64" or "fixed"
  ozgemmCallInfo_t info{};        // the checked call's ozgemmGetLastCallInfo
  std::string variant;            // what ran
  std::string requested_variant;  // what was asked for (auto, or a fused variant that fell back)
  Measured emu, native;
  std::string device;
  int sets = 0;
  int64_t nonfinite_inputs = 0;  // Inf/NaN entries of A, B, C0 (large phi overflows)
};

BenchResult measure(const CliOptions& o, const Sizes& sz, double phi, int iters, bool want_phases) {
  if (sz.m > INT32_MAX || sz.n > INT32_MAX || sz.k > INT32_MAX) throw UsageError("sizes must fit in int32");
  BenchResult r;
  r.sizes = sz;
  r.device = gpu_description();
  const HostProblem p = make_problem(o, sz, phi);
  cudaDeviceProp prop;
  int dev = 0;
  OZ_TOOL_CUDA(cudaGetDevice(&dev));
  OZ_TOOL_CUDA(cudaGetDeviceProperties(&prop, dev));
  Sets sets = make_sets(p, prop.l2CacheSize);
  r.sets = sets.count;
  cudaStream_t stream;
  OZ_TOOL_CUDA(cudaStreamCreate(&stream));

  Handle h;
  h.set_stream(stream);
  // FP64 mode chooses the scheme (--scheme: which ones it may take) and its count; FIXED mode runs
  // Ozaki-II at --moduli (default count) with --scheme ozaki2, else Ozaki-I at --slices.
  const bool fp64 = o.moduli == 0 && resolved_accuracy(o) == AccuracyOpt::Fp64;
  r.accuracy = fp64 ? "fp64" : "fixed";
  check(ozgemmSetScheme(h.get(), static_cast<ozgemmScheme_t>(o.scheme)), "ozgemmSetScheme");
  if (fp64) {
    check(ozgemmSetAccuracy(h.get(), OZGEMM_ACCURACY_FP64), "ozgemmSetAccuracy");
  } else if (o.scheme == Scheme::Ozaki2) {
    check(ozgemmSetModuli(h.get(), o.moduli > 0 ? o.moduli : kDefaultModuli), "ozgemmSetModuli");
  } else {
    h.set_slices(o.slices > 0 ? o.slices : kDefaultSlices);
  }
  h.set_variant(static_cast<ozgemmVariant_t>(o.variant));
  check(ozgemmSetKernelFamily(h.get(), static_cast<ozgemmKernelFamily_t>(o.family)), "ozgemmSetKernelFamily");
  check(ozgemmSetFusedAccumulator(h.get(), static_cast<ozgemmFusedAccumulator_t>(o.accumulator)),
        "ozgemmSetFusedAccumulator");
  const int m = int(sz.m), n = int(sz.n), k = int(sz.k);
  ozgemmVariant_t requested;
  check(ozgemmGetVariant(h.get(), &requested), "ozgemmGetVariant");
  r.requested_variant = ozgemmGetVariantString(requested);
  const int lda = int(p.lda), ldb = int(p.ldb), ldc = int(p.ldc);
  const double alpha = p.alpha, beta = p.beta;
  auto emu = [&](int set) {
    check(ozgemmDgemm(h.get(), to_cublas(p.transa), to_cublas(p.transb), m, n, k, &alpha, sets.A[set]->p, lda,
                      sets.B[set]->p, ldb, &beta, sets.C[set]->p, ldc),
          "ozgemmDgemm");
  };
  cublasHandle_t cb;
  if (cublasCreate(&cb) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
  cublasSetStream(cb, stream);
  auto native = [&](int set) {
    if (cublasDgemm(cb, to_cublas(p.transa), to_cublas(p.transb), m, n, k, &alpha, sets.A[set]->p, lda,
                    sets.B[set]->p, ldb, &beta, sets.C[set]->p, ldc) != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error("cublasDgemm failed");
  };
  const int warmup = 2;
  auto sample = sample_entries(sz.m, sz.n, kErrorSamples, o.seed + 17);
  std::vector<double> C(p.C0.size());
  auto errors_of_set0 = [&](auto&& gemm) {
    // Poison C, run once on set 0, check sampled entries.
    if (p.beta != 0.0)
      OZ_TOOL_CUDA(cudaMemcpy(sets.C[0]->p, p.C0.data(), p.C0.size() * 8, cudaMemcpyHostToDevice));
    else
      OZ_TOOL_CUDA(cudaMemset(sets.C[0]->p, 0xff, p.C0.size() * 8));  // NaN pattern
    gemm(0);
    OZ_TOOL_CUDA(cudaStreamSynchronize(stream));
    OZ_TOOL_CUDA(cudaMemcpy(C.data(), sets.C[0]->p, C.size() * 8, cudaMemcpyDeviceToHost));
    return sampled_errors(p, C.data(), p.ldc, sample);
  };

  // The checked run first: it says what runs (AUTO resolved, FP64 mode's count, any fallback).
  r.emu.err = errors_of_set0(emu);
  check(ozgemmGetLastCallInfo(h.get(), &r.info), "ozgemmGetLastCallInfo");
  const ozgemmVariant_t v = r.info.variant;
  r.variant = ozgemmGetVariantString(v);
  r.slices = r.info.slices;
  r.emu.runs = iters;
  r.emu.ms = median(time_runs(p, sets, stream, warmup, iters, emu));
  r.nonfinite_inputs = nonfinite_inputs(p);
  if (want_phases && v != OZGEMM_VARIANT_NATIVE) {
    cudaEvent_t ev[5], call[2];
    for (auto& e : ev) OZ_TOOL_CUDA(cudaEventCreate(&e));
    for (auto& e : call) OZ_TOOL_CUDA(cudaEventCreate(&e));
    set_phase_events(h, ev);
    std::vector<double> ph[4], whole, lead;
    auto elapsed = [](cudaEvent_t a, cudaEvent_t b) {
      float ms = 0;
      OZ_TOOL_CUDA(cudaEventElapsedTime(&ms, a, b));
      return double(ms);
    };
    for (int it = 0; it < iters; ++it) {
      OZ_TOOL_CUDA(cudaEventRecord(call[0], stream));
      emu(it % sets.count);
      OZ_TOOL_CUDA(cudaEventRecord(call[1], stream));
      OZ_TOOL_CUDA(cudaEventSynchronize(call[1]));
      for (int i = 0; i < 4; ++i) ph[i].push_back(elapsed(ev[i], ev[i + 1]));
      whole.push_back(elapsed(call[0], call[1]));
      lead.push_back(elapsed(call[0], ev[0]));
    }
    set_phase_events(h, nullptr);
    for (auto& e : ev) cudaEventDestroy(e);
    for (auto& e : call) cudaEventDestroy(e);
    for (int i = 0; i < 4; ++i) r.emu.phase_ms[i] = median(ph[i]);
    r.emu.phase_call_ms = median(whole);
    r.emu.phase_lead_ms = median(lead);
    r.emu.phases = true;
  }
  r.native.runs = iters;
  r.native.ms = median(time_runs(p, sets, stream, warmup, iters, native));
  r.native.err = errors_of_set0(native);
  cublasDestroy(cb);
  r.copy_gbs = probe_copy_gbs(stream);
  r.int8_tops = int8_gemm_tops(8192, stream);
  r.spec = spec_for(r.device, r.copy_gbs, 0);
  const Variant mv = static_cast<Variant>(v);
  const int model_slices = r.slices > 0 ? r.slices : kDefaultSlices;
  const bool oz2_ran = r.info.scheme == OZGEMM_SCHEME_OZAKI2 && v != OZGEMM_VARIANT_NATIVE;
  auto predict = [&](const model::DeviceSpec& spec) {
    return oz2_ran ? model::predict_ozaki2(sz.m, sz.n, sz.k, r.info.moduli, p.beta != 0.0, spec, mv)
                   : model::predict(mv, sz.m, sz.n, sz.k, model_slices, p.beta != 0.0, spec);
  };
  r.model_ms = predict(r.spec).ms;
  r.model_native_ms = model::predict(Variant::Native, sz.m, sz.n, sz.k, model_slices, p.beta != 0.0, r.spec).ms;
  r.model_measured_ms = predict(spec_for(r.device, r.copy_gbs, r.int8_tops)).ms;
  h.set_stream(nullptr);
  OZ_TOOL_CUDA(cudaStreamSynchronize(stream));
  cudaStreamDestroy(stream);
  return r;
}

double tflops(const Sizes& s, double ms) { return 2.0 * double(s.m) * double(s.n) * double(s.k) / (ms * 1e9); }

void print_result(const CliOptions& o, const BenchResult& r, const char* title) {
  const double products = r.info.scheme == OZGEMM_SCHEME_OZAKI2 ? double(r.info.moduli) : r.slices * (r.slices + 1) / 2.0;
  if (o.json) {
    Json j;
    j.begin_object();
    j.field("command", std::string(title));
    j.field("device", r.device);
    json_provenance(j);
    json_problem_fields(j, r.sizes, o);
    j.field("phi", o.phi.empty() ? 0.5 : o.phi[0]);
    j.field("slices", r.slices);
    j.field("scheme", r.info.scheme == OZGEMM_SCHEME_OZAKI2 ? "ozaki2" : "ozaki1").field("moduli", r.info.moduli);
    j.field("accuracy", r.accuracy);
    j.field("bound", r.info.bound).field("target", r.info.target).field("fell_back", r.info.fell_back != 0);
    j.field("decision", std::string(r.info.reason));
    j.field("variant", r.variant);
    j.field("requested_variant", r.requested_variant);
    j.field("family", family_name(o.family));
    j.field("accumulator", accumulator_name(o.accumulator));
    j.field("iters", r.emu.runs);
    j.field("buffer_sets", r.sets);
    j.key("ozgemm").begin_object();
    j.field("ms", r.emu.ms).field("tflops", tflops(r.sizes, r.emu.ms));
    if (r.emu.phases) {
      j.field("max_reduce_ms", r.emu.phase_ms[0]).field("slicing_ms", r.emu.phase_ms[1]);
      j.field("products_ms", r.emu.phase_ms[2]).field("epilogue_ms", r.emu.phase_ms[3]);
      j.field("phase_call_ms", r.emu.phase_call_ms).field("phase_lead_ms", r.emu.phase_lead_ms);
      j.field("products_int8_tops", 2.0 * r.sizes.m * r.sizes.n * r.sizes.k * products / (r.emu.phase_ms[2] * 1e9));
    }
    json_error_fields(j, r.emu.err);
    j.end_object();
    j.field("nonfinite_inputs", r.nonfinite_inputs);
    j.key("native_dgemm").begin_object();
    j.field("ms", r.native.ms).field("tflops", tflops(r.sizes, r.native.ms));
    json_error_fields(j, r.native.err);
    j.end_object();
    j.field("speedup_vs_native", r.native.ms / r.emu.ms);
    j.key("model").begin_object();
    j.field("spec", r.spec.name).field("int8_tops", r.spec.int8_tops).field("copy_gbs", r.copy_gbs);
    j.field("ozgemm_ms", r.model_ms).field("native_ms", r.model_native_ms);
    j.field("measured_int8_tops", r.int8_tops).field("ozgemm_ms_measured_rates", r.model_measured_ms);
    j.end_object();
    j.end_object();
    std::cout << j.str() << "\n";
    return;
  }
  // What ran: "Ozaki-II, 15 moduli", "Ozaki-I, 7 slices" or "native DGEMM".
  const bool oz2_ran = r.info.scheme == OZGEMM_SCHEME_OZAKI2 && r.info.moduli > 0;
  const std::string ran = oz2_ran        ? "Ozaki-II, " + std::to_string(r.info.moduli) + " moduli"
                          : r.slices > 0 ? "Ozaki-I, " + std::to_string(r.slices) + " slices"
                                         : std::string("native DGEMM");
  std::cout << "ozgemm " << title << " on " << r.device << ": " << sizes_text(r.sizes) << ", " << r.accuracy
            << " mode, " << ran << ", variant " << r.variant
            << (r.variant != r.requested_variant ? " (requested " + r.requested_variant + ")" : std::string())
            << ", median of " << r.emu.runs << " runs (" << r.sets
            << " rotating buffer sets)\n";
  TextTable t({"path", "time ms", "TFLOPS", "normwise", "componentwise", "elementwise"});
  t.add_row({"ozgemm (" + r.variant + (r.variant == "native" ? ")" : ", " + ran + ")"),
             fmt_fixed(r.emu.ms, 3),
             fmt_fixed(tflops(r.sizes, r.emu.ms), 2), fmt_sci(r.emu.err.normwise), fmt_sci(r.emu.err.componentwise),
             fmt_sci(r.emu.err.elementwise)});
  t.add_row({"native cuBLAS DGEMM", fmt_fixed(r.native.ms, 3), fmt_fixed(tflops(r.sizes, r.native.ms), 2),
             fmt_sci(r.native.err.normwise), fmt_sci(r.native.err.componentwise),
             fmt_sci(r.native.err.elementwise)});
  t.print(std::cout);
  std::cout << "  " << r.info.reason << "\n";
  std::cout << "  model (" << r.spec.name << " datasheet INT8 " << fmt_fixed(r.spec.int8_tops, 0)
            << " TOPS, measured copy " << fmt_fixed(r.copy_gbs, 0) << " GB/s): ozgemm " << fmt_fixed(r.model_ms, 3)
            << " ms, native " << fmt_fixed(r.model_native_ms, 3) << " ms\n";
  std::cout << "  model with this device's measured INT8 GEMM rate (" << fmt_fixed(r.int8_tops, 0)
            << " TOPS, cuBLASLt 8192^3): ozgemm " << fmt_fixed(r.model_measured_ms, 3) << " ms\n";
  std::cout << "  errors: " << r.emu.err.compared << " of " << kErrorSamples
            << " sampled entries vs double-double reference; speedup vs native " << fmt_fixed(r.native.ms / r.emu.ms, 2)
            << "x\n";
  if (r.nonfinite_inputs > 0 || r.emu.err.compared < int64_t(std::min<int64_t>(kErrorSamples, r.sizes.m * r.sizes.n)))
    std::cout << "  warning: Inf/NaN: " << r.nonfinite_inputs
              << " input entries are Inf/NaN (exp(phi * N(0,1)) overflows past phi * N > 709); the errors cover only "
                 "the finite sampled entries\n";
  if (r.emu.phases) {
    const double total = r.emu.phase_ms[0] + r.emu.phase_ms[1] + r.emu.phase_ms[2] + r.emu.phase_ms[3];
    TextTable ph({"phase", "ms", "share"});
    const char* names[4] = {"max-reduce", "slicing", "products (INT8 GEMMs)", "epilogue"};
    for (int i = 0; i < 4; ++i)
      ph.add_row({names[i], fmt_fixed(r.emu.phase_ms[i], 3), fmt_fixed(100.0 * r.emu.phase_ms[i] / total, 1) + "%"});
    ph.print(std::cout);
    std::cout << "  products phase: "
              << fmt_fixed(2.0 * r.sizes.m * r.sizes.n * r.sizes.k * products / (r.emu.phase_ms[2] * 1e9), 0)
              << " effective INT8 TOPS (" << int(products) << " products of 2mnk)\n";
  }
}

}  // namespace

int cmd_bench(const CliOptions& o) {
  std::string why;
  if (!gpu_available(&why)) {
    std::cerr << "ozgemm: error: bench needs a GPU (" << why << ")\n";
    return kExitFailure;
  }
  if (o.complex) return run_complex_on_gpu(o, true);
  const Sizes sz = resolve_sizes(o, kDefaultSizeGpu);
  const int iters = o.iters > 0 ? o.iters : 20;
  CliOptions oo = o;
  if (!o.variant_given) oo.variant = Variant::Unfused;
  const BenchResult r = measure(oo, sz, o.phi.empty() ? 0.5 : o.phi[0], iters, true);
  print_result(oo, r, "bench");
  return kExitOk;
}

int run_on_gpu(const CliOptions& o) {
  // What the library does by default: variant AUTO unless --variant asks for one.
  const Sizes sz = resolve_sizes(o, kDefaultSizeGpu);
  const int iters = o.iters > 0 ? o.iters : 5;
  const BenchResult r = measure(o, sz, o.phi.empty() ? 0.5 : o.phi[0], iters, false);
  print_result(o, r, "run");
  return kExitOk;
}

}  // namespace cli
}  // namespace ozgemm
