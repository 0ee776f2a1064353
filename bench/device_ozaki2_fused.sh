#!/usr/bin/env bash
# bench/device_ozaki2_fused.sh — one device call for Ozaki-II's Hopper products (the GEMM that reduces
# modulo p_i in its epilogue): the Ozaki-II GPU tests (both variants) with memcheck and racecheck,
# bench/oz2_products_tune (the products alone, CUTLASS configurations beside cuBLASLt, random and
# constant data) at TUNE_SIZES, then bench/device_ozaki2.sh end to end for the unfused and partially
# fused variants beside native DGEMM. Binaries (built here, carried in $NEW): ozgemm, libozgemm.so.0,
# test_gpu_ozaki2, oz2_products_tune (+ the test programs EXTRA_TESTS names, e.g. "test_gpu_fp64").
# SIDE_BY_SIDE=path (bench/gemmul8/build.sh's binary) adds GEMMul8 beside both variants (device_ozaki2.sh);
# FP64_SIZES adds FP64 mode (scheme ozaki2, partially fused) beside native. TUNE_SIZES= skips the tuning.
# Output under $OUT: fused.txt, tune.jsonl, the logs, results_ozaki2.tgz.
source "$(dirname "$0")/device_env.sh" ozaki2
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv | tee "$OUT/device.txt"
{
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  "$NEW/test_gpu_ozaki2" --gtest_brief=1 > "$OUT/test_gpu_ozaki2.log" 2>&1
  echo "test_gpu_ozaki2 exit $?: $(grep -E '^\[ seed|tests? from .* ran|PASSED|FAILED|SKIPPED' "$OUT/test_gpu_ozaki2.log" | tr '\n' ' ')"
  for tool in memcheck racecheck; do
    timeout ${SANITIZE_TIMEOUT:-150} compute-sanitizer --tool $tool --error-exitcode 9 "$NEW/test_gpu_ozaki2" --gtest_brief=1 \
      --gtest_filter="${SANITIZE_FILTER:-*Shapes*PartiallyFused:*Moduli*PartiallyFused:*Chunked*PartiallyFused}" > "$OUT/sanitizer_$tool.log" 2>&1
    echo "compute-sanitizer $tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|tests? from .* ran|PASSED|FAILED' "$OUT/sanitizer_$tool.log" | tr '\n' ' ')"
  done
  if [ -n "${EXTRA_TESTS:-}" ]; then
    for t in $EXTRA_TESTS; do
      "$NEW/$t" --gtest_brief=1 > "$OUT/$t.log" 2>&1
      echo "$t exit $?: $(grep -E 'tests? from .* ran|PASSED|FAILED|SKIPPED' "$OUT/$t.log" | tr '\n' ' ')"
    done
  fi
fi
# Power draw and SM clock every 200 ms while the products run (is the card at its power limit?).
nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,temperature.gpu --format=csv -lms 200 > "$OUT/power.csv" 2>&1 &
SMI=$!
for n in ${TUNE_SIZES-8192 16384}; do
  "$NEW/oz2_products_tune" $n $n ${TUNE_MODULI:-15} ${TUNE_ITERS:-5} ${TUNE_ROUNDS:-2} >> "$OUT/tune.jsonl" 2> "$OUT/tune_$n.txt"
  echo "oz2_products_tune $n exit $?"; cat "$OUT/tune_$n.txt"
done
kill $SMI 2>/dev/null
[ -s "$OUT/power.csv" ] && python3 - "$OUT/power.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) >= 4 and r[1].strip().endswith('W')]
if rows:
    p = sorted(float(r[1].split()[0]) for r in rows); c = sorted(float(r[2].split()[0]) for r in rows)
    busy = [float(r[1].split()[0]) for r in rows if float(r[1].split()[0]) > 300]
    print(f"power over the tuning runs: {len(rows)} samples, median {p[len(p)//2]:.0f} W, max {p[-1]:.0f} W, "
          f"samples above 650 W {sum(x > 650 for x in p)}; SM clock median {c[len(c)//2]:.0f} MHz, min {c[0]:.0f}")
PY
SKIP_TESTS=1 VARIANTS="${VARIANTS:-unfused partially-fused}" bash "$(dirname "$0")/device_ozaki2.sh" 2>&1 | grep -v '^$'
# FP64 mode (the moduli count from the bound, the decision's cost included) with the fused products,
# beside native, at FP64_SIZES (for the AUTO rule of auto_ozaki2).
for n in ${FP64_SIZES:-}; do for phi in ${FP64_PHIS:-0.5}; do
  f="$OUT/fp64_${n}_phi${phi}.json"
  "$NEW/ozgemm" bench --m $n --n $n --k $n --phi $phi --accuracy fp64 --scheme ozaki2 --variant partially-fused --iters ${ITERS:-5} --json > "$f" 2> "$f.err" || cat "$f.err"
  python3 -c "import json,sys;r=json.load(open('$f'));o=r['ozgemm'];n=r['native_dgemm'];print('FP64 mode %d^3 phi=%s: %s %s N=%s: %.2f ms %.1f TF comperr %.2e | native %.2f ms %.1f TF | %s'%(r['m'],r['phi'],r['scheme'],r['variant'],r['moduli'],o['ms'],o['tflops'],o['componentwise'],n['ms'],n['tflops'],r['decision']))"
done; done
} 2>&1 | tee "$OUT/fused.txt"
# At most 8 files come back from a device call: everything but the summary in one archive.
(cd "$OUT" && tar czf /tmp/oz2_logs.tgz --exclude=./fused.txt . && find . -mindepth 1 ! -name fused.txt -delete && mv /tmp/oz2_logs.tgz logs.tgz)
