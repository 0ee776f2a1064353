// Back-to-back GEMM: limits, dispatch to the fused kernels, the cuBLASLt unfused baseline and
// the host reference (ozgemm/b2b.hpp).
#include "ozgemm/b2b.hpp"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "b2b_kernels.hpp"
#include "int8_gemm_cublaslt.hpp"

namespace ozgemm {
namespace b2b {

const char* residency_name(Residency r) { return r == Residency::Register ? "register" : "shared"; }
const char* type_name(DataType t) { return t == DataType::S8 ? "int8" : "fp16"; }

namespace {
bool is_tile_n(int64_t n) { return n == 64 || n == 128 || n == 256; }
int elem_bytes(DataType t) { return t == DataType::S8 ? 1 : 2; }
}  // namespace

std::string can_implement(const Problem& p, Residency r, KernelFamily family) {
  if (family == KernelFamily::Sm90) {
    if (p.type != DataType::F16) return "the Hopper b2b kernel is fp16 only";
    if (r != Residency::Register) return "the Hopper b2b kernel is register-resident only";
    if (p.n0 != 64 && p.n0 != 128) return "the Hopper b2b kernel needs n0 = 64 or 128";
    if (p.k0 % 64 != 0) return "the Hopper b2b kernel needs k0 to be a multiple of 64";
  }
  if (p.type != DataType::F16 && p.type != DataType::S8) return "unknown data type";
  if (p.m < 0 || p.k0 < 0 || p.n0 < 0 || p.n1 < 0) return "sizes must be >= 0";
  if (!is_tile_n(p.n0))
    return "n0 = " + std::to_string(p.n0) + " must be 64, 128 or 256 (one CTA owns all of D0's columns)";
  if (!is_tile_n(p.n1))
    return "n1 = " + std::to_string(p.n1) + " must be 64, 128 or 256 (one CTA owns all of D1's columns)";
  const int eb = elem_bytes(p.type);
  const int64_t chunk = kernels::kB2bChunkK * 2 / eb;  // elements in 64 bytes
  if (p.k0 < chunk || p.k0 % chunk != 0)
    return "k0 = " + std::to_string(p.k0) + " must be a positive multiple of " + std::to_string(chunk) + " for " +
           type_name(p.type);
  if (p.type == DataType::S8 && p.k0 > 131071) return "int8: k0 must be <= 131071 (int32 accumulation exact)";
  const int64_t d0_regs = p.n0 * eb / 8;
  if (r == Residency::Register && d0_regs + p.n1 / 2 > 160)
    return "register residency holds " + std::to_string(d0_regs) + " packed D0 + n1/2 accumulator registers a thread in GEMM 1 (" +
           std::to_string(d0_regs + p.n1 / 2) + " > 160): use shared-memory residency";
  for (int64_t st : {p.stride_a0, p.stride_b0, p.stride_b1, p.stride_c1, p.stride_d1})
    if (st < 0 || (st * eb) % 16 != 0) return "batch strides must be >= 0 and multiples of 16 bytes";
  if (p.batch < 1 || p.batch > 65535) return "batch must be in 1..65535";
  if (!p.group_m.empty()) {
    if (p.batch != 1) return "grouped problems are not batched (batch must be 1)";
    for (int64_t gm : p.group_m)
      if (gm < 0) return "every group's m must be >= 0";
  }
  const int64_t rows = p.group_m.empty() ? p.m : 0;
  if (rows > (int64_t(1) << 40)) return "m too large";
  return {};
}

namespace {
size_t d0_bytes(const Problem& p) {
  int64_t rows = p.m;
  if (!p.group_m.empty()) {
    rows = 0;
    for (int64_t gm : p.group_m) rows += gm;
  }
  return (size_t(std::max<int64_t>(rows, 0)) * size_t(std::max<int64_t>(p.n0, 0)) * size_t(elem_bytes(p.type)) *
              size_t(std::max(p.batch, 1)) +
          255) / 256 * 256;
}
// int8 unfused: int32 output of one GEMM (the larger of m x n0 and m x n1, one problem at a time),
// then cuBLASLt's scratch.
size_t s8_acc_bytes(const Problem& p) {
  int64_t rows = p.m;
  if (!p.group_m.empty()) {
    rows = 0;
    for (int64_t gm : p.group_m) rows = std::max(rows, gm);
  }
  return (size_t(std::max<int64_t>(rows, 0)) * size_t(std::max<int64_t>(std::max(p.n0, p.n1), 0)) * 4 + 255) / 256 *
         256;
}
constexpr size_t kS8LtScratch = size_t(4) << 20;
}  // namespace

size_t workspace_size(const Problem& p, bool unfused) {
  if (!unfused) return 0;
  if (p.type == DataType::S8) return d0_bytes(p) + s8_acc_bytes(p) + kS8LtScratch;
  // D0, then bias0 as fp16 (cuBLASLt's bias for fp16 output), one vector per batch.
  return d0_bytes(p) + size_t(std::max<int64_t>(p.n0, 0)) * 2 * size_t(std::max(p.batch, 1));
}

bool sm90_kernel_available() {
  int dev = 0, major = 0, minor = 0;
  const bool ok = kernels::b2b_sm90_built() && cudaGetDevice(&dev) == cudaSuccess &&
                  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
                  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess;
  if (!ok) cudaGetLastError();
  return ok && major == 9 && minor == 0;
}

cudaError_t run(const Problem& p, const Arguments& a, Residency r, cudaStream_t stream, KernelFamily family) {
  if (!can_implement(p, r, family).empty()) return cudaErrorInvalidValue;
  if (!a.a0 || !a.b0 || !a.b1 || !a.d1 || (p.beta1 != 0.0f && !a.c1)) return cudaErrorInvalidValue;
  kernels::B2bArgs k{};
  k.a0 = a.a0;
  k.b0 = a.b0;
  k.bias0 = a.bias0;
  k.b1 = a.b1;
  k.c1 = a.c1;
  k.d1 = a.d1;
  k.m = p.m;
  k.k0 = p.k0;
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
  const bool shared = r == Residency::Shared, s8 = p.type == DataType::S8;
  // Auto: the Hopper kernel wherever it applies (measured faster than the portable kernels on
  // every shape it supports, H100, docs/b2b.md).
  if (family == KernelFamily::Auto && sm90_kernel_available() && can_implement(p, r, KernelFamily::Sm90).empty())
    family = KernelFamily::Sm90;
  const bool sm90 = family == KernelFamily::Sm90;
  if (sm90 && !sm90_kernel_available()) return cudaErrorNotSupported;
  auto launch = [&](const kernels::B2bArgs& args, int64_t tiles, int batch) {
    return sm90 ? kernels::launch_b2b_sm90(args, int(p.n0), int(p.n1), tiles, batch, stream)
                : kernels::launch_b2b(args, s8, int(p.n0), int(p.n1), shared, tiles, batch, stream);
  };
  if (p.group_m.empty()) {
    const int64_t tiles = (p.m + kernels::kB2bTileM - 1) / kernels::kB2bTileM;
    return launch(k, tiles, p.batch);
  }
  // Grouped: a small table of row offsets and first tiles, copied to the device with the launch.
  const int groups = static_cast<int>(p.group_m.size());
  std::vector<int64_t> table(3 * size_t(groups) + 1);
  int64_t row = 0, tile = 0;
  for (int g = 0; g < groups; ++g) {
    table[g] = row;                         // group_row0
    table[groups + g] = p.group_m[g];       // group_m
    table[2 * groups + g] = tile;           // group_tile0
    row += p.group_m[g];
    tile += (p.group_m[g] + kernels::kB2bTileM - 1) / kernels::kB2bTileM;
  }
  table[3 * groups] = tile;
  if (tile == 0) return cudaSuccess;
  int64_t* d_table = nullptr;
  cudaError_t e = cudaMallocAsync(&d_table, table.size() * sizeof(int64_t), stream);
  if (e != cudaSuccess) return e;
  e = cudaMemcpyAsync(d_table, table.data(), table.size() * sizeof(int64_t), cudaMemcpyHostToDevice, stream);
  if (e == cudaSuccess) {
    k.m = row;
    k.group_count = groups;
    k.group_row0 = d_table;
    k.group_m = d_table + groups;
    k.group_tile0 = d_table + 2 * groups;
    e = launch(k, tile, 1);
  }
  // The copy from the pageable table completes before cudaMemcpyAsync returns; freeing is
  // stream-ordered after the kernel.
  const cudaError_t f = cudaFreeAsync(d_table, stream);
  return e != cudaSuccess ? e : f;
}

// ------------------------------------------------------------------------------------------------
// Unfused baseline: two cuBLASLt GEMMs. Row-major X (rows x cols) is column-major X^T, so
//   D0^T (n0 x m) = B0c^T (n0 x k0) * A0c (k0 x m),   B0c = B0 as column-major k0 x n0
//   D1^T (n1 x m) = B1c^T (n1 x n0) * D0^T (n0 x m) + beta1 * C1^T
// bias0 runs along the rows of D0^T, which is what cuBLASLt's bias epilogue adds.

Unfused::Unfused() {
  cublasLtHandle_t h = nullptr;
  if (cublasLtCreate(&h) == CUBLAS_STATUS_SUCCESS) lt_ = h;
  auto* s8 = new Int8GemmLt();
  if (s8->init() == CUBLAS_STATUS_SUCCESS)
    s8_ = s8;
  else
    delete s8;
}
Unfused::~Unfused() {
  if (lt_) cublasLtDestroy(static_cast<cublasLtHandle_t>(lt_));
  delete static_cast<Int8GemmLt*>(s8_);
}

namespace {
struct LtGemm {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, cc = nullptr;
  ~LtGemm() {
    if (desc) cublasLtMatmulDescDestroy(desc);
    if (cc) cublasLtMatrixLayoutDestroy(cc);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
  }
};

void set_batch(cublasLtMatrixLayout_t l, int batch, int64_t stride) {
  cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
  cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
}

// out (n x m, column-major, ld n) = epilogue(alpha * W^T (n x k) * X (k x m) + beta * C)
cudaError_t lt_gemm(cublasLtHandle_t lt, int64_t n, int64_t m, int64_t k, const void* w, int64_t ldw,
                    const void* x, int64_t ldx, const void* c, void* out, float alpha, float beta, bool relu,
                    const uint16_t* bias, int batch, int64_t sw, int64_t sx, int64_t sc, int64_t so, int64_t sbias,
                    cudaStream_t stream) {
  LtGemm g;
  if (cublasLtMatmulDescCreate(&g.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS)
    return cudaErrorUnknown;
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  cublasLtEpilogue_t epi = bias ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                : (relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
  cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
  if (bias) {  // fp16, the output type
    cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    if (batch > 1) cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &sbias, sizeof sbias);
  }
  if (cublasLtMatrixLayoutCreate(&g.a, CUDA_R_16F, k, n, ldw) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate(&g.b, CUDA_R_16F, k, m, ldx) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate(&g.c, CUDA_R_16F, n, m, n) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate(&g.cc, CUDA_R_16F, n, m, n) != CUBLAS_STATUS_SUCCESS)
    return cudaErrorUnknown;
  if (batch > 1) {
    set_batch(g.a, batch, sw);
    set_batch(g.b, batch, sx);
    set_batch(g.c, batch, so);
    set_batch(g.cc, batch, c ? sc : so);
  }
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulHeuristicResult_t res;
  int found = 0;
  cublasLtMatmulAlgoGetHeuristic(lt, g.desc, g.a, g.b, g.c, g.c, pref, 1, &res, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (found == 0) return cudaErrorNotSupported;
  const cublasStatus_t st = cublasLtMatmul(lt, g.desc, &alpha, w, g.a, x, g.b, &beta, c ? c : out, g.cc, out, g.c,
                                           &res.algo, nullptr, 0, stream);
  return st == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}
}  // namespace

namespace {
// One int8 problem (m rows): D0 = requant(B0 . A0 rows), D1 = requant(B1 . D0 rows, C1). The
// int32 GEMM out(j, i) = sum_l W[j][l] X[i][l] (TN, column-major n x m, ld n) is D^T's layout,
// i.e. row-major D.
cudaError_t s8_pair(Int8GemmLt& lt, const Problem& p, int64_t m, const int8_t* a0, const int8_t* b0,
                    const float* bias0, const int8_t* b1, const int8_t* c1, int8_t* d1, int8_t* d0, int32_t* acc,
                    void* scratch, cudaStream_t stream) {
  if (m == 0) return cudaSuccess;
  if (lt.run(int(p.n0), int(m), int(p.k0), b0, int(p.k0), a0, int(p.k0), acc, int(p.n0), scratch, kS8LtScratch, stream,
             /*autotune=*/false) != CUBLAS_STATUS_SUCCESS)
    return cudaErrorUnknown;
  cudaError_t e = kernels::launch_requant_s8(acc, m, p.n0, p.alpha0, bias0, 0.0f, nullptr, p.relu0, d0, stream);
  if (e != cudaSuccess) return e;
  if (lt.run(int(p.n1), int(m), int(p.n0), b1, int(p.n0), d0, int(p.n0), acc, int(p.n1), scratch, kS8LtScratch, stream,
             false) != CUBLAS_STATUS_SUCCESS)
    return cudaErrorUnknown;
  return kernels::launch_requant_s8(acc, m, p.n1, p.alpha1, nullptr, p.beta1, c1, p.relu1, d1, stream);
}
}  // namespace

cudaError_t Unfused::run(const Problem& p, const Arguments& a, void* workspace, cudaStream_t stream) {
  if (p.batch < 1 || p.m < 0) return cudaErrorInvalidValue;
  if (p.type == DataType::S8) {
    if (!s8_) return cudaErrorNotSupported;
    auto& lt = *static_cast<Int8GemmLt*>(s8_);
    auto* d0 = static_cast<int8_t*>(workspace);
    auto* acc = reinterpret_cast<int32_t*>(static_cast<char*>(workspace) + d0_bytes(p));
    void* scratch = static_cast<char*>(workspace) + d0_bytes(p) + s8_acc_bytes(p);
    const auto* A0 = static_cast<const int8_t*>(a.a0);
    const auto* B0 = static_cast<const int8_t*>(a.b0);
    const auto* B1 = static_cast<const int8_t*>(a.b1);
    const auto* C1 = static_cast<const int8_t*>(a.c1);
    auto* D1 = static_cast<int8_t*>(a.d1);
    if (p.group_m.empty()) {
      for (int z = 0; z < p.batch; ++z) {
        const cudaError_t e =
            s8_pair(lt, p, p.m, A0 + z * p.stride_a0, B0 + z * p.stride_b0, a.bias0 ? a.bias0 + z * p.stride_bias0 : nullptr,
                    B1 + z * p.stride_b1, C1 ? C1 + z * p.stride_c1 : nullptr, D1 + z * p.stride_d1,
                    d0 + z * p.m * p.n0, acc, scratch, stream);
        if (e != cudaSuccess) return e;
      }
      return cudaSuccess;
    }
    int64_t row = 0;
    for (int64_t gm : p.group_m) {
      const cudaError_t e = s8_pair(lt, p, gm, A0 + row * p.k0, B0, a.bias0, B1, C1 ? C1 + row * p.n1 : nullptr,
                                    D1 + row * p.n1, d0 + row * p.n0, acc, scratch, stream);
      if (e != cudaSuccess) return e;
      row += gm;
    }
    return cudaSuccess;
  }
  if (!lt_) return cudaErrorNotSupported;
  if (p.type != DataType::F16) return cudaErrorInvalidValue;
  auto lt = static_cast<cublasLtHandle_t>(lt_);
  auto* d0 = static_cast<uint16_t*>(workspace);
  uint16_t* bias16 = nullptr;
  if (a.bias0) {
    // cuBLASLt's bias for fp16 output is fp16: the baseline rounds bias0 once (exact for values
    // fp16 represents, as in the tests' integer inputs).
    bias16 = reinterpret_cast<uint16_t*>(static_cast<char*>(workspace) + d0_bytes(p));
    const int64_t nb = p.group_m.empty() ? p.batch : 1;
    for (int64_t z = 0; z < nb; ++z) {
      const cudaError_t e = kernels::launch_f32_to_f16(a.bias0 + z * p.stride_bias0, bias16 + z * p.n0, p.n0, stream);
      if (e != cudaSuccess) return e;
    }
  }
  auto pair = [&](int64_t m, const uint16_t* a0, const uint16_t* c1, uint16_t* d1, uint16_t* d0p, int batch) {
    if (m == 0) return cudaSuccess;
    cudaError_t e = lt_gemm(lt, p.n0, m, p.k0, a.b0, p.k0, a0, p.k0, nullptr, d0p, p.alpha0, 0.0f, p.relu0, bias16,
                            batch, p.stride_b0, p.stride_a0, 0, m * p.n0, p.n0, stream);
    if (e != cudaSuccess) return e;
    return lt_gemm(lt, p.n1, m, p.n0, a.b1, p.n0, d0p, p.n0, p.beta1 != 0.0f ? c1 : nullptr, d1, p.alpha1, p.beta1,
                   p.relu1, nullptr, batch, p.stride_b1, m * p.n0, p.stride_c1, p.stride_d1, 0, stream);
  };
  if (p.group_m.empty())
    return pair(p.m, static_cast<const uint16_t*>(a.a0), static_cast<const uint16_t*>(a.c1),
                static_cast<uint16_t*>(a.d1), d0, p.batch);
  int64_t row = 0;
  for (int64_t gm : p.group_m) {
    cudaError_t e = pair(gm, static_cast<const uint16_t*>(a.a0) + row * p.k0,
                         a.c1 ? static_cast<const uint16_t*>(a.c1) + row * p.n1 : nullptr,
                         static_cast<uint16_t*>(a.d1) + row * p.n1, d0 + row * p.n0, 1);
    if (e != cudaSuccess) return e;
    row += gm;
  }
  return cudaSuccess;
}

// ------------------------------------------------------------------------------------------------
// Host reference and fp16 conversion.

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int exp = int((x >> 23) & 0xff);
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = exp - 127 + 15;
  if (e >= 31) return uint16_t(sign | 0x7c00u);  // overflow -> Inf
  if (e <= 0) {
    // Subnormal half (or zero): value = mant24 * 2^(exp-150); half unit 2^-24.
    if (e < -10) return uint16_t(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;  // 24-bit significand to 10-bit subnormal field
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = (uint32_t(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: fine
  return uint16_t(sign | h);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const int exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      int e = -14;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --e;
      }
      x = sign | (uint32_t(e + 127) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | (uint32_t(exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

int8_t saturate_s8(float v) {
  const float r = std::nearbyint(v);  // the default rounding mode: to nearest even
  return static_cast<int8_t>(r < -128.0f ? -128 : (r > 127.0f ? 127 : static_cast<int>(r)));
}

namespace {
float epilogue(float alpha, float acc, float addend, bool relu) {
  const float v = std::fmaf(alpha, acc, addend);
  return relu ? std::max(v, 0.0f) : v;
}

// The element types of the host reference: E as stored, Acc the GEMMs' accumulator (fp32 for
// fp16, exact int32 for int8), value() an element as an accumulator operand, to_float() an
// element of C1, out() the rounding of an epilogue result to E.
struct HostF16 {
  using E = uint16_t;
  using Acc = float;
  static Acc value(E x) { return half_to_float(x); }
  static float to_float(E x) { return half_to_float(x); }
  static E out(float v) { return float_to_half(v); }
};
struct HostS8 {
  using E = int8_t;
  using Acc = int32_t;
  static Acc value(E x) { return x; }
  static float to_float(E x) { return static_cast<float>(x); }
  static E out(float v) { return saturate_s8(v); }
};

// One problem of m rows, row by row: D0's row in the output type, then D1's row.
template <class T>
void reference_rows(const Problem& p, int64_t m, const typename T::E* a0, const typename T::E* b0, const float* bias0,
                    const typename T::E* b1, const typename T::E* c1, typename T::E* d1) {
  std::vector<typename T::E> d0(size_t(p.n0));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < p.n0; ++j) {
      typename T::Acc acc = 0;
      for (int64_t l = 0; l < p.k0; ++l) acc += T::value(a0[i * p.k0 + l]) * T::value(b0[j * p.k0 + l]);
      d0[j] = T::out(epilogue(p.alpha0, static_cast<float>(acc), bias0 ? bias0[j] : 0.0f, p.relu0));
    }
    for (int64_t j = 0; j < p.n1; ++j) {
      typename T::Acc acc = 0;
      for (int64_t l = 0; l < p.n0; ++l) acc += T::value(d0[l]) * T::value(b1[j * p.n0 + l]);
      const float c = p.beta1 != 0.0f ? p.beta1 * T::to_float(c1[i * p.n1 + j]) : 0.0f;
      d1[i * p.n1 + j] = T::out(epilogue(p.alpha1, static_cast<float>(acc), c, p.relu1));
    }
  }
}

// Every batch (strided) or group (stacked rows, shared B0, bias0, B1).
template <class T>
void reference_all(const Problem& p, const typename T::E* a0, const typename T::E* b0, const float* bias0,
                   const typename T::E* b1, const typename T::E* c1, typename T::E* d1) {
  if (p.group_m.empty()) {
    for (int z = 0; z < p.batch; ++z)
      reference_rows<T>(p, p.m, a0 + z * p.stride_a0, b0 + z * p.stride_b0,
                        bias0 ? bias0 + z * p.stride_bias0 : nullptr, b1 + z * p.stride_b1,
                        c1 ? c1 + z * p.stride_c1 : nullptr, d1 + z * p.stride_d1);
    return;
  }
  int64_t row = 0;
  for (int64_t gm : p.group_m) {
    reference_rows<T>(p, gm, a0 + row * p.k0, b0, bias0, b1, c1 ? c1 + row * p.n1 : nullptr, d1 + row * p.n1);
    row += gm;
  }
}
}  // namespace

void reference_s8(const Problem& p, const int8_t* a0, const int8_t* b0, const float* bias0, const int8_t* b1,
                  const int8_t* c1, int8_t* d1) {
  reference_all<HostS8>(p, a0, b0, bias0, b1, c1, d1);
}

void reference(const Problem& p, const uint16_t* a0, const uint16_t* b0, const float* bias0, const uint16_t* b1,
               const uint16_t* c1, uint16_t* d1) {
  reference_all<HostF16>(p, a0, b0, bias0, b1, c1, d1);
}

}  // namespace b2b
}  // namespace ozgemm
