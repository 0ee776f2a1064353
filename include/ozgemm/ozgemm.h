/* ozgemm/ozgemm.h — public C API of ozgemm: FP64 GEMM on INT8 tensor cores (Ozaki-I).
 *
 * ozgemmDgemm mirrors cublasDgemm exactly (column-major; A, B, C device pointers; alpha
 * and beta host pointers), so a preloaded hook can forward cublasDgemm calls unchanged:
 *
 *   C = alpha * op(A) * op(B) + beta * C,   op(A) m x k, op(B) k x n, C m x n.
 *
 * BLAS semantics: m, n or k == 0 returns at once (k == 0 or alpha == 0: C = beta * C,
 * A and B not read); beta == 0 means C is not read (NaN in C does not propagate).
 * Inf/NaN in A or B reach exactly the entries of C that native DGEMM would make
 * non-finite (docs/numerics.md says how the sign of an Inf is decided).
 *
 * Usable from C and C++. Link with the `ozgemm` library (CMake: ozgemm::ozgemm; pkg-config: ozgemm).
 */
#ifndef OZGEMM_OZGEMM_H
#define OZGEMM_OZGEMM_H

#include <stddef.h>

#include <cuComplex.h>         /* cuDoubleComplex */
#include <cublas_api.h>        /* cublasOperation_t */
#include <cuda_runtime_api.h> /* cudaStream_t */

#include "ozgemm/config.h"    /* OZGEMM_DEFAULT_SLICES, OZGEMM_MAX_SLICES, version */
#include "ozgemm/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  OZGEMM_STATUS_SUCCESS = 0,
  OZGEMM_STATUS_NOT_INITIALIZED = 1,   /* null or destroyed handle */
  OZGEMM_STATUS_INVALID_VALUE = 2,     /* bad size, leading dimension, pointer or option */
  OZGEMM_STATUS_ARCH_MISMATCH = 3,     /* no usable GPU, or the GPU lacks INT8 tensor cores (< sm_75) */
  OZGEMM_STATUS_ALLOC_FAILED = 4,      /* workspace could not be allocated */
  OZGEMM_STATUS_INSUFFICIENT_WORKSPACE = 5, /* user workspace smaller than ozgemmGetWorkspaceSize */
  OZGEMM_STATUS_EXECUTION_FAILED = 6,  /* a kernel or cuBLASLt call failed */
  OZGEMM_STATUS_NOT_SUPPORTED = 7,     /* valid request this build cannot serve (e.g. a variant not built) */
  OZGEMM_STATUS_INTERNAL_ERROR = 8
} ozgemmStatus_t;

typedef enum {
  OZGEMM_VARIANT_AUTO = 0,            /* planner chooses */
  OZGEMM_VARIANT_UNFUSED = 1,         /* slice, cuBLASLt INT8 GEMMs, separate epilogue */
  OZGEMM_VARIANT_PARTIALLY_FUSED = 2, /* diagonal sums in the GEMM kernel, separate epilogue */
  OZGEMM_VARIANT_FULLY_FUSED = 3,     /* FP64 epilogue inside the GEMM kernel */
  OZGEMM_VARIANT_NATIVE = 4           /* cuBLAS DGEMM */
} ozgemmVariant_t;

/* Which kernel family runs the fused variants. */
typedef enum {
  OZGEMM_KERNELS_AUTO = 0,     /* Hopper kernels on sm_90, the portable ones elsewhere */
  OZGEMM_KERNELS_SM90 = 1,     /* TMA + wgmma (sm_90a only) */
  OZGEMM_KERNELS_PORTABLE = 2  /* mma.sync + cp.async (sm_80 and newer, Hopper included) */
} ozgemmKernelFamily_t;

/* Where the fully fused variant keeps its FP64 sum of the diagonals. */
typedef enum {
  OZGEMM_ACCUMULATOR_AUTO = 0,      /* the planner's choice (measured; src/planner.cpp) */
  OZGEMM_ACCUMULATOR_REGISTERS = 1, /* in registers; C written once (smaller tiles: 128 x 128) */
  OZGEMM_ACCUMULATOR_GLOBAL = 2     /* read-modified-written in a device workspace once per diagonal
                                       (the tutorial's version; the partially fused tile size) */
} ozgemmFusedAccumulator_t;

/* Accuracy contract (docs/numerics.md, "The accuracy contract").
 *   FP64 (default): per call, the slice count (Ozaki-I) and the moduli count (Ozaki-II) are chosen
 *     from the data as the smallest counts whose proven bounds meet |C - AB|_ij <= c u (|A||B|)_ij
 *     entrywise (u = 2^-53, c = min(4, k): no looser than native DGEMM's own bound k u (|A||B|)),
 *     before the final alpha/beta roundings; the scheme (ozgemmSetScheme) that meets it and is
 *     expected fastest runs. Where no count meets it, where the emulation would be slower than
 *     native DGEMM on this device, or where the data cannot be read back (CUDA graph capture),
 *     native DGEMM runs. Deciding reads A and B and synchronises the handle's stream (two to four times a call).
 *   FIXED: the handle's slice count (ozgemmSetSlices) or, with scheme OZAKI2, moduli count
 *     (ozgemmSetModuli), no decision, no guarantee beyond the measured tables.
 *     ozgemmSetSlices(h, s) with s > 0 selects FIXED; s = 0 returns to FP64. */
typedef enum {
  OZGEMM_ACCURACY_FP64 = 0,
  OZGEMM_ACCURACY_FIXED = 1
} ozgemmAccuracy_t;

/* The emulation scheme.
 *   AUTO (default): FP64 mode takes whichever scheme meets the accuracy contract fastest on this
 *     device and shape (or native DGEMM); FIXED mode runs Ozaki-I at the handle's slice count.
 *   OZAKI1: slices of 8 bits, s(s+1)/2 INT8 products.
 *   OZAKI2: the integer CRT scheme (Ozaki, Uchino, Imamura), one INT8 product per modulus. Variants:
 *     UNFUSED (cuBLASLt products, int32 planes), PARTIALLY_FUSED (Hopper only: one GEMM launch over
 *     all moduli that reduces each product modulo its modulus in the epilogue, int8 planes; k past
 *     one int32 chunk runs unfused, and ozgemmGetLastCallInfo says so), AUTO (PARTIALLY_FUSED where
 *     available, else UNFUSED); FULLY_FUSED is NOT_SUPPORTED (on Hopper it could not beat
 *     PARTIALLY_FUSED: docs/performance.md); NATIVE runs native. Every variant gives
 *     the same bits. In FP64 mode the moduli count is chosen from
 *     the data with its own proven bound (docs/numerics.md); in FIXED mode it is the handle's count
 *     (ozgemmSetModuli: a count > 0 selects FIXED, as ozgemmSetSlices does). */
typedef enum {
  OZGEMM_SCHEME_OZAKI1 = 0,
  OZGEMM_SCHEME_OZAKI2 = 1,
  OZGEMM_SCHEME_AUTO = 2
} ozgemmScheme_t;

/* What a call ran (ozgemmGetLastCallInfo) or would run (ozgemmPlanCall). */
typedef struct {
  ozgemmScheme_t scheme;   /* the scheme of the emulation (when one ran) */
  int moduli;              /* Ozaki-II: moduli count; 0 otherwise */
  ozgemmVariant_t variant; /* NATIVE or the emulated variant that ran */
  int slices;              /* slice count of the emulation; 0 when native ran */
  double bound;            /* FP64 mode: the constant c the data achieved at `slices`:
                              |C - AB|_ij <= c u (|A||B|)_ij for every finite entry; 0: not computed */
  double target;           /* FP64 mode: the contract's constant min(4, k) */
  int fell_back;           /* 1 when FP64 mode ran native DGEMM instead of an emulation */
  char reason[160];        /* one line: how the count was chosen, or why native ran */
} ozgemmCallInfo_t;

typedef struct ozgemmContext* ozgemmHandle_t;

/* OZGEMM_DEFAULT_SLICES (ozgemmSetSlices(h, 0)) and OZGEMM_MAX_SLICES: ozgemm/config.h.
 * docs/numerics.md has the errors measured per slice count. */

/* A handle on the current device (its device from then on: every call that touches the GPU runs there,
 * whichever device is current when it is made, and leaves the caller's device current; the stream
 * and workspace given to it must belong to that device): FP64 accuracy mode, Ozaki-I, variant AUTO, or the variant named
 * by the environment variable OZGEMM_VARIANT (auto, unfused, partially-fused, fully-fused, native;
 * INVALID_VALUE for another name, NOT_SUPPORTED where this GPU and build cannot run it). */
OZGEMM_API ozgemmStatus_t ozgemmCreate(ozgemmHandle_t* handle);
OZGEMM_API ozgemmStatus_t ozgemmDestroy(ozgemmHandle_t handle);
OZGEMM_API ozgemmStatus_t ozgemmSetStream(ozgemmHandle_t handle, cudaStream_t stream);
OZGEMM_API ozgemmStatus_t ozgemmGetStream(ozgemmHandle_t handle, cudaStream_t* stream);
/* slices in 1..OZGEMM_MAX_SLICES (selects OZGEMM_ACCURACY_FIXED), or 0 (the default count for
 * FIXED mode, and back to OZGEMM_ACCURACY_FP64). */
OZGEMM_API ozgemmStatus_t ozgemmSetSlices(ozgemmHandle_t handle, int slices);
OZGEMM_API ozgemmStatus_t ozgemmGetSlices(ozgemmHandle_t handle, int* slices);
OZGEMM_API ozgemmStatus_t ozgemmSetScheme(ozgemmHandle_t handle, ozgemmScheme_t scheme);
OZGEMM_API ozgemmStatus_t ozgemmGetScheme(ozgemmHandle_t handle, ozgemmScheme_t* scheme);
/* moduli in OZGEMM_MIN_MODULI..OZGEMM_MAX_MODULI (selects OZGEMM_ACCURACY_FIXED), or 0 for
 * OZGEMM_DEFAULT_MODULI in FIXED mode (the accuracy mode unchanged). */
OZGEMM_API ozgemmStatus_t ozgemmSetModuli(ozgemmHandle_t handle, int moduli);
OZGEMM_API ozgemmStatus_t ozgemmSetAccuracy(ozgemmHandle_t handle, ozgemmAccuracy_t accuracy);
OZGEMM_API ozgemmStatus_t ozgemmGetAccuracy(ozgemmHandle_t handle, ozgemmAccuracy_t* accuracy);
/* What the last successful ozgemmDgemm or ozgemmZgemm on this handle ran (variant NATIVE, slices 0 before any). */
OZGEMM_API ozgemmStatus_t ozgemmGetLastCallInfo(ozgemmHandle_t handle, ozgemmCallInfo_t* info);
/* What ozgemmDgemm would run on these operands (FP64 mode reads A and B to decide; synchronous). */
OZGEMM_API ozgemmStatus_t ozgemmPlanCall(ozgemmHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const double* A, int lda, const double* B, int ldb,
                                         ozgemmCallInfo_t* info);
OZGEMM_API ozgemmStatus_t ozgemmSetVariant(ozgemmHandle_t handle, ozgemmVariant_t variant);
OZGEMM_API ozgemmStatus_t ozgemmGetVariant(ozgemmHandle_t handle, ozgemmVariant_t* variant);
/* Kernel family of the fused variants; NOT_SUPPORTED when the GPU or build lacks it. */
OZGEMM_API ozgemmStatus_t ozgemmSetKernelFamily(ozgemmHandle_t handle, ozgemmKernelFamily_t family);
/* Accumulator of the fully fused variant. Results are bitwise identical either way. */
OZGEMM_API ozgemmStatus_t ozgemmSetFusedAccumulator(ozgemmHandle_t handle, ozgemmFusedAccumulator_t accumulator);

/* Bytes of device workspace ozgemmDgemm needs for this problem with the handle's settings. */
OZGEMM_API ozgemmStatus_t ozgemmGetWorkspaceSize(ozgemmHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                      int m, int n, int k, size_t* bytes);
/* The variant ozgemmDgemm runs for this problem with the handle's settings: AUTO resolved, and
 * UNFUSED where a fused variant was requested but the problem is past the fused kernels'
 * limits (the planner, src/plan/planner.hpp). */
OZGEMM_API ozgemmStatus_t ozgemmGetPlannedVariant(ozgemmHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                       int m, int n, int k, ozgemmVariant_t* variant);
/* User workspace (device memory, 256-byte aligned). ptr == NULL returns to handle-owned,
 * growing workspace. The user keeps ownership and must keep it alive while calls run. */
OZGEMM_API ozgemmStatus_t ozgemmSetWorkspace(ozgemmHandle_t handle, void* ptr, size_t bytes);

/* Can this handle compute the problem? Same argument checks as ozgemmDgemm, no work. */
OZGEMM_API ozgemmStatus_t ozgemmCanImplement(ozgemmHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                  int m, int n, int k, int lda, int ldb, int ldc);

OZGEMM_API ozgemmStatus_t ozgemmDgemm(ozgemmHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                           int n, int k, const double* alpha, const double* A, int lda, const double* B, int ldb,
                           const double* beta, double* C, int ldc);

/* Complex FP64 GEMM with exactly cublasZgemm's arguments (CUBLAS_OP_C: conjugate transpose; alpha
 * and beta host pointers; the same BLAS semantics and argument checks as ozgemmDgemm). FIXED mode
 * (ozgemmSetModuli / ozgemmSetSlices / ozgemmSetAccuracy) runs the complex Ozaki-II scheme ("2M": two
 * INT8 products per modulus, docs/numerics.md, "Complex products (ZGEMM)") with the handle's moduli
 * count (0: OZGEMM_DEFAULT_COMPLEX_MODULI) and variant (AUTO, UNFUSED, PARTIALLY_FUSED), whatever the
 * scheme setting. FP64 mode decides the complex moduli count from the data with the proven entrywise
 * bound |C - AB| <= min(4, k) u (|A||B|) (complex moduli), or runs native cublasZgemm where no count
 * meets it, where AUTO's rules expect native to be faster, or under graph capture; variant NATIVE runs
 * cublasZgemm. ozgemmGetLastCallInfo reports what ran. The workspace queries (ozgemmGetWorkspaceSize,
 * ozgemmGetPlannedVariant, ozgemmCanImplement, ozgemmPlanCall) describe real (DGEMM) calls only: a
 * caller workspace sized by them can be too small for ZGEMM (INSUFFICIENT_WORKSPACE in FIXED mode; FP64
 * mode runs native ZGEMM then); the handle's own workspace grows as needed. */
OZGEMM_API ozgemmStatus_t ozgemmZgemm(ozgemmHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                      int n, int k, const cuDoubleComplex* alpha, const cuDoubleComplex* A, int lda,
                                      const cuDoubleComplex* B, int ldb, const cuDoubleComplex* beta,
                                      cuDoubleComplex* C, int ldc);

/* Symmetric Level-3 routines with exactly cuBLAS's arguments (cublasDsyrk, cublasDsyr2k, cublasDsyrkx,
 * cublasDsymm; column-major, device matrices, alpha and beta host pointers), BLAS semantics:
 *   SYRK   C = alpha op(A) op(A)^T + beta C                      op(A) n x k (trans N: A, T or C: A^T)
 *   SYR2K  C = alpha (op(A) op(B)^T + op(B) op(A)^T) + beta C
 *   SYRKX  C = alpha op(A) op(B)^T + beta C   (the caller promises the product is symmetric)
 *   SYMM   C = alpha A B + beta C (side LEFT, A m x m) or alpha B A + beta C (RIGHT, A n x n),
 *          A symmetric, only its `uplo` triangle read.
 * The rank-k routines read and write only the `uplo` triangle of the n x n C (the other triangle is
 * left bit for bit as it was); beta == 0 means C is not read; n == 0, or (alpha == 0 or k == 0) with
 * beta == 1, returns at once; alpha == 0 or k == 0 otherwise only scales C's triangle by beta.
 * INVALID_VALUE where cuBLAS reports CUBLAS_STATUS_INVALID_VALUE (uplo, trans, side, sizes,
 * leading dimensions; null pointers that are read).
 * How: the handle's settings and the shape decide (src/plan/symmetric_plan.cpp) between native
 * cuBLAS and ozgemm's GEMM path. The rank-k routines split C's triangle into block rows (lower) or
 * columns (upper) of nb: the part off the diagonal is one ozgemmDgemm straight into C, the nb x nb
 * diagonal block an ozgemmDgemm into a scratch buffer whose triangle is merged into C; SYMM builds
 * the full A in an m x m (n x n) buffer and runs one ozgemmDgemm. Each GEMM decides for itself as
 * ozgemmDgemm does, so FP64 mode's entrywise contract holds for every entry of C (SYR2K: for each of
 * its two products, then one addition). The buffers are allocated on the handle's stream
 * (cudaMallocAsync); where that fails the native routine runs. ozgemmGetLastCallInfo reports the
 * last emulated GEMM's info with the counts of emulated and native GEMMs in its reason, or native. */
OZGEMM_API ozgemmStatus_t ozgemmDsyrk(ozgemmHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n,
                                      int k, const double* alpha, const double* A, int lda, const double* beta,
                                      double* C, int ldc);
OZGEMM_API ozgemmStatus_t ozgemmDsyr2k(ozgemmHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n,
                                       int k, const double* alpha, const double* A, int lda, const double* B, int ldb,
                                       const double* beta, double* C, int ldc);
OZGEMM_API ozgemmStatus_t ozgemmDsyrkx(ozgemmHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n,
                                       int k, const double* alpha, const double* A, int lda, const double* B, int ldb,
                                       const double* beta, double* C, int ldc);
OZGEMM_API ozgemmStatus_t ozgemmDsymm(ozgemmHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int m,
                                      int n, const double* alpha, const double* A, int lda, const double* B, int ldb,
                                      const double* beta, double* C, int ldc);

OZGEMM_API const char* ozgemmGetStatusString(ozgemmStatus_t status);
OZGEMM_API const char* ozgemmGetVariantString(ozgemmVariant_t variant);

#ifdef __cplusplus
}
#endif

#endif /* OZGEMM_OZGEMM_H */
