// tests/dropin/mock/mock_cublaslt.cpp — a stand-in libcublasLt.so.13 for the CPU tests of
// libozgemm_hook.so's cublasLtMatmul path (hook_lt_client.cpp): handles, matmul descriptors and
// matrix layouts that keep their attributes as cuBLASLt does (each of a fixed size; a get with size 0
// reports the size), and a reference cublasLtMatmul on host memory ("device" memory is host memory
// here): D = epilogue(alpha op(A) op(B) + beta C) for compute type 64F (plain, pedantic or emulated:
// all computed alike here) with A, B, C, D and the scale type all CUDA_R_64F or all CUDA_C_64F,
// column-major strided batches, host or device pointer mode, and the forward epilogues of real data as
// cublasLt.h defines them: BIAS adds bias[i] (bias batch stride) to row i, RELU keeps x > 0 else 0,
// GELU is 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), RELU_AUX sets bit i + j * aux_ld of the aux
// buffer where x > 0 (clears it elsewhere), GELU_AUX stores the GELU input at i + j * aux_ld. Anything
// else returns CUBLAS_STATUS_NOT_SUPPORTED, so a call the hook must forward shows that status.
#include <cublasLt.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "dropin/reference_gemm.hpp"

namespace {

// Attributes by id: the bytes of each (their sizes fixed by the table given at creation).
struct Attributes {
  std::map<int, std::vector<unsigned char>> value;
  template <typename T>
  void init(int id, T v) {
    value[id].resize(sizeof v);
    std::memcpy(value[id].data(), &v, sizeof v);
  }
  template <typename T>
  T get(int id) const {
    T v{};
    std::memcpy(&v, value.at(id).data(), sizeof v);
    return v;
  }
  cublasStatus_t set(int id, const void* buf, size_t bytes) {
    auto it = value.find(id);
    if (it == value.end() || !buf || bytes != it->second.size()) return CUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(it->second.data(), buf, bytes);
    return CUBLAS_STATUS_SUCCESS;
  }
  cublasStatus_t read(int id, void* buf, size_t bytes, size_t* written) const {
    auto it = value.find(id);
    if (it == value.end()) return CUBLAS_STATUS_INVALID_VALUE;
    if (bytes == 0 && written) {
      *written = it->second.size();
      return CUBLAS_STATUS_SUCCESS;
    }
    if (!buf || bytes != it->second.size()) return CUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(buf, it->second.data(), bytes);
    if (written) *written = bytes;
    return CUBLAS_STATUS_SUCCESS;
  }
};

std::atomic<long> g_matmuls{0}, g_alpha_zero{0}, g_live{0};

// The matrix of batch member `i` of layout l at p (elements of T).
template <typename T>
T* member(const Attributes& l, const void* p, int64_t i) {
  return const_cast<T*>(static_cast<const T*>(p)) + i * l.get<int64_t>(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
}

double gelu(double x) {
  const double s = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(s * (x + 0.044715 * x * x * x)));
}

// One matmul of element type T (double, cuDoubleComplex).
template <typename T>
cublasStatus_t matmul(const Attributes& md, const void* alpha_p, const void* A, const Attributes& a, const void* B,
                      const Attributes& b, const void* beta_p, const void* C, const Attributes& c, void* D,
                      const Attributes& d) {
  constexpr bool complex = sizeof(T) == 2 * sizeof(double);
  const int32_t pmode = md.get<int32_t>(CUBLASLT_MATMUL_DESC_POINTER_MODE);
  if (pmode != CUBLASLT_POINTER_MODE_HOST && pmode != CUBLASLT_POINTER_MODE_DEVICE) return CUBLAS_STATUS_NOT_SUPPORTED;
  const auto ta = cublasOperation_t(md.get<int32_t>(CUBLASLT_MATMUL_DESC_TRANSA));
  const auto tb = cublasOperation_t(md.get<int32_t>(CUBLASLT_MATMUL_DESC_TRANSB));
  const uint32_t epi = md.get<uint32_t>(CUBLASLT_MATMUL_DESC_EPILOGUE);
  const bool relu = epi & CUBLASLT_EPILOGUE_RELU, gelu_on = epi & CUBLASLT_EPILOGUE_GELU;
  const bool bias = epi & CUBLASLT_EPILOGUE_BIAS, aux = epi & 128;
  const uint32_t known = CUBLASLT_EPILOGUE_DEFAULT | CUBLASLT_EPILOGUE_RELU | CUBLASLT_EPILOGUE_BIAS |
                         CUBLASLT_EPILOGUE_GELU | 128;
  if ((epi & ~known) || (relu && gelu_on) || (aux && !relu && !gelu_on) || (complex && epi != CUBLASLT_EPILOGUE_DEFAULT))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  const uint64_t m = d.get<uint64_t>(CUBLASLT_MATRIX_LAYOUT_ROWS), n = d.get<uint64_t>(CUBLASLT_MATRIX_LAYOUT_COLS);
  const uint64_t k = ta == CUBLAS_OP_N ? a.get<uint64_t>(CUBLASLT_MATRIX_LAYOUT_COLS)
                                       : a.get<uint64_t>(CUBLASLT_MATRIX_LAYOUT_ROWS);
  const int32_t batch = d.get<int32_t>(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
  const int64_t ldc = c.get<int64_t>(CUBLASLT_MATRIX_LAYOUT_LD), ldd = d.get<int64_t>(CUBLASLT_MATRIX_LAYOUT_LD);
  if (c.get<uint64_t>(CUBLASLT_MATRIX_LAYOUT_ROWS) != m || c.get<uint64_t>(CUBLASLT_MATRIX_LAYOUT_COLS) != n ||
      ldd < int64_t(m) || ldc < int64_t(m))
    return CUBLAS_STATUS_INVALID_VALUE;
  for (const Attributes* l : {&a, &b, &c, &d})
    if (l->get<int32_t>(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT) != batch) return CUBLAS_STATUS_INVALID_VALUE;
  const T alpha = *static_cast<const T*>(alpha_p), beta = *static_cast<const T*>(beta_p);
  if (ozgemm::dropin::ref::equals(alpha, 0.0)) ++g_alpha_zero;
  ++g_matmuls;
  const auto* bias_p = static_cast<const double*>(md.get<const void*>(CUBLASLT_MATMUL_DESC_BIAS_POINTER));
  auto* aux_p = static_cast<unsigned char*>(md.get<void*>(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER));
  const int64_t aux_ld = md.get<int64_t>(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD);
  if ((bias && !bias_p) || (aux && (!aux_p || aux_ld < int64_t(m)))) return CUBLAS_STATUS_INVALID_VALUE;
  for (int32_t i = 0; i < batch; ++i) {
    T* Dm = member<T>(d, D, i);
    const T* Cm = member<T>(c, C, i);
    // D = C (unless beta is 0: C is not read), then D = alpha op(A) op(B) + beta D.
    if (!ozgemm::dropin::ref::equals(beta, 0.0) && Cm != Dm)
      for (uint64_t j = 0; j < n; ++j) std::memmove(Dm + j * ldd, Cm + j * ldc, m * sizeof(T));
    ozgemm::dropin::reference_gemm(ta == CUBLAS_OP_N, ta == CUBLAS_OP_C, tb == CUBLAS_OP_N, tb == CUBLAS_OP_C,
                                   int64_t(m), int64_t(n), int64_t(k), alpha, member<T>(a, A, i),
                                   a.get<int64_t>(CUBLASLT_MATRIX_LAYOUT_LD), member<T>(b, B, i),
                                   b.get<int64_t>(CUBLASLT_MATRIX_LAYOUT_LD), beta, Dm, ldd);
    if constexpr (!complex) {
      if (epi == CUBLASLT_EPILOGUE_DEFAULT) continue;
      const double* bi = bias_p ? bias_p + i * md.get<int64_t>(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE) : nullptr;
      const int64_t aux_offset = i * md.get<int64_t>(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE);
      for (uint64_t j = 0; j < n; ++j)
        for (uint64_t r = 0; r < m; ++r) {
          double& x = Dm[r + j * ldd];
          if (bias) x += bi[r];
          const int64_t at = aux_offset + int64_t(r) + int64_t(j) * aux_ld;  // bits (RELU) or elements (GELU)
          if (aux && relu) {
            const unsigned char bit = static_cast<unsigned char>(1u << (at % 8));
            aux_p[at / 8] = x > 0.0 ? (aux_p[at / 8] | bit) : (aux_p[at / 8] & ~bit);
          }
          if (aux && gelu_on) reinterpret_cast<double*>(aux_p)[at] = x;
          if (relu) x = x > 0.0 ? x : 0.0;
          if (gelu_on) x = gelu(x);
        }
    }
  }
  return CUBLAS_STATUS_SUCCESS;
}

// A descriptor's or layout's attributes (O: cublasLtMatmulDesc_t, cublasLtMatrixLayout_t): set, get,
// destroy, with cuBLASLt's statuses.
template <typename O>
cublasStatus_t set_attribute(O o, int attr, const void* buf, size_t bytes) {
  return o ? reinterpret_cast<Attributes*>(o)->set(attr, buf, bytes) : CUBLAS_STATUS_NOT_INITIALIZED;
}
template <typename O>
cublasStatus_t get_attribute(O o, int attr, void* buf, size_t bytes, size_t* written) {
  return o ? reinterpret_cast<const Attributes*>(o)->read(attr, buf, bytes, written) : CUBLAS_STATUS_NOT_INITIALIZED;
}
template <typename O>
cublasStatus_t destroy(O o) {
  delete reinterpret_cast<Attributes*>(o);
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

#define MOCK_API extern "C" __attribute__((visibility("default")))
MOCK_API long mock_cublaslt_matmuls(void) { return g_matmuls.load(); }
MOCK_API long mock_cublaslt_alpha_zero_matmuls(void) { return g_alpha_zero.load(); }  // the hook's epilogue passes
MOCK_API long mock_cublaslt_live_handles(void) { return g_live.load(); }

extern "C" {

// A handle is a live-handle count's token (the mock keeps no per-handle state).
cublasStatus_t cublasLtCreate(cublasLtHandle_t* h) {
  *h = reinterpret_cast<cublasLtHandle_t>(new int(int(++g_live)));
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) {
  if (h) --g_live;
  delete reinterpret_cast<int*>(h);
  return h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* d, cublasComputeType_t compute, cudaDataType_t scale) {
  auto* x = new Attributes();
  x->init<int32_t>(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, compute);
  x->init<int32_t>(CUBLASLT_MATMUL_DESC_SCALE_TYPE, scale);
  x->init<int32_t>(CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_HOST);
  x->init<int32_t>(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N);
  x->init<int32_t>(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  x->init<int32_t>(CUBLASLT_MATMUL_DESC_TRANSC, CUBLAS_OP_N);
  x->init<int32_t>(CUBLASLT_MATMUL_DESC_FILL_MODE, CUBLAS_FILL_MODE_FULL);
  x->init<uint32_t>(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_DEFAULT);
  for (int id : {CUBLASLT_MATMUL_DESC_BIAS_POINTER, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
                 CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                 CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
                 CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER,
                 CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER,
                 CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR})
    x->init<const void*>(id, nullptr);
  for (int id : {CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD,
                 CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE})
    x->init<int64_t>(id, 0);
  for (int id : {CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                 CUBLASLT_MATMUL_DESC_B_SCALE_MODE, CUBLASLT_MATMUL_DESC_C_SCALE_MODE, CUBLASLT_MATMUL_DESC_D_SCALE_MODE,
                 CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE})
    x->init<int32_t>(id, 0);
  x->init<int32_t>(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, -1);
  x->init<int32_t>(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, -1);
  x->init<int8_t>(CUBLASLT_MATMUL_DESC_FAST_ACCUM, 0);
  *d = reinterpret_cast<cublasLtMatmulDesc_t>(x);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType type, uint64_t rows, uint64_t cols,
                                          int64_t ld) {
  auto* x = new Attributes();
  x->init<uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE, type);
  x->init<int32_t>(CUBLASLT_MATRIX_LAYOUT_ORDER, CUBLASLT_ORDER_COL);
  x->init<uint64_t>(CUBLASLT_MATRIX_LAYOUT_ROWS, rows);
  x->init<uint64_t>(CUBLASLT_MATRIX_LAYOUT_COLS, cols);
  x->init<int64_t>(CUBLASLT_MATRIX_LAYOUT_LD, ld);
  x->init<int32_t>(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 1);
  x->init<int64_t>(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 0);
  x->init<int64_t>(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, 0);
  x->init<uint32_t>(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, 0);
  *l = reinterpret_cast<cublasLtMatrixLayout_t>(x);
  return CUBLAS_STATUS_SUCCESS;
}
// Destroy, SetAttribute and GetAttribute of the descriptors (PREFIX: cublasLtMatmulDesc, cublasLtMatrixLayout).
#define MOCK_ATTRIBUTES(PREFIX, Obj, Attr)                                                                     \
  cublasStatus_t PREFIX##Destroy(Obj o) { return destroy(o); }                                                \
  cublasStatus_t PREFIX##SetAttribute(Obj o, Attr a, const void* buf, size_t bytes) {                         \
    return set_attribute(o, a, buf, bytes);                                                                   \
  }                                                                                                           \
  cublasStatus_t PREFIX##GetAttribute(Obj o, Attr a, void* buf, size_t bytes, size_t* written) {              \
    return get_attribute(o, a, buf, bytes, written);                                                          \
  }
MOCK_ATTRIBUTES(cublasLtMatmulDesc, cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t)
MOCK_ATTRIBUTES(cublasLtMatrixLayout, cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t)

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void* alpha, const void* A,
                              cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
                              const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!desc || !Adesc || !Bdesc || !Cdesc || !Ddesc || !alpha || !beta || !A || !B || !D)
    return CUBLAS_STATUS_INVALID_VALUE;
  const auto& md = *reinterpret_cast<const Attributes*>(desc);
  const Attributes* l[] = {reinterpret_cast<const Attributes*>(Adesc), reinterpret_cast<const Attributes*>(Bdesc),
                           reinterpret_cast<const Attributes*>(Cdesc), reinterpret_cast<const Attributes*>(Ddesc)};
  const int32_t compute = md.get<int32_t>(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE);
  const int32_t type = int32_t(l[3]->get<uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE));
  const bool fp64 = compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC || compute == 79;
  if (!fp64 || md.get<int32_t>(CUBLASLT_MATMUL_DESC_SCALE_TYPE) != type) return CUBLAS_STATUS_NOT_SUPPORTED;
  for (const Attributes* x : l)
    if (int32_t(x->get<uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE)) != type ||
        x->get<int32_t>(CUBLASLT_MATRIX_LAYOUT_ORDER) != CUBLASLT_ORDER_COL ||
        x->get<int64_t>(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET) != 0 || x->get<uint32_t>(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE))
      return CUBLAS_STATUS_NOT_SUPPORTED;
  if (md.get<int32_t>(CUBLASLT_MATMUL_DESC_TRANSC) != CUBLAS_OP_N) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (!C && !ozgemm::dropin::ref::equals(*static_cast<const double*>(beta), 0.0)) return CUBLAS_STATUS_INVALID_VALUE;
  if (type == CUDA_R_64F) return matmul<double>(md, alpha, A, *l[0], B, *l[1], beta, C ? C : D, *l[2], D, *l[3]);
  if (type == CUDA_C_64F)
    return matmul<cuDoubleComplex>(md, alpha, A, *l[0], B, *l[1], beta, C ? C : D, *l[2], D, *l[3]);
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

}  // extern "C"
