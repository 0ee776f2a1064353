// tools/ozgemm/gpu/probes.hpp — the device ceilings `ozgemm bench` measures beside its timings.
#pragma once

#include <cuda_runtime.h>

namespace ozgemm {
namespace cli {

// Device-to-device copy rate, bytes read + written per second / 1e9 (median of 5 copies of 1 GiB).
double probe_copy_gbs(cudaStream_t stream);

}  // namespace cli
}  // namespace ozgemm
