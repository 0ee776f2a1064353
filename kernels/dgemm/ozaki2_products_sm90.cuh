// kernels/dgemm/ozaki2_products_sm90.cuh — Ozaki-II's INT8 products on Hopper (sm_90a) with the
// modular reduction in the GEMM's epilogue: for every modulus i (the batch index l of one launch),
//   D_i(r, c) = sym_mod(sum_l A_i(r, l) B_i(l, c), p_i)   as int8,
// so the products leave one byte an entry instead of cuBLASLt's four (the int32 planes of the
// unfused path), and the reconstruction reads a quarter of the bytes.
//
// The complex scheme (numerics/ozaki2_complex.hpp) runs the same GEMM over its two transformed planes
// per modulus: plane l is modulus l / planes_per_modulus's (Oz2ProductsArgs::planes_per_modulus).
//
// The kernel is CUTLASS's own (GemmUniversal: TMA + wgmma s8 x s8 -> s32, warp-specialised,
// persistent over the tiles of all moduli, the configuration a Policy of policy.hpp names); only
// the epilogue's visitor (Oz2SymModVisitor below) is ours. Included by the library's instantiation
// (ozaki2_products_sm90.cu) and by the tuning benchmark (bench/oz2_products_tune.cu), which times
// other policies against cuBLASLt; nothing else includes it.
//
// Exactness: the int32 accumulator is exact while k * 128^2 < 2^31 (numerics::kOz2ChunkK; the
// planner never launches a longer k). The reduction (oz2_sym_mod_i32, numerics/ozaki2.hpp: FP32
// instructions only) is exact for every int32, so the planes hold the same values as the unfused path's sym_mod_i32 of cuBLASLt's
// products, and the CRT reconstruction after them gives the same bits.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/kernel_hardware_info.h>

#include "kernels/dgemm/launch.hpp"
#include "ozgemm/numerics/ozaki2.hpp"

namespace ozgemm {
namespace kernels {
namespace oz2_sm90 {

using namespace cute;
namespace fusion = cutlass::epilogue::fusion;

// How the epilogue reduces: the library's FP32 form (numerics::oz2_sym_mod_i32). The tuning
// benchmark times others against it through the same interface: Modulus (per-modulus constants),
// make(p), apply(v, modulus) -> sym_mod(v, p) as int8.
struct Oz2Fp32Reduce {
  using Modulus = numerics::Oz2Modulus;
  static Modulus make(int32_t p) { return numerics::oz2_modulus(p); }
  CUTLASS_DEVICE static int8_t apply(int32_t v, const Modulus& m) { return numerics::oz2_sym_mod_i32(v, m); }
};

// The epilogue visitor: int32 accumulator -> its symmetric residue modulo the tile's modulus (that of
// batch index l: mod[l / planes_per_modulus]), as int8. A leaf of CUTLASS's epilogue visitor tree (the interface of Sm90Compute).
template <class Reduce>
struct Oz2SymModVisitor {
  using Modulus = typename Reduce::Modulus;
  struct SharedStorage {};
  struct Arguments {
    Modulus mod[numerics::kMaxModuli] = {};  // Reduce::make(p_i)
    int planes_per_modulus = 1;              // consecutive batch indices of one modulus (1 real, 2 complex)
  };
  using Params = Arguments;

  template <class ProblemShape>
  static constexpr Params to_underlying_arguments(ProblemShape const&, Arguments const& args, void*) {
    return args;
  }
  template <class ProblemShape>
  static bool can_implement(ProblemShape const&, Arguments const&) {
    return true;
  }
  template <class ProblemShape>
  static size_t get_workspace_size(ProblemShape const&, Arguments const&) {
    return 0;
  }
  template <class ProblemShape>
  static cutlass::Status initialize_workspace(ProblemShape const&, Arguments const&, void*, cudaStream_t,
                                              cutlass::CudaHostAdapter* = nullptr) {
    return cutlass::Status::kSuccess;
  }
  CUTLASS_DEVICE bool is_producer_load_needed() const { return false; }
  CUTLASS_DEVICE bool is_C_load_needed() const { return false; }

  CUTLASS_HOST_DEVICE Oz2SymModVisitor() {}
  CUTLASS_HOST_DEVICE Oz2SymModVisitor(Params const& params, SharedStorage const&) : params_(&params) {}

  template <class... Args>
  CUTLASS_DEVICE auto get_producer_load_callbacks(fusion::detail::ProducerLoadArgs<Args...> const&) {
    return fusion::detail::EmptyProducerLoadCallbacks{};
  }

  struct ConsumerStoreCallbacks : fusion::detail::EmptyConsumerStoreCallbacks {
    Modulus mod;
    CUTLASS_DEVICE explicit ConsumerStoreCallbacks(const Modulus& m) : mod(m) {}
    template <typename ElementAccumulator, int FragmentSize>
    CUTLASS_DEVICE cutlass::Array<int8_t, FragmentSize> visit(cutlass::Array<ElementAccumulator, FragmentSize> const& acc,
                                                              int, int, int) {
      static_assert(cute::is_same_v<ElementAccumulator, int32_t>, "exact int32 products");
      cutlass::Array<int8_t, FragmentSize> out;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < FragmentSize; ++i) out[i] = Reduce::apply(acc[i], mod);
      return out;
    }
  };

  template <bool ReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(fusion::detail::ConsumerStoreArgs<Args...> const& args) {
    const int l = static_cast<int>(get<3>(args.tile_coord_mnkl));
    return ConsumerStoreCallbacks(params_->mod[l / params_->planes_per_modulus]);
  }

 private:
  Params const* params_ = nullptr;
};

// The GEMM for one policy (policy.hpp, Sm90Oz2ProductsPolicyT's form): kTileM x kTileN x kTileK
// tiles, kClusterM x kClusterN clusters, CUTLASS's cooperative or (kPingpong) ping-pong schedule,
// persistent over all tiles of all moduli; Reduce the epilogue's reduction.
template <class Policy, class Reduce = Oz2Fp32Reduce>
struct Oz2ProductsGemm {
  using TileShape = Shape<Int<Policy::kTileM>, Int<Policy::kTileN>, Int<Policy::kTileK>>;
  using ClusterShape = Shape<Int<Policy::kClusterM>, Int<Policy::kClusterN>, _1>;
  using KernelSchedule = cute::conditional_t<Policy::kPingpong, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                                             cutlass::gemm::KernelTmaWarpSpecializedCooperative>;
  using EpilogueSchedule = cute::conditional_t<Policy::kPingpong, cutlass::epilogue::TmaWarpSpecialized,
                                               cutlass::epilogue::TmaWarpSpecializedCooperative>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, int32_t, int32_t,
      void, cutlass::layout::ColumnMajor, 16,     // no C
      int8_t, cutlass::layout::ColumnMajor, 16,   // D: the residue planes, entry (r, c) at r + c * ldd
      EpilogueSchedule, Oz2SymModVisitor<Reduce>>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
      int8_t, cutlass::layout::RowMajor, 16,      // A: rows of op(A), k contiguous
      int8_t, cutlass::layout::ColumnMajor, 16,   // B: columns of op(B), k contiguous
      int32_t, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      KernelSchedule>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue,
                                                      cutlass::gemm::PersistentScheduler>;
  using Device = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  static typename Device::Arguments arguments(const Oz2ProductsArgs& a) {
    using StrideA = typename Kernel::StrideA;
    using StrideB = typename Kernel::StrideB;
    using StrideD = typename Kernel::StrideD;
    StrideA sa = make_stride(a.lda, _1{}, a.stride_a);
    StrideB sb = make_stride(a.ldb, _1{}, a.stride_b);
    StrideD sd = make_stride(_1{}, a.ldd, a.stride_d);
    typename Epilogue::FusionCallbacks::Arguments mod{};
    const numerics::Ozaki2Constants& c = *a.constants;
    for (int i = 0; i < c.n; ++i) mod.mod[i] = Reduce::make(c.p[i]);
    mod.planes_per_modulus = a.planes_per_modulus;
    cutlass::KernelHardwareInfo hw;
    hw.sm_count = a.sm_count;
    typename Device::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                    {int(a.m), int(a.n), int(a.k), c.n * a.planes_per_modulus},
                                    {a.A, sa, a.B, sb},
                                    {mod, nullptr, StrideD{}, a.D, sd},
                                    hw};
    args.scheduler.max_swizzle_size = Policy::kSwizzle;
    return args;
  }

  // cudaErrorNotSupported when CUTLASS cannot implement the arguments (alignment), else the launch's.
  static cudaError_t run(const Oz2ProductsArgs& a, cudaStream_t stream) {
    const typename Device::Arguments args = arguments(a);
    Device gemm;
    if (Device::can_implement(args) != cutlass::Status::kSuccess) return cudaErrorNotSupported;
    if (Device::get_workspace_size(args) > a.workspace_bytes) return cudaErrorInvalidValue;
    if (gemm.initialize(args, a.workspace, stream) != cutlass::Status::kSuccess) return cudaErrorLaunchFailure;
    if (gemm.run(stream) != cutlass::Status::kSuccess) return cudaErrorLaunchFailure;
    return cudaGetLastError();
  }
};

}  // namespace oz2_sm90
}  // namespace kernels
}  // namespace ozgemm
