#!/usr/bin/env bash
# bench/device_schemes.sh — one device call for FP64 mode's scheme choice (issue 11, item 4): the GPU
# tests of FP64 mode (Ozaki-I and Ozaki-II decisions bitwise equal to the host reference), Ozaki-II's
# and a subset of the emulated suite, compute-sanitizer on the new decision tests, then
# `ozgemm bench --accuracy fp64` (scheme AUTO: what the library does by default) beside native DGEMM
# per size and phi, and FIXED Ozaki-II at the chosen count (the decision's overhead).
# Binaries as bench/device_check.sh ($NEW); output under $OUT (schemes.txt, JSON in results_schemes.tgz).
source "$(dirname "$0")/device_env.sh" schemes
summary() {
  python3 - "$1" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("bad json", sys.argv[1], e); sys.exit()
o, n = r["ozgemm"], r["native_dgemm"]
ph = " ".join(f'{k[:-3]}={o[k]:.2f}' for k in ("max_reduce_ms", "slicing_ms", "products_ms", "epilogue_ms") if k in o)
print(f'{r["m"]}^3 phi={r["phi"]} {r["accuracy"]} {r["scheme"]} N={r["moduli"]} s={r["slices"]} {r["variant"]} '
      f'bound={r["bound"]:.3g}: {o["ms"]:.2f} ms {o["tflops"]:.1f} TF comperr {o["componentwise"]:.2e} | '
      f'native {n["ms"]:.2f} ms {n["tflops"]:.1f} TF comperr {n["componentwise"]:.2e} | phases {ph} | {r["decision"]}')
PY
}
{
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  for t in ${TESTS:-test_gpu_fp64 test_gpu_ozaki2 test_gpu_emulated}; do
    f=""; [ $t = test_gpu_emulated ] && f="--gtest_filter=${EMU_FILTER:-*ShapesBitwise*:*SpecialValues*:*KSplit*/Unfused}"
    gpu_suite "$OUT" $t $f
  done
  for tool in memcheck racecheck; do
    sanitize "$OUT" $tool test_gpu_fp64 "${SANITIZE_FILTER:-*Schemes*PlanCall*:*FusedVariantsRefuse*}" ${SANITIZE_TIMEOUT:-150}
  done
fi
for n in ${SIZES:-4096 8192 16384}; do for phi in ${PHIS:-0.5}; do
  f="$OUT/schemes/fp64_${n}_phi${phi}.json"
  "$NEW/ozgemm" bench --m $n --n $n --k $n --phi $phi --accuracy fp64 --variant auto --iters ${ITERS:-5} --json > "$f" 2> "$f.err" || cat "$f.err"
  summary "$f"
  N=$(python3 -c "import json;r=json.load(open('$f'));print(r['moduli'] if r['scheme']=='ozaki2' else 0)" 2>/dev/null || echo 0)
  if [ "$N" != 0 ] && [ "${FIXED:-1}" = 1 ]; then
    f2="$OUT/schemes/fixed_${n}_phi${phi}_N${N}.json"
    "$NEW/ozgemm" bench --m $n --n $n --k $n --phi $phi --scheme ozaki2 --moduli $N --iters ${ITERS:-5} --json > "$f2" 2> "$f2.err" || cat "$f2.err"
    summary "$f2"
  fi
done; done
} 2>&1 | tee -a "$OUT/schemes.txt"
find "$OUT/schemes" -name '*.err' -empty -delete
(cd "$OUT" && tar czf results_schemes${TAG:-}.tgz schemes && rm -rf schemes)
