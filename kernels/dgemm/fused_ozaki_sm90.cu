// kernels/dgemm/fused_ozaki_sm90.cu — partially and fully fused Ozaki-I GEMM for Hopper (sm_90a).
//
// Structure (one CTA per 128 x 128 tile of C, 384 threads):
//   warp group 0  producer: one elected thread issues TMA loads of 128 x 128 int8 tiles of the
//                 sliced A and B into a multi-stage shared-memory ring (CUTLASS PipelineTmaAsync);
//   warp groups 1-2 consumers: CUTLASS's sm90 mainloop collective (wgmma s8 x s8 -> s32) over
//                 each anti-diagonal's k-range, accumulator cleared per diagonal.
// Diagonal d = i + j within k-block b is ONE contiguous k-range in the SliceLayout
// (ozgemm/numerics/slice_layout.hpp): A tiles from layout_a.diagonal_start(d, b) (slices A_d .. A_0),
// B tiles from layout_b.diagonal_start(d, b) (B_0 .. B_d), (d+1)*kblock long. The int32 sums are
// exact because the planner keeps s * kblock within numerics::int32_exact_k(1). After each (d, b)
// the consumers hand the int32 tile to consume_kblock (fused_tile_epilogue.cuh): fully fused, the
// exact diagonal sum is converted and added to a register-resident FP64 tile (order of
// ozgemm/numerics/ozaki1.hpp: d = s-1 .. 0) and C is written once; partially fused, it is stored as
// plane (d, b). Tile shapes, clusters and register splits: policy.hpp (Sm90FusedPolicy).
#include "kernels/dgemm/launch.hpp"

#if defined(OZGEMM_BUILD_SM90_FUSED)

#include <cute/tensor.hpp>
#include <cutlass/arch/reg_reconfig.h>
#include <cutlass/cutlass.h>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/pipeline/pipeline.hpp>

#include "kernels/dgemm/fused_tile_epilogue.cuh"

namespace ozgemm {
namespace kernels {

namespace {

using namespace cute;
namespace nm = ozgemm::numerics;

// The kernel's CUTLASS types for one policy (policy.hpp).
template <class Policy>
struct FusedConfig : Policy {
  using Policy::kTileM;
  using Policy::kTileN;
  using Policy::kTileK;
  using Policy::kClusterM;
  using Policy::kClusterN;
  using TileShape = Shape<Int<kTileM>, Int<kTileN>, Int<kTileK>>;
  using ClusterShape = Shape<Int<kClusterM>, Int<kClusterN>, _1>;
  struct ExtraSmem {
    int32_t shift_a[kTileM];
    int32_t shift_b[kTileN];
  };
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
      int8_t, cutlass::layout::RowMajor, 16,      // A: rows of op(A), k contiguous
      int8_t, cutlass::layout::ColumnMajor, 16,   // B: columns of op(B), k contiguous
      int32_t, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(ExtraSmem) + 256)>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using TiledMma = typename Mainloop::TiledMma;
  using MainloopPipeline = typename Mainloop::MainloopPipeline;
  using PipelineState = typename Mainloop::PipelineState;
  static constexpr int kConsumerThreads = static_cast<int>(size(TiledMma{}));  // 256: two warp groups
  static constexpr int kThreads = kConsumerThreads + 128;
  struct SharedStorage {
    typename Mainloop::TensorStorage tensors;
    alignas(16) typename Mainloop::PipelineStorage pipeline;
    ExtraSmem extra;
  };
  struct KernelParams {
    typename Mainloop::Params mainloop;
    FusedArgs args;
    int k_tiles;  // kblock / kTileK
  };
};

template <class Cfg, FusedMode kMode>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    fused_ozaki_sm90_kernel(CUTLASS_GRID_CONSTANT typename Cfg::KernelParams const p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using TileShape = typename Cfg::TileShape;
  using ClusterShape = typename Cfg::ClusterShape;
  using Mainloop = typename Cfg::Mainloop;
  using TiledMma = typename Cfg::TiledMma;
  using MainloopPipeline = typename Cfg::MainloopPipeline;
  using PipelineState = typename Cfg::PipelineState;
  using SharedStorage = typename Cfg::SharedStorage;
  constexpr int kTileM = Cfg::kTileM, kTileN = Cfg::kTileN;
  constexpr int kConsumerThreads = Cfg::kConsumerThreads;
  extern __shared__ __align__(128) char smem_buf[];
  SharedStorage& ss = *reinterpret_cast<SharedStorage*>(smem_buf);
  const FusedArgs& a = p.args;
  const int thread_idx = threadIdx.x;
  const int warp_group = cutlass::canonical_warp_group_idx();
  const int warp_in_group = cutlass::canonical_warp_idx_sync() % 4;
  const int s = a.s;
  // Tile of C, in global coordinates.
  // Rasterisation: clusters are taken in groups of kGroupTilesM / kClusterM cluster rows, n
  // fastest within a group, so the CTAs resident at one time share few A and B panels (they
  // move through k in near lock-step, so shared panels are read from DRAM about once). In
  // launch order (m fastest) a wave of 132 CTAs would touch every m-panel of a column.
  constexpr int kClM = Cfg::kClusterM, kClN = Cfg::kClusterN, kGroupClusters = Cfg::kGroupTilesM / kClM;
  const int clusters_m = gridDim.x / kClM, clusters_n = gridDim.y / kClN;
  const int cluster_lin = blockIdx.x / kClM + (blockIdx.y / kClN) * clusters_m;
  const int group = cluster_lin / (kGroupClusters * clusters_n);
  const int in_group = cluster_lin % (kGroupClusters * clusters_n);
  const int group_rows = min(kGroupClusters, clusters_m - group * kGroupClusters);
  const int cm = group * kGroupClusters + in_group % group_rows, cn = in_group / group_rows;
  const int64_t tile_row0 = a.row0 + int64_t(cm * kClM + blockIdx.x % kClM) * kTileM;
  const int64_t tile_col0 = a.col0 + int64_t(cn * kClN + blockIdx.y % kClN) * kTileN;

  if (warp_group == 0 && warp_in_group == 0 && cute::elect_one_sync()) Mainloop::prefetch_tma_descriptors(p.mainloop);

  typename MainloopPipeline::Params pp;
  if (warp_group == 0 && warp_in_group == 0) pp.role = MainloopPipeline::ThreadCategory::Producer;
  if (warp_group > 0) pp.role = MainloopPipeline::ThreadCategory::Consumer;
  pp.is_leader = (thread_idx % 128) == 0;
  pp.num_consumers = kConsumerThreads;
  pp.transaction_bytes = p.mainloop.tma_transaction_bytes;
  MainloopPipeline pipeline(ss.pipeline, pp, ClusterShape{});

  constexpr bool kFully = kMode != FusedMode::Partial;
  if (kFully && warp_group > 0) {
    const int t = thread_idx - 128;
    for (int i = t; i < kTileM + kTileN; i += kConsumerThreads) {
      if (i < kTileM) {
        const int64_t r = tile_row0 + i;
        ss.extra.shift_a[i] = r < a.m_pad ? a.shift_a[r] : 0;
      } else {
        const int64_t c = tile_col0 + (i - kTileM);
        ss.extra.shift_b[i - kTileM] = c < a.n_pad ? a.shift_b[c] : 0;
      }
    }
  }
  // Pipeline init (barriers, possibly signalled by the other CTAs of the cluster) and the shifts
  // must be visible before anyone uses them: a full cluster barrier with release/acquire.
  cute::cluster_arrive();
  cute::cluster_wait();

  if (warp_group == 0) {
    cutlass::arch::warpgroup_reg_dealloc<Cfg::kProducerRegisters>();
    if (warp_in_group == 0) {
      PipelineState write_state = cutlass::make_producer_start_state<MainloopPipeline>();
      Mainloop mainloop;
      const int K = static_cast<int>(a.layout_a.ld);
      auto load_inputs = mainloop.load_init(make_shape(int(a.m_pad), int(a.n_pad), K, 1), p.mainloop);
      Tensor gA_mkl = get<0>(load_inputs);  // (BM, BK, m-tiles, k-tiles, l)
      Tensor gB_nkl = get<1>(load_inputs);  // (BN, BK, n-tiles, k-tiles, l)
      const auto blk_coord = make_coord(int(tile_row0 / kTileM), int(tile_col0 / kTileN), _, 0);
      const uint32_t rank = cute::block_rank_in_cluster();
      for (int d = s - 1; d >= 0; --d)
        for (int b = 0; b < a.kblocks(); ++b) {
          // In k-block b: A_d .. A_0 and B_0 .. B_d, in k-tiles (SliceLayout::diagonal_start).
          const int b0 = static_cast<int>(a.layout_b.diagonal_start(d, b) / Cfg::kTileK);
          const int a0 = static_cast<int>(a.layout_a.diagonal_start(d, b) / Cfg::kTileK);
          const int count = (d + 1) * p.k_tiles;
          auto inputs_d = cute::make_tuple(domain_offset(make_coord(0, 0, 0, a0, 0), gA_mkl),
                                           domain_offset(make_coord(0, 0, 0, b0, 0), gB_nkl));
          mainloop.load(p.mainloop, pipeline, write_state, inputs_d, blk_coord, cute::make_coord_iterator(count),
                        count, thread_idx % 32, rank, ss.tensors);
          write_state.advance(count);
        }
      mainloop.load_tail(pipeline, write_state);
    }
  } else {
    cutlass::arch::warpgroup_reg_alloc<Cfg::kConsumerRegisters>();
    const int mma_thread = thread_idx - 128;
    Mainloop mainloop;
    TiledMma tiled_mma;
    Tensor accum = partition_fragment_C(tiled_mma, take<0, 2>(TileShape{}));  // int32 (MMA, MMA_M, MMA_N)
    Tensor coords = tiled_mma.get_slice(mma_thread).partition_C(make_identity_tensor(take<0, 2>(TileShape{})));
    constexpr int kFrag = decltype(size(accum))::value;
    double acc64[kMode == FusedMode::FullyRegisters ? kFrag : 1];
    if constexpr (kMode == FusedMode::FullyRegisters) {
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kFrag; ++i) acc64[i] = 0.0;
    }
    PipelineState read_state;
    ThreadRange range{};
    if constexpr (kFully)
      range = thread_range<kFrag>(a, coords, ss.extra.shift_a, ss.extra.shift_b, tile_row0, tile_col0);
    const SpillSlot spill =
        spill_slot(a, blockIdx.x + int64_t(blockIdx.y) * gridDim.x, kTileM * kTileN, kConsumerThreads, mma_thread);
    for (int d = s - 1; d >= 0; --d)
      for (int b = 0; b < a.kblocks(); ++b) {
        const int count = (d + 1) * p.k_tiles;
        mainloop.mma(pipeline, read_state, accum, count, mma_thread, ss.tensors, p.mainloop);
        mainloop.mma_tail(pipeline, read_state, count);
        read_state.advance(count);
        consume_kblock<kMode, kFrag>(a, accum, coords, acc64, d, b, ss.extra.shift_a, ss.extra.shift_b, tile_row0,
                                      tile_col0, spill, range);
      }
    if constexpr (kMode == FusedMode::FullyRegisters)
      write_c_tile<kFrag>(a, acc64, coords, ss.extra.shift_a, ss.extra.shift_b, tile_row0, tile_col0, range);
  }
#endif
}

template <class Cfg, FusedMode kMode>
cudaError_t launch(const FusedArgs& args, cudaStream_t stream) {
  constexpr bool kFully = kMode != FusedMode::Partial;
  using Mainloop = typename Cfg::Mainloop;
  constexpr int kTileM = Cfg::kTileM, kTileN = Cfg::kTileN;
  const int64_t kblock = args.layout_a.kblock;
  if (kblock % Cfg::kTileK != 0 || args.row0 % kTileM != 0 || args.col0 % kTileN != 0) return cudaErrorInvalidValue;
  if (args.kblocks() < 1 || args.layout_a.ld > INT32_MAX || args.layout_b.ld != args.layout_a.ld)
    return cudaErrorInvalidValue;
  const int K = static_cast<int>(args.layout_a.ld);
  typename Mainloop::Arguments margs{
      args.slices_a, make_stride(int64_t(args.layout_a.ld), Int<1>{}, int64_t(0)),
      args.slices_b, make_stride(int64_t(args.layout_b.ld), Int<1>{}, int64_t(0))};
  typename Cfg::KernelParams p;
  p.mainloop = Mainloop::to_underlying_arguments(
      make_shape(int(args.m_pad), int(args.n_pad), K, 1), margs, nullptr);
  p.args = args;
  p.k_tiles = static_cast<int>(kblock / Cfg::kTileK);
  const int64_t rows = kFully ? args.m : args.rows, cols = kFully ? args.n : args.cols;
  const FusedGrid g = fused_grid(rows, cols, Cfg::tile());
  const dim3 grid(static_cast<unsigned>(g.tiles_m), static_cast<unsigned>(g.tiles_n));
  if (g.tiles_n > kMaxGridY) return cudaErrorInvalidValue;
  if (kFully && args.spill_capacity < numerics::SpillLayout::entries(args.kblocks(), g.tiles(), int64_t(kTileM) * kTileN))
    return cudaErrorInvalidValue;
  const int smem = static_cast<int>(sizeof(typename Cfg::SharedStorage));
  auto kernel = fused_ozaki_sm90_kernel<Cfg, kMode>;
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (e != cudaSuccess) return e;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(Cfg::kThreads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = Cfg::kClusterM;
  attr[0].val.clusterDim.y = Cfg::kClusterN;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  e = cudaLaunchKernelEx(&cfg, kernel, p);
  if (e != cudaSuccess) return e;
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_fused_sm90(const FusedArgs& args, FusedMode mode, cudaStream_t stream) {
  switch (mode) {
    case FusedMode::Partial: return launch<FusedConfig<Sm90PartialPolicy>, FusedMode::Partial>(args, stream);
    case FusedMode::FullyRegisters:
      return launch<FusedConfig<Sm90FullyRegistersPolicy>, FusedMode::FullyRegisters>(args, stream);
    case FusedMode::FullyGlobal: return launch<FusedConfig<Sm90FullyGlobalPolicy>, FusedMode::FullyGlobal>(args, stream);
  }
  return cudaErrorInvalidValue;
}
bool fused_sm90_built() { return true; }

}  // namespace kernels
}  // namespace ozgemm

#else  // !OZGEMM_BUILD_SM90_FUSED

namespace ozgemm {
namespace kernels {
cudaError_t launch_fused_sm90(const FusedArgs&, FusedMode, cudaStream_t) { return cudaErrorNotSupported; }
bool fused_sm90_built() { return false; }
}  // namespace kernels
}  // namespace ozgemm

#endif
