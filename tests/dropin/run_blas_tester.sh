#!/usr/bin/env bash
# tests/dropin/run_blas_tester.sh LIB TESTER — runs a netlib BLAS tester from Debian's libblas-test
# (xblat3d: Fortran DGEMM, DSYRK, DSYMM, dblat3.in; xdcblat3: their CBLAS forms, din3; xblat3z: Fortran
# ZGEMM, zblat3.in; xzcblat3: CBLAS ZGEMM, zin3) with LD_PRELOAD=LIB (libozgemm_blas.so) and checks its
# report: the error-exit and computational tests of each routine the library takes PASSED, no
# FAIL/SUSPECT/FATAL line for any routine, END OF TESTS reached, and the library's counters show that
# it saw calls of each of those entry points (and of the tester's element type).
# The testers always exit 0, so the report is what counts.
#
# Environment: OZGEMM_BLAS_* pass through (e.g. OZGEMM_BLAS_MIN_SIZE=0); OZGEMM_BLAS_TESTER_DIR: a
# folder holding the tester, its input and (optionally) the libraries it needs (make_dist.sh bundles
# them), default /usr/lib/<triplet>/blas; OZGEMM_TESTER_LOG_DIR: keep the tester's output there;
# OZGEMM_EXPECT_OFFLOAD=1: fail unless some calls of the tester's element type ran through ozgemm (the
# GPU or the mock); OZGEMM_EXPECT_ALL_OFFLOADED=1: fail unless every such call that computes something
# did (none declined but as invalid-args or quick-return): with the entry points' calls seen, every
# DSYRK / DSYMM that computes something was taken as well.
# Exit 77 (skipped) when the tester is not installed.
set -uo pipefail
lib="$1" tester="$2"
element=real  # the tester's element type (its GEMM calls count as real:* or complex:*)
dir="${OZGEMM_BLAS_TESTER_DIR:-}"
if [ -z "$dir" ]; then
  for d in /usr/lib/*/blas /usr/lib/blas /usr/lib64/blas; do
    if [ -x "$d/$tester" ]; then dir="$d"; break; fi
  done
fi
if [ -z "$dir" ] || [ ! -x "$dir/$tester" ]; then
  echo "SKIP: $tester not found (Debian package libblas-test; or set OZGEMM_BLAS_TESTER_DIR)"
  exit 77
fi
case "$tester" in
  xblat3d) input=dblat3.in; report=dblat3.out; apis=(dgemm_ dsyrk_ dsymm_) ;;
  xdcblat3) input=din3; report=stdout.txt; apis=(cblas_dgemm cblas_dsyrk cblas_dsymm) ;;
  xblat3z) input=zblat3.in; report=zblat3.out; element=complex; apis=(zgemm_) ;;
  xzcblat3) input=zin3; report=stdout.txt; element=complex; apis=(cblas_zgemm) ;;
  *) echo "unknown tester $tester"; exit 2 ;;
esac
# What the report must say of each entry point (the Fortran testers name the routine in capitals).
must=()
for api in "${apis[@]}"; do
  case "$api" in
    cblas_*) must+=("$api  PASSED THE TESTS OF ERROR-EXITS" "$api  PASSED THE COLUMN-MAJOR COMPUTATIONAL TESTS"
                    "$api  PASSED THE ROW-MAJOR    COMPUTATIONAL TESTS") ;;
    *) name=$(echo "${api%_}" | tr a-z A-Z)
       must+=("$name  PASSED THE TESTS OF ERROR-EXITS" "$name  PASSED THE COMPUTATIONAL TESTS") ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
libpath="${LD_LIBRARY_PATH:-}"
# A bundled tester (make_dist.sh) brings its libblas.so.3 and libgfortran.
if [ -e "$dir/libblas.so.3" ]; then libpath="$dir${libpath:+:$libpath}"; fi
start=$(date +%s.%N)
env LD_LIBRARY_PATH="$libpath" LD_PRELOAD="$lib" OZGEMM_BLAS_STATS="$work/stats.json" \
  OZGEMM_BLAS_LOG="${OZGEMM_BLAS_LOG:-summary}" "$dir/$tester" < "$dir/$input" > stdout.txt 2> stderr.txt
rc=$?
end=$(date +%s.%N)
if [ -n "${OZGEMM_TESTER_LOG_DIR:-}" ]; then
  mkdir -p "$OZGEMM_TESTER_LOG_DIR"
  for f in stdout.txt stderr.txt dblat3.out zblat3.out stats.json; do
    [ -e "$f" ] && cp "$f" "$OZGEMM_TESTER_LOG_DIR/$tester.$f"
  done
fi
status=0
echo "$tester (exit $rc, $(awk "BEGIN{printf \"%.2f\", $end-$start}") s) with LD_PRELOAD=$(basename "$lib")" \
     "OZGEMM_BLAS_MIN_SIZE=${OZGEMM_BLAS_MIN_SIZE:-default}:"
if [ ! -s "$report" ]; then
  echo "FAIL: no report ($report)"; cat stderr.txt; exit 1
fi
grep -Ei "gemm|syrk|symm" "$report" | sed 's/^/  /'
for m in "${must[@]}"; do
  grep -qF "$m" "$report" || { echo "FAIL: missing '$m'"; status=1; }
done
if grep -E "FAIL|SUSPECT|FATAL|NOT DETECTED|XERBLA WAS CALLED|LESS THAN HALF ACCURATE" "$report" | sed 's/^/  /' |
   grep .; then
  echo "FAIL: the report has failures (above)"; status=1
fi
grep -q "END OF TESTS" "$report" || { echo "FAIL: the tester did not reach END OF TESTS"; status=1; }
sed 's/^/  stderr: /' stderr.txt | head -n 20
if [ -s stats.json ]; then
  echo "  counters: $(cat stats.json)"
  # calls seen; of the tester's element type: intercepted, emulated by scheme, native by ozgemm's choice
  read -r calls intercepted oz1 oz2 native declined_other < <(python3 - "$element" stats.json <<'PY'
import json, sys
s = json.load(open(sys.argv[2]))
e = s["by_element"][sys.argv[1]]
r = s["declined_by_reason"]
other = s["declined"] - r.get("invalid-args", 0) - r.get("quick-return", 0)
print(s["calls"], e["intercepted"], e["emulated_ozaki1"], e["emulated_ozaki2"], e["ozgemm_native"], other)
PY
)
  for api in "${apis[@]}"; do
    seen=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["calls_by_api"].get(sys.argv[2], 0))' \
           stats.json "$api")
    echo "  $api: $seen calls seen"
    if [ "$seen" -eq 0 ]; then echo "FAIL: libozgemm_blas.so saw no $api call"; status=1; fi
  done
  if [ "${calls:-0}" -eq 0 ]; then echo "FAIL: libozgemm_blas.so saw no call (not interposed?)"; status=1; fi
  echo "  $tester: ${calls:-0} calls seen, ${intercepted:-0} $element run by ozgemm on the GPU" \
       "(emulated: ${oz1:-0} Ozaki-I, ${oz2:-0} Ozaki-II; ${native:-0} native by ozgemm's choice)"
  if [ "${OZGEMM_EXPECT_OFFLOAD:-0}" = 1 ] && [ "${intercepted:-0}" -eq 0 ]; then
    echo "FAIL: OZGEMM_EXPECT_OFFLOAD=1 but no $element call went through ozgemm"; status=1
  fi
  if [ "${OZGEMM_EXPECT_ALL_OFFLOADED:-0}" = 1 ] && [ "${declined_other:-1}" -ne 0 ]; then
    echo "FAIL: OZGEMM_EXPECT_ALL_OFFLOADED=1 but $declined_other calls were declined for other reasons than" \
         "invalid-args / quick-return"; status=1
  fi
else
  echo "FAIL: no counters written (was $(basename "$lib") preloaded?)"; status=1
fi
[ $status -eq 0 ] && echo "OK: $tester passed through $(basename "$lib")"
exit $status
