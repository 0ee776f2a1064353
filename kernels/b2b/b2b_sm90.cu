// kernels/b2b/b2b_sm90.cu — fused back-to-back GEMM for Hopper (sm_90a), register residency, fp16
// or int8: GEMM 0 with wgmma reading A0 and B0 from shared memory (swizzled, filled by a cp.async
// ring), GEMM 1 with wgmma taking D0 as its A operand from registers (as attention kernels feed P
// into P x V). Two schedules (policy.hpp, B2bSm90Policy; the b2b planner picks): one CTA a tile, whose
// threads also fill the ring, and warp-specialised persistent, a producer warp group filling it;
// for n0 past 256, a chunked one-CTA-a-tile kernel (GEMM 0 in 128-column chunks, below).
//
// A tile = two consumer warp groups = 128 rows; each warp group owns 64 rows and all n0 / n1 columns
// (the chunked kernel: one 128-column chunk of D0 at a time).
// Why D0 needs no shuffle, fp16: the accumulator of a 64 x N wgmma (CLayout_64xN) holds, per
// thread, values (e, h, b) = (column pair, row half, 8-column block) with flat index e + 2h + 4b;
// the register A operand of a 64 x 16 wgmma (ALayout_64x16) holds (e, h, k-half) of one 16-wide
// k-block, so k-block j's fragment is the accumulator's blocks 2j, 2j+1 in the same order and
// the fp16 copy of the accumulator *is* GEMM 1's A operand, reinterpreted.
// int8: the 8-bit A operand of a 64 x 32 wgmma (ALayout_64x32) holds (c, h, k-half) with c four
// consecutive k, where the accumulator gives a thread 2 consecutive columns a block; B0's rows are
// loaded permuted (s8_d0_column, as the portable kernel does), so a thread's accumulators of blocks
// 4j + 2k', 4j + 2k' + 1 are logical columns 32j + 16k' + 4q .. + 3: A element c + 4h + 8k' + 16j
// is the requantised accumulator e = c % 2, h, b = 4j + 2k' + c / 2 (no shuffle; B1 untouched).
// Same numerics as b2b_sm80.cu (fmaf epilogue, ReLU, round to fp16 / requantise to int8).
// Configuration: policy.hpp (B2bSm90Policy). Convolution pairs gather A0's k-tiles from X
// (b2b_device.cuh's implicit im2col; a k-tile lies within one filter tap) into the same stages.
#include "kernels/b2b/b2b_device.cuh"

#if defined(OZGEMM_BUILD_SM90_FUSED)

#include <cuda_fp16.h>

#include <cutlass/arch/barrier.h>
#include <cutlass/cutlass.h>
#include <cutlass/pipeline/sm90_pipeline.hpp>

#include "kernels/b2b/b2b_sm90_config.cuh"

namespace ozgemm {
namespace kernels {

namespace {

using namespace cute;
using namespace b2b_sm90;

// The stored element of the epilogues: fp16 rounded, int8 requantised (b2b_device.cuh).
__device__ __forceinline__ half_t to_elem(float v, half_t) { return half_t(__float2half_rn(v)); }
__device__ __forceinline__ int8_t to_elem(float v, int8_t) { return static_cast<int8_t>(to_s8(v)); }
// Two consecutive elements of a row as one load (as floats) and one store: 4 bytes fp16, 2 int8.
__device__ __forceinline__ float2 load_pair(const half_t* at) {
  return __half22float2(*reinterpret_cast<const __half2*>(at));
}
__device__ __forceinline__ float2 load_pair(const int8_t* at) {
  const char2 v = *reinterpret_cast<const char2*>(at);
  return make_float2(float(v.x), float(v.y));
}
__device__ __forceinline__ uint32_t elem_pair(half_t lo, half_t hi) {
  return uint32_t(lo.raw()) | (uint32_t(hi.raw()) << 16);
}
__device__ __forceinline__ uint16_t elem_pair(int8_t lo, int8_t hi) {
  return static_cast<uint16_t>(uint32_t(uint8_t(lo)) | (uint32_t(uint8_t(hi)) << 8));
}

// Named barriers (user ids) of the consumers: all 256 of them (the warp-specialised kernel's B1
// loads), and each warp group's 128 (D1's staging, one id a warp group).
constexpr uint32_t kConsumerBarrier = 1, kStageBarrier0 = 2;

// One wgmma batch of both warp groups, acc (+)= a x b (the TiledMMA's accumulate_ mode), then a wait
// until at most kPending of this thread's batches are in flight (0: this one has completed).
template <int kPending, class Mma, class TA, class TB, class Acc>
__device__ __forceinline__ void wgmma_batch(Mma& mma, const TA& a, const TB& b, Acc& acc) {
  warpgroup_fence_operand(acc);
  warpgroup_arrive();
  gemm(mma, a, b, acc);
  warpgroup_commit_batch();
  warpgroup_wait<kPending>();
  warpgroup_fence_operand(acc);
}

// The N1-row x N0-column block of B1 (n1 x n0 row-major, batch z) at rows chunk * kN1Chunk ..
// and columns col0 .. into shared memory at `to` (Cfg::SmemB1Chunk), by the consumers' 256 threads
// (consumer index ct), as cp.async without a group fence (the caller commits, waits for it and
// makes it visible to wgmma). B1's row stride is p.n0 (N0 when not chunked).
template <class Cfg, int N0>
__device__ __forceinline__ void load_b1_block(const B2bArgs& p, int ct, int64_t z, int chunk, int64_t col0,
                                              typename Cfg::Element* to) {
  using T = typename Cfg::Element;
  typename Cfg::Copy copy_b1;
  auto thr = copy_b1.get_slice(ct);
  Tensor g = make_tensor(
      make_gmem_ptr(static_cast<const T*>(p.b1) + z * p.stride_b1 + int64_t(chunk) * Cfg::kN1Chunk * p.n0 + col0),
      make_shape(Int<Cfg::kN1Chunk>{}, Int<N0>{}), make_stride(p.n0, Int<1>{}));
  copy(copy_b1, thr.partition_S(g), thr.partition_D(make_tensor(make_smem_ptr(to), typename Cfg::SmemB1Chunk{})));
}
// B1's chunk `chunk` (all n0 = N0 columns) as one cp.async group of this thread.
template <class Cfg, int N0>
__device__ __forceinline__ void load_b1_chunk(const B2bArgs& p, int ct, int64_t z, int chunk, typename Cfg::Element* to) {
  load_b1_block<Cfg, N0>(p, ct, z, chunk, 0, to);
  cp_async_fence();
}

// Epilogue 0 for consumer thread ct: GEMM 0's accumulator (D0's columns col0 .. col0 + N0 - 1)
// to D0 = T(ReLU(alpha0 acc0 + bias0)), returned in GEMM 1's register A operand order (fp16: the
// same registers; int8: b2b_sm90_config.cuh, a_operand_source).
template <class Cfg, int N0, class Acc0>
__device__ __forceinline__ auto d0_operand(const B2bArgs& p, int ct, int64_t z, const Acc0& acc0, int64_t col0) {
  using T = typename Cfg::Element;
  const float* bias = p.bias0 ? p.bias0 + z * p.stride_bias0 + col0 : nullptr;
  typename Cfg::Mma0 mma0;
  auto thr0 = mma0.get_slice(ct);
  Tensor cC0 = thr0.partition_C(make_identity_tensor(Shape<Int<kM>, Int<N0>>{}));
  Tensor rD0 = make_tensor<T>(acc0.layout());  // accumulator order
  CUTE_UNROLL
  for (int i = 0; i < size(acc0); ++i) {
    const int pcol = get<1>(cC0(i));
    const int col = Cfg::kInt8 ? s8_d0_column(pcol) : pcol;
    rD0(i) = to_elem(b2b_epilogue(p.alpha0, float(acc0(i)), bias ? bias[col] : 0.0f, p.relu0), T{});
  }
  typename Cfg::Mma1 mma1;
  auto thr1 = mma1.get_slice(ct);
  Tensor tOrA_shape = thr1.partition_fragment_A(
      make_tensor(make_gmem_ptr(static_cast<const T*>(nullptr)), make_layout(Shape<Int<kM>, Int<N0>>{}, LayoutRight{})));
  static_assert(decltype(size(tOrA_shape))::value == decltype(size(acc0))::value, "D0 fragment sizes");
  Tensor rP = make_tensor<T>(tOrA_shape.layout());  // GEMM 1's A operand (fp16: the same registers)
  CUTE_UNROLL
  for (int a = 0; a < size(rP); ++a) rP(a) = rD0(a_operand_source<T>(a));
  return rP;
}

// GEMM 1 on one block of B1 (kN1Chunk x N0 at b1, layout Cfg::SmemB1Chunk, visible to wgmma):
// acc1 = rP x block (accumulate == false) or acc1 += rP x block, complete on return.
template <class Cfg, int N0, class RP, class Acc1>
__device__ __forceinline__ void gemm1_block(int ct, const RP& rP, const typename Cfg::Element* b1, Acc1& acc1,
                                            bool accumulate) {
  typename Cfg::Mma1 mma1;
  auto thr1 = mma1.get_slice(ct);
  Tensor sB1c = make_tensor(make_smem_ptr(b1), typename Cfg::SmemB1Chunk{});  // rows of B1 = D1 columns
  Tensor tOrB = thr1.make_fragment_B(thr1.partition_B(sB1c));
  if (!accumulate) clear(acc1);
  mma1.accumulate_ = GMMA::ScaleOut::One;
  wgmma_batch<0>(mma1, rP, tOrB, acc1);
}

// Epilogue 1 of D1's columns chunk * kN1Chunk .. (GEMM 1's accumulator acc1 of that chunk) for
// consumer thread ct: D1 = T(ReLU(alpha1 acc1 + beta1 C1)), staged in d1_stage Cfg::kD1StageCols
// columns at a time (Cfg::kD1StageBytes of shared memory that only this function uses meanwhile;
// each warp group its own 64 rows) and stored from there as 16-byte vectors of consecutive columns.
template <class Cfg, int N1, class Acc1>
__device__ __forceinline__ void store_d1_chunk(const B2bArgs& p, int ct, const B2bTileRows& tile, const Acc1& acc1,
                                               int chunk, uint8_t* d1_stage) {
  using T = typename Cfg::Element;
  constexpr int kN1Chunk = Cfg::kN1Chunk;
  const int64_t row0 = tile.row0, valid = tile.valid, z = tile.z;
  typename Cfg::Mma1 mma1;
  auto thr1 = mma1.get_slice(ct);
  const bool read_c = p.beta1 != 0.0f;
  const T* C1 = static_cast<const T*>(p.c1) + z * p.stride_c1;
  T* D1 = static_cast<T*>(p.d1) + z * p.stride_d1;
  Tensor cC1 = thr1.partition_C(make_identity_tensor(Shape<Int<kM>, Int<kN1Chunk>>{}));
  // The staged columns' stores: this warp group's 64 rows of kRowBytes, kVecs 16-byte vectors a row.
  constexpr int kStageCols = Cfg::kD1StageCols, kSubs = kN1Chunk / kStageCols;
  constexpr int kPitch = Cfg::kD1StagePitch, kRowBytes = kStageCols * int(sizeof(T)), kVecs = kRowBytes / 16;
  constexpr int kWgRows = kM / 2, kWgThreads = kConsumerThreads / 2;
  static_assert(kRowBytes % 16 == 0 && (kWgRows * kVecs) % kWgThreads == 0, "whole vectors, evenly shared");
  const int wg = ct / kWgThreads, wt = ct % kWgThreads;
  // The accumulator's values in kSubs runs of kSubValues, run s holding columns [s, s + 1)
  // kStageCols of the chunk (CLayout_64xN: the 8-column block is the slowest value mode;
  // tests/gpu/test_b2b_sm90_layouts.cu checks it).
  constexpr int kSubValues = decltype(size(acc1))::value / kSubs;
  CUTE_UNROLL
  for (int s = 0; s < kSubs; ++s) {
    // The previously staged rows of this warp group have been stored.
    cutlass::arch::NamedBarrier::sync(kWgThreads, kStageBarrier0 + wg);
    // Values i, i + 1 are columns c, c + 1 of one row (the column pair is the fastest value mode):
    // one load of C1 and one staged pair each (4 bytes fp16, 2 int8). Rows past the matrix are
    // staged too (never stored).
    CUTE_UNROLL
    for (int i = s * kSubValues; i < (s + 1) * kSubValues; i += 2) {
      const int r = get<0>(cC1(i)), c = get<1>(cC1(i));
      float c0 = 0.0f, c1 = 0.0f;
      if (read_c && r < valid) {
        const float2 cc = load_pair(C1 + (row0 + r) * N1 + chunk * kN1Chunk + c);
        c0 = __fmul_rn(p.beta1, cc.x);
        c1 = __fmul_rn(p.beta1, cc.y);
      }
      const auto pair = elem_pair(to_elem(b2b_epilogue(p.alpha1, float(acc1(i)), c0, p.relu1), T{}),
                                  to_elem(b2b_epilogue(p.alpha1, float(acc1(i + 1)), c1, p.relu1), T{}));
      *reinterpret_cast<std::remove_const_t<decltype(pair)>*>(d1_stage + r * kPitch +
                                                               (c - s * kStageCols) * int(sizeof(T))) = pair;
    }
    cutlass::arch::NamedBarrier::sync(kWgThreads, kStageBarrier0 + wg);  // the warp group's rows are staged
    // Vector v = wt + j kWgThreads of the warp group's rows: row v / kVecs, byte (v % kVecs) 16;
    // the thread's byte column is the same for every j (kWgThreads is a multiple of kVecs).
    static_assert(kWgThreads % kVecs == 0 && (kWgRows * kVecs) % kWgThreads == 0, "one byte column a thread");
    char* const d1_rows =
        reinterpret_cast<char*>(D1 + (row0 + wg * kWgRows) * N1 + chunk * kN1Chunk + s * kStageCols) + (wt % kVecs) * 16;
    const uint8_t* const staged = d1_stage + wg * kWgRows * kPitch + (wt % kVecs) * 16;
    const int64_t rows_left = valid - wg * kWgRows;
    CUTE_UNROLL
    for (int j = 0; j < kWgRows * kVecs / kWgThreads; ++j) {
      const int r = wt / kVecs + j * (kWgThreads / kVecs);
      if (r < rows_left)
        *reinterpret_cast<uint4*>(d1_rows + r * (N1 * int(sizeof(T)))) = *reinterpret_cast<const uint4*>(staged + r * kPitch);
    }
  }
}

// Epilogue 0, GEMM 1 and epilogue 1 of one tile (n0 = N0), for consumer thread ct (0 .. 255) of
// both schedules: D0 in registers is GEMM 1's A operand; D1 kN1Chunk columns at a time. B1's
// chunk c is at b1_chunk(c) (an Element*, layout Cfg::SmemB1Chunk); the chunks before
// Cfg::kB1Resident are visible to wgmma on entry, and chunk Cfg::kB1Resident (if any) is this
// thread's last cp.async group in flight, waited for here.
template <class Cfg, int N0, int N1, class Acc0, class B1Chunk>
__device__ __forceinline__ void finish_tile(const B2bArgs& p, int ct, const B2bTileRows& tile, Acc0& acc0,
                                            const B1Chunk& b1_chunk, uint8_t* d1_stage) {
  const auto rP = d0_operand<Cfg, N0>(p, ct, tile.z, acc0, 0);
  typename Cfg::Mma1 mma1;
  CUTE_NO_UNROLL
  for (int chunk = 0; chunk < Cfg::kB1Chunks; ++chunk) {
    if (Cfg::kB1Resident < Cfg::kB1Chunks && chunk == Cfg::kB1Resident) {  // the chunk loaded through the ring
      cp_async_wait<0>();
      cutlass::arch::fence_view_async_shared();  // visible to wgmma (async proxy)
      cutlass::arch::NamedBarrier::sync(kConsumerThreads, kConsumerBarrier);  // every thread's part
    }
    Tensor acc1 = partition_fragment_C(mma1, Shape<Int<kM>, Int<Cfg::kN1Chunk>>{});
    gemm1_block<Cfg, N0>(ct, rP, b1_chunk(chunk), acc1, false);
    store_d1_chunk<Cfg, N1>(p, ct, tile, acc1, chunk, d1_stage);
  }
}

// A0's k-tile kt of the tile's rows into ring stage st, with copy `g2s` (its thread slice thr_copy):
// from A0 (rows row0.., batch z) or, for a convolution, gathered from X at this thread's rows'
// pixels. Rows past the matrix are not loaded: their shared rows hold stale data, which only
// reaches accumulator rows that are never stored. Then B0's k-tile of rows (D0 columns) b0_row0 ..
// + N0 - 1 (int8: rows permuted within each 32, s8_d0_column, the top of this file).
template <class Cfg, int N0, class Copy, class ThrCopy, class TAs, class TAc, class TBs, class TBc, int kARows>
__device__ __forceinline__ void load_k_tile(const B2bArgs& p, const Copy& g2s, const ThrCopy& thr_copy, const TAs& tAs,
                                            const TAc& tAc, const TBs& tBs, const TBc& tBc, const B2bTileRows& t,
                                            const ConvPixel (&pixels)[kARows], int kt, int st, int64_t b0_row0 = 0) {
  using T = typename Cfg::Element;
  const int64_t k0 = p.k0;
  if (p.conv_c > 0) {
    const ConvTap tap = conv_tap(p, int64_t(kt) * kK);
    const int conv_byte = get<1>(tAc(0, 0, 0)) * int(sizeof(T));
    CUTE_UNROLL
    for (int m = 0; m < kARows; ++m)
      if (get<0>(tAc(0, m, 0)) < t.valid)
        conv_copy16(raw_pointer_cast(&tAs(0, m, 0, st)), p, pixels[m], tap, int(sizeof(T)), conv_byte);
  } else {
    const T* a = static_cast<const T*>(p.a0) + t.z * p.stride_a0 + t.row0 * k0 + int64_t(kt) * kK;
    Tensor tAg = thr_copy.partition_S(make_tensor(make_gmem_ptr(a), make_shape(Int<kM>{}, Int<kK>{}), make_stride(k0, Int<1>{})));
    CUTE_UNROLL
    for (int m = 0; m < kARows; ++m)
      if (get<0>(tAc(0, m, 0)) < t.valid) copy(g2s, tAg(_, m, _), tAs(_, m, _, st));
  }
  const T* b0 = static_cast<const T*>(p.b0) + t.z * p.stride_b0 + b0_row0 * k0 + int64_t(kt) * kK;
  if constexpr (Cfg::kInt8) {
    CUTE_UNROLL
    for (int n = 0; n < size<1>(tBs); ++n) {
      const int row = get<0>(tBc(0, n, 0)), col = get<1>(tBc(0, n, 0));
      cp_async16_zfill(raw_pointer_cast(&tBs(0, n, 0, st)), b0 + int64_t(s8_d0_column(row)) * k0 + col, true);
    }
  } else {
    copy(g2s, thr_copy.partition_S(make_tensor(make_gmem_ptr(b0), make_shape(Int<N0>{}, Int<kK>{}), make_stride(k0, Int<1>{}))),
         tBs(_, _, _, st));
  }
}

// The pixels of this thread's A rows (the copy's row mode; one 16-byte vector a row and k-tile).
template <int kARows, class TAc>
__device__ __forceinline__ void tile_pixels(const B2bArgs& p, const TAc& tAc, const B2bTileRows& t, ConvPixel (&pixels)[kARows]) {
  if (p.conv_c <= 0) return;
  CUTE_UNROLL
  for (int m = 0; m < kARows; ++m) {
    const int r = get<0>(tAc(0, m, 0));
    pixels[m] = conv_pixel(p, t.row0 + (r < t.valid ? r : t.valid - 1));
  }
}

// ---- One CTA a tile (policy.hpp): 256 threads fill the ring and run both GEMMs ----
template <class T, int N0, int N1>
__global__ void __launch_bounds__(B2bSm90Policy::kTileThreads, B2bSm90Policy::tile_min_ctas_per_sm(N0, int(sizeof(T))))
    b2b_sm90_tile_kernel(B2bArgs p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Cfg = B2bSm90Config<T, N0, N1>;
  constexpr int kStages = Cfg::kStages;
  extern __shared__ __align__(128) char smem_buf[];
  auto& ss = *reinterpret_cast<typename Cfg::Smem*>(smem_buf);
  Tensor sA = make_tensor(make_smem_ptr(ss.a), typename Cfg::SmemA{});     // (128, 64, stages)
  Tensor sB0 = make_tensor(make_smem_ptr(ss.b0), typename Cfg::SmemB0{});  // (n0, 64, stages)
  const B2bTileRows tile = b2b_tile_rows(p);
  const int k_tiles = static_cast<int>(p.k0 / kK);

  typename Cfg::Copy g2s;
  auto thr_copy = g2s.get_slice(threadIdx.x);
  Tensor tAs = thr_copy.partition_D(sA);  // (CPY, CPY_M, CPY_K, stages)
  Tensor tAc = thr_copy.partition_S(make_identity_tensor(make_shape(Int<kM>{}, Int<kK>{})));
  Tensor tBs = thr_copy.partition_D(sB0);
  Tensor tBc = thr_copy.partition_S(make_identity_tensor(make_shape(Int<N0>{}, Int<kK>{})));
  constexpr int kARows = decltype(size<1>(tAs))::value;
  static_assert(decltype(size<2>(tAs))::value == 1, "one vector a row and k-tile");
  ConvPixel pixels[kARows];
  tile_pixels(p, tAc, tile, pixels);
  auto load_stage = [&](int kt) {
    if (kt < k_tiles) load_k_tile<Cfg, N0>(p, g2s, thr_copy, tAs, tAc, tBs, tBc, tile, pixels, kt, kt % kStages);
    cp_async_fence();
  };
  // B1's resident chunks, in cp.async groups ahead of the ring's (waited for by GEMM 0's first k-tile)
  CUTE_UNROLL
  for (int c = 0; c < Cfg::kB1Resident; ++c) load_b1_chunk<Cfg, N0>(p, threadIdx.x, tile.z, c, ss.b1 + c * Cfg::kB1ChunkElems);
  CUTE_UNROLL
  for (int s = 0; s < kStages - 1; ++s) load_stage(s);

  // ---- GEMM 0: wgmma, A0 and B0 from shared memory ----
  typename Cfg::Mma0 mma0;
  auto thr0 = mma0.get_slice(threadIdx.x);
  Tensor tCrA = thr0.make_fragment_A(thr0.partition_A(sA));  // descriptors (MMA, MMA_M, MMA_K, stages)
  Tensor tCrB = thr0.make_fragment_B(thr0.partition_B(sB0));
  Tensor acc0 = partition_fragment_C(mma0, Shape<Int<kM>, Int<N0>>{});
  clear(acc0);
  mma0.accumulate_ = GMMA::ScaleOut::One;
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<kStages - 2>();              // this thread's copies of k-tile kt have landed
    cutlass::arch::fence_view_async_shared();  // ... and are visible to wgmma (async proxy)
    __syncthreads();                           // everyone's; and k-tile kt-1's stage is free
    load_stage(kt + kStages - 1);
    const int st = kt % kStages;
    wgmma_batch<0>(mma0, tCrA(_, _, _, st), tCrB(_, _, _, st), acc0);
  }
  cp_async_wait<0>();
  cutlass::arch::fence_view_async_shared();
  __syncthreads();  // B1 visible; every wgmma reading the ring has completed: D1's staging and B1 may take it
  static_assert(sizeof(ss.a) >= Cfg::kD1StageBytes, "D1's staging fits in A0's ring");
  // A chunk of B1 that is not resident: into the ring's B0 half, while GEMM 1 runs on the first
  // (config: it fits; finish_tile waits for it).
  if constexpr (Cfg::kB1Resident < Cfg::kB1Chunks)
    load_b1_chunk<Cfg, N0>(p, threadIdx.x, tile.z, Cfg::kB1Resident, ss.b0);
  auto b1_chunk = [&](int c) { return c < Cfg::kB1Resident ? ss.b1 + c * Cfg::kB1ChunkElems : ss.b0; };
  finish_tile<Cfg, N0, N1>(p, threadIdx.x, tile, acc0, b1_chunk, reinterpret_cast<uint8_t*>(ss.a));
#endif
}

// ---- n0 past 256 (b2b_chunked_n0; one CTA a tile, policy.hpp chunked_stages) ----
// For each of D1's column chunks c1 and each of D0's column chunks j (N0 = kB2bN0Chunk columns):
// GEMM 0 for D0's columns j N0 .. (A0's k-tiles again for every chunk, from L2 after the first),
// epilogue 0, and acc1 (+)= D0's chunk x B1's block (c1, j); after the last j, D1's chunk c1. With
// n1 > kN1Chunk GEMM 0 is recomputed for each c1 (acc1 of all of n1 would not fit the registers
// beside acc0). The k-tiles of all blocks q = c1 J + j are one flat stream g = q KT + kt through
// the ring, loaded `ahead` = min(kStages - 2, KT) k-tiles ahead across block boundaries (so the next
// block's loads overlap this block's epilogue 0, GEMM 1 and stores), and GEMM 0 keeps k-tile g's
// wgmma in flight while iteration g + 1 waits, synchronises and loads: the stage iteration g loads
// (k-tile g + ahead) was last read by k-tile g + ahead - kStages <= g - 2, whose wgmma every thread
// completed (wait<1> in iteration g - 1) before iteration g's barrier. B1's block q goes into its
// one buffer in iteration q KT's cp.async group, after that iteration's barrier, which every thread
// passes only after GEMM 1 of block q - 1; GEMM 1 of block q reads it after iteration q KT + KT - 1,
// whose wait covers that group when KT - 1 >= ahead, and otherwise waits for it itself. D1 is staged
// in a buffer of its own (the ring is busy with the next block).
template <class T, int N1>
using ChunkedConfig =
    B2bSm90Config<T, kB2bN0Chunk, N1, B2bSm90Policy::chunked_stages(N1, int(sizeof(T))), 1>;
template <class T, int N1>
struct B2bSm90ChunkedSmem {
  using Cfg = ChunkedConfig<T, N1>;
  alignas(128) T a[cosize_v<typename Cfg::SmemA>];
  alignas(128) T b0[cosize_v<typename Cfg::SmemB0>];
  alignas(128) T b1[Cfg::kB1ChunkElems];
  alignas(128) uint8_t d1_stage[Cfg::kD1StageBytes];
};

// cp.async.wait_group with a runtime count n <= kMax: at most n of this thread's groups pending.
template <int kMax>
__device__ __forceinline__ void cp_async_wait_at_most(int n) {
  if constexpr (kMax == 0) {
    cp_async_wait<0>();
  } else {
    if (n >= kMax)
      cp_async_wait<kMax>();
    else
      cp_async_wait_at_most<kMax - 1>(n);
  }
}

template <class T, int N1>
__global__ void __launch_bounds__(B2bSm90Policy::kTileThreads, 1) b2b_sm90_chunked_kernel(B2bArgs p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int N0 = kB2bN0Chunk;
  using Cfg = ChunkedConfig<T, N1>;
  constexpr int kStages = Cfg::kStages, kInFlight = B2bSm90Policy::kChunkedInFlight;
  static_assert(kInFlight == 1 && kStages >= kInFlight + 2, "a ring one k-tile ahead beside the wgmma in flight");
  extern __shared__ __align__(128) char smem_buf[];
  auto& ss = *reinterpret_cast<B2bSm90ChunkedSmem<T, N1>*>(smem_buf);
  Tensor sA = make_tensor(make_smem_ptr(ss.a), typename Cfg::SmemA{});     // (128, 64, stages)
  Tensor sB0 = make_tensor(make_smem_ptr(ss.b0), typename Cfg::SmemB0{});  // (N0, 64, stages)
  const B2bTileRows tile = b2b_tile_rows(p);
  const int k_tiles = static_cast<int>(p.k0 / kK), n0_chunks = static_cast<int>(p.n0 / N0);
  const int blocks = Cfg::kB1Chunks * n0_chunks, total = blocks * k_tiles;
  const int ahead = k_tiles < kStages - 1 - kInFlight ? k_tiles : kStages - 1 - kInFlight;

  typename Cfg::Copy g2s;
  auto thr_copy = g2s.get_slice(threadIdx.x);
  Tensor tAs = thr_copy.partition_D(sA);  // (CPY, CPY_M, CPY_K, stages)
  Tensor tAc = thr_copy.partition_S(make_identity_tensor(make_shape(Int<kM>{}, Int<kK>{})));
  Tensor tBs = thr_copy.partition_D(sB0);
  Tensor tBc = thr_copy.partition_S(make_identity_tensor(make_shape(Int<N0>{}, Int<kK>{})));
  constexpr int kARows = decltype(size<1>(tAs))::value;
  static_assert(decltype(size<2>(tAs))::value == 1, "one vector a row and k-tile");
  ConvPixel pixels[kARows];
  tile_pixels(p, tAc, tile, pixels);
  auto load_k = [&](int g) {  // k-tile g of the stream (not committed)
    if (g < total) {
      const int kt = g % k_tiles, j = (g / k_tiles) % n0_chunks;
      load_k_tile<Cfg, N0>(p, g2s, thr_copy, tAs, tAc, tBs, tBc, tile, pixels, kt, g % kStages, int64_t(j) * N0);
    }
  };
  for (int g = 0; g < ahead; ++g) {
    load_k(g);
    cp_async_fence();
  }

  typename Cfg::Mma0 mma0;
  auto thr0 = mma0.get_slice(threadIdx.x);
  Tensor tCrA = thr0.make_fragment_A(thr0.partition_A(sA));  // descriptors (MMA, MMA_M, MMA_K, stages)
  Tensor tCrB = thr0.make_fragment_B(thr0.partition_B(sB0));
  typename Cfg::Mma1 mma1;
  Tensor acc0 = partition_fragment_C(mma0, Shape<Int<kM>, Int<N0>>{});
  Tensor acc1 = partition_fragment_C(mma1, Shape<Int<kM>, Int<Cfg::kN1Chunk>>{});
  mma0.accumulate_ = GMMA::ScaleOut::One;
  int g = 0;
  for (int q = 0; q < blocks; ++q) {
    const int j = q % n0_chunks, c1 = q / n0_chunks;
    clear(acc0);
    for (int kt = 0; kt < k_tiles; ++kt, ++g) {
      cp_async_wait_at_most<kStages - 2>(ahead - 1);  // this thread's copies of k-tile g have landed
      cutlass::arch::fence_view_async_shared();       // ... and are visible to wgmma (async proxy)
      __syncthreads();  // everyone's; every wgmma of k-tile g - 2 and GEMM 1 of block q - 1 are done
      load_k(g + ahead);
      if (kt == 0) load_b1_block<Cfg, N0>(p, threadIdx.x, tile.z, c1, int64_t(j) * N0, ss.b1);
      cp_async_fence();
      const int st = g % kStages;
      // k-tile g - 1's wgmma has completed on return; g's may run on
      wgmma_batch<kInFlight>(mma0, tCrA(_, _, _, st), tCrB(_, _, _, st), acc0);
    }
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc0);
    if (k_tiles - 1 < ahead) {  // B1's block may still be in flight: the iteration's waits did not cover it
      cp_async_wait_at_most<kStages - 2>(k_tiles - 1);  // the k_tiles - 1 groups committed after its own may pend
      cutlass::arch::fence_view_async_shared();
      __syncthreads();
    }
    const auto rP = d0_operand<Cfg, N0>(p, threadIdx.x, tile.z, acc0, int64_t(j) * N0);
    gemm1_block<Cfg, N0>(threadIdx.x, rP, ss.b1, acc1, j > 0);
    if (j == n0_chunks - 1) store_d1_chunk<Cfg, N1>(p, threadIdx.x, tile, acc1, c1, ss.d1_stage);
  }
#endif
}

// ---- Warp-specialised and persistent (policy.hpp) ----
// A CTA runs tiles w = blockIdx.x, + gridDim.x, ... of the work (grid_tiles row tiles times the
// batch, w = z grid_tiles + x). Its producer warp group streams A0's and B0's k-tiles of those tiles
// through the ring (cutlass::PipelineAsync: a stage's full barrier completes when the producer's 128
// cp.async arrivals have landed, its empty barrier when both consumer warp groups have finished the
// wgmma reading it), so the next tile's k-tiles load while the consumers convert D0, run GEMM 1 and
// store D1. The consumers load B1 (once a batch) themselves, synchronised among the 256 of them by a
// named barrier.
template <class T, int N0, int N1>
using WsConfig = B2bSm90Config<T, N0, N1, B2bSm90Policy::ws_stages(N0, N1, int(sizeof(T))), B2bSm90Policy::b1_chunks(N1)>;
template <class T, int N0, int N1>
struct B2bSm90WsSmem {
  typename WsConfig<T, N0, N1>::Smem tiles;
  alignas(128) uint8_t d1_stage[WsConfig<T, N0, N1>::kD1StageBytes];
  typename cutlass::PipelineAsync<WsConfig<T, N0, N1>::kStages>::SharedStorage pipe;
};

template <class T, int N0, int N1>
__global__ void __launch_bounds__(B2bSm90Policy::kWsThreads, 1)
    b2b_sm90_ws_kernel(B2bArgs p, int64_t grid_tiles, int64_t work) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Cfg = WsConfig<T, N0, N1>;
  using Pipeline = cutlass::PipelineAsync<Cfg::kStages>;
  extern __shared__ __align__(128) char smem_buf[];
  auto& sm = *reinterpret_cast<B2bSm90WsSmem<T, N0, N1>*>(smem_buf);
  Tensor sA = make_tensor(make_smem_ptr(sm.tiles.a), typename Cfg::SmemA{});     // (128, 64, stages)
  Tensor sB0 = make_tensor(make_smem_ptr(sm.tiles.b0), typename Cfg::SmemB0{});  // (n0, 64, stages)
  static_assert(Cfg::kB1Resident == Cfg::kB1Chunks, "all of B1 resident");

  const bool producer = threadIdx.x < kProducerThreads;
  typename Pipeline::Params pp;
  pp.role = producer ? Pipeline::ThreadCategory::Producer : Pipeline::ThreadCategory::Consumer;
  pp.producer_arv_count = kProducerThreads;
  pp.consumer_arv_count = kConsumerThreads;
  Pipeline pipeline(sm.pipe, pp);
  __syncthreads();  // the barriers' initialisation is visible to every thread

  const int k_tiles = static_cast<int>(p.k0 / kK);
  if (producer) {
    // ---- The producer: every k-tile of this CTA's tiles, at most kStages ahead of the consumers ----
    typename Cfg::ProducerCopy g2s;
    auto thr_copy = g2s.get_slice(threadIdx.x);
    Tensor tAs = thr_copy.partition_D(sA);
    Tensor tAc = thr_copy.partition_S(make_identity_tensor(make_shape(Int<kM>{}, Int<kK>{})));
    Tensor tBs = thr_copy.partition_D(sB0);
    Tensor tBc = thr_copy.partition_S(make_identity_tensor(make_shape(Int<N0>{}, Int<kK>{})));
    constexpr int kARows = decltype(size<1>(tAs))::value;
    static_assert(decltype(size<2>(tAs))::value == 1, "one vector a row and k-tile");
    auto state = cutlass::make_producer_start_state<Pipeline>();
    for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
      const B2bTileRows t = b2b_tile_rows(p, w % grid_tiles, w / grid_tiles);
      ConvPixel pixels[kARows];
      tile_pixels(p, tAc, t, pixels);
      for (int kt = 0; kt < k_tiles; ++kt) {
        pipeline.producer_acquire(state);
        load_k_tile<Cfg, N0>(p, g2s, thr_copy, tAs, tAc, tBs, tBc, t, pixels, kt, static_cast<int>(state.index()));
        // The full barrier counts each producer thread once, when its copies of this stage have
        // landed (cp.async.mbarrier.arrive.noinc: that asynchronous arrival is the thread's one).
        cutlass::arch::cpasync_barrier_arrive_noinc(pipeline.producer_get_barrier(state.index()));
        ++state;
      }
    }
    // Exit only after the consumers have released every stage (CUTLASS's load tail).
    pipeline.producer_tail(state);
    return;
  }

  // ---- The consumers ----
  const int ct = threadIdx.x - kProducerThreads;
  typename Cfg::Mma0 mma0;
  auto thr0 = mma0.get_slice(ct);
  Tensor tCrA = thr0.make_fragment_A(thr0.partition_A(sA));  // descriptors (MMA, MMA_M, MMA_K, stages)
  Tensor tCrB = thr0.make_fragment_B(thr0.partition_B(sB0));
  typename Pipeline::PipelineState state;  // stage 0, phase 0
  int64_t b1_z = -1;                        // the batch whose B1 is in shared memory
  for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
    const B2bTileRows tile = b2b_tile_rows(p, w % grid_tiles, w / grid_tiles);
    if (tile.z != b1_z) {  // B1 of this batch (once, unless batched): every earlier GEMM 1 is done with it
      cutlass::arch::NamedBarrier::sync(kConsumerThreads, kConsumerBarrier);
      CUTE_UNROLL
      for (int c = 0; c < Cfg::kB1Chunks; ++c) load_b1_chunk<Cfg, N0>(p, ct, tile.z, c, sm.tiles.b1 + c * Cfg::kB1ChunkElems);
      cp_async_wait<0>();
      cutlass::arch::fence_view_async_shared();  // visible to wgmma (async proxy)
      cutlass::arch::NamedBarrier::sync(kConsumerThreads, kConsumerBarrier);
      b1_z = tile.z;
    }
    // ---- GEMM 0: wgmma, A0 and B0 from the ring ----
    Tensor acc0 = partition_fragment_C(mma0, Shape<Int<kM>, Int<N0>>{});
    clear(acc0);
    mma0.accumulate_ = GMMA::ScaleOut::One;
    for (int kt = 0; kt < k_tiles; ++kt) {
      pipeline.consumer_wait(state);             // the producer's cp.async of this stage have landed
      cutlass::arch::fence_view_async_shared();  // ... and are visible to wgmma (async proxy)
      const int st = static_cast<int>(state.index());
      wgmma_batch<0>(mma0, tCrA(_, _, _, st), tCrB(_, _, _, st), acc0);
      pipeline.consumer_release(state);  // the stage may be refilled
      ++state;
    }
    finish_tile<Cfg, N0, N1>(p, ct, tile, acc0, [&](int c) { return sm.tiles.b1 + c * Cfg::kB1ChunkElems; },
                             sm.d1_stage);
  }
#endif
}

// persistent_ctas == 0: one CTA a tile; > 0: the warp-specialised persistent grid of that many CTAs
// (the b2b planner's choice, Plan::persistent_ctas).
template <class T, int N0, int N1>
cudaError_t launch(const B2bArgs& args, int64_t tiles, int batch, int64_t persistent_ctas, cudaStream_t stream) {
  cudaError_t e = cudaSuccess;
  if (persistent_ctas == 0) {
    auto kernel = b2b_sm90_tile_kernel<T, N0, N1>;
    static_assert(sizeof(typename B2bSm90Config<T, N0, N1>::Smem) <= 227 * 1024, "the H100's shared memory a CTA");
    const int smem = static_cast<int>(sizeof(typename B2bSm90Config<T, N0, N1>::Smem));
    if ((e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)) != cudaSuccess) return e;
    kernel<<<dim3(static_cast<unsigned>(tiles), 1, static_cast<unsigned>(batch)), B2bSm90Policy::kTileThreads, smem,
             stream>>>(args);
    return cudaGetLastError();
  }
  if constexpr (B2bSm90Policy::ws_supports(N0, int(sizeof(T)))) {  // (none built for int8 n0 = 128 or n0 = 256)
    if (args.conv_c > 0 || persistent_ctas > 0x7fffffffLL) return cudaErrorInvalidValue;
    auto kernel = b2b_sm90_ws_kernel<T, N0, N1>;
    static_assert(sizeof(B2bSm90WsSmem<T, N0, N1>) <= 227 * 1024, "the H100's shared memory a CTA");
    const int smem = static_cast<int>(sizeof(B2bSm90WsSmem<T, N0, N1>));
    if ((e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)) != cudaSuccess) return e;
    kernel<<<static_cast<unsigned>(persistent_ctas), B2bSm90Policy::kWsThreads, smem, stream>>>(args, tiles,
                                                                                                 tiles * batch);
    return cudaGetLastError();
  }
  return cudaErrorInvalidValue;
}

// n0 past 256 (b2b_chunked_n0): the chunked kernel, one CTA a tile.
template <class T, int N1>
cudaError_t launch_chunked(const B2bArgs& args, int64_t tiles, int batch, cudaStream_t stream) {
  auto kernel = b2b_sm90_chunked_kernel<T, N1>;
  static_assert(sizeof(B2bSm90ChunkedSmem<T, N1>) <= 227 * 1024, "the H100's shared memory a CTA");
  const int smem = static_cast<int>(sizeof(B2bSm90ChunkedSmem<T, N1>));
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (e != cudaSuccess) return e;
  kernel<<<dim3(static_cast<unsigned>(tiles), 1, static_cast<unsigned>(batch)), B2bSm90Policy::kTileThreads, smem,
           stream>>>(args);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_chunked_n1(const B2bArgs& a, int n1, int64_t tiles, int batch, int64_t ctas, cudaStream_t s) {
  if (ctas != 0) return cudaErrorInvalidValue;  // (no warp-specialised schedule for it)
  switch (n1) {
    case 64: return launch_chunked<T, 64>(a, tiles, batch, s);
    case 128: return launch_chunked<T, 128>(a, tiles, batch, s);
    case 256: return launch_chunked<T, 256>(a, tiles, batch, s);
  }
  return cudaErrorInvalidValue;
}

template <class T, int N0>
cudaError_t launch_n1(const B2bArgs& a, int n1, int64_t tiles, int batch, int64_t ctas, cudaStream_t s) {
  switch (n1) {
    case 64: return launch<T, N0, 64>(a, tiles, batch, ctas, s);
    case 128: return launch<T, N0, 128>(a, tiles, batch, ctas, s);
    case 256: return launch<T, N0, 256>(a, tiles, batch, ctas, s);
  }
  return cudaErrorInvalidValue;
}

template <class T>
cudaError_t launch_n0(const B2bArgs& a, int n0, int n1, int64_t tiles, int batch, int64_t ctas, cudaStream_t s) {
  switch (n0) {
    case 64: return launch_n1<T, 64>(a, n1, tiles, batch, ctas, s);
    case 128: return launch_n1<T, 128>(a, n1, tiles, batch, ctas, s);
    case 256: return launch_n1<T, 256>(a, n1, tiles, batch, ctas, s);
  }
  if (b2b_chunked_n0(n0)) return launch_chunked_n1<T>(a, n1, tiles, batch, ctas, s);
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t launch_b2b_sm90(const B2bArgs& args, bool int8, int n0, int n1, int64_t grid_tiles, int batch,
                            int64_t persistent_ctas, cudaStream_t stream) {
  if (grid_tiles <= 0 || batch <= 0) return cudaSuccess;
  if (grid_tiles > 0x7fffffffLL || batch > 65535 || args.k0 % kK != 0 || args.d0_out ||
      (args.conv_c > 0 && !B2bSm90Policy::supports_conv_c(args.conv_c)))
    return cudaErrorInvalidValue;
  if (persistent_ctas < 0 || args.n0 != n0) return cudaErrorInvalidValue;
  return int8 ? launch_n0<int8_t>(args, n0, n1, grid_tiles, batch, persistent_ctas, stream)
              : launch_n0<half_t>(args, n0, n1, grid_tiles, batch, persistent_ctas, stream);
}
bool b2b_sm90_built() { return true; }

}  // namespace kernels
}  // namespace ozgemm

#else  // !OZGEMM_BUILD_SM90_FUSED

namespace ozgemm {
namespace kernels {
cudaError_t launch_b2b_sm90(const B2bArgs&, bool, int, int, int64_t, int, int64_t, cudaStream_t) {
  return cudaErrorNotSupported;
}
bool b2b_sm90_built() { return false; }
}  // namespace kernels
}  // namespace ozgemm

#endif
