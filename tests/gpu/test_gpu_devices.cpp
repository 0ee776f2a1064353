// GPU tests of handles and devices: a handle runs on the device that was current at ozgemmCreate
// whatever device is current at the call (its cuBLAS handles, workspace and kernels live there), and
// the caller's device is current again afterwards; one handle per device, used from one thread per
// device at once; one handle per device shared by several threads (a handle is used by one thread at a
// time: each call under the device's lock), each thread's current device another GPU than the handle's.
// Integer inputs make every result exact, so each is checked entry by entry against the host product.
// With fewer than two GPUs only the first test runs (the others skip, saying so).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gpu_test_util.hpp"
#include "ozgemm/ozgemm.h"

namespace {

#define CUDA_OK(x) ASSERT_EQ((x), cudaSuccess) << #x

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

// C = A B for n x n integer matrices (entries in [-8, 8]: every sum is exact in FP64).
struct IntegerProblem {
  int n;
  std::vector<double> A, B, C;
  IntegerProblem(int n_, std::mt19937_64& rng) : n(n_), A(size_t(n_) * n_), B(size_t(n_) * n_), C(size_t(n_) * n_, 0.0) {
    std::uniform_int_distribution<int> d(-8, 8);
    for (auto& x : A) x = d(rng);
    for (auto& x : B) x = d(rng);
    for (int c = 0; c < n; ++c)
      for (int l = 0; l < n; ++l)
        for (int r = 0; r < n; ++r) C[r + size_t(c) * n] += A[r + size_t(l) * n] * B[l + size_t(c) * n];
  }
};

// Runs `calls` products of `p` through handle `h` on buffers of `device` (made current only for the
// allocations and copies), while `current` is the current device at each ozgemmDgemm; returns how
// many entries differed from the host product in the last result. `lock` (optional) is held around
// each ozgemmDgemm: the handle's other users take it too.
void run_on(ozgemmHandle_t h, int device, int current, const IntegerProblem& p, int calls, int64_t* wrong,
            std::mutex* lock = nullptr) {
  const size_t bytes = sizeof(double) * p.A.size();
  double *A = nullptr, *B = nullptr, *C = nullptr;
  CUDA_OK(cudaSetDevice(device));
  CUDA_OK(cudaMalloc(&A, bytes));
  CUDA_OK(cudaMalloc(&B, bytes));
  CUDA_OK(cudaMalloc(&C, bytes));
  CUDA_OK(cudaMemcpy(A, p.A.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(B, p.B.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(C, 0xff, bytes));  // NaN: every entry must be written
  CUDA_OK(cudaSetDevice(current));
  const double one = 1.0, zero = 0.0;
  for (int i = 0; i < calls; ++i) {
    std::unique_lock<std::mutex> held;
    if (lock) held = std::unique_lock<std::mutex>(*lock);
    ASSERT_EQ(ozgemmDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.n, p.n, &one, A, p.n, B, p.n, &zero, C, p.n),
              OZGEMM_STATUS_SUCCESS);
    held = {};
    int now = -1;
    CUDA_OK(cudaGetDevice(&now));
    ASSERT_EQ(now, current) << "the caller's device is current again after the call";
  }
  std::vector<double> got(p.C.size());
  CUDA_OK(cudaSetDevice(device));
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(got.data(), C, bytes, cudaMemcpyDeviceToHost));
  *wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) *wrong += !oztest::same_bits(got[i], p.C[i]);
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  CUDA_OK(cudaSetDevice(current));
}

// A handle on `device` in FIXED Ozaki-II (16 moduli: exact on these integers).
ozgemmHandle_t handle_on(int device) {
  ozgemmHandle_t h = nullptr;
  if (cudaSetDevice(device) != cudaSuccess || ozgemmCreate(&h) != OZGEMM_STATUS_SUCCESS) return nullptr;
  ozgemmSetScheme(h, OZGEMM_SCHEME_OZAKI2);
  ozgemmSetModuli(h, 16);
  return h;
}

}  // namespace

TEST(GpuDevices, CallsLeaveTheCallersDeviceCurrentAndAreExact) {
  OZTEST_REQUIRE_GPU();
  auto rng = oztest::test_rng();
  const IntegerProblem p(192, rng);
  ozgemmHandle_t h = handle_on(0);
  ASSERT_NE(h, nullptr);
  int64_t wrong = -1;
  run_on(h, 0, 0, p, 2, &wrong);
  EXPECT_EQ(wrong, 0);
  ozgemmCallInfo_t info{};
  ASSERT_EQ(ozgemmGetLastCallInfo(h, &info), OZGEMM_STATUS_SUCCESS);
  EXPECT_EQ(info.scheme, OZGEMM_SCHEME_OZAKI2);
  EXPECT_EQ(info.moduli, 16);
  EXPECT_EQ(ozgemmDestroy(h), OZGEMM_STATUS_SUCCESS);
}

TEST(GpuDevices, HandleRunsOnItsOwnDeviceWhileAnotherIsCurrent) {
  OZTEST_REQUIRE_GPU();
  if (device_count() < 2) GTEST_SKIP() << "needs two GPUs (" << device_count() << " here)";
  auto rng = oztest::test_rng();
  const IntegerProblem p(256, rng);
  ozgemmHandle_t h = handle_on(0);
  ASSERT_NE(h, nullptr);
  int64_t wrong = -1;
  run_on(h, /*device=*/0, /*current=*/1, p, 3, &wrong);  // data and handle on 0, device 1 current
  EXPECT_EQ(wrong, 0);
  CUDA_OK(cudaSetDevice(1));
  EXPECT_EQ(ozgemmDestroy(h), OZGEMM_STATUS_SUCCESS);  // destroyed while device 1 is current
  int now = -1;
  CUDA_OK(cudaGetDevice(&now));
  EXPECT_EQ(now, 1);
  CUDA_OK(cudaSetDevice(0));
}

TEST(GpuDevices, OneHandlePerDeviceFromOneThreadEach) {
  OZTEST_REQUIRE_GPU();
  const int n = device_count();
  if (n < 2) GTEST_SKIP() << "needs two GPUs (" << n << " here)";
  auto rng = oztest::test_rng();
  const IntegerProblem p(320, rng);
  std::vector<int64_t> wrong(n, -1);
  std::vector<std::thread> threads;
  for (int d = 0; d < n; ++d)
    threads.emplace_back([&, d] {
      ozgemmHandle_t h = handle_on(d);
      if (!h) return;
      run_on(h, d, d, p, 8, &wrong[d]);
      ozgemmDestroy(h);
    });
  for (auto& t : threads) t.join();
  for (int d = 0; d < n; ++d) EXPECT_EQ(wrong[d], 0) << "device " << d;
}

TEST(GpuDevices, OneHandlePerDeviceSharedByThreadsWithAnotherDeviceCurrent) {
  OZTEST_REQUIRE_GPU();
  const int n = device_count();
  if (n < 2) GTEST_SKIP() << "needs two GPUs (" << n << " here)";
  auto rng = oztest::test_rng();
  const IntegerProblem p(288, rng);
  std::vector<ozgemmHandle_t> handles(n, nullptr);
  for (int d = 0; d < n; ++d) {
    handles[d] = handle_on(d);
    ASSERT_NE(handles[d], nullptr) << "device " << d;
  }
  CUDA_OK(cudaSetDevice(0));
  std::vector<std::unique_ptr<std::mutex>> locks;
  for (int d = 0; d < n; ++d) locks.push_back(std::make_unique<std::mutex>());
  // Three threads per device; thread t uses device t % n's handle and buffers while device
  // (t + 1) % n is its current device, so every call runs while another GPU is current and two
  // devices' handles run at once.
  const int threads_per_device = 3, count = threads_per_device * n;
  std::vector<int64_t> wrong(count, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < count; ++t)
    threads.emplace_back([&, t] {
      const int d = t % n;
      run_on(handles[d], d, (d + 1) % n, p, 4, &wrong[t], locks[d].get());
    });
  for (auto& t : threads) t.join();
  for (int t = 0; t < count; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t << " on device " << t % n;
  for (int d = 0; d < n; ++d) EXPECT_EQ(ozgemmDestroy(handles[d]), OZGEMM_STATUS_SUCCESS);
}
