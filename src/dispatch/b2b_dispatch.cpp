// The dispatch layer for the back-to-back GEMM: maps a b2b::Plan to the fused kernels or to the
// unfused pair (cuBLASLt GEMMs plus the requantisation kernels); decides nothing.
#include "dispatch/b2b_dispatch.hpp"

#include "baseline/b2b_cublaslt.hpp"
#include "baseline/int8_gemm_cublaslt.hpp"
#include "kernels/b2b/launch.hpp"
#include "plan/b2b_planner.hpp"

namespace ozgemm {
namespace dispatch {

using b2b::Arguments;
using b2b::DataType;
using b2b::Plan;
using b2b::Problem;

namespace {

ozgemmStatus_t status_of(cudaError_t e) { return e == cudaSuccess ? OZGEMM_STATUS_SUCCESS : OZGEMM_STATUS_EXECUTION_FAILED; }

// The kernels' arguments for a problem that is not grouped (run_fused adds the group table).
kernels::B2bArgs kernel_args(const Problem& p, const Arguments& a) {
  kernels::B2bArgs k{};
  k.a0 = a.a0;
  k.b0 = a.b0;
  k.bias0 = a.bias0;
  k.b1 = a.b1;
  k.c1 = a.c1;
  k.d1 = a.d1;
  k.m = p.m;
  k.k0 = p.k0;
  k.n0 = p.n0;
  k.alpha0 = p.alpha0;
  k.alpha1 = p.alpha1;
  k.beta1 = p.beta1;
  k.relu0 = p.relu0;
  k.relu1 = p.relu1;
  k.stride_a0 = p.stride_a0;
  k.stride_b0 = p.stride_b0;
  k.stride_bias0 = p.stride_bias0;
  k.stride_b1 = p.stride_b1;
  k.stride_c1 = p.stride_c1;
  k.stride_d1 = p.stride_d1;
  if (p.conv.enabled()) {
    k.conv_c = p.conv.c;
    k.conv_h = p.conv.h;
    k.conv_w = p.conv.w;
    k.conv_r = p.conv.r;
  }
  return k;
}

ozgemmStatus_t run_fused(const ExecContext& ctx, const Plan& plan, const Problem& p, const Arguments& a, char* ws,
                         const int64_t* table_host) {
  kernels::B2bArgs k = kernel_args(p, a);
  int batch = p.batch;
  if (plan.groups > 0) {  // fused plans of grouped problems stage a table (b2b_api.cpp)
    // The group table, staged by the caller, goes to the workspace with the launch.
    auto* table = reinterpret_cast<int64_t*>(ws + plan.off_table);
    const size_t bytes = (3 * size_t(plan.groups) + 1) * sizeof(int64_t);
    if (cudaMemcpyAsync(table, table_host, bytes, cudaMemcpyHostToDevice, ctx.stream) != cudaSuccess)
      return OZGEMM_STATUS_EXECUTION_FAILED;
    k.m = 0;
    for (int64_t gm : p.group_m) k.m += gm;
    k.group_count = plan.groups;
    k.group_row0 = table;
    k.group_m = table + plan.groups;
    k.group_tile0 = table + 2 * plan.groups;
    batch = 1;
  }
  if (plan.grid_tiles == 0) return OZGEMM_STATUS_SUCCESS;
  const bool shared = plan.options.residency == b2b::Residency::Shared;
  return status_of(plan.family == KernelFamily::Sm90
                       ? kernels::launch_b2b_sm90(k, p.type == DataType::S8, int(p.n0), int(p.n1), plan.grid_tiles, batch,
                                                  plan.persistent_ctas, ctx.stream)
                       : kernels::launch_b2b(k, p.type == DataType::S8, int(p.n0), int(p.n1), shared, plan.grid_tiles,
                                             batch, ctx.stream));
}

// Unfused pair. Row-major X (rows x cols) is column-major X^T, so
//   D0^T (n0 x m) = B0c^T (n0 x k0) * A0c (k0 x m),   B0c = B0 as column-major k0 x n0
//   D1^T (n1 x m) = B1c^T (n1 x n0) * D0^T (n0 x m) + beta1 * C1^T
// bias0 runs along the rows of D0^T, which is what cuBLASLt's bias epilogue adds.
// int8, one problem of m rows: D0 = requant(B0 . A0 rows), D1 = requant(B1 . D0 rows, C1). The
// int32 GEMM out(j, i) = sum_l W[j][l] X[i][l] (TN, column-major n x m, ld n) is D^T's layout,
// i.e. row-major D.
// The int8 pair's GEMM 1 on D0 (m rows): D1 = requant(B1 . D0 rows, C1).
cudaError_t s8_gemm1(Int8GemmLt& lt, const Problem& p, int64_t m, const int8_t* d0, const int8_t* b1, const int8_t* c1,
                     int8_t* d1, int32_t* acc, void* scratch, cudaStream_t stream) {
  if (m == 0) return cudaSuccess;
  if (lt.run(int(p.n1), int(m), int(p.n0), b1, int(p.n0), d0, int(p.n0), acc, int(p.n1), scratch, b2b::kB2bLtScratchBytes,
             stream, /*autotune=*/false) != CUBLAS_STATUS_SUCCESS)
    return cudaErrorUnknown;
  return kernels::launch_requant_s8(acc, m, p.n1, p.alpha1, nullptr, p.beta1, c1, p.relu1, d1, stream);
}

cudaError_t s8_pair(Int8GemmLt& lt, const Problem& p, int64_t m, const int8_t* a0, const int8_t* b0,
                    const float* bias0, const int8_t* b1, const int8_t* c1, int8_t* d1, int8_t* d0, int32_t* acc,
                    void* scratch, cudaStream_t stream) {
  if (m == 0) return cudaSuccess;
  if (lt.run(int(p.n0), int(m), int(p.k0), b0, int(p.k0), a0, int(p.k0), acc, int(p.n0), scratch, b2b::kB2bLtScratchBytes,
             stream, /*autotune=*/false) != CUBLAS_STATUS_SUCCESS)
    return cudaErrorUnknown;
  cudaError_t e = kernels::launch_requant_s8(acc, m, p.n0, p.alpha0, bias0, 0.0f, nullptr, p.relu0, d0, stream);
  if (e != cudaSuccess) return e;
  return s8_gemm1(lt, p, m, d0, b1, c1, d1, acc, scratch, stream);
}

// The unfused convolution pair's conv 0: the portable fused kernel alone (implicit GEMM, the
// documented epilogue 0), D0 (m x n0) to `d0`; conv 1 is then the GEMM pair's GEMM 1.
cudaError_t conv0_alone(const ExecContext& ctx, const Plan& plan, const Problem& p, const Arguments& a, void* d0) {
  kernels::B2bArgs k = kernel_args(p, a);
  k.d0_out = d0;
  constexpr int kUnusedN1 = 64;  // the kernel stops before GEMM 1: its smallest instance
  return kernels::launch_b2b(k, p.type == DataType::S8, int(p.n0), kUnusedN1, /*shared_resident=*/false,
                             plan.grid_tiles, 1, ctx.stream);
}

cudaError_t run_unfused_s8(const ExecContext& ctx, const Plan& plan, const Problem& p, const Arguments& a, char* ws) {
  auto* d0 = reinterpret_cast<int8_t*>(ws + plan.off_d0);
  auto* acc = reinterpret_cast<int32_t*>(ws + plan.off_acc);
  void* scratch = ws + plan.off_scratch;
  const auto* A0 = static_cast<const int8_t*>(a.a0);
  const auto* B0 = static_cast<const int8_t*>(a.b0);
  const auto* B1 = static_cast<const int8_t*>(a.b1);
  const auto* C1 = static_cast<const int8_t*>(a.c1);
  auto* D1 = static_cast<int8_t*>(a.d1);
  if (p.conv.enabled()) {
    if (p.m == 0) return cudaSuccess;
    const cudaError_t e = conv0_alone(ctx, plan, p, a, d0);
    return e != cudaSuccess ? e : s8_gemm1(*ctx.lt, p, p.m, d0, B1, C1, D1, acc, scratch, ctx.stream);
  }
  if (p.group_m.empty()) {
    for (int z = 0; z < p.batch; ++z) {
      const cudaError_t e = s8_pair(*ctx.lt, p, p.m, A0 + z * p.stride_a0, B0 + z * p.stride_b0,
                                    a.bias0 ? a.bias0 + z * p.stride_bias0 : nullptr, B1 + z * p.stride_b1,
                                    C1 ? C1 + z * p.stride_c1 : nullptr, D1 + z * p.stride_d1, d0 + z * p.m * p.n0, acc,
                                    scratch, ctx.stream);
      if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
  }
  int64_t row = 0;
  for (int64_t gm : p.group_m) {
    const cudaError_t e = s8_pair(*ctx.lt, p, gm, A0 + row * p.k0, B0, a.bias0, B1, C1 ? C1 + row * p.n1 : nullptr,
                                  D1 + row * p.n1, d0 + row * p.n0, acc, scratch, ctx.stream);
    if (e != cudaSuccess) return e;
    row += gm;
  }
  return cudaSuccess;
}

cudaError_t run_unfused_f16(const ExecContext& ctx, const Plan& plan, const Problem& p, const Arguments& a, char* ws) {
  cublasLtHandle_t lt = ctx.lt->handle();
  auto* d0 = reinterpret_cast<uint16_t*>(ws + plan.off_d0);
  auto gemm1 = [&](int64_t m, const uint16_t* d0p, const uint16_t* c1, uint16_t* d1, int batch) {
    return baseline::lt_gemm_f16(lt, p.n1, m, p.n0, a.b1, p.n0, d0p, p.n0, p.beta1 != 0.0f ? c1 : nullptr, d1, p.alpha1,
                                 p.beta1, p.relu1, nullptr, batch, p.stride_b1, m * p.n0, p.stride_c1, p.stride_d1, 0,
                                 ctx.stream);
  };
  if (p.conv.enabled()) {  // conv 0 on our kernel with the fp32 bias0 of the documented formula
    if (p.m == 0) return cudaSuccess;
    const cudaError_t e = conv0_alone(ctx, plan, p, a, d0);
    return e != cudaSuccess ? e : gemm1(p.m, d0, static_cast<const uint16_t*>(a.c1), static_cast<uint16_t*>(a.d1), 1);
  }
  uint16_t* bias16 = nullptr;
  if (a.bias0) {
    // cuBLASLt's bias for fp16 output is fp16: the baseline rounds bias0 once (exact for values
    // fp16 represents, as in the tests' integer inputs).
    bias16 = reinterpret_cast<uint16_t*>(ws + plan.off_bias16);
    const int64_t nb = p.group_m.empty() ? p.batch : 1;
    for (int64_t z = 0; z < nb; ++z) {
      const cudaError_t e = kernels::launch_f32_to_f16(a.bias0 + z * p.stride_bias0, bias16 + z * p.n0, p.n0, ctx.stream);
      if (e != cudaSuccess) return e;
    }
  }
  auto pair = [&](int64_t m, const uint16_t* a0, const uint16_t* c1, uint16_t* d1, uint16_t* d0p, int batch) {
    if (m == 0) return cudaSuccess;
    cudaError_t e = baseline::lt_gemm_f16(lt, p.n0, m, p.k0, a.b0, p.k0, a0, p.k0, nullptr, d0p, p.alpha0, 0.0f, p.relu0,
                                          bias16, batch, p.stride_b0, p.stride_a0, 0, m * p.n0, p.n0, ctx.stream);
    if (e != cudaSuccess) return e;
    return gemm1(m, d0p, c1, d1, batch);
  };
  if (p.group_m.empty())
    return pair(p.m, static_cast<const uint16_t*>(a.a0), static_cast<const uint16_t*>(a.c1),
                static_cast<uint16_t*>(a.d1), d0, p.batch);
  int64_t row = 0;
  for (int64_t gm : p.group_m) {
    const cudaError_t e = pair(gm, static_cast<const uint16_t*>(a.a0) + row * p.k0,
                               a.c1 ? static_cast<const uint16_t*>(a.c1) + row * p.n1 : nullptr,
                               static_cast<uint16_t*>(a.d1) + row * p.n1, d0 + row * p.n0, 1);
    if (e != cudaSuccess) return e;
    row += gm;
  }
  return cudaSuccess;
}

}  // namespace

ozgemmStatus_t run_b2b(const ExecContext& ctx, const Plan& plan, const Problem& p, const Arguments& a, void* workspace,
                       const int64_t* table_host) {
  char* ws = static_cast<char*>(workspace);
  if (!plan.unfused) return run_fused(ctx, plan, p, a, ws, table_host);
  return status_of(p.type == DataType::S8 ? run_unfused_s8(ctx, plan, p, a, ws) : run_unfused_f16(ctx, plan, p, a, ws));
}

}  // namespace dispatch
}  // namespace ozgemm
