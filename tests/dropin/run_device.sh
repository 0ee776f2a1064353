#!/usr/bin/env bash
# tests/dropin/run_device.sh [LIBDIR] — the drop-in libraries under real programs on a GPU machine
# (issue 12; docs/dropin.md). Offline; about 2-3 minutes.
#
#   LIBDIR (or $OZGEMM_LIB_DIR): libozgemm.so.0 (or libozgemm.so), libozgemm_hook.so,
#   libozgemm_blas.so and optionally blastest/ (Debian's netlib testers with their libraries, for a
#   machine without libblas-test). `cmake --build build --target dropin_dist` assembles exactly this
#   in build/dropin-dist.
#
# Steps (each prints PASS/FAIL/SKIP lines; the last lines are a summary table):
#   1. which FP64 GEMM entry points torch and CuPy import (nm -D);
#   2. PyTorch and CuPy float64 matmul/addmm/dot/bmm/batched matmul/transposed operand and a captured
#      CUDA graph, hook off vs on in one process, in the library's FP64 accuracy mode and with a
#      fixed slice count (OZGEMM_HOOK_ACCURACY=7) and moduli count (moduli:14), with the intercepted-call
#      counts by scheme (torch's 16384^2 matmul must count as Ozaki-II on Hopper in FP64 mode); torch's addmm
#      with a 1-D bias also without DISABLE_ADDMM_CUDA_LT=1 (the cuBLASLt path with the BIAS epilogue); and
#      complex128 cases (torch matmul / conjugate transpose / bmm / einsum, CuPy matmul / dot / batched /
#      broadcast) with OZGEMM_HOOK_ACCURACY=moduli:16 (FIXED complex Ozaki-II): complex matrices
#      intercepted, every one Ozaki-II, within the contract bound of the hook-off result;
#   3. the netlib testers xblat3d (Fortran DGEMM) and xdcblat3 (CBLAS) with OZGEMM_BLAS_MIN_SIZE=0:
#      every DGEMM through ozgemm on the GPU; all DGEMM tests must PASS; xblat3z and xzcblat3 (ZGEMM)
#      with moduli:16: every ZGEMM that computes something through ozgemm; all ZGEMM tests must PASS;
#   4. numpy linked to the system libblas.so.3 (Debian's python3-numpy): a 4096^2 float64 matmul
#      through the offload (skipped, saying so, when no such numpy is installed); OZGEMM_NUMPY_PYTHON
#      names another interpreter to try first (e.g. a wrapper around a carried Debian python3-numpy);
#   5. cublasLtMatmul (device_lt.py), FP64 mode, default threshold, at 8192 and 16384 (OZGEMM_DROPIN_LT_SIZES):
#      JAX x64 a @ b, batched matmul, einsum, a jit loop (a @ b at 16384 must run >= 1.25x the hook-off
#      run); PyTorch with TORCH_BLAS_PREFER_CUBLASLT=1: a @ b, addmm / F.linear with a bias, the RELU and
#      GELU bias epilogues (_addmm_activation), bmm; each intercepted and within the contract of the
#      hook-off run on sampled entries, with hook-off/on timings. Several minutes.
# OZGEMM_DROPIN_STEPS: which steps to run (default "1 2 3 4 5").
# Logs: $OUT/dropin/ when OUT is set, else ./dropin-device-logs/. Exit status: 1 if any step FAILed.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LIBDIR="${1:-${OZGEMM_LIB_DIR:-}}"
[ -n "$LIBDIR" ] || { echo "usage: $0 LIBDIR (or OZGEMM_LIB_DIR)"; exit 2; }
LIBDIR="$(cd "$LIBDIR" && pwd)"
LOG="${OUT:+$OUT/dropin}"
LOG="${LOG:-$PWD/dropin-device-logs}"
mkdir -p "$LOG"
exec > >(tee "$LOG/run_device.log") 2>&1

HOOK="$LIBDIR/libozgemm_hook.so"
BLAS="$LIBDIR/libozgemm_blas.so"
for f in "$HOOK" "$BLAS"; do [ -f "$f" ] || { echo "missing $f"; exit 2; }; done
if [ ! -e "$LIBDIR/libozgemm.so.0" ]; then
  if [ -e "$LIBDIR/libozgemm.so" ]; then export OZGEMM_LIBRARY="$LIBDIR/libozgemm.so"
  else echo "missing $LIBDIR/libozgemm.so.0"; exit 2; fi
fi
PY="${PYTHON:-python3}"
T0=$(date +%s)
declare -a SUMMARY
status=0
note() { SUMMARY+=("$1"); case "$1" in FAIL*) status=1 ;; esac; }
want() { case " ${OZGEMM_DROPIN_STEPS:-1 2 3 4 5} " in *" $1 "*) return 0 ;; esac; return 1; }

echo "=== ozgemm drop-in device run: $(date -u +%FT%TZ) on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/GPU: /'
echo "libraries: $LIBDIR"; ls -l "$LIBDIR" | sed 's/^/  /'
"$PY" -c "import sys; print('python', sys.version.split()[0])" 2>/dev/null

# --- 1. entry points the frameworks import ------------------------------------------------------
if want 1; then
echo; echo "=== 1. FP64 (real and complex) GEMM entry points imported by torch and CuPy (nm -D --undefined-only)"
PATTERN='^(cublas[DZ]gemm|cublasGemm(Strided)?(Batched)?Ex|cublasLtMatmul$)'
"$PY" - <<'EOF' > "$LOG/framework_libs.txt" 2>/dev/null
import glob, os
try:
    import torch
    d = os.path.join(os.path.dirname(torch.__file__), "lib")
    for f in sorted(glob.glob(d + "/libtorch_cuda*.so")): print("torch", f)
except Exception as e:
    print("# torch:", e)
try:
    import cupy_backends
    d = os.path.dirname(cupy_backends.__file__)
    for f in sorted(glob.glob(d + "/cuda/libs/*cublas*.so")): print("cupy", f)
except Exception as e:
    print("# cupy:", e)
EOF
while read -r fw lib; do
  [ "$fw" = "#" ] && { echo "  $fw $lib"; continue; }
  syms=$(nm -D --undefined-only "$lib" 2>/dev/null | awk '{print $2}' | sed 's/@.*//' | grep -E "$PATTERN" | sort -u | tr '\n' ' ')
  echo "  $fw $(basename "$lib"): ${syms:-none found}"
done < "$LOG/framework_libs.txt"
fi  # step 1

# --- 2. PyTorch and CuPy ------------------------------------------------------------------------------
if want 2; then
echo; echo "=== 2. PyTorch and CuPy under LD_PRELOAD=libozgemm_hook.so (OZGEMM_HOOK_MIN_SIZE=0; hook off vs on)"
rm -f "$LOG/frameworks.jsonl"
run_fw() {  # name framework accuracy [extra env...] [-- extra args]
  local name="$1" fw="$2" acc="$3"; shift 3
  local envs=() extra=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  [ "${1:-}" = "--" ] && { shift; extra=("$@"); }
  local tag="accuracy=$acc${envs[*]:+ ${envs[*]}}"
  echo "--- $fw, OZGEMM_HOOK_ACCURACY=$acc ${envs[*]:-} ${extra[*]:-}"
  if ! "$PY" -c "import $fw" 2>/dev/null; then echo "SKIP: $fw not importable"; note "SKIP  $name ($tag): $fw not installed"; return; fi
  timeout 150 env ${envs[@]+"${envs[@]}"} LD_PRELOAD="$HOOK" OZGEMM_HOOK_MIN_SIZE=0 OZGEMM_HOOK_ACCURACY="$acc" \
    OZGEMM_HOOK_LOG=summary OZGEMM_HOOK_STATS="$LOG/hook_stats_$name.json" \
    "$PY" "$HERE/device_frameworks.py" --framework "$fw" --lib "$HOOK" --json "$LOG/frameworks.jsonl" --tag "$tag" \
    ${extra[@]+"${extra[@]}"} 2>&1 | tee "$LOG/$name.log"
  local rc=${PIPESTATUS[0]}
  local line; line=$(grep -E "^$fw .*cases" "$LOG/$name.log" | tail -n1)
  if [ "$rc" -eq 0 ]; then note "PASS  $name ($tag): ${line:-done}"
  else note "FAIL  $name ($tag): rc=$rc ${line:-}"; fi
}
run_fw torch_fp64 torch fp64 DISABLE_ADDMM_CUDA_LT=1
run_fw torch_fixed7 torch 7 DISABLE_ADDMM_CUDA_LT=1 OZGEMM_VARIANT=unfused  # variant AUTO would pick native DGEMM here
run_fw torch_moduli14 torch moduli:14 DISABLE_ADDMM_CUDA_LT=1  # FIXED Ozaki-II: counted emulated (issue 29)
run_fw torch_addmm_lt torch fp64 -- --only "addmm 1-D bias"  # torch's default: cublasLtMatmul with the BIAS epilogue
run_fw cupy_fp64 cupy fp64
run_fw cupy_fixed7 cupy 7 OZGEMM_VARIANT=unfused
run_fw cupy_moduli14 cupy moduli:14
# complex128 under FIXED complex Ozaki-II, 16 moduli (FP64 mode runs native ZGEMM for complex data today)
run_fw torch_complex_moduli16 torch moduli:16 -- --complex
run_fw cupy_complex_moduli16 cupy moduli:16 -- --complex
fi  # step 2

# --- 3. netlib BLAS testers through the offload ---------------------------------------------------
if want 3; then
echo; echo "=== 3. netlib BLAS testers, LD_PRELOAD=libozgemm_blas.so OZGEMM_BLAS_MIN_SIZE=0 (every DGEMM on the GPU)"
TESTER_DIR=""
for d in /usr/lib/*/blas; do [ -x "$d/xblat3d" ] && TESTER_DIR="$d" && break; done
if [ -z "$TESTER_DIR" ] && [ -x "$LIBDIR/blastest/xblat3d" ]; then
  TESTER_DIR="$LIBDIR/blastest"
  echo "(no Debian libblas-test here: using the bundled testers in $TESTER_DIR)"
fi
if [ -z "$TESTER_DIR" ]; then
  echo "SKIP: no xblat3d (Debian libblas-test) and no $LIBDIR/blastest"; note "SKIP  netlib testers: not available"
else
  for acc in fp64 8; do
    for tester in xblat3d xdcblat3; do
      echo "--- $tester, OZGEMM_BLAS_ACCURACY=$acc"
      # A fixed count runs the unfused emulation (variant AUTO would choose native DGEMM at these sizes).
      variant=auto; [ "$acc" = fp64 ] || variant=unfused
      OZGEMM_VARIANT=$variant OZGEMM_BLAS_TESTER_DIR="$TESTER_DIR" OZGEMM_BLAS_MIN_SIZE=0 OZGEMM_BLAS_ACCURACY=$acc OZGEMM_EXPECT_OFFLOAD=1 \
        OZGEMM_TESTER_LOG_DIR="$LOG/blastest_$acc" timeout 120 bash "$HERE/run_blas_tester.sh" "$BLAS" "$tester" \
        | tee "$LOG/${tester}_${acc}.log"
      rc=${PIPESTATUS[0]}
      counts=$(grep -E "GEMM calls seen" "$LOG/${tester}_${acc}.log" | sed 's/^ *//')
      if [ "$rc" -eq 0 ]; then note "PASS  $tester (accuracy=$acc): ${counts}"
      else note "FAIL  $tester (accuracy=$acc): rc=$rc ${counts}"; fi
    done
  done
  # ZGEMM: FIXED complex Ozaki-II with 16 moduli; every call that computes something must be offloaded
  acc=moduli:16
  for tester in xblat3z xzcblat3; do
    echo "--- $tester, OZGEMM_BLAS_ACCURACY=$acc"
    if [ ! -x "$TESTER_DIR/$tester" ]; then echo "SKIP: no $TESTER_DIR/$tester"; note "SKIP  $tester: not available"; continue; fi
    OZGEMM_BLAS_TESTER_DIR="$TESTER_DIR" OZGEMM_BLAS_MIN_SIZE=0 OZGEMM_BLAS_ACCURACY=$acc OZGEMM_EXPECT_OFFLOAD=1 \
      OZGEMM_EXPECT_ALL_OFFLOADED=1 OZGEMM_TESTER_LOG_DIR="$LOG/blastest_moduli16" timeout 300 \
      bash "$HERE/run_blas_tester.sh" "$BLAS" "$tester" | tee "$LOG/${tester}_moduli16.log"
    rc=${PIPESTATUS[0]}
    counts=$(grep -E "GEMM calls seen" "$LOG/${tester}_moduli16.log" | sed 's/^ *//')
    if [ "$rc" -eq 0 ]; then note "PASS  $tester (accuracy=$acc): ${counts}"
    else note "FAIL  $tester (accuracy=$acc): rc=$rc ${counts}"; fi
  done
fi
fi  # step 3

# --- 4. numpy (system libblas.so.3) 4096^2 through the offload -------------------------------------
if want 4; then
echo; echo "=== 4. numpy linked to the system libblas.so.3, 4096^2 float64 matmul through libozgemm_blas.so"
NP=""
for py in ${OZGEMM_NUMPY_PYTHON:-} /usr/bin/python3 "$PY"; do
  [ -x "$(command -v "$py")" ] || continue
  umath=$("$py" -c "import numpy, glob, os; d = os.path.dirname(numpy.__file__); \
print((glob.glob(d + '/core/_multiarray_umath*.so') + glob.glob(d + '/_core/_multiarray_umath*.so'))[0])" 2>/dev/null) || continue
  if ldd "$umath" 2>/dev/null | grep 'libblas\.so\.3' > /dev/null; then NP="$py"; break; fi
  echo "($py: numpy $("$py" -c 'import numpy; print(numpy.__version__)' 2>/dev/null) does not link libblas.so.3:" \
       "$(ldd "$umath" 2>/dev/null | grep -iE 'blas|lapack' | awk '{print $1}' | tr '\n' ' ')- a wheel with its own BLAS)"
done
if [ -z "$NP" ]; then
  echo "SKIP: no numpy linked to the system libblas.so.3 on this machine (Debian/Ubuntu package python3-numpy)"
  note "SKIP  numpy 4096^2: no numpy using the system libblas.so.3 here"
else
  echo "--- $NP, numpy $("$NP" -c 'import numpy; print(numpy.__version__)') -> $(ldd "$umath" | awk '/libblas/ {print $3}')"
  timeout 150 env LD_PRELOAD="$BLAS" OZGEMM_BLAS_LOG=calls OZGEMM_BLAS_STATS="$LOG/blas_stats_numpy.json" \
    "$NP" "$HERE/numpy_check.py" --lib "$BLAS" --n "${OZGEMM_DROPIN_NUMPY_N:-4096}" --rows 64 --mode offload 2>&1 | tee "$LOG/numpy.log"
  rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 0 ]; then note "PASS  numpy 4096^2 offload: $(grep -c '"ok": true' "$LOG/numpy.log") cases"
  else note "FAIL  numpy 4096^2 offload: rc=$rc"; fi
fi
fi  # step 4

# --- 5. cublasLtMatmul: JAX and PyTorch's cuBLASLt path ---------------------------------------------
if want 5; then
echo; echo "=== 5. cublasLtMatmul under LD_PRELOAD=libozgemm_hook.so (FP64 mode, default threshold; hook off vs on)"
for fw in jax torch; do
  echo "--- $fw"
  if ! "$PY" -c "import $fw" 2>/dev/null; then echo "SKIP: $fw not importable"; note "SKIP  lt_$fw: $fw not installed"; continue; fi
  speed=()
  [ "$fw" = jax ] && speed=(--min-speedup 1.25 --speed-cases "a @ b 16384")
  timeout 900 env LD_PRELOAD="$HOOK" OZGEMM_HOOK_LOG=summary OZGEMM_HOOK_STATS="$LOG/hook_stats_lt_$fw.json" \
    "$PY" "$HERE/device_lt.py" --framework "$fw" --lib "$HOOK" --json "$LOG/lt.jsonl" \
    --sizes "${OZGEMM_DROPIN_LT_SIZES:-8192,16384}" ${speed[@]+"${speed[@]}"} 2>&1 | tee "$LOG/lt_$fw.log"
  rc=${PIPESTATUS[0]}
  line=$(grep -E "^$fw cases" "$LOG/lt_$fw.log" | tail -n1)
  if [ "$rc" -eq 0 ]; then note "PASS  lt_$fw: ${line:-done}"
  else note "FAIL  lt_$fw: rc=$rc ${line:-}"; fi
done
fi  # step 5

echo; echo "=== summary ($(( $(date +%s) - T0 )) s; logs in $LOG)"
printf '%s\n' "${SUMMARY[@]}" | tee "$LOG/summary.txt"
exit $status
