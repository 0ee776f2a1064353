// tests/dropin/device_choice_test.cpp — the host BLAS offload's device choice (src/dropin/
// device_choice.cpp) on its own, with a made-up environment: OZGEMM_DEVICE first (valid, out of range,
// not a number), one visible device, each launcher's local-rank variable, their order when several
// are set (an inner launcher's over Slurm's), more ranks than devices, malformed ranks skipped, and
// the current device when no launcher is seen.
#include <cstdio>
#include <map>
#include <string>

#include "check.hpp"
#include "dropin/device_choice.hpp"

using namespace ozgemm::dropin;

namespace {

using Env = std::map<std::string, std::string>;

DeviceChoice choose(int visible, int current, const Env& env) {
  return choose_device(visible, current, [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

std::string show(const Env& env) {
  std::string s;
  for (const auto& [k, v] : env) s += k + "=" + v + " ";
  return s.empty() ? "(empty)" : s;
}

// The choice must be `device` (-1: none), `shared` as given, with a reason containing `says`.
void expect(int visible, int current, const Env& env, int device, bool shared, const char* says) {
  const DeviceChoice c = choose(visible, current, env);
  CHECK(c.device == device, "visible %d current %d env %s: device %d, want %d (%s)", visible, current,
        show(env).c_str(), c.device, device, c.reason.c_str());
  CHECK(c.shared == shared, "visible %d env %s: shared %d, want %d", visible, show(env).c_str(), c.shared, shared);
  CHECK(c.reason.find(says) != std::string::npos, "visible %d env %s: reason \"%s\" lacks \"%s\"", visible,
        show(env).c_str(), c.reason.c_str(), says);
}

}  // namespace

int main() {
  // OZGEMM_DEVICE: explicit, over every launcher's variable; out of range or malformed: no device.
  expect(4, 0, {{"OZGEMM_DEVICE", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}, 2, false, "OZGEMM_DEVICE=2");
  expect(4, 3, {{"OZGEMM_DEVICE", "0"}}, 0, false, "OZGEMM_DEVICE=0");
  expect(1, 0, {{"OZGEMM_DEVICE", "0"}}, 0, false, "OZGEMM_DEVICE=0");
  expect(2, 0, {{"OZGEMM_DEVICE", "2"}}, -1, false, "OZGEMM_DEVICE=2 is not a device of this process (devices 0..1");
  expect(1, 0, {{"OZGEMM_DEVICE", "1"}, {"LOCAL_RANK", "0"}}, -1, false, "device 0 is the only one visible");
  expect(4, 0, {{"OZGEMM_DEVICE", "-1"}}, -1, false, "OZGEMM_DEVICE=-1 is not a device");
  expect(4, 0, {{"OZGEMM_DEVICE", "gpu1"}}, -1, false, "OZGEMM_DEVICE=gpu1 is not a device");
  expect(4, 0, {{"OZGEMM_DEVICE", "1x"}}, -1, false, "OZGEMM_DEVICE=1x");
  expect(4, 0, {{"OZGEMM_DEVICE", "99999999999999999999"}}, -1, false, "is not a device");
  expect(4, 0, {{"OZGEMM_DEVICE", " 3 "}}, 3, false, "OZGEMM_DEVICE= 3 ");

  // One visible device (CUDA_VISIBLE_DEVICES set per rank): device 0 whatever the rank says.
  expect(1, 0, {{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}}, 0, false, "the only visible device");
  expect(1, 0, {}, 0, false, "the only visible device");

  // Each launcher's variable alone: the local rank modulo the visible devices.
  for (const char* name : kLocalRankVariables) {
    expect(4, 0, {{name, "1"}}, 1, false, (std::string("local rank 1 (") + name + ") of 4 visible devices").c_str());
    expect(4, 2, {{name, "3"}}, 3, false, name);
    expect(2, 0, {{name, "0"}}, 0, false, name);
  }
  // More local ranks than devices: the modulo, marked shared, said.
  expect(4, 0, {{"LOCAL_RANK", "5"}}, 1, true, "more local ranks than devices");
  expect(2, 0, {{"MPI_LOCALRANKID", "2"}}, 0, true, "this GPU is shared");

  // Order: Open MPI, then MPICH/Hydra, then torchrun, then Slurm (an inner launcher's rank wins over
  // the SLURM_LOCALID that all of its processes inherit from one Slurm task).
  expect(4, 0, {{"OMPI_COMM_WORLD_LOCAL_RANK", "2"}, {"SLURM_LOCALID", "0"}}, 2, false, "OMPI_COMM_WORLD_LOCAL_RANK");
  expect(4, 0, {{"MPI_LOCALRANKID", "3"}, {"PMI_LOCAL_RANK", "1"}, {"SLURM_LOCALID", "0"}}, 3, false,
         "MPI_LOCALRANKID");
  expect(4, 0, {{"PMI_LOCAL_RANK", "1"}, {"LOCAL_RANK", "2"}}, 1, false, "PMI_LOCAL_RANK");
  expect(4, 0, {{"LOCAL_RANK", "2"}, {"SLURM_LOCALID", "0"}}, 2, false, "(LOCAL_RANK)");
  expect(4, 0, {{"SLURM_LOCALID", "3"}}, 3, false, "SLURM_LOCALID");

  // A malformed rank is skipped (and said); the next variable decides.
  expect(4, 0, {{"OMPI_COMM_WORLD_LOCAL_RANK", "x"}, {"SLURM_LOCALID", "2"}}, 2, false,
         "ignored OMPI_COMM_WORLD_LOCAL_RANK=x (not a rank)");
  expect(4, 0, {{"LOCAL_RANK", ""}, {"SLURM_LOCALID", "1"}}, 1, false, "ignored LOCAL_RANK=");

  // No launcher: the current device (as before the choice existed); a current device out of range
  // (impossible from CUDA) gives 0.
  expect(4, 2, {}, 2, false, "no launcher's local-rank variable: the current device");
  expect(4, 0, {{"RANK", "3"}, {"WORLD_SIZE", "4"}}, 0, false, "the current device");  // global ranks are not read
  expect(4, 7, {}, 0, false, "the current device");
  expect(4, 1, {{"LOCAL_RANK", "-2"}}, 1, false, "ignored LOCAL_RANK=-2");

  if (g_bad) {
    std::fprintf(stderr, "%d check(s) failed\n", g_bad);
    return 1;
  }
  std::printf("device choice: all checks passed\n");
  return 0;
}
