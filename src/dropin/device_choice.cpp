// src/dropin/device_choice.cpp — choose_device (device_choice.hpp).
#include "dropin/device_choice.hpp"

#include <climits>
#include <cstdlib>

namespace ozgemm {
namespace dropin {

namespace {

// A non-negative decimal integer (digits only, surrounding spaces allowed), at most INT_MAX; -1
// for anything else (empty, a sign, letters, overflow).
long non_negative(const char* v) {
  while (*v == ' ') ++v;
  if (*v < '0' || *v > '9') return -1;
  long x = 0;
  for (; *v >= '0' && *v <= '9'; ++v) {
    x = x * 10 + (*v - '0');
    if (x > INT_MAX) return -1;
  }
  while (*v == ' ') ++v;
  return *v ? -1 : x;
}

std::string quoted(const char* name, const char* value) { return std::string(name) + "=" + value; }

}  // namespace

DeviceChoice choose_device(int visible, int current, const EnvLookup& env) {
  DeviceChoice c;
  const std::string range = visible == 1 ? "device 0 is the only one visible"
                                         : "devices 0.." + std::to_string(visible - 1) + " are visible";
  if (const char* v = env(kDeviceVariable)) {
    const long d = non_negative(v);
    if (d < 0 || d >= visible) {
      c.reason = quoted(kDeviceVariable, v) + " is not a device of this process (" + range + ")";
      return c;
    }
    c.device = int(d);
    c.reason = quoted(kDeviceVariable, v);
    return c;
  }
  if (visible == 1) {
    c.device = 0;
    c.reason = "the only visible device";
    return c;
  }
  std::string skipped;  // local-rank variables that held no rank
  for (const char* name : kLocalRankVariables) {
    const char* v = env(name);
    if (!v) continue;
    const long r = non_negative(v);
    if (r < 0) {
      skipped += "; ignored " + quoted(name, v) + " (not a rank)";
      continue;
    }
    c.device = int(r % visible);
    c.shared = r >= visible;
    c.reason = "local rank " + std::to_string(r) + " (" + name + ") of " + std::to_string(visible) +
               " visible devices" + (c.shared ? ": more local ranks than devices, this GPU is shared" : "") + skipped;
    return c;
  }
  c.device = current >= 0 && current < visible ? current : 0;
  c.reason = "no launcher's local-rank variable: the current device" + skipped;
  return c;
}

}  // namespace dropin
}  // namespace ozgemm
