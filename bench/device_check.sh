#!/usr/bin/env bash
# bench/device_check.sh — one device call: the GPU tests, a short compute-sanitizer pass, the
# 8192^3 / 7-slice bench of every variant with this build and (optionally) a baseline build,
# interleaved in one run, and the b2b example. Binaries (built here, carried):
#   $NEW/{ozgemm,libozgemm.so.0,test_gpu_emulated,test_gpu_b2b}   this build
#   $BASE/ozgemm                                                   a baseline build (optional)
# Output under $OUT: device.txt, gpu_tests.log, sanitizer.log, results.tgz (JSON), summary.txt.
set -u
OUT=${OUT:-./device-out}
NEW=${NEW:-.carry/new}
BASE=${BASE:-}
mkdir -p "$OUT/json"
export LD_LIBRARY_PATH="$NEW${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OZGEMM_COMMIT=${OZGEMM_COMMIT:-$(cat "$NEW/COMMIT" 2>/dev/null || echo unknown)}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv | tee "$OUT/device.txt"
{
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  echo "== GPU tests (${OZGEMM_TEST_SEED:+seed $OZGEMM_TEST_SEED})"
  for t in test_gpu_emulated test_gpu_b2b; do
    "$NEW/$t" --gtest_brief=1 ${GTEST_FILTER:+--gtest_filter=$GTEST_FILTER} > "$OUT/$t.log" 2>&1
    echo "$t exit $?: $(grep -E '^\[ seed|tests? from .* ran|PASSED|FAILED|SKIPPED' "$OUT/$t.log" | tr '\n' ' ')"
  done
fi
echo "== bench (interleaved: each variant with every build in turn, ${ROUNDS:-2} rounds)"
for round in $(seq 1 "${ROUNDS:-2}"); do
  for shape in ${SHAPES:-8192x8192x8192}; do
    set -- ${shape//x/ }
    for vf in ${VARIANTS:-unfused partially-fused fully-fused:sm90:registers fully-fused:sm90:global}; do
      IFS=: read -r v fam acc <<< "$vf"; fam=${fam:-auto}; acc=${acc:-auto}
      for build in new ${BASE:+base}; do
        bin="$NEW/ozgemm"; [ "$build" = base ] && bin="$BASE/ozgemm"
        f="$OUT/json/${build}_r${round}_${1}x${2}x${3}_s${SLICES:-7}_${v}_${fam}_${acc}.json"
        "$bin" bench --m $1 --n $2 --k $3 --slices ${SLICES:-7} --variant $v --family $fam --accumulator $acc \
          --iters ${ITERS:-10} --json > "$f" 2> "$f.err" || cat "$f.err"
        python3 - "$f" "$build" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("bad json", sys.argv[1], e); sys.exit()
o, n = r["ozgemm"], r["native_dgemm"]
print(f'{sys.argv[2]:4s} {r["m"]}x{r["n"]}x{r["k"]} s={r["slices"]} {r["variant"]}/{r.get("family")}/{r.get("accumulator")}: '
      f'{o["ms"]:.3f} ms {o["tflops"]:.2f} TF comperr {o["componentwise"]:.2e} | native {n["ms"]:.3f} ms {n["tflops"]:.2f} TF')
PY
      done
    done
  done
done
if [ "${SKIP_B2B:-0}" != 1 ]; then
  echo "== b2b (CUTLASS example 13's first shape)"
  "$NEW/ozgemm" b2b --iters 20 2>&1 | tail -7
fi
if [ "${SKIP_SANITIZER:-0}" != 1 ] && command -v compute-sanitizer >/dev/null; then
  echo "== compute-sanitizer"
  timeout ${SANITIZER_TIMEOUT:-120} compute-sanitizer --tool memcheck --error-exitcode 9 "$NEW/test_gpu_emulated" \
    --gtest_filter="${SANITIZER_FILTER:-*TransposesLeading*}" --gtest_brief=1 > "$OUT/memcheck.log" 2>&1
  echo "memcheck exit $?: $(tail -1 "$OUT/memcheck.log")"
  timeout ${SANITIZER_TIMEOUT:-120} compute-sanitizer --tool racecheck --error-exitcode 9 "$NEW/test_gpu_emulated" \
    --gtest_filter='*TransposesLeading*' --gtest_brief=1 > "$OUT/racecheck.log" 2>&1
  echo "racecheck exit $?: $(tail -1 "$OUT/racecheck.log")"
fi
} 2>&1 | tee "$OUT/summary.txt"
find "$OUT/json" -name '*.err' -empty -delete
(cd "$OUT" && tar czf results.tgz json && rm -rf json)
