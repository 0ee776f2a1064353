// kernels/b2b/b2b_sm90_config.cuh — the CuTe types of the Hopper b2b kernel (b2b_sm90.cu): per
// element type (fp16, int8) the accumulator, shared-memory atoms, copy and both wgmma TiledMMAs, and
// where GEMM 1's register A operand takes each value of GEMM 0's accumulator. Included by the kernel
// and by tests/gpu/test_b2b_sm90_layouts.cu, which checks that mapping against CuTe's own layouts
// for every thread (host code, no GPU needed).
#pragma once

#include <type_traits>

#include <cute/tensor.hpp>  // first: the atoms below need the algorithms it declares
#include <cute/arch/copy_sm80.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/atom/mma_atom.hpp>

#include "kernels/b2b/policy.hpp"

namespace ozgemm {
namespace kernels {
namespace b2b_sm90 {

using namespace cute;

constexpr int kM = B2bSm90Policy::kTileM, kK = B2bSm90Policy::kTileK;
// The consumers (GEMM 0's and GEMM 1's two warp groups: all threads of the one-CTA-a-tile kernel,
// threads kProducerThreads.. of the warp-specialised one) take consumer indices 0 .. 255 in their
// mma and copy partitions.
constexpr int kConsumerThreads = B2bSm90Policy::kConsumerThreads, kProducerThreads = B2bSm90Policy::kProducerThreads;
static_assert(kM == 128, "two warp groups of 64 rows");

// What differs between the two element types: the accumulator, the shared-memory atom for a k-tile
// of kK elements (fp16: 128 bytes a row, int8: 64), the copies' thread shapes (16 bytes a thread;
// the consumers' 256 threads for B1, the producer's 128 for the stages).
template <class T>
struct B2bSm90Types;
template <>
struct B2bSm90Types<half_t> {
  using Acc = float;
  using SmemAtom = GMMA::Layout_K_SW128_Atom<half_t>;  // 8 rows x 64 halves, 128B swizzle
  using CopyThreads = Layout<Shape<_32, _8>, Stride<_8, _1>>;  // 32 rows of 64 halves a step
  using ProducerThreads = Layout<Shape<_16, _8>, Stride<_8, _1>>;
  using CopyValues = Layout<Shape<_1, _8>>;
};
template <>
struct B2bSm90Types<int8_t> {
  using Acc = int32_t;
  using SmemAtom = GMMA::Layout_K_SW64_Atom<int8_t>;  // 8 rows x 64 int8, 64B swizzle
  using CopyThreads = Layout<Shape<_64, _4>, Stride<_4, _1>>;  // 64 rows of 64 int8 a step
  using ProducerThreads = Layout<Shape<_32, _4>, Stride<_4, _1>>;
  using CopyValues = Layout<Shape<_1, _16>>;
};

// Stages: the ring's depth; B1Resident: B1's chunks kept in Smem::b1 (the rest go through the
// ring, policy.hpp). Both the one-CTA-a-tile kernel's by default; the warp-specialised kernel's are
// B2bSm90Policy::ws_stages and all of B1. (The chunked kernel for n0 past 256 passes 1 and uses
// only the types and constants: its shared memory is B2bSm90ChunkedSmem, with one B1 block buffer.)
template <class T, int N0, int N1, int Stages = B2bSm90Policy::tile_stages(N0, N1, int(sizeof(T))),
          int B1Resident = B2bSm90Policy::tile_b1_resident_chunks(N0, N1, int(sizeof(T)))>
struct B2bSm90Config : B2bSm90Types<T> {
  using Types = B2bSm90Types<T>;
  using Acc = typename Types::Acc;
  using Element = T;
  static constexpr bool kInt8 = std::is_same_v<T, int8_t>;
  static constexpr int kStages = Stages;
  static constexpr int kN1Chunk = N1 < B2bSm90Policy::kN1Chunk ? N1 : B2bSm90Policy::kN1Chunk;
  // D1's staging in shared memory (policy.hpp): kM rows of kD1StagePitch bytes, kD1StageCols columns
  // of a chunk at a time.
  static constexpr int kD1StageCols = B2bSm90Policy::d1_stage_cols(N1);
  static constexpr int kD1StagePitch = B2bSm90Policy::d1_stage_pitch(N1, int(sizeof(T)));
  static constexpr int kD1StageBytes = B2bSm90Policy::d1_stage_bytes(N1, int(sizeof(T)));
  using SmemAtom = typename Types::SmemAtom;
  using SmemA = decltype(tile_to_shape(SmemAtom{}, make_shape(Int<kM>{}, Int<kK>{}, Int<kStages>{})));
  using SmemB0 = decltype(tile_to_shape(SmemAtom{}, make_shape(Int<N0>{}, Int<kK>{}, Int<kStages>{})));
  // B1 (n1 x n0, K-major) in chunks of kN1Chunk rows (D1 columns), each swizzled on its own and
  // kB1ChunkElems elements after the previous one.
  using SmemB1Chunk = decltype(tile_to_shape(SmemAtom{}, make_shape(Int<kN1Chunk>{}, Int<N0>{})));
  static constexpr int kB1Chunks = N1 / kN1Chunk, kB1Resident = B1Resident;
  static constexpr int kB1ChunkElems = int(cosize_v<SmemB1Chunk>);
  static_assert(kB1Chunks == B2bSm90Policy::b1_chunks(N1) && kB1ChunkElems * int(sizeof(T)) ==
                    B2bSm90Policy::b1_chunk_bytes(N0, N1, int(sizeof(T))), "one B1 chunk size (policy.hpp)");
  static_assert(kB1Resident >= 1 && kB1Resident <= kB1Chunks && kB1Chunks - kB1Resident <= 1,
                "at most one chunk of B1 goes through the ring");
  using Mma0 = decltype(make_tiled_mma(GMMA::ss_op_selector<T, T, Acc, Shape<_64, Int<N0>, Int<kK>>>(),
                                       Layout<Shape<_2, _1, _1>>{}));
  using Mma1 = decltype(make_tiled_mma(GMMA::rs_op_selector<T, T, Acc, Shape<_64, Int<kN1Chunk>, Int<N0>>>(),
                                       Layout<Shape<_2, _1, _1>>{}));
  using Copy = decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, T>{},
                                        typename Types::CopyThreads{}, typename Types::CopyValues{}));
  using ProducerCopy = decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, T>{},
                                                typename Types::ProducerThreads{}, typename Types::CopyValues{}));
  struct Smem {
    alignas(128) T a[cosize_v<SmemA>];
    alignas(128) T b0[cosize_v<SmemB0>];
    alignas(128) T b1[kB1Resident * kB1ChunkElems];
  };
  static_assert(kB1Resident == kB1Chunks || sizeof(Smem::b0) >= size_t(kB1ChunkElems) * sizeof(T),
                "a chunk of B1 that is not resident fits in the ring's B0 half");
};

// GEMM 1's A operand element a (its index in the register fragment) is GEMM 0's accumulator
// element a_operand_source<T>(a) (fp16: the same index; int8: A element c + 4h + 8k' + 16j is
// accumulator (e = c % 2) + 2h + 4 (4j + 2k' + c / 2), under the B0 row permutation s8_d0_column).
template <class T>
CUTE_HOST_DEVICE constexpr int a_operand_source(int a) {
  if constexpr (std::is_same_v<T, int8_t>) {
    const int c = a % 4, h = (a / 4) % 2, kh = (a / 8) % 2, j = a / 16;
    return (c % 2) + 2 * h + 4 * (4 * j + 2 * kh + c / 2);
  } else {
    return a;
  }
}

}  // namespace b2b_sm90
}  // namespace kernels
}  // namespace ozgemm
