#!/usr/bin/env bash
# tests/dropin/check_exports.sh HOOK_LIB BLAS_LIB — the two libraries export exactly their entry
# points (nm -D) and depend on no CUDA library (they dlopen libozgemm lazily).
set -euo pipefail
hook="$1" blas="$2"
status=0
check() {
  local lib="$1"; shift
  local want got
  want=$(printf '%s\n' "$@" | sort)
  got=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwVv]$/ {print $3}' | sed 's/@.*//' | sort -u)
  if [ "$want" != "$got" ]; then
    echo "FAIL: $(basename "$lib") exports differ (< wanted, > exported):"
    diff <(echo "$want") <(echo "$got") || true
    status=1
  else
    echo "OK: $(basename "$lib") exports exactly: $(echo $got)"
  fi
  if readelf -d "$lib" | grep NEEDED | grep -Ei 'cuda|cublas|ozgemm|blas\.so'; then
    echo "FAIL: $(basename "$lib") has a DT_NEEDED on CUDA, BLAS or libozgemm (it must dlopen them)"
    status=1
  fi
}
check "$hook" cublasDgemm_v2 cublasDgemm_v2_64 cublasGemmEx cublasGemmEx_64 cublasDgemmStridedBatched \
  cublasDgemmStridedBatched_64 cublasDgemmBatched cublasDgemmBatched_64 cublasGemmStridedBatchedEx \
  cublasGemmStridedBatchedEx_64 cublasGemmBatchedEx cublasGemmBatchedEx_64 cublasZgemm_v2 cublasZgemm_v2_64 \
  cublasZgemm3m cublasZgemm3m_64 cublasZgemmStridedBatched cublasZgemmStridedBatched_64 cublasZgemmBatched \
  cublasZgemmBatched_64 cublasDestroy_v2 cublasDgemm \
  cublasDsyrk_v2 cublasDsyrk_v2_64 cublasDsyr2k_v2 cublasDsyr2k_v2_64 cublasDsyrkx cublasDsyrkx_64 cublasDsymm_v2 \
  cublasDsymm_v2_64 \
  cublasInit cublasShutdown cublasSetKernelStream cublasLtMatmul cublasLtDestroy ozgemmHookCounter ozgemmHookStatsJson \
  ozgemmHookResetStats \
  ozgemmHookSetEnabled dlsym
check "$blas" dgemm_ cblas_dgemm zgemm_ cblas_zgemm dsyrk_ cblas_dsyrk dsymm_ cblas_dsymm ozgemmBlasCounter ozgemmBlasStatsJson ozgemmBlasResetStats ozgemmBlasSetEnabled
# Every symbol the hook exports must exist in the real cuBLAS or cuBLASLt under the same name (a typo
# would silently intercept nothing).
cublas=$(ls /usr/local/cuda/lib64/libcublas.so.* 2>/dev/null | head -n1 || true)
cublaslt=$(ls /usr/local/cuda/lib64/libcublasLt.so.* 2>/dev/null | head -n1 || true)
if [ -n "$cublas" ] && [ -n "$cublaslt" ]; then
  missing=""
  real=$(nm -D --defined-only "$cublas" "$cublaslt" | awk '{print $3}' | sed 's/@.*//')
  for s in $(nm -D --defined-only "$hook" | awk '{print $3}' | sed 's/@.*//' | grep '^cublas'); do
    echo "$real" | grep -x "$s" > /dev/null || missing="$missing $s"
  done
  if [ -n "$missing" ]; then echo "FAIL: not in $cublas or $cublaslt:$missing"; status=1
  else echo "OK: every hooked symbol exists in $(basename "$cublas") or $(basename "$cublaslt")"; fi
fi
exit $status
