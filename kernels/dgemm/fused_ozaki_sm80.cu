// kernels/dgemm/fused_ozaki_sm80.cu — the portable partially and fully fused Ozaki-I GEMM:
// mma.sync s8 x s8 -> s32 (SM80_16x8x32) with a cp.async multistage pipeline, through CUTLASS's
// sm80 mainloop collective. Runs on Ampere, Ada and Hopper (built for every architecture in
// OZGEMM_CUDA_ARCHITECTURES). Same diagonal walk as the Hopper kernel (fused_ozaki_sm90.cu):
// one 128 x 128 tile of C per CTA (256 threads, 8 warps as 4 x 2), diagonal d = s-1 .. 0 and
// k-block b as the contiguous k-range A_d .. A_0 against B_0 .. B_d of block b, accumulator
// cleared per (d, b), then consume_kblock (fused_tile_epilogue.cuh): fully fused, FP64
// reconstruction in registers in the order of ozgemm/numerics/ozaki1.hpp and C written once;
// partially fused, int32 planes for launch_reconstruct_epilogue. Configuration: policy.hpp
// (PortableFusedPolicy).
#include "kernels/dgemm/launch.hpp"

#if defined(OZGEMM_BUILD_PORTABLE_FUSED)

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/gemm/collective/collective_mma.hpp>
#include <cutlass/gemm/dispatch_policy.hpp>

#include "kernels/dgemm/fused_tile_epilogue.cuh"

namespace ozgemm {
namespace kernels {

namespace {

using namespace cute;
namespace nm = ozgemm::numerics;

using Policy = PortableFusedPolicy;
constexpr int kTileM = Policy::kTileM, kTileN = Policy::kTileN, kTileK = Policy::kTileK;
constexpr int kStages = Policy::kStages, kThreads = Policy::kThreads;
using TileShape = Shape<Int<kTileM>, Int<kTileN>, Int<kTileK>>;
using Stride = cute::Stride<int64_t, Int<1>, int64_t>;  // (rows, k, l), k contiguous
// 8 warps as 4 (M) x 2 (N); each pass of the tiled MMA covers 64 x 32 x 32.
using TiledMma = TiledMMA<MMA_Atom<SM80_16x8x32_S32S8S8S32_TN>, Layout<Shape<_4, _2, _1>>, Tile<_64, _32, _32>>;
// 64-byte k-rows of int8, swizzled for conflict-free ldmatrix.
using SmemLayoutAtom = decltype(composition(Swizzle<2, 4, 3>{}, Layout<Shape<_16, _64>, cute::Stride<_64, _1>>{}));
using GmemCopy = decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<uint128_t>, int8_t>{},
                                          Layout<Shape<_64, _4>, cute::Stride<_4, _1>>{},  // 256 threads
                                          Layout<Shape<_1, _16>>{}));                     // 16 bytes each
using Mainloop = cutlass::gemm::collective::CollectiveMma<
    cutlass::gemm::MainloopSm80CpAsync<kStages, Shape<_1, _1, _1>>, TileShape, int8_t, Stride, int8_t, Stride, TiledMma,
    GmemCopy, SmemLayoutAtom, Copy_Atom<SM75_U32x4_LDSM_N, int8_t>, cute::identity, GmemCopy, SmemLayoutAtom,
    Copy_Atom<SM75_U32x4_LDSM_N, int8_t>, cute::identity>;

struct SharedStorage {
  typename Mainloop::SharedStorage mainloop;
  int32_t shift_a[kTileM];
  int32_t shift_b[kTileN];
};

template <FusedMode kMode>
__global__ void __launch_bounds__(kThreads, 1) fused_ozaki_portable_kernel(FusedArgs a) {
  constexpr bool kFully = kMode != FusedMode::Partial;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(128) char smem_buf[];
  SharedStorage& ss = *reinterpret_cast<SharedStorage*>(smem_buf);
  const int s = a.s;
  const int k_tiles = static_cast<int>(a.layout_a.kblock / kTileK);
  const int64_t tile_row0 = a.row0 + int64_t(blockIdx.x) * kTileM;
  const int64_t tile_col0 = a.col0 + int64_t(blockIdx.y) * kTileN;
  if (kFully) {
    for (int i = threadIdx.x; i < kTileM + kTileN; i += kThreads) {
      if (i < kTileM)
        ss.shift_a[i] = tile_row0 + i < a.m_pad ? a.shift_a[tile_row0 + i] : 0;
      else
        ss.shift_b[i - kTileM] = tile_col0 + (i - kTileM) < a.n_pad ? a.shift_b[tile_col0 + (i - kTileM)] : 0;
    }
  }
  // The whole sliced operands as (rows, k) tensors, tiled: (BLK, BLK_K, k-tiles).
  const int K = static_cast<int>(a.layout_a.ld);
  Tensor mA = make_tensor(make_gmem_ptr(a.slices_a), make_shape(int(a.m_pad), K), make_stride(int64_t(a.layout_a.ld), Int<1>{}));
  Tensor mB = make_tensor(make_gmem_ptr(a.slices_b), make_shape(int(a.n_pad), K), make_stride(int64_t(a.layout_b.ld), Int<1>{}));
  const auto cta = make_coord(int(tile_row0 / kTileM), int(tile_col0 / kTileN), _);
  Tensor gA = local_tile(mA, TileShape{}, cta, Step<_1, Underscore, _1>{});
  Tensor gB = local_tile(mB, TileShape{}, cta, Step<Underscore, _1, _1>{});
  // Rows/columns past the padded operands are predicated off (zero in shared memory).
  const auto residue = make_tuple(int(a.m_pad - tile_row0), int(a.n_pad - tile_col0), 0);

  TiledMma mma;
  Tensor accum = partition_fragment_C(mma, take<0, 2>(TileShape{}));
  Tensor coords = mma.get_slice(threadIdx.x).partition_C(make_identity_tensor(take<0, 2>(TileShape{})));
  constexpr int kFrag = decltype(size(accum))::value;
  double acc64[kMode == FusedMode::FullyRegisters ? kFrag : 1];
  if constexpr (kMode == FusedMode::FullyRegisters) {
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kFrag; ++i) acc64[i] = 0.0;
  }
  __syncthreads();  // shifts visible
  Mainloop mainloop;
  ThreadRange range{};
  if constexpr (kFully) range = thread_range<kFrag>(a, coords, ss.shift_a, ss.shift_b, tile_row0, tile_col0);
  const SpillSlot spill =
      spill_slot(a, blockIdx.x + int64_t(blockIdx.y) * gridDim.x, kTileM * kTileN, kThreads, int(threadIdx.x));
  for (int d = s - 1; d >= 0; --d)
    for (int b = 0; b < a.kblocks(); ++b) {
      // In k-block b: A_d .. A_0 and B_0 .. B_d, in k-tiles (SliceLayout::diagonal_start).
      const int a0 = static_cast<int>(a.layout_a.diagonal_start(d, b) / kTileK);
      const int b0 = static_cast<int>(a.layout_b.diagonal_start(d, b) / kTileK), count = (d + 1) * k_tiles;
      clear(accum);
      // The collective waits for all its copies and synchronises before returning.
      mainloop(accum, domain_offset(make_coord(0, 0, a0), gA), domain_offset(make_coord(0, 0, b0), gB), accum,
               make_coord_iterator(count), count, residue, int(threadIdx.x), reinterpret_cast<char*>(&ss.mainloop));
      consume_kblock<kMode, kFrag>(a, accum, coords, acc64, d, b, ss.shift_a, ss.shift_b, tile_row0, tile_col0, spill, range);
    }
  if constexpr (kMode == FusedMode::FullyRegisters)
    write_c_tile<kFrag>(a, acc64, coords, ss.shift_a, ss.shift_b, tile_row0, tile_col0, range);
#endif
}

template <FusedMode kMode>
cudaError_t launch(const FusedArgs& args, cudaStream_t stream) {
  constexpr bool kFully = kMode != FusedMode::Partial;
  if (args.layout_a.kblock % kTileK != 0 || args.row0 % kTileM != 0 || args.col0 % kTileN != 0) return cudaErrorInvalidValue;
  if (args.kblocks() < 1 || args.layout_a.ld > INT32_MAX || args.layout_b.ld != args.layout_a.ld)
    return cudaErrorInvalidValue;
  const int64_t rows = kFully ? args.m : args.rows, cols = kFully ? args.n : args.cols;
  const FusedGrid g = fused_grid(rows, cols, Policy::tile());
  const dim3 grid(static_cast<unsigned>(g.tiles_m), static_cast<unsigned>(g.tiles_n));
  if (g.tiles_n > kMaxGridY) return cudaErrorInvalidValue;
  if (kFully && args.spill_capacity < numerics::SpillLayout::entries(args.kblocks(), g.tiles(), int64_t(kTileM) * kTileN))
    return cudaErrorInvalidValue;
  const int smem = static_cast<int>(sizeof(SharedStorage));
  auto kernel = fused_ozaki_portable_kernel<kMode>;
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (e != cudaSuccess) return e;
  kernel<<<grid, kThreads, smem, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_fused_portable(const FusedArgs& args, FusedMode mode, cudaStream_t stream) {
  switch (mode) {
    case FusedMode::Partial: return launch<FusedMode::Partial>(args, stream);
    case FusedMode::FullyRegisters: return launch<FusedMode::FullyRegisters>(args, stream);
    case FusedMode::FullyGlobal: return launch<FusedMode::FullyGlobal>(args, stream);
  }
  return cudaErrorInvalidValue;
}
bool fused_portable_built() { return true; }

}  // namespace kernels
}  // namespace ozgemm

#else  // !OZGEMM_BUILD_PORTABLE_FUSED

namespace ozgemm {
namespace kernels {
cudaError_t launch_fused_portable(const FusedArgs&, FusedMode, cudaStream_t) { return cudaErrorNotSupported; }
bool fused_portable_built() { return false; }
}  // namespace kernels
}  // namespace ozgemm

#endif
