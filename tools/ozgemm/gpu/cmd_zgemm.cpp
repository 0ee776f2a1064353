// tools/ozgemm/gpu/cmd_zgemm.cpp — `ozgemm run --complex` and `ozgemm bench --complex` on the GPU:
// ozgemmZgemm beside native cublasZgemm on the same buffers, in one process.
//
// Method (as cmd_bench.cpp): CUDA events around each run on one stream, warm-up runs first, then
// `iters` timed runs and their median; C is reset from C0 before each run when beta != 0 (not
// timed). One buffer set (complex operands at the default size are 1 GiB each, far past L2).
// TFLOPS = 8 m n k / time. Errors of both against the double-double complex reference on sampled
// entries (complex_errors_on), after a checked run into a NaN-poisoned C.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <iostream>
#include <stdexcept>

#include "cli.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/event_timer.hpp"
#include "ozgemm/model/perf_model.hpp"
#include "ozgemm/ozgemm.hpp"

namespace ozgemm {
namespace cli {

namespace {

struct ComplexBuffer {
  cuDoubleComplex* p = nullptr;
  size_t count = 0;
  explicit ComplexBuffer(const std::vector<zcomplex>& host) : count(host.size()) {
    OZ_TOOL_CUDA(cudaMalloc(&p, std::max<size_t>(1, count) * sizeof(cuDoubleComplex)));
    OZ_TOOL_CUDA(cudaMemcpy(p, host.data(), count * sizeof(cuDoubleComplex), cudaMemcpyHostToDevice));
  }
  ~ComplexBuffer() { cudaFree(p); }
  ComplexBuffer(const ComplexBuffer&) = delete;
  ComplexBuffer& operator=(const ComplexBuffer&) = delete;
};

cublasOperation_t to_cublas_op(ref::ComplexOp op) {
  return op == ref::ComplexOp::N ? CUBLAS_OP_N : op == ref::ComplexOp::T ? CUBLAS_OP_T : CUBLAS_OP_C;
}

struct ComplexMeasured {
  double ms = 0;
  ref::ErrorMetrics err;
};

}  // namespace

int run_complex_on_gpu(const CliOptions& o, bool bench) {
  reject_options(o, {"--family", "--accumulator"}, "they choose the Ozaki-I fused kernels, which complex products do not use");
  const Sizes sz = resolve_sizes(o, kDefaultSizeGpu);
  if (sz.m > INT32_MAX || sz.n > INT32_MAX || sz.k > INT32_MAX) throw UsageError("sizes must fit in int32");
  const double phi = o.phi.empty() ? 0.5 : o.phi[0];
  const int iters = o.iters > 0 ? o.iters : bench ? 20 : 10;
  const ComplexProblem p = make_complex_problem(o, sz, phi);
  const HostProblem& r = p.re;
  ComplexBuffer A(p.A), B(p.B), C(p.C0);
  cudaStream_t stream;
  OZ_TOOL_CUDA(cudaStreamCreate(&stream));

  // FIXED mode (the complex Ozaki-II scheme at --moduli, default OZGEMM_DEFAULT_COMPLEX_MODULI) where
  // --moduli or --accuracy fixed (bench's default) asks for it; FP64 mode (native ZGEMM for now) otherwise.
  const bool fixed = o.moduli > 0 || resolved_accuracy(o) == AccuracyOpt::Fixed;
  Handle h;
  h.set_stream(stream);
  if (fixed)
    check(ozgemmSetModuli(h.get(), o.moduli > 0 ? o.moduli : kDefaultComplexModuli), "ozgemmSetModuli");
  else
    check(ozgemmSetAccuracy(h.get(), OZGEMM_ACCURACY_FP64), "ozgemmSetAccuracy");
  h.set_variant(static_cast<ozgemmVariant_t>(o.variant));
  const int m = int(sz.m), n = int(sz.n), k = int(sz.k), lda = int(r.lda), ldb = int(r.ldb), ldc = int(r.ldc);
  const cuDoubleComplex alpha = make_cuDoubleComplex(p.alpha.real(), p.alpha.imag());
  const cuDoubleComplex beta = make_cuDoubleComplex(p.beta.real(), p.beta.imag());
  const cublasOperation_t ta = to_cublas_op(p.opa), tb = to_cublas_op(p.opb);
  auto emu = [&]() { h.zgemm(ta, tb, m, n, k, alpha, A.p, lda, B.p, ldb, beta, C.p, ldc); };
  cublasHandle_t cb;
  if (cublasCreate(&cb) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
  cublasSetStream(cb, stream);
  auto native = [&]() {
    if (cublasZgemm(cb, ta, tb, m, n, k, &alpha, A.p, lda, B.p, ldb, &beta, C.p, ldc) != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error("cublasZgemm failed");
  };
  const size_t c_bytes = p.C0.size() * sizeof(cuDoubleComplex);
  auto reset_c = [&]() {
    if (p.beta != zcomplex(0.0, 0.0))
      OZ_TOOL_CUDA(cudaMemcpyAsync(C.p, p.C0.data(), c_bytes, cudaMemcpyHostToDevice, stream));
  };
  const auto sample = sample_entries(sz.m, sz.n, kErrorSamples, o.seed + 17);
  std::vector<zcomplex> got(p.C0.size());
  auto checked = [&](auto&& gemm) {
    if (p.beta != zcomplex(0.0, 0.0))
      OZ_TOOL_CUDA(cudaMemcpy(C.p, p.C0.data(), c_bytes, cudaMemcpyHostToDevice));
    else
      OZ_TOOL_CUDA(cudaMemset(C.p, 0xff, c_bytes));  // NaN pattern: beta == 0 must not read C
    gemm();
    OZ_TOOL_CUDA(cudaStreamSynchronize(stream));
    OZ_TOOL_CUDA(cudaMemcpy(got.data(), C.p, c_bytes, cudaMemcpyDeviceToHost));
    return complex_errors_on(p, got.data(), r.ldc, sample);
  };
  auto timed = [&](auto&& gemm) {
    return median(event_times(stream, 2, iters, [&](int) { reset_c(); }, [&](int) { gemm(); }));
  };
  ComplexMeasured oz, nat;
  oz.err = checked(emu);  // first: it says what runs
  ozgemmCallInfo_t info{};
  check(ozgemmGetLastCallInfo(h.get(), &info), "ozgemmGetLastCallInfo");
  oz.ms = timed(emu);
  nat.ms = timed(native);
  nat.err = checked(native);
  cublasDestroy(cb);
  h.set_stream(nullptr);
  OZ_TOOL_CUDA(cudaStreamSynchronize(stream));
  cudaStreamDestroy(stream);

  const bool emulated = info.variant != OZGEMM_VARIANT_NATIVE;
  const std::string device = gpu_description();
  const double fl = complex_flops(sz);
  auto tflops = [&](double ms) { return ms > 0 ? fl / (ms * 1e9) : 0.0; };
  // The roofline model of what ran on the datasheet device nearest this one (H100 by default).
  model::DeviceSpec spec = model::datasheet_specs()[0];
  for (const auto& s : model::datasheet_specs())
    if (device.find(s.name.substr(0, 4)) != std::string::npos) spec = s;
  const auto model_ms = [&](Variant v) {
    return model::predict_zgemm(v, sz.m, sz.n, sz.k, info.moduli > 0 ? info.moduli : kDefaultComplexModuli,
                                p.beta != zcomplex(0.0, 0.0), spec)
        .ms;
  };
  const char* title = bench ? "bench" : "run";
  if (o.json) {
    Json j;
    j.begin_object();
    j.field("command", title).field("backend", "gpu").field("gpu", true).field("device", device);
    json_provenance(j);
    json_problem_fields(j, sz, o);
    json_complex_fields(j, o);
    j.field("phi", phi).field("accuracy", fixed ? "fixed" : "fp64");
    j.field("scheme", emulated ? "ozaki2" : "native").field("moduli", emulated ? info.moduli : 0);
    j.field("variant", ozgemmGetVariantString(info.variant)).field("fell_back", info.fell_back != 0);
    j.field("decision", std::string(info.reason)).field("iters", iters);
    j.key("ozgemm").begin_object();
    j.field("ms", oz.ms).field("tflops", tflops(oz.ms));
    json_error_fields(j, oz.err);
    j.end_object();
    j.field("nonfinite_inputs", nonfinite_inputs(r));
    j.key("native_zgemm").begin_object();
    j.field("ms", nat.ms).field("tflops", tflops(nat.ms));
    json_error_fields(j, nat.err);
    j.end_object();
    j.field("speedup_vs_native", nat.ms / oz.ms);
    j.key("model").begin_object();
    j.field("spec", spec.name).field("ozgemm_ms", model_ms(emulated ? static_cast<Variant>(info.variant) : Variant::Native));
    j.field("native_ms", model_ms(Variant::Native));
    j.end_object();
    j.end_object();
    std::cout << j.str() << "\n";
    return kExitOk;
  }
  const std::string ran = emulated ? "complex Ozaki-II (2M), " + std::to_string(info.moduli) + " moduli, " +
                                         ozgemmGetVariantString(info.variant)
                                   : std::string("native ZGEMM");
  std::cout << "ozgemm " << title << " --complex on " << device << ": " << sizes_text(sz) << ", "
            << (fixed ? "FIXED" : "FP64") << " mode: " << ran << "\n"
            << "  " << info.reason << "\n"
            << "complex " << problem_line(sz, o) << "; phi=" << fmt_g(phi) << ", imaginary parts " << fmt_g(o.imag_scale)
            << " x the family\nmedian of " << iters << " runs (CUDA events, 2 warm-ups); TFLOPS = 8mnk/time; errors on "
            << sample.size() << " sampled entries against double-double (complex modulus)\n\n";
  TextTable t({"method", "time (ms)", "TFLOPS", "normwise", "componentwise", "elementwise"});
  t.add_row({"ozgemm (" + ran + ")", fmt_fixed(oz.ms, 3), fmt_fixed(tflops(oz.ms), 2), fmt_sci(oz.err.normwise),
             fmt_sci(oz.err.componentwise), fmt_sci(oz.err.elementwise)});
  t.add_row({"native cublasZgemm", fmt_fixed(nat.ms, 3), fmt_fixed(tflops(nat.ms), 2), fmt_sci(nat.err.normwise),
             fmt_sci(nat.err.componentwise), fmt_sci(nat.err.elementwise)});
  t.print(std::cout);
  std::cout << "  speedup vs native: " << fmt_fixed(nat.ms / oz.ms, 2) << "x; model (" << spec.name << "): ozgemm "
            << fmt_fixed(model_ms(emulated ? static_cast<Variant>(info.variant) : Variant::Native), 3) << " ms, native "
            << fmt_fixed(model_ms(Variant::Native), 3) << " ms\n";
  if (oz.err.nonfinite_mismatch || nat.err.nonfinite_mismatch)
    std::cout << "  warning: some entries differ from the reference in Inf/NaN class\n";
  return kExitOk;
}

}  // namespace cli
}  // namespace ozgemm
