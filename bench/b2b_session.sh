#!/usr/bin/env bash
# One device call for the back-to-back GEMM: tests, then `ozgemm b2b` on CUTLASS example 13's
# problems and MLP-like shapes. Binaries in dev-bin/ (ozgemm, test_b2b); JSON to $OUT.
set -u
OUT=${OUT:-./device-out}
mkdir -p "$OUT"
BIN=${BIN:-./dev-bin}
export OZGEMM_COMMIT=${OZGEMM_COMMIT:-$(cat "$BIN/COMMIT" 2>/dev/null || echo unknown)}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/b2b_device.txt"
[ "${SKIP_TESTS:-0}" = 1 ] || "$BIN/test_b2b" --gtest_brief=1 2>&1 | tail -3
for type in ${TYPES:-fp16}; do
for shape in ${SHAPES:-81920x576x64x128 81920x576x64x256 65536x1024x128x128 65536x1024x128x256 65536x1024x256x128 65536x1024x256x256}; do
  set -- ${shape//x/ }
  f="$OUT/b2b_${type}_${shape}.json"
  "$BIN/ozgemm" b2b --type $type --m $1 --k $2 --n0 $3 --n1 $4 --iters ${ITERS:-50} --json > "$f" 2> "$f.err" || cat "$f.err"
  python3 - "$f" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("bad json", sys.argv[1], e); sys.exit()
line = f'{r.get("type","fp16")} {r["m"]}x{r["k0"]} -> {r["n0"]} -> {r["n1"]}:'
for p in r["paths"]:
    if p["ran"]:
        line += f' | {p["path"]} {p["ms"]*1e3:.1f} us {p["tflops"]:.0f} T x{p.get("speedup_vs_unfused",0):.2f} mm={p["mismatches"]}'
    else:
        line += f' | {p["path"]}: not run'
print(line)
PY
done
done
find "$OUT" -maxdepth 1 -name '*.err' -empty -delete
(cd "$OUT" && mkdir -p b2b && mv b2b_*.json b2b_device.txt b2b/ 2>/dev/null; tar czf b2b.tgz b2b && rm -rf b2b)
