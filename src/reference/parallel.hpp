// src/reference/parallel.hpp — a minimal parallel-for over an index range for the host reference.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace ozgemm {
namespace detail {

// Runs body(begin, end) on contiguous chunks of [0, count) with up to
// hardware_concurrency threads. body must be safe to run concurrently on disjoint chunks.
template <class Body>
void parallel_for(int64_t count, Body body, int64_t min_chunk = 1) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(hw, count / std::max<int64_t>(1, min_chunk)));
  if (threads <= 1) {
    body(int64_t(0), count);
    return;
  }
  std::vector<std::thread> pool;
  const int64_t chunk = (count + threads - 1) / threads;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t b = t * chunk, e = std::min(count, b + chunk);
    if (b < e) pool.emplace_back([=] { body(b, e); });
  }
  for (auto& th : pool) th.join();
}

}  // namespace detail
}  // namespace ozgemm
