// src/dropin/device_choice.hpp — which GPU the host BLAS offload (libozgemm_blas.so) runs on: the
// rank's own GPU under an MPI, Slurm or torchrun launcher, so that the ranks of a node spread over
// its GPUs instead of all landing on device 0 (docs/dropin.md, "Which GPU"; docs/distributed.md).
// Pure logic: the environment and the device count in, a device index and its reason out; no CUDA.
#pragma once

#include <functional>
#include <string>

namespace ozgemm {
namespace dropin {

// The launchers' local-rank variables, in the order they are read (the first one set decides):
// Open MPI, MPICH/Hydra (two names), torchrun, then Slurm. SLURM_LOCALID comes last because an
// inner launcher started by one Slurm task (mpirun or torchrun inside an allocation) leaves the
// outer task's SLURM_LOCALID, the same in all of its ranks, in every process it starts.
constexpr const char* kLocalRankVariables[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK",
                                               "LOCAL_RANK", "SLURM_LOCALID"};
// The explicit choice, read before any of them: a device index among the visible devices.
constexpr const char* kDeviceVariable = "OZGEMM_DEVICE";

struct DeviceChoice {
  int device = -1;      // the CUDA device index (0 .. visible - 1); -1: none (OZGEMM_DEVICE invalid)
  std::string reason;   // one sentence: why this device, or why none ("OZGEMM_DEVICE=1", ...)
  bool shared = false;  // more local ranks than visible devices: this rank shares its GPU with another
};

// The environment as a lookup: the value of a variable, or nullptr when unset.
using EnvLookup = std::function<const char*(const char*)>;

// The device for this process, among `visible` >= 1 devices (after CUDA_VISIBLE_DEVICES), where
// `current` is the device current in the calling thread:
//   1. OZGEMM_DEVICE set: that index when it is an integer in [0, visible); else none (device -1),
//      with a reason that names the value and the range: the caller then runs nothing on the GPU.
//   2. one visible device (e.g. CUDA_VISIBLE_DEVICES set per rank): device 0.
//   3. the first local-rank variable set (kLocalRankVariables) holding a non-negative integer r:
//      device r mod visible (shared when r >= visible); a variable holding anything else is skipped,
//      and the reason says so.
//   4. none set: `current` (the device the program made current, 0 in a fresh process).
DeviceChoice choose_device(int visible, int current, const EnvLookup& env);

}  // namespace dropin
}  // namespace ozgemm
