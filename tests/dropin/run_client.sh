#!/usr/bin/env bash
# tests/dropin/run_client.sh VARIANT KIND LIB CLIENT — runs a test client (cublas_client or
# blas_client) without and with LD_PRELOAD=LIB and requires the same output (the real library's
# statuses and bits), then lets the client check the drop-in's counters (--expect-preload).
#   VARIANT: default (default threshold), min0 (threshold 0, GPU hidden: every call takes the
#            GPU path's checks and must still forward), off (OZGEMM_HOOK=0 / OZGEMM_BLAS=0),
#            mock / mock-partial (BLAS only: the offload path on the mock libozgemm in
#            $OZGEMM_MOCK_LIBRARY; its host GEMM has reference BLAS's loops, so the bits still match);
#            mock-ozaki2 (FIXED Ozaki-II, 14 moduli, set by the hook's variable), mock-fp64-ozaki2
#            (FP64 mode, the mock chooses Ozaki-II with 12 moduli), invalid-setting (everything forwarded)
#   KIND:    hook | blas
set -euo pipefail
variant="$1" kind="$2" lib="$3" client="$4"
upper=$(echo "$kind" | tr a-z A-Z)
envs=()
case "$variant" in
  default) ;;
  min0) envs+=("OZGEMM_${upper}_MIN_SIZE=0" "CUDA_VISIBLE_DEVICES=") ;;
  off) envs+=("OZGEMM_${upper}=0") ;;
  # the GPU path on a mock libozgemm (tests/dropin/mock), 64-byte staging chunks; -partial: the
  # third device-to-host copy fails, the system BLAS finishes that call's remaining columns
  mock) envs+=("OZGEMM_LIBRARY=$OZGEMM_MOCK_LIBRARY" "OZGEMM_${upper}_MIN_SIZE=0" "OZGEMM_BLAS_STAGE_BYTES=64"
               "OZGEMM_${upper}_ACCURACY=7") ;;
  mock-partial) envs+=("OZGEMM_LIBRARY=$OZGEMM_MOCK_LIBRARY" "OZGEMM_${upper}_MIN_SIZE=0" "OZGEMM_BLAS_STAGE_BYTES=64"
                       "MOCK_D2H_FAIL_AT=3") ;;
  mock-ozaki2) envs+=("OZGEMM_LIBRARY=$OZGEMM_MOCK_LIBRARY" "OZGEMM_${upper}_MIN_SIZE=0" "OZGEMM_HOOK_ACCURACY=moduli:14") ;;
  mock-fp64-ozaki2) envs+=("OZGEMM_LIBRARY=$OZGEMM_MOCK_LIBRARY" "OZGEMM_${upper}_MIN_SIZE=0" "MOCK_FP64_OZAKI2=12") ;;
  invalid-setting) envs+=("OZGEMM_LIBRARY=$OZGEMM_MOCK_LIBRARY" "OZGEMM_${upper}_MIN_SIZE=0"
                          "OZGEMM_${upper}_ACCURACY=moduli:1") ;;
  *) echo "unknown variant $variant" >&2; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
env ${envs[@]+"${envs[@]}"} "$client" > "$tmp/plain.out"
env ${envs[@]+"${envs[@]}"} "OZGEMM_${upper}_LOG=summary" LD_PRELOAD="$lib" "$client" --expect-preload "$variant" \
  > "$tmp/preload.out" 2> "$tmp/preload.err" || { cat "$tmp/preload.err"; echo "FAIL: client under the preload"; exit 1; }
cat "$tmp/preload.err"
if ! diff -u "$tmp/plain.out" "$tmp/preload.out"; then
  echo "FAIL: output differs with LD_PRELOAD=$lib"
  exit 1
fi
echo "OK: $(wc -l < "$tmp/plain.out") lines identical with and without LD_PRELOAD=$(basename "$lib") ($variant)"
