// kernels/dgemm/ozaki2_products_sm90.cu — the library's instantiation of Ozaki-II's Hopper products
// (ozaki2_products_sm90.cuh) with policy.hpp's Sm90Oz2ProductsPolicy; stubs without sm_90a code.
#include "kernels/dgemm/launch.hpp"

#if defined(OZGEMM_BUILD_SM90_FUSED)

#include "kernels/dgemm/ozaki2_products_sm90.cuh"

namespace ozgemm {
namespace kernels {

cudaError_t launch_oz2_products_sm90(const Oz2ProductsArgs& args, cudaStream_t stream) {
  if (args.m <= 0 || args.n <= 0) return cudaSuccess;
  if (args.k <= 0 || args.k > numerics::kOz2ChunkK || args.constants == nullptr || args.planes_per_modulus < 1)
    return cudaErrorInvalidValue;
  return oz2_sm90::Oz2ProductsGemm<Sm90Oz2ProductsPolicy>::run(args, stream);
}
bool oz2_products_sm90_built() { return true; }

}  // namespace kernels
}  // namespace ozgemm

#else  // !OZGEMM_BUILD_SM90_FUSED

namespace ozgemm {
namespace kernels {
cudaError_t launch_oz2_products_sm90(const Oz2ProductsArgs&, cudaStream_t) { return cudaErrorNotSupported; }
bool oz2_products_sm90_built() { return false; }
}  // namespace kernels
}  // namespace ozgemm

#endif
