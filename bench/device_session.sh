#!/usr/bin/env bash
# One device call: GPU tests, a memcheck pass, and the unfused benchmark table.
# Run from the repo root on the GPU machine with prebuilt binaries in dev-bin/
# (ozgemm, test_gpu_emulated); results go to $OUT (or ./device-out).
set -u
OUT=${OUT:-./device-out}
mkdir -p "$OUT"
BIN=${BIN:-./dev-bin}
export OZGEMM_COMMIT=${OZGEMM_COMMIT:-$(cat dev-bin/COMMIT 2>/dev/null || echo unknown)}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv | tee "$OUT/device.txt"
for t in test_numerics test_host_reference test_planner; do
  [ -x "$BIN/$t" ] && { "$BIN/$t" --gtest_brief=1 2>&1 | tail -1 | sed "s/^/$t: /"; }
done
if command -v cuobjdump >/dev/null; then
  echo "== SASS of the fused kernel: $(cuobjdump --dump-sass "$BIN/ozgemm" 2>/dev/null | grep -cE 'IGMMA|HGMMA') wgmma, $(cuobjdump --dump-sass "$BIN/ozgemm" 2>/dev/null | grep -cE 'UTMALDG') TMA loads, $(cuobjdump --dump-sass "$BIN/ozgemm" 2>/dev/null | grep -cE '\bSTL\b|\bLDL\b') local-memory ops"
fi
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  echo "== GPU tests"
  "$BIN/test_gpu_emulated" --gtest_brief=1 ${GTEST_FILTER:+--gtest_filter=$GTEST_FILTER} 2>&1 | tee "$OUT/gpu_tests.log" | tail -25
fi
if [ "${SKIP_SANITIZER:-0}" != 1 ] && command -v compute-sanitizer >/dev/null; then
  echo "== compute-sanitizer memcheck (small shapes)"
  compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN/test_gpu_emulated" \
    --gtest_filter="${SANITIZER_FILTER:-*TransposesLeading*:*Special*:*UserWorkspace*:*AlphaZero*:*KSplit*}" --gtest_brief=1 > "$OUT/memcheck.log" 2>&1
  echo "memcheck exit $?"; tail -4 "$OUT/memcheck.log"
  compute-sanitizer --tool racecheck --error-exitcode 9 "$BIN/test_gpu_emulated" \
    --gtest_filter='*TransposesLeading*' --gtest_brief=1 > "$OUT/racecheck.log" 2>&1
  echo "racecheck exit $?"; tail -2 "$OUT/racecheck.log"
fi
if [ -n "${ACCURACY_RUNS:-}" ]; then
  echo "== accuracy on the GPU (sampled entries): phi x slices at 8192^3"
  for phi in -1 0.5 2 4; do for s in 6 7 8 9; do
    f="$OUT/acc_phi${phi}_s${s}.json"
    "$BIN/ozgemm" bench --m 8192 --n 8192 --k 8192 --slices $s --phi $phi --iters 1 --json > "$f" 2>&1
    python3 -c "import json;r=json.load(open('$f'));print('phi',r['phi'],'s',r['slices'],'comperr %.2e native %.2e'%(r['ozgemm']['componentwise'],r['native_dgemm']['componentwise']))"
  done; done
fi
echo "== bench"
for shape in ${SHAPES:-1024x1024x1024 2048x2048x2048 4096x4096x4096 8192x8192x8192 16384x16384x16384 32768x256x4096}; do
  set -- ${shape//x/ }
  for s in ${SLICES:-7}; do for vf in ${VARIANTS:-unfused}; do
    # v[:family[:accumulator]], e.g. fully-fused:portable or fully-fused:sm90:global
    IFS=: read -r v fam acc <<< "$vf"; fam=${fam:-auto}; acc=${acc:-auto}
    f="$OUT/bench_${1}x${2}x${3}_s${s}_${v}$([ $fam != auto ] && echo _$fam)$([ $acc != auto ] && echo _$acc).json"
    "$BIN/ozgemm" bench --m $1 --n $2 --k $3 --slices $s --variant $v --family $fam --accumulator $acc --iters ${ITERS:-10} --json > "$f" 2> "$f.err" || cat "$f.err"
    python3 - "$f" <<'PY'
import json,sys
try:
    r=json.load(open(sys.argv[1]))
except Exception as e:
    print("bad json", sys.argv[1], e); sys.exit()
o=r["ozgemm"]; n=r["native_dgemm"]
print(f'{r["m"]}x{r["n"]}x{r["k"]} s={r["slices"]} {r["variant"]}/{r.get("family","auto")}/{r.get("accumulator","auto")}: ozgemm {o["ms"]:.3f} ms {o["tflops"]:.1f} TF (prod {o.get("products_int8_tops",0):.0f} TOPS, pre {o.get("max_reduce_ms",0)+o.get("slicing_ms",0):.3f} ms, epi {o.get("epilogue_ms",0):.3f} ms) comperr {o["componentwise"]:.2e} | native {n["ms"]:.3f} ms {n["tflops"]:.1f} TF comperr {n["componentwise"]:.2e}')
PY
  done; done
done

# Pack the JSON results (the device tool returns at most 8 files); drop empty stderr files.
find "$OUT" -maxdepth 1 -name '*.err' -empty -delete
if ls "$OUT"/*.json >/dev/null 2>&1; then
  (cd "$OUT" && mkdir -p results && mv ./*.json ./*.err results/ 2>/dev/null; tar czf results.tgz results && rm -rf results)
fi
