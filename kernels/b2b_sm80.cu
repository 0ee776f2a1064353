// kernels/b2b_sm80.cu — fused back-to-back GEMM, fp16 in, fp32 accumulation, with mma.sync
// m16n8k16 (CuTe's SM80 MMA atom), ldmatrix and a double-buffered cp.async pipeline. Runs on
// sm_80 and newer (Hopper included; a wgmma version is the next step, issue #5).
//
// One CTA = 4 warps = 64 rows; warp w owns rows 16w .. 16w+15 of A0, D0 and D1 and all of their
// columns. GEMM 0 leaves D0's 16 x n0 block of each warp in registers in the mma C-fragment
// layout: thread (g = lane/4, q = lane%4) holds columns 8b + 2q, 8b + 2q + 1 of rows g and g+8
// for every 8-column block b. That is exactly the A-fragment layout of m16n8k16 for the 16-wide
// k-block j = {blocks 2j, 2j+1}:  a0 = C[2j](g, 2q..), a1 = C[2j](g+8, ..), a2 = C[2j+1](g, ..),
// a3 = C[2j+1](g+8, ..). Register residency feeds those packed halves straight into GEMM 1;
// shared-memory residency stores D0 to shared memory and reloads it with ldmatrix.
#include "b2b_kernels.hpp"

#if __has_include(<cute/arch/mma_sm80.hpp>)

#include <cuda_fp16.h>

#include <cute/arch/copy_sm75.hpp>
#include <cute/arch/copy_sm80.hpp>
#include <cute/arch/mma_sm80.hpp>

namespace ozgemm {
namespace kernels {

namespace {

constexpr int kThreads = 128;
constexpr int kPad = 8;                  // halves of padding per shared row: ldmatrix without bank conflicts
constexpr int kRowK = kB2bChunkK + kPad;  // shared row length of a k-chunk (halves)

template <int N0, int N1, bool kShared>
struct B2bSmem {
  static constexpr int kA = 2 * kB2bTileM * kRowK;  // halves, 2 stages
  static constexpr int kB0 = 2 * N0 * kRowK;
  static constexpr int kB1 = 2 * N1 * kRowK;
  static constexpr int kD0 = kShared ? kB2bTileM * (N0 + kPad) : 0;
  static constexpr int kBytes = 2 * (kA + kB0 + kB1 + kD0);
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(smem)), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
__device__ __forceinline__ void ldsm_x4(const __half* p, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  cute::SM75_U32x4_LDSM_N::copy(*reinterpret_cast<const cute::uint128_t*>(p), r0, r1, r2, r3);
}
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  cute::SM80_16x8x16_F32F16F16F32_TN::fma(d[0], d[1], d[2], d[3], a[0], a[1], a[2], a[3], b0, b1, d[0], d[1], d[2],
                                          d[3]);
}
__device__ __forceinline__ uint32_t pack_half2(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
}
// The documented epilogue: fmaf(alpha, acc, addend), ReLU, (rounded to fp16 by the caller).
__device__ __forceinline__ float epilogue(float alpha, float acc, float addend, bool relu) {
  const float v = __fmaf_rn(alpha, acc, addend);
  return relu ? fmaxf(v, 0.0f) : v;
}

// Copies rows [0, rows) x k-chunk [k, k + 32) of a row-major matrix (leading dimension ld,
// halves) into a shared tile [rows][kRowK]; row indices past `valid` read row valid-1 instead
// (their results are never stored).
template <int kRows>
__device__ __forceinline__ void load_chunk(__half* tile, const __half* g, int64_t ld, int64_t valid, int64_t k) {
  constexpr int kVecs = kRows * (kB2bChunkK / 8);  // 16-byte vectors
  for (int v = threadIdx.x; v < kVecs; v += kThreads) {
    const int r = v / (kB2bChunkK / 8), c = (v % (kB2bChunkK / 8)) * 8;
    const int64_t rr = r < valid ? r : (valid > 0 ? valid - 1 : 0);
    cp_async16(tile + r * kRowK + c, g + rr * ld + k + c);
  }
}

// acc[nb][*] += A(16 rows of this warp) x B(k-chunk)^T for all nb; A fragments from `a_frag`.
template <int N>
__device__ __forceinline__ void mma_chunk(float (&acc)[N / 8][4], const uint32_t (&a_frag)[2][4], const __half* sB,
                                          int lane) {
#pragma unroll
  for (int ks = 0; ks < 2; ++ks) {
#pragma unroll
    for (int nb = 0; nb < N / 8; nb += 2) {
      // x4: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15) of this pair.
      const int n = nb * 8 + (lane % 8) + (lane / 16) * 8, kk = ks * 16 + ((lane / 8) % 2) * 8;
      uint32_t b00, b01, b10, b11;
      ldsm_x4(sB + n * kRowK + kk, b00, b01, b10, b11);
      mma16816(acc[nb], a_frag[ks], b00, b01);
      mma16816(acc[nb + 1], a_frag[ks], b10, b11);
    }
  }
}

// A fragments (rows 16w.., both k16 steps of the chunk) from a shared tile with row length ld.
__device__ __forceinline__ void load_a_frags(uint32_t (&a)[2][4], const __half* sA, int ld, int warp, int lane,
                                             int k0) {
#pragma unroll
  for (int ks = 0; ks < 2; ++ks) {
    const int r = warp * 16 + (lane % 16), k = k0 + ks * 16 + (lane / 16) * 8;
    ldsm_x4(sA + r * ld + k, a[ks][0], a[ks][1], a[ks][2], a[ks][3]);
  }
}

template <int N0, int N1, bool kShared>
__global__ void __launch_bounds__(kThreads) b2b_f16_kernel(B2bArgs p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using Smem = B2bSmem<N0, N1, kShared>;
  extern __shared__ __align__(16) __half smem[];
  __half* sA = smem;
  __half* sB0 = sA + Smem::kA;
  __half* sB1 = sB0 + Smem::kB0;
  __half* sD0 = sB1 + Smem::kB1;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;

  // Which rows: batch (blockIdx.z) or group (searched by tile index), then the 64-row tile.
  int64_t row0 = int64_t(blockIdx.x) * kB2bTileM, rows = p.m;
  if (p.group_count > 0) {
    int gi = 0;
    while (gi + 1 < p.group_count && p.group_tile0[gi + 1] <= int64_t(blockIdx.x)) ++gi;
    row0 = p.group_row0[gi] + (int64_t(blockIdx.x) - p.group_tile0[gi]) * kB2bTileM;
    rows = p.group_row0[gi] + p.group_m[gi];
  }
  const int64_t valid = rows - row0;  // rows of this tile that exist (>= 1)
  const int64_t z = blockIdx.z;
  const __half* A0 = reinterpret_cast<const __half*>(p.a0) + z * p.stride_a0 + row0 * p.k0;
  const __half* B0 = reinterpret_cast<const __half*>(p.b0) + z * p.stride_b0;
  const __half* B1 = reinterpret_cast<const __half*>(p.b1) + z * p.stride_b1;
  const float* bias = p.bias0 ? p.bias0 + z * p.stride_bias0 : nullptr;

  // ---- GEMM 0: acc0 = A0 x B0^T over k0 in chunks of 32, double-buffered ----
  float acc0[N0 / 8][4];
#pragma unroll
  for (int i = 0; i < N0 / 8; ++i) acc0[i][0] = acc0[i][1] = acc0[i][2] = acc0[i][3] = 0.0f;
  const int chunks0 = static_cast<int>(p.k0 / kB2bChunkK);
  load_chunk<kB2bTileM>(sA, A0, p.k0, valid, 0);
  load_chunk<N0>(sB0, B0, p.k0, N0, 0);
  cp_async_commit();
  for (int c = 0; c < chunks0; ++c) {
    const int st = c & 1;
    if (c + 1 < chunks0) {
      load_chunk<kB2bTileM>(sA + (st ^ 1) * kB2bTileM * kRowK, A0, p.k0, valid, int64_t(c + 1) * kB2bChunkK);
      load_chunk<N0>(sB0 + (st ^ 1) * N0 * kRowK, B0, p.k0, N0, int64_t(c + 1) * kB2bChunkK);
    }
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    uint32_t a[2][4];
    load_a_frags(a, sA + st * kB2bTileM * kRowK, kRowK, warp, lane, 0);
    mma_chunk<N0>(acc0, a, sB0 + st * N0 * kRowK, lane);
    __syncthreads();
  }

  // ---- epilogue 0: D0 = fp16(ReLU(alpha0 acc + bias0)), packed as GEMM-1 A fragments ----
  // d0[j][*] is the A fragment of k-block j (16 columns of D0) for this warp's 16 rows.
  uint32_t d0[N0 / 16][4];
#pragma unroll
  for (int j = 0; j < N0 / 16; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // 8-column block 2j + h
      const int nb = 2 * j + h, col = nb * 8 + 2 * q;
      const float b0v = bias ? bias[col] : 0.0f, b1v = bias ? bias[col + 1] : 0.0f;
      d0[j][2 * h + 0] = pack_half2(epilogue(p.alpha0, acc0[nb][0], b0v, p.relu0),
                                    epilogue(p.alpha0, acc0[nb][1], b1v, p.relu0));  // row g
      d0[j][2 * h + 1] = pack_half2(epilogue(p.alpha0, acc0[nb][2], b0v, p.relu0),
                                    epilogue(p.alpha0, acc0[nb][3], b1v, p.relu0));  // row g + 8
    }
  }
  if constexpr (kShared) {
    // Shared-memory residency: the warp's D0 rows go to sD0[64][N0 + kPad] and come back by
    // ldmatrix in GEMM 1 (the layout a CTA-wide D0 would need if warps split columns).
#pragma unroll
    for (int j = 0; j < N0 / 16; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int col = (2 * j + h) * 8 + 2 * q, r = warp * 16 + g;
        *reinterpret_cast<uint32_t*>(sD0 + r * (N0 + kPad) + col) = d0[j][2 * h];
        *reinterpret_cast<uint32_t*>(sD0 + (r + 8) * (N0 + kPad) + col) = d0[j][2 * h + 1];
      }
    __syncthreads();
  }

  // ---- GEMM 1: acc1 = D0 x B1^T over k1 = n0 in chunks of 32 ----
  float acc1[N1 / 8][4];
#pragma unroll
  for (int i = 0; i < N1 / 8; ++i) acc1[i][0] = acc1[i][1] = acc1[i][2] = acc1[i][3] = 0.0f;
  constexpr int kChunks1 = N0 / kB2bChunkK;
  load_chunk<N1>(sB1, B1, N0, N1, 0);
  cp_async_commit();
#pragma unroll
  for (int c = 0; c < kChunks1; ++c) {
    const int st = c & 1;
    if (c + 1 < kChunks1) load_chunk<N1>(sB1 + (st ^ 1) * N1 * kRowK, B1, N0, N1, int64_t(c + 1) * kB2bChunkK);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    uint32_t a[2][4];
    if constexpr (kShared) {
      load_a_frags(a, sD0, N0 + kPad, warp, lane, c * kB2bChunkK);
    } else {
#pragma unroll
      for (int ks = 0; ks < 2; ++ks)
#pragma unroll
        for (int i = 0; i < 4; ++i) a[ks][i] = d0[2 * c + ks][i];
    }
    mma_chunk<N1>(acc1, a, sB1 + st * N1 * kRowK, lane);
    __syncthreads();
  }

  // ---- epilogue 1: D1 = fp16(ReLU(alpha1 acc + beta1 C1)) ----
  const bool read_c = p.beta1 != 0.0f;
  const __half* C1 = reinterpret_cast<const __half*>(p.c1) + z * p.stride_c1;
  __half* D1 = reinterpret_cast<__half*>(p.d1) + z * p.stride_d1;
#pragma unroll
  for (int nb = 0; nb < N1 / 8; ++nb) {
    const int col = nb * 8 + 2 * q;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t r = warp * 16 + g + 8 * h;
      if (r >= valid) continue;
      const int64_t off = (row0 + r) * N1 + col;
      float c0 = 0.0f, c1 = 0.0f;
      if (read_c) {
        c0 = __fmul_rn(p.beta1, __half2float(C1[off]));
        c1 = __fmul_rn(p.beta1, __half2float(C1[off + 1]));
      }
      const uint32_t v = pack_half2(epilogue(p.alpha1, acc1[nb][2 * h], c0, p.relu1),
                                    epilogue(p.alpha1, acc1[nb][2 * h + 1], c1, p.relu1));
      *reinterpret_cast<uint32_t*>(D1 + off) = v;
    }
  }
#endif
}

template <int N0, int N1, bool kShared>
cudaError_t launch(const B2bArgs& args, int64_t tiles, int batch, cudaStream_t stream) {
  if constexpr (!kShared && N0 / 4 + N1 / 2 > 160) {
    return cudaErrorInvalidValue;  // too many registers for register residency (can_implement says so)
  } else {
  auto kernel = b2b_f16_kernel<N0, N1, kShared>;
  const int smem = B2bSmem<N0, N1, kShared>::kBytes;
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (e != cudaSuccess) return e;
  kernel<<<dim3(static_cast<unsigned>(tiles), 1, static_cast<unsigned>(batch)), kThreads, smem, stream>>>(args);
  return cudaGetLastError();
  }
}

template <int N0, bool kShared>
cudaError_t launch_n1(const B2bArgs& a, int n1, int64_t tiles, int batch, cudaStream_t s) {
  switch (n1) {
    case 64: return launch<N0, 64, kShared>(a, tiles, batch, s);
    case 128: return launch<N0, 128, kShared>(a, tiles, batch, s);
    case 256: return launch<N0, 256, kShared>(a, tiles, batch, s);
  }
  return cudaErrorInvalidValue;
}

template <bool kShared>
cudaError_t launch_n0(const B2bArgs& a, int n0, int n1, int64_t tiles, int batch, cudaStream_t s) {
  switch (n0) {
    case 64: return launch_n1<64, kShared>(a, n1, tiles, batch, s);
    case 128: return launch_n1<128, kShared>(a, n1, tiles, batch, s);
    case 256: return launch_n1<256, kShared>(a, n1, tiles, batch, s);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

namespace {
__global__ void f32_to_f16_kernel(const float* in, __half* out, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2half_rn(in[i]);
}
}  // namespace

cudaError_t launch_f32_to_f16(const float* in, uint16_t* out, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  f32_to_f16_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(in, reinterpret_cast<__half*>(out), n);
  return cudaGetLastError();
}

cudaError_t launch_b2b_f16(const B2bArgs& args, int n0, int n1, bool shared_resident, int64_t grid_tiles, int batch,
                           cudaStream_t stream) {
  if (grid_tiles <= 0 || batch <= 0) return cudaSuccess;
  if (grid_tiles > 0x7fffffffLL || batch > 65535) return cudaErrorInvalidValue;
  return shared_resident ? launch_n0<true>(args, n0, n1, grid_tiles, batch, stream)
                         : launch_n0<false>(args, n0, n1, grid_tiles, batch, stream);
}

}  // namespace kernels
}  // namespace ozgemm

#else  // no CUTLASS/CuTe headers (scripts/setup.sh fetches them)

namespace ozgemm {
namespace kernels {
cudaError_t launch_b2b_f16(const B2bArgs&, int, int, bool, int64_t, int, cudaStream_t) { return cudaErrorNotSupported; }
cudaError_t launch_f32_to_f16(const float*, uint16_t*, int64_t, cudaStream_t) { return cudaErrorNotSupported; }
}  // namespace kernels
}  // namespace ozgemm

#endif
