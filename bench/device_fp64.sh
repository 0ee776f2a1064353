#!/usr/bin/env bash
# bench/device_fp64.sh — one device call for FP64 accuracy mode (issue 10): its GPU tests, then
# `ozgemm bench --accuracy fp64` per input range (phi) and size beside native DGEMM (AUTO: what the
# library does by default), and the decision's overhead against FIXED mode at the chosen count.
# Binaries as bench/device_check.sh ($NEW); output under $OUT (fp64.txt, JSON in results_fp64.tgz).
source "$(dirname "$0")/device_env.sh" fp64
summary() {
  python3 - "$1" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("bad json", sys.argv[1], e); sys.exit()
o, n = r["ozgemm"], r["native_dgemm"]
print(f'{r["m"]}x{r["n"]}x{r["k"]} phi={r["phi"]} {r["accuracy"]} {r["requested_variant"]}->{r["variant"]} s={r["slices"]} '
      f'bound={r["bound"]:.3g}: {o["ms"]:.3f} ms {o["tflops"]:.2f} TF comperr {o["componentwise"]:.2e} | '
      f'native {n["ms"]:.3f} ms {n["tflops"]:.2f} TF comperr {n["componentwise"]:.2e} | {r["decision"]}')
PY
}
{
echo "== FP64 mode GPU tests"
"$NEW/test_gpu_fp64" --gtest_brief=1 > "$OUT/test_gpu_fp64.log" 2>&1
echo "test_gpu_fp64 exit $?: $(grep -E 'tests? from .* ran|PASSED|FAILED' "$OUT/test_gpu_fp64.log" | tr '\n' ' ')"
for t in test_gpu_b2b test_gpu_emulated; do
  f=""; [ $t = test_gpu_emulated ] && f="--gtest_filter=${EMU_FILTER:-*ShapesBitwise*:*TransposesLeading*:*SpecialValues*:*KSplit*/Unfused}"
  "$NEW/$t" --gtest_brief=1 $f > "$OUT/$t.log" 2>&1
  echo "$t exit $?: $(grep -E 'tests? from .* ran|PASSED|FAILED' "$OUT/$t.log" | tr '\n' ' ')"
done
echo "== FP64 mode (AUTO) against native DGEMM, per phi"
for n in ${SIZES:-4096 8192}; do for phi in ${PHIS:--1 0 0.5 1 2 4}; do
  f="$OUT/fp64/auto_${n}_phi${phi}.json"
  "$NEW/ozgemm" bench --m $n --n $n --k $n --phi $phi --accuracy fp64 --variant auto --iters ${ITERS:-5} --json > "$f" 2> "$f.err" || cat "$f.err"
  summary "$f"
done; done
echo "== the decision's overhead where the emulation runs: FP64 mode vs FIXED at the chosen count"
for v in ${OVERHEAD_VARIANTS:-partially-fused unfused}; do for phi in 0.5; do
  f="$OUT/fp64/overhead_${v}_fp64.json"
  "$NEW/ozgemm" bench --m 8192 --n 8192 --k 8192 --phi $phi --accuracy fp64 --variant $v --iters ${ITERS:-5} --json > "$f" 2> "$f.err" || cat "$f.err"
  summary "$f"
  s=$(python3 -c "import json;print(json.load(open('$f'))['slices'])" 2>/dev/null || echo 8)
  [ "$s" = 0 ] && s=8
  f2="$OUT/fp64/overhead_${v}_fixed${s}.json"
  "$NEW/ozgemm" bench --m 8192 --n 8192 --k 8192 --phi $phi --accuracy fixed --slices $s --variant $v --iters ${ITERS:-5} --json > "$f2" 2> "$f2.err" || cat "$f2.err"
  summary "$f2"
done; done
} 2>&1 | tee "$OUT/fp64.txt"
find "$OUT/fp64" -name '*.err' -empty -delete
(cd "$OUT" && tar czf results_fp64.tgz fp64 && rm -rf fp64)
