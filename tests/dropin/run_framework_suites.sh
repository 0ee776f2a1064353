#!/usr/bin/env bash
# tests/dropin/run_framework_suites.sh SUITES_DIR DIST_DIR [cupy|torch|all]
#   — the frameworks' own float64/complex128 matmul tests without and with libozgemm_hook.so
#   (issue 30: no test may pass without the hook and fail with it). GPU machine, offline.
#
#   SUITES_DIR: third-party test files, fetched outside this repository (never committed):
#     cupy/    CuPy's pyproject.toml, tests/conftest.py, tests/cupy_tests/{__init__,test_cublas}.py and
#              tests/cupy_tests/linalg_tests/{__init__,test_product,test_einsum}.py, verbatim, from the
#              tag matching the installed cupy (cupy/SOURCE names it);
#     torch/   optional: PyTorch test files (test_*.py, from the tag matching the installed torch), run
#              with $OZGEMM_SUITES_TORCH_K as the -k filter;
#     wheels/  optional: pure-Python wheels the suites import and the machine lacks (expecttest, which
#              torch.testing._internal imports); installed --no-deps into a temporary folder on PYTHONPATH.
#   DIST_DIR: libozgemm_hook.so and libozgemm.so.0 (`cmake --build build --target dropin_dist`).
#
# PyTorch has, besides any files in torch/, one suite written here at run time: every float64 and
# complex128 OpInfo of the GEMM family (matmul, mm, addmm, bmm, baddbmm, addbmm, einsum, tensordot, ...)
# on CUDA against the same op on the CPU (torch.testing.assert_close defaults), over PyTorch's own
# reference inputs (torch.testing._internal ships in the wheel; the inputs PyTorch's test_ops.py uses).
#
# Runs (one pytest process each, `timeout $OZGEMM_SUITES_TIMEOUT` seconds, default 150; `-q -p
# no:cacheprovider -o addopts=""`, a junit XML per run):
#   off       no LD_PRELOAD (the baseline);
#   fp64      hook, FP64 mode, OZGEMM_HOOK_MIN_SIZE=0 (every GEMM intercepted; tiny ones run native
#             by ozgemm's choice);
#   moduli16  hook, OZGEMM_HOOK_ACCURACY=moduli:16, OZGEMM_HOOK_MIN_SIZE=0 (every GEMM emulated);
#   torch only, with TORCH_BLAS_PREFER_CUBLASLT=1 (PyTorch's cublasLtMatmul path): torch-lt-off,
#             torch-lt-moduli16.
# Each hook run is compared with its baseline (torch-lt-moduli16 with torch-lt-off): a test that
# passed there and did not pass here (failed, error, skipped or missing) FAILs the script; a run that timed out, crashed or
# wrote no XML FAILs it; a hook run whose summary (OZGEMM_HOOK_LOG=summary) shows no intercepted call,
# or a moduli16 run with no emulated matrix, FAILs it. CuPy draws its dtype pairs with Python's random
# at import: a plugin written here seeds it, so that every run tests the same pairs.
# About 5-8 minutes for both frameworks (the first CuPy run compiles its kernels).
# Logs and XML: $OUT/framework_suites when OUT is set, else ./framework-suites-logs. Exit status 1 on
# any FAIL, 2 on bad arguments.
#
# `run_framework_suites.sh --compare OFF.xml ON.xml [HOOK_LOG [emulated]]` runs the comparison alone.
set -uo pipefail
PY="${PYTHON:-python3}"

# compare OFF.xml ON.xml [HOOK_LOG [emulated]]: counts per run, the tests that passed in OFF and not
# in ON (exit 1 if any), and the hook's summary lines from HOOK_LOG (exit 1 if no call was
# intercepted, or, with "emulated", if no matrix was emulated).
compare() {
  "$PY" - "$@" <<'PY'
import re
import sys
import xml.etree.ElementTree as ET


def outcomes(path):
    """test id -> passed / failed / skipped; a case reported twice (e.g. an error in teardown after
    a pass) keeps its worst outcome."""
    result = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        tags = {child.tag for child in case}
        if tags & {"failure", "error"}:
            outcome = "failed"
        elif "skipped" in tags:
            outcome = "skipped"
        else:
            outcome = "passed"
        if result.get(test_id) != "failed":
            result[test_id] = outcome
    return result


def counts(result):
    return ", ".join(f"{sum(1 for o in result.values() if o == kind)} {kind}"
                     for kind in ("passed", "failed", "skipped"))


off_path, on_path = sys.argv[1], sys.argv[2]
off, on = outcomes(off_path), outcomes(on_path)
print(f"  without hook ({off_path}): {counts(off)}")
print(f"  with hook    ({on_path}): {counts(on)}")
status = 0
regressions = sorted(t for t, o in off.items() if o == "passed" and on.get(t) != "passed")
if regressions:
    status = 1
    print(f"  FAIL: {len(regressions)} test(s) passed without the hook and not with it:")
    for t in regressions:
        print(f"    {t}: {on.get(t, 'missing')}")
fixed = sorted(t for t, o in off.items() if o == "failed" and on.get(t) == "passed")
for t in fixed:
    print(f"  note: failed without the hook, passed with it: {t}")
if len(sys.argv) > 3:
    with open(sys.argv[3], errors="replace") as log:
        summary = [line.rstrip() for line in log if line.startswith("ozgemm-hook: summary")]
    for line in summary:
        print(f"  {line}")
    # "ozgemm-hook: summary: N calls, I intercepted (M matrices: E emulated, ..." (docs/dropin.md),
    # one such line per process that saw a GEMM call.
    totals = [re.search(r"(\d+) calls, (\d+) intercepted \((\d+) matrices: (\d+) emulated", line)
              for line in summary]
    totals = [t for t in totals if t]
    if not totals:
        status = 1
        print("  FAIL: no hook summary line (no GEMM reached the hook, or the process died)")
    else:
        intercepted = sum(int(t.group(2)) for t in totals)
        emulated = sum(int(t.group(4)) for t in totals)
        if intercepted == 0:
            status = 1
            print("  FAIL: the hook intercepted no call")
        if len(sys.argv) > 4 and sys.argv[4] == "emulated" and emulated == 0:
            status = 1
            print("  FAIL: the hook emulated no matrix under a FIXED count")
sys.exit(status)
PY
}

if [ "${1:-}" = "--compare" ]; then
  shift
  [ $# -ge 2 ] || { echo "usage: $0 --compare OFF.xml ON.xml [HOOK_LOG [emulated]]"; exit 2; }
  compare "$@"; exit $?
fi

[ $# -ge 2 ] || { echo "usage: $0 SUITES_DIR DIST_DIR [cupy|torch|all]"; exit 2; }
SUITES="$(cd "$1" && pwd)" || exit 2
DIST="$(cd "$2" && pwd)" || exit 2
WHICH="${3:-all}"
case "$WHICH" in cupy|torch|all) ;; *) echo "unknown suite '$WHICH' (cupy, torch or all)"; exit 2 ;; esac
HOOK="$DIST/libozgemm_hook.so"
[ -f "$HOOK" ] || { echo "missing $HOOK"; exit 2; }
if [ ! -e "$DIST/libozgemm.so.0" ]; then
  if [ -e "$DIST/libozgemm.so" ]; then export OZGEMM_LIBRARY="$DIST/libozgemm.so"
  else echo "missing $DIST/libozgemm.so.0"; exit 2; fi
fi
TIMEOUT="${OZGEMM_SUITES_TIMEOUT:-150}"
LOG="${OUT:+$OUT/framework_suites}"
LOG="${LOG:-$PWD/framework-suites-logs}"
mkdir -p "$LOG"
exec > >(tee "$LOG/run_framework_suites.log") 2>&1
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
T0=$(date +%s)
status=0
declare -a SUMMARY
note() { SUMMARY+=("$1"); case "$1" in FAIL*) status=1 ;; esac; }

echo "=== ozgemm framework suites: $(date -u +%FT%TZ) on $(hostname)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/GPU: /'
echo "suites: $SUITES"; cat "$SUITES"/*/SOURCE 2>/dev/null | sed 's/^/  /'
echo "hook: $HOOK"

# Python path: the carried wheels and the seeding plugin.
mkdir -p "$WORK/pylib" "$WORK/plugins"
if compgen -G "$SUITES/wheels/*.whl" >/dev/null; then
  "$PY" -m pip install -q --no-deps --no-index --target "$WORK/pylib" "$SUITES"/wheels/*.whl \
    || note "FAIL installing $SUITES/wheels/*.whl"
fi
cat > "$WORK/plugins/ozgemm_suites_seed.py" <<'PY'
# Seeds Python's random module before any test module is imported: CuPy's
# testing.for_all_dtypes_combination shuffles its dtype pairs with it at import time, and the runs
# with and without the hook must test the same pairs.
import random

random.seed(0)
PY
export PYTHONPATH="$WORK/pylib:$WORK/plugins${PYTHONPATH:+:$PYTHONPATH}"
export PYTORCH_TEST_WITH_SLOW=0  # PyTorch test files in torch/: no slow tests

# run_pytest NAME DIR PRELOAD(yes|no) [ENV=VALUE ...] -- PYTEST_ARGS...: one pytest run in DIR; the
# junit XML is $LOG/NAME.xml, stdout $LOG/NAME.out, stderr (the hook's summary) $LOG/NAME.err.
run_pytest() {
  local name="$1" dir="$2" preload="$3"; shift 3
  local -a envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  [ "$preload" = yes ] && envs+=("LD_PRELOAD=$HOOK" OZGEMM_HOOK_LOG=summary)
  local t=$(date +%s) rc
  (cd "$dir" && timeout -k 10 "$TIMEOUT" env "${envs[@]}" "$PY" -m pytest -q -p no:cacheprovider \
      -p ozgemm_suites_seed -o addopts="" -rfE --junitxml="$LOG/$name.xml" "$@") \
    >"$LOG/$name.out" 2>"$LOG/$name.err"
  rc=$?
  echo "--- $name (${envs[*]:-no preload}): rc=$rc, $(( $(date +%s) - t )) s: $(tail -n 1 "$LOG/$name.out")"
  case $rc in
    0|1) [ -s "$LOG/$name.xml" ] && return 0; note "FAIL $name: no junit XML" ;;
    124|137) note "FAIL $name: timed out after $TIMEOUT s (OZGEMM_SUITES_TIMEOUT)" ;;
    *) note "FAIL $name: pytest exit status $rc"; tail -n 20 "$LOG/$name.out" "$LOG/$name.err" ;;
  esac
  return 1
}

# run_suite LABEL DIR "HOOK_RUNS" ENV... -- PYTEST_ARGS...: LABEL-off, then LABEL-<run> for each of
# HOOK_RUNS (fp64, moduli16), each compared with LABEL-off; ENV applies to all of them.
run_suite() {
  local label="$1" dir="$2" hook_runs="$3"; shift 3
  local -a envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  run_pytest "$label-off" "$dir" no "${envs[@]}" -- "$@" || return
  local run need
  for run in $hook_runs; do
    local -a hook_env=(OZGEMM_HOOK_MIN_SIZE=0)
    need=""
    if [ "$run" = moduli16 ]; then hook_env+=(OZGEMM_HOOK_ACCURACY=moduli:16); need=emulated; fi
    run_pytest "$label-$run" "$dir" yes "${envs[@]}" "${hook_env[@]}" -- "$@" || continue
    echo "  compare $label-off / $label-$run:"
    if compare "$LOG/$label-off.xml" "$LOG/$label-$run.xml" "$LOG/$label-$run.err" $need; then
      note "PASS $label-$run: no test passes without the hook and fails with it"
    else
      note "FAIL $label-$run (see above)"
    fi
  done
}

want() { [ "$WHICH" = all ] || [ "$WHICH" = "$1" ]; }

if want cupy; then
  echo "=== CuPy"
  # OZGEMM_SUITES_CUPY_FILES (space-separated, relative to cupy/) narrows the files (the three take about
  # 8 minutes a run on an H100).
  if [ -n "${OZGEMM_SUITES_CUPY_FILES:-}" ]; then
    read -r -a CUPY_FILES <<< "$OZGEMM_SUITES_CUPY_FILES"
  else
    CUPY_FILES=(tests/cupy_tests/linalg_tests/test_product.py tests/cupy_tests/linalg_tests/test_einsum.py
                tests/cupy_tests/test_cublas.py)
  fi
  if ! "$PY" -c "import cupy; cupy.cuda.runtime.getDeviceCount()" >/dev/null 2>&1; then
    note "SKIP cupy: cupy not importable or no CUDA device"
  elif [ ! -f "$SUITES/cupy/${CUPY_FILES[0]}" ]; then
    note "FAIL cupy: $SUITES/cupy/${CUPY_FILES[0]} missing"
  else
    "$PY" -c "import cupy; print('cupy', cupy.__version__)"
    run_suite cupy "$SUITES/cupy" "${OZGEMM_SUITES_CUPY_MODES:-fp64 moduli16}" CUPY_TEST_FULL_COMBINATION=0 -- "${CUPY_FILES[@]}"
  fi
fi

if want torch; then
  echo "=== PyTorch"
  if ! "$PY" -c "import torch; assert torch.cuda.is_available()" >/dev/null 2>&1; then
    note "SKIP torch: torch not importable or no CUDA device"
  else
    "$PY" -c "import torch; print('torch', torch.__version__)"
    mkdir -p "$WORK/torch"
    cat > "$WORK/torch/test_opinfo_gemm_cuda_vs_cpu.py" <<'PY'
# Written by tests/dropin/run_framework_suites.sh: PyTorch's own OpInfo reference inputs for the
# GEMM family, float64 and complex128, on CUDA against the same op on the CPU.
import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

# OpInfo names whose CUDA kernels are (or are built from) cuBLAS / cuBLASLt GEMM (mv, addmv: GEMV) calls.
GEMM_FAMILY = {
    "matmul", "__rmatmul__", "mm", "addmm", "bmm", "baddbmm", "addbmm", "addmv", "mv", "dot", "vdot",
    "inner", "tensordot", "einsum", "linalg.multi_dot", "chain_matmul", "linalg.matrix_power",
    "nn.functional.linear", "nn.functional.bilinear",
}
DTYPES = (torch.float64, torch.complex128)
CASES = [
    pytest.param(op, dtype, id=f"{op.name}{'.' + op.variant_test_name if op.variant_test_name else ''}"
                              f"-{str(dtype).removeprefix('torch.')}")
    for op in op_db if op.name in GEMM_FAMILY
    for dtype in DTYPES if dtype in op.supported_dtypes("cuda")
]


def on_cpu(value):
    return value.cpu() if isinstance(value, torch.Tensor) else value


@pytest.mark.parametrize("op, dtype", CASES)
def test_cuda_matches_cpu(op, dtype):
    torch.manual_seed(0)  # the same inputs in every run
    samples = 0
    for sample in op.reference_inputs("cuda", dtype, requires_grad=False):
        cpu_sample = sample.transform(on_cpu)
        expected = op(cpu_sample.input, *cpu_sample.args, **cpu_sample.kwargs)
        actual = op(sample.input, *sample.args, **sample.kwargs)
        torch.testing.assert_close(actual, expected, check_device=False)
        samples += 1
    assert samples > 0, f"{op.name}: no reference inputs"
PY
    TORCH_ARGS=("$WORK/torch/test_opinfo_gemm_cuda_vs_cpu.py")
    for f in "$SUITES"/torch/test_*.py; do [ -f "$f" ] && TORCH_ARGS+=("$f"); done
    TORCH_K="${OZGEMM_SUITES_TORCH_K:-cuda_matches_cpu or (cuda and (float64 or complex128) and (matmul or mm or addmm or bmm or baddbmm or addbmm or dot or tensordot or einsum))}"
    run_suite torch "$WORK/torch" "fp64 moduli16" -- -k "$TORCH_K" "${TORCH_ARGS[@]}"
    # PyTorch's cuBLASLt path: the same tests with cublasLtMatmul preferred for every GEMM.
    run_suite torch-lt "$WORK/torch" moduli16 TORCH_BLAS_PREFER_CUBLASLT=1 -- -k "$TORCH_K" "${TORCH_ARGS[@]}"
  fi
fi

echo "=== summary ($(( $(date +%s) - T0 )) s)"
for line in "${SUMMARY[@]}"; do echo "  $line"; done
exit $status
