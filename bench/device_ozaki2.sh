#!/usr/bin/env bash
# bench/device_ozaki2.sh — one device call: the Ozaki-II GPU tests, then `ozgemm bench --scheme ozaki2`
# at the issue's sizes and moduli counts beside native DGEMM (same inputs, phi = 0.5 unless PHIS),
# for each of VARIANTS (default auto; e.g. "unfused partially-fused").
# Binaries as bench/device_check.sh ($NEW); output under $OUT (ozaki2.txt, results_ozaki2.tgz).
# SANITIZE=1: memcheck and racecheck of the shape tests too. SIDE_BY_SIDE=path: also run that
# bench/gemmul8/side_by_side binary (native, ozgemm Ozaki-II, GEMMul8 on the same inputs) at
# SIDE_SIZES x SIDE_PHIS with the MODULI counts.
source "$(dirname "$0")/device_env.sh" ozaki2
{
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  "$NEW/test_gpu_ozaki2" --gtest_brief=1 > "$OUT/test_gpu_ozaki2.log" 2>&1
  echo "test_gpu_ozaki2 exit $?: $(grep -E 'tests? from .* ran|PASSED|FAILED' "$OUT/test_gpu_ozaki2.log" | tr '\n' ' ')"
fi
if [ "${SANITIZE:-0}" = 1 ]; then
  for tool in memcheck racecheck; do
    timeout ${SANITIZE_TIMEOUT:-120} compute-sanitizer --tool $tool "$NEW/test_gpu_ozaki2" --gtest_brief=1 \
      --gtest_filter="${SANITIZE_FILTER:-*Shapes*:*Moduli*}" > "$OUT/sanitizer_$tool.log" 2>&1
    echo "compute-sanitizer $tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|tests? from .* ran|PASSED|FAILED' "$OUT/sanitizer_$tool.log" | tr '\n' ' ')"
  done
fi
for n in ${SIZES:-4096 8192 16384}; do for N in ${MODULI:-14 15}; do for phi in ${PHIS:-0.5}; do for v in ${VARIANTS:-auto}; do
  f="$OUT/ozaki2/oz2_${n}_N${N}_phi${phi}_${v}.json"
  "$NEW/ozgemm" bench --m $n --n $n --k $n --phi $phi --scheme ozaki2 --moduli $N --variant $v --iters ${ITERS:-5} --json > "$f" 2> "$f.err" || cat "$f.err"
  python3 - "$f" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("bad json", sys.argv[1], e); sys.exit()
o, n, md = r["ozgemm"], r["native_dgemm"], r["model"]
ceil_ms = 2.0 * r["m"] * r["n"] * r["k"] * r["moduli"] / (md["measured_int8_tops"] * 1e9)
ph = " ".join(f'{k[:-3]}={o[k]:.2f}' for k in ("max_reduce_ms", "slicing_ms", "products_ms", "epilogue_ms", "phase_call_ms", "phase_lead_ms") if k in o)
print(f'{r["m"]}^3 phi={r["phi"]} ozaki2 N={r["moduli"]} {r["variant"]}: {o["ms"]:.2f} ms {o["tflops"]:.1f} TF comperr {o["componentwise"]:.2e} '
      f'| native {n["ms"]:.2f} ms {n["tflops"]:.1f} TF comperr {n["componentwise"]:.2e} | ceiling {ceil_ms:.2f} ms '
      f'({2e-9*r["m"]*r["n"]*r["k"]/ceil_ms:.0f} TF at {md["measured_int8_tops"]:.0f} TOPS) | phases ms: {ph}')
PY
done; done; done; done
if [ -n "${SIDE_BY_SIDE:-}" ]; then
  M=${MODULI:-14 15}
  for n in ${SIDE_SIZES:-4096 8192 16384}; do for phi in ${SIDE_PHIS:-0.5}; do
    "$SIDE_BY_SIDE" $n "${M// /,}" $phi ${ITERS:-5} ${SEED:-20261123} >> "$OUT/ozaki2/side_by_side.jsonl" 2>> "$OUT/ozaki2/side_by_side.err"
    echo "side_by_side $n phi=$phi exit $?"
  done; done
  python3 - "$OUT/ozaki2/side_by_side.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except Exception:
        continue
    print(f'side-by-side {r["n"]}^3 phi={r["phi"]} {r["method"]:14s} N={r["moduli"]:2d} {r["mode"]:9s} '
          f'{r["ms"]:8.2f} ms {r["tflops"]:6.1f} TF comperr {float("inf") if r["componentwise"] is None else r["componentwise"]:.2e}')
PY
fi
} 2>&1 | tee "$OUT/ozaki2.txt"
find "$OUT/ozaki2" -name '*.err' -empty -delete
(cd "$OUT" && tar czf results_ozaki2.tgz ozaki2 && rm -rf ozaki2)
