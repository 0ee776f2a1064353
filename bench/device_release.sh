#!/usr/bin/env bash
# bench/device_release.sh STAGE — the release checks on a GPU machine, in two device calls of under
# 5 minutes each. Binaries as built here and carried in $REL (default .carry/rel):
#   $REL/prefix      `cmake --install` of the library (lib/, include/, bin/ozgemm, CMake package,
#                    ozgemm.pc) plus lib/blastest (the netlib testers, from the dropin_dist target)
#   $REL/bin         test_gpu_ozaki2, test_gpu_fp64, test_gpu_emulated (linked to libozgemm.so.0)
#   $REL/COMMIT      the commit they were built from
# STAGE a: the GPU tests above (the emulated suite's bitwise shape tests, three variants), then
#          python/tests/run_device.sh (pip install . of the package, compiled there for 90a with
#          the carried third_party/ CUTLASS headers and .whl/ build requirements; examples against $REL/prefix; pytest; bench).
# STAGE b: tests/dropin/run_device.sh on $REL/prefix/lib (PyTorch, CuPy, netlib testers, numpy),
#          then bench/device_ozaki2.sh at $SIZES (default 8192 16384) beside native DGEMM.
# STAGE c: the Python package as in a, then the drop-ins as in b twice: AUTO variant (native on
#          Hopper) and OZGEMM_VARIANT=partially-fused (every intercepted call emulated).
# STAGE p: the Python package alone.
# Output under $OUT: device_<stage>.txt, the logs, and results_<stage>.tgz with all of them.
set -u
STAGE=${1:?usage: bench/device_release.sh a|b}
OUT=${OUT:-./device-out}
REL=${REL:-.carry/rel}
REL="$(cd "$REL" && pwd)"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
export LD_LIBRARY_PATH="$REL/prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OZGEMM_COMMIT="$(cat "$REL/COMMIT" 2>/dev/null || echo unknown)"
export OZGEMM_TEST_SEED=${OZGEMM_TEST_SEED:-20261126}
export PYTHONUNBUFFERED=1
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "commit $OZGEMM_COMMIT, stage $STAGE, OZGEMM_TEST_SEED=$OZGEMM_TEST_SEED"
} | tee "$OUT/device_$STAGE.txt"
t0=$(date +%s)
elapsed() { echo "[$(( $(date +%s) - t0 )) s]"; }

run_python() {
  # The build requirements pinned by pyproject.toml (nanobind 3.1.0, scikit-build-core 1.x), carried
  # as wheels in .whl/ (the machine has no network; pip runs with --no-build-isolation there).
  if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/ozgemm-buildreqs .whl/*.whl &&
      export PYTHONPATH="/tmp/ozgemm-buildreqs${PYTHONPATH:+:$PYTHONPATH}"
  fi
  OUT="$OUT/python" OZGEMM_PREFIX="$REL/prefix" OZGEMM_CUDA_ARCHITECTURES=90a OZGEMM_DEVICE_BUILD=/tmp/ozgemm-py \
    bash python/tests/run_device.sh > "$OUT/python_run.log" 2>&1
  echo "python/tests/run_device.sh exit $? $(elapsed)" | tee -a "$OUT/device_$STAGE.txt"
  cat "$OUT/python/summary.txt" 2>/dev/null | tee -a "$OUT/device_$STAGE.txt"
}
run_dropin() {  # run_dropin LABEL: logs in $OUT/dropin_LABEL
  OUT="$OUT/dropin_$1" bash tests/dropin/run_device.sh "$REL/prefix/lib" > "$OUT/dropin_$1.log" 2>&1
  echo "tests/dropin/run_device.sh ($1${OZGEMM_VARIANT:+, OZGEMM_VARIANT=$OZGEMM_VARIANT}) exit $? $(elapsed)" |
    tee -a "$OUT/device_$STAGE.txt"
  sed -n '/=== summary/,$p' "$OUT/dropin_$1.log" | tee -a "$OUT/device_$STAGE.txt"
}

case "$STAGE" in
a)
  for t in test_gpu_ozaki2 test_gpu_fp64; do
    "$REL/bin/$t" --gtest_brief=1 > "$OUT/$t.log" 2>&1
    echo "$t exit $?: $(grep -E 'tests? from .* ran|PASSED|FAILED' "$OUT/$t.log" | tr '\n' ' ') $(elapsed)"
  done | tee -a "$OUT/device_a.txt"
  f='Variants/GpuEmulated.ShapesBitwiseEqualHost/Unfused:Variants/GpuEmulated.ShapesBitwiseEqualHost/PartiallyFusedSm90'
  f="$f:Variants/GpuEmulated.ShapesBitwiseEqualHost/FullyFusedPortable:Variants/GpuEmulated.GeneratedShapesBitwiseEqualHost/Unfused"
  "$REL/bin/test_gpu_emulated" --gtest_brief=1 --gtest_filter="$f" > "$OUT/test_gpu_emulated.log" 2>&1
  echo "test_gpu_emulated (4 bitwise shape tests) exit $?: $(grep -E 'tests? from .* ran|PASSED|FAILED' "$OUT/test_gpu_emulated.log" | tr '\n' ' ') $(elapsed)" |
    tee -a "$OUT/device_a.txt"
  run_python
  ;;
b)
  run_dropin auto
  OUT="$OUT" NEW="$REL/prefix/bin" SKIP_TESTS=1 SIZES="${SIZES:-8192 16384}" bash bench/device_ozaki2.sh |
    tee -a "$OUT/device_b.txt"
  echo "ozaki2 bench done $(elapsed)" | tee -a "$OUT/device_b.txt"
  ;;
p)
  run_python
  ;;
c)
  run_python
  run_dropin auto
  OZGEMM_VARIANT=partially-fused run_dropin partially_fused
  ;;
esac
(cd "$OUT" && tar czf "results_$STAGE.tgz" --exclude='results_*.tgz' . 2>/dev/null)
