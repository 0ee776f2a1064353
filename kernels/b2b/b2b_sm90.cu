// kernels/b2b/b2b_sm90.cu — fused back-to-back GEMM for Hopper (sm_90a), fp16, register residency:
// GEMM 0 with wgmma reading A0 and B0 from shared memory (128B-swizzled, filled by a 4-stage
// cp.async ring), GEMM 1 with wgmma taking D0 as its A operand from registers (as attention
// kernels feed P into P x V).
//
// One CTA = two warp groups = 128 rows; each warp group owns 64 rows and all n0 / n1 columns.
// Why D0 needs no shuffle: the accumulator of a 64 x N wgmma (CLayout_64xN) holds, per thread,
// values (e, h, b) = (column pair, row half, 8-column block) with flat index e + 2h + 4b; the
// register A operand of a 64 x 16 wgmma (ALayout_64x16) holds (e, h, k-half) of one 16-wide
// k-block, so k-block j's fragment is the accumulator's blocks 2j, 2j+1 in the same order and
// the fp16 copy of the accumulator *is* GEMM 1's A operand, reinterpreted.
// Same numerics as b2b_sm80.cu (fmaf epilogue, ReLU, round to fp16). Configuration: policy.hpp
// (B2bSm90Policy). Convolution pairs gather A0's k-tiles from X (b2b_device.cuh's implicit im2col;
// a k-tile lies within one filter tap) into the same swizzled stages.
#include "kernels/b2b/b2b_device.cuh"

#if defined(OZGEMM_BUILD_SM90_FUSED)

#include <cuda_fp16.h>

#include <cute/tensor.hpp>  // first: the atoms below need the algorithms it declares
#include <cute/arch/copy_sm80.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/cutlass.h>

namespace ozgemm {
namespace kernels {

namespace {

using namespace cute;

constexpr int kM = B2bSm90Policy::kTileM, kK = B2bSm90Policy::kTileK, kThreads = B2bSm90Policy::kThreads;
static_assert(kM == 128, "two warp groups of 64 rows");

template <int N0, int N1>
struct B2bSm90Config {
  static constexpr int kStages = B2bSm90Policy::stages(N1);
  static constexpr int kN1Chunk = N1 < B2bSm90Policy::kN1Chunk ? N1 : B2bSm90Policy::kN1Chunk;
  using SmemAtom = GMMA::Layout_K_SW128_Atom<half_t>;  // 8 rows x 64 halves, 128B swizzle
  using SmemA = decltype(tile_to_shape(SmemAtom{}, make_shape(Int<kM>{}, Int<kK>{}, Int<kStages>{})));
  using SmemB0 = decltype(tile_to_shape(SmemAtom{}, make_shape(Int<N0>{}, Int<kK>{}, Int<kStages>{})));
  using SmemB1 = decltype(tile_to_shape(SmemAtom{}, make_shape(Int<N1>{}, Int<N0>{})));
  using Mma0 = decltype(make_tiled_mma(GMMA::ss_op_selector<half_t, half_t, float, Shape<_64, Int<N0>, Int<kK>>>(),
                                       Layout<Shape<_2, _1, _1>>{}));
  using Mma1 = decltype(make_tiled_mma(GMMA::rs_op_selector<half_t, half_t, float, Shape<_64, Int<kN1Chunk>, Int<N0>>>(),
                                       Layout<Shape<_2, _1, _1>>{}));
  // 256 threads x 16 bytes: 32 rows of 64 halves a step.
  using Copy = decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, half_t>{},
                                        Layout<Shape<_32, _8>, Stride<_8, _1>>{}, Layout<Shape<_1, _8>>{}));
  struct Smem {
    alignas(128) half_t a[cosize_v<SmemA>];
    alignas(128) half_t b0[cosize_v<SmemB0>];
    alignas(128) half_t b1[cosize_v<SmemB1>];
  };
};

template <int N0, int N1>
__global__ void __launch_bounds__(kThreads, B2bSm90Policy::min_ctas_per_sm(N0)) b2b_sm90_kernel(B2bArgs p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Cfg = B2bSm90Config<N0, N1>;
  constexpr int kStages = Cfg::kStages, kN1Chunk = Cfg::kN1Chunk;
  extern __shared__ __align__(128) char smem_buf[];
  auto& ss = *reinterpret_cast<typename Cfg::Smem*>(smem_buf);
  Tensor sA = make_tensor(make_smem_ptr(ss.a), typename Cfg::SmemA{});     // (128, 64, stages)
  Tensor sB0 = make_tensor(make_smem_ptr(ss.b0), typename Cfg::SmemB0{});  // (n0, 64, stages)
  Tensor sB1 = make_tensor(make_smem_ptr(ss.b1), typename Cfg::SmemB1{});  // (n1, n0)

  const B2bTileRows tile = b2b_tile_rows(p);
  const int64_t row0 = tile.row0, valid = tile.valid, z = tile.z;  // (lambdas below capture them)
  const int64_t k0 = p.k0;
  // (a convolution's A0 is gathered from X instead: gA below is then not read)
  const half_t* A0 = static_cast<const half_t*>(p.a0) + z * p.stride_a0 + (p.conv_c > 0 ? 0 : row0 * k0);
  const half_t* B0 = static_cast<const half_t*>(p.b0) + z * p.stride_b0;
  const half_t* B1 = static_cast<const half_t*>(p.b1) + z * p.stride_b1;
  const float* bias = p.bias0 ? p.bias0 + z * p.stride_bias0 : nullptr;

  Tensor gA = local_tile(make_tensor(make_gmem_ptr(A0), make_shape(Int<kM>{}, k0), make_stride(k0, Int<1>{})),
                         make_shape(Int<kM>{}, Int<kK>{}), make_coord(0, _));  // (128, 64, k-tiles)
  Tensor gB0 = local_tile(make_tensor(make_gmem_ptr(B0), make_shape(Int<N0>{}, k0), make_stride(k0, Int<1>{})),
                          make_shape(Int<N0>{}, Int<kK>{}), make_coord(0, _));  // (n0, 64, k-tiles)
  Tensor gB1 = make_tensor(make_gmem_ptr(B1), make_shape(Int<N1>{}, Int<N0>{}), make_stride(Int<N0>{}, Int<1>{}));

  typename Cfg::Copy g2s;
  auto thr_copy = g2s.get_slice(threadIdx.x);
  Tensor tAg = thr_copy.partition_S(gA);  // (CPY, CPY_M, CPY_K, k-tiles)
  Tensor tAs = thr_copy.partition_D(sA);  // (CPY, CPY_M, CPY_K, stages)
  Tensor tAc = thr_copy.partition_S(make_identity_tensor(make_shape(Int<kM>{}, Int<kK>{})));
  Tensor tBg = thr_copy.partition_S(gB0);
  Tensor tBs = thr_copy.partition_D(sB0);
  const int k_tiles = static_cast<int>(k0 / kK);
  // Convolution: the pixels of this thread's A rows (the copy's row mode; one 16-byte vector a row
  // and k-tile), and the vector's byte offset within the k-tile.
  const bool conv = p.conv_c > 0;
  constexpr int kARows = decltype(size<1>(tAs))::value;
  static_assert(decltype(size<2>(tAs))::value == 1, "one vector a row and k-tile");
  ConvPixel pixels[kARows];
  if (conv) {
    CUTE_UNROLL
    for (int m = 0; m < kARows; ++m) {
      const int r = get<0>(tAc(0, m, 0));
      pixels[m] = conv_pixel(p, row0 + (r < valid ? r : valid - 1));
    }
  }
  const int conv_byte = get<1>(tAc(0, 0, 0)) * int(sizeof(half_t));
  // Rows past the matrix are not loaded: their shared rows hold stale data, which only reaches
  // accumulator rows that are never stored.
  auto load_stage = [&](int kt) {
    if (kt < k_tiles) {
      const int st = kt % kStages;
      if (conv) {
        const ConvTap t = conv_tap(p, int64_t(kt) * kK);
        CUTE_UNROLL
        for (int m = 0; m < kARows; ++m)
          if (get<0>(tAc(0, m, 0)) < valid)
            conv_copy16(raw_pointer_cast(&tAs(0, m, 0, st)), p, pixels[m], t, int(sizeof(half_t)), conv_byte);
      } else {
        CUTE_UNROLL
        for (int m = 0; m < size<1>(tAs); ++m)
          if (get<0>(tAc(0, m, 0)) < valid) copy(g2s, tAg(_, m, _, kt), tAs(_, m, _, st));
      }
      copy(g2s, tBg(_, _, _, kt), tBs(_, _, _, st));
    }
    cp_async_fence();
  };
  copy(g2s, thr_copy.partition_S(gB1), thr_copy.partition_D(sB1));  // B1, with the first stage's group
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
    cp_async_wait<kStages - 2>();           // this thread's copies of k-tile kt have landed
    cutlass::arch::fence_view_async_shared();  // ... and are visible to wgmma (async proxy)
    __syncthreads();                        // everyone's; and k-tile kt-1's stage is free
    load_stage(kt + kStages - 1);
    const int st = kt % kStages;
    warpgroup_fence_operand(acc0);
    warpgroup_arrive();
    gemm(mma0, tCrA(_, _, _, st), tCrB(_, _, _, st), acc0);
    warpgroup_commit_batch();
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc0);
  }
  cp_async_wait<0>();
  cutlass::arch::fence_view_async_shared();
  __syncthreads();  // B1 visible

  // ---- epilogue 0: D0 = fp16(ReLU(alpha0 acc + bias0)) in registers, GEMM 1's A operand ----
  Tensor cC0 = thr0.partition_C(make_identity_tensor(Shape<Int<kM>, Int<N0>>{}));
  Tensor rP = make_tensor<half_t>(acc0.layout());
  CUTE_UNROLL
  for (int i = 0; i < size(acc0); ++i) {
    const int col = get<1>(cC0(i));
    rP(i) = half_t(__float2half_rn(b2b_epilogue(p.alpha0, acc0(i), bias ? bias[col] : 0.0f, p.relu0)));
  }
  typename Cfg::Mma1 mma1;
  auto thr1 = mma1.get_slice(threadIdx.x);
  Tensor tOrA_shape = thr1.partition_fragment_A(
      make_tensor(make_gmem_ptr(static_cast<const half_t*>(nullptr)), make_layout(Shape<Int<kM>, Int<N0>>{}, LayoutRight{})));
  static_assert(decltype(size(tOrA_shape))::value == decltype(size(acc0))::value, "D0 fragment sizes");
  Tensor tOrA = make_tensor(rP.data(), tOrA_shape.layout());  // same registers, GEMM 1's view
  // ---- GEMM 1 and epilogue 1, one chunk of kN1Chunk columns of D1 at a time ----
  // D1 = fp16(ReLU(alpha1 acc + beta1 C1))
  const bool read_c = p.beta1 != 0.0f;
  const __half* C1 = static_cast<const __half*>(p.c1) + z * p.stride_c1;
  __half* D1 = static_cast<__half*>(p.d1) + z * p.stride_d1;
  Tensor cC1 = thr1.partition_C(make_identity_tensor(Shape<Int<kM>, Int<kN1Chunk>>{}));
  CUTE_NO_UNROLL
  for (int chunk = 0; chunk < N1 / kN1Chunk; ++chunk) {
    Tensor sB1c = local_tile(sB1, Shape<Int<kN1Chunk>, Int<N0>>{}, make_coord(chunk, 0));  // rows of B1 = D1 columns
    Tensor tOrB = thr1.make_fragment_B(thr1.partition_B(sB1c));
    Tensor acc1 = partition_fragment_C(mma1, Shape<Int<kM>, Int<kN1Chunk>>{});
    clear(acc1);
    mma1.accumulate_ = GMMA::ScaleOut::One;
    warpgroup_fence_operand(acc1);
    warpgroup_arrive();
    gemm(mma1, tOrA, tOrB, acc1);
    warpgroup_commit_batch();
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc1);
    // Values i, i + 1 are columns c, c + 1 of one row (CLayout_64xN: the column pair is the
    // fastest value mode): one 4-byte load of C1 and store of D1 each.
    CUTE_UNROLL
    for (int i = 0; i < size(acc1); i += 2) {
      const int r = get<0>(cC1(i)), c = chunk * kN1Chunk + get<1>(cC1(i));
      if (r >= valid) continue;
      const int64_t off = (row0 + r) * N1 + c;
      float c0 = 0.0f, c1 = 0.0f;
      if (read_c) {
        const __half2 cc = *reinterpret_cast<const __half2*>(C1 + off);
        c0 = __fmul_rn(p.beta1, __low2float(cc));
        c1 = __fmul_rn(p.beta1, __high2float(cc));
      }
      *reinterpret_cast<__half2*>(D1 + off) = __halves2half2(
          __float2half_rn(b2b_epilogue(p.alpha1, acc1(i), c0, p.relu1)),
          __float2half_rn(b2b_epilogue(p.alpha1, acc1(i + 1), c1, p.relu1)));
    }
  }
#endif
}

template <int N0, int N1>
cudaError_t launch(const B2bArgs& args, int64_t tiles, int batch, cudaStream_t stream) {
  auto kernel = b2b_sm90_kernel<N0, N1>;
  const int smem = static_cast<int>(sizeof(typename B2bSm90Config<N0, N1>::Smem));
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (e != cudaSuccess) return e;
  kernel<<<dim3(static_cast<unsigned>(tiles), 1, static_cast<unsigned>(batch)), kThreads, smem, stream>>>(args);
  return cudaGetLastError();
}

template <int N0>
cudaError_t launch_n1(const B2bArgs& a, int n1, int64_t tiles, int batch, cudaStream_t s) {
  switch (n1) {
    case 64: return launch<N0, 64>(a, tiles, batch, s);
    case 128: return launch<N0, 128>(a, tiles, batch, s);
    case 256: return launch<N0, 256>(a, tiles, batch, s);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t launch_b2b_sm90(const B2bArgs& args, int n0, int n1, int64_t grid_tiles, int batch, cudaStream_t stream) {
  if (grid_tiles <= 0 || batch <= 0) return cudaSuccess;
  if (grid_tiles > 0x7fffffffLL || batch > 65535 || args.k0 % kK != 0 || args.d0_out ||
      (args.conv_c > 0 && !B2bSm90Policy::supports_conv_c(args.conv_c)))
    return cudaErrorInvalidValue;
  switch (n0) {
    case 64: return launch_n1<64>(args, n1, grid_tiles, batch, stream);
    case 128: return launch_n1<128>(args, n1, grid_tiles, batch, stream);
  }
  return cudaErrorInvalidValue;
}
bool b2b_sm90_built() { return true; }

}  // namespace kernels
}  // namespace ozgemm

#else  // !OZGEMM_BUILD_SM90_FUSED

namespace ozgemm {
namespace kernels {
cudaError_t launch_b2b_sm90(const B2bArgs&, int, int, int64_t, int, cudaStream_t) { return cudaErrorNotSupported; }
bool b2b_sm90_built() { return false; }
}  // namespace kernels
}  // namespace ozgemm

#endif
