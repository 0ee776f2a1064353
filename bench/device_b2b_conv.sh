#!/usr/bin/env bash
# bench/device_b2b_conv.sh — one device call for the back-to-back convolution pair (issue 15): the
# b2b GPU tests (GEMM and convolution pairs, every path bitwise against the host reference),
# compute-sanitizer memcheck and racecheck on the convolution tests, then `ozgemm b2b --conv` on
# CUTLASS example 13's convolutions and other channel counts (fused paths beside our unfused pair),
# and the same convolutions in PyTorch/cuDNN (bench/b2b_conv_torch.py) in the same call.
# Binaries in $NEW (libozgemm.so*, ozgemm, test_gpu_b2b); output under $OUT (conv.txt, JSON in b2b_conv.tgz).
source "$(dirname "$0")/device_env.sh" b2b_conv
summary() {
  python3 - "$1" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("bad json", sys.argv[1], e); sys.exit()
cv = r.get("conv")
name = f'conv {cv["n"]}x{cv["h"]}x{cv["w"]}x{cv["c"]} r={cv["r"]}' if cv else f'gemm {r["m"]}x{r["k0"]}'
line = f'{r.get("type", "fp16")} {name} -> {r["n0"]} -> {r["n1"]}:'
for p in r["paths"]:
    if "ran" in p and not p["ran"]:
        line += f' | {p["path"]}: not run'
        continue
    line += f' | {p["path"]} {p["ms"] * 1e3:.1f} us {p["tflops"]:.0f} T'
    if "speedup_vs_unfused" in p:
        line += f' x{p["speedup_vs_unfused"]:.2f} mm={p["mismatches"]}'
print(line)
PY
}
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  "$NEW/test_gpu_b2b" --gtest_brief=1 > "$OUT/test_gpu_b2b.log" 2>&1
  echo "test_gpu_b2b exit $?: $(grep -E 'tests? from .* ran|PASSED|FAILED' "$OUT/test_gpu_b2b.log" | tr '\n' ' ')"
  grep -c "the Hopper kernel ran" "$OUT/test_gpu_b2b.log" | sed 's/^/convolutions the Hopper kernel ran: /'
  for tool in memcheck racecheck; do
    timeout ${SANITIZE_TIMEOUT:-200} compute-sanitizer --tool $tool "$NEW/test_gpu_b2b" --gtest_brief=1 \
      --gtest_filter="${SANITIZE_FILTER:-*Conv*:*IntegerInputs*:*HopperKernel*}" > "$OUT/sanitizer_$tool.log" 2>&1
    echo "compute-sanitizer $tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|tests? from .* ran|PASSED|FAILED' "$OUT/sanitizer_$tool.log" | tr '\n' ' ')"
  done
fi
for type in ${TYPES:-fp16 int8}; do
  for shape in ${SHAPES:-32x56x56x64:3:64:128 32x56x56x64:3:64:256 32x56x56x64:3:128:128 32x28x28x128:3:128:256 32x56x56x64:1:64:128 32x56x56x256:1:64:256}; do
    IFS=: read -r conv r n0 n1 <<< "$shape"
    f="$OUT/b2b_conv/ozgemm_${type}_${conv}_r${r}_${n0}_${n1}.json"
    "$NEW/ozgemm" b2b --type $type --conv $conv --filter $r --n0 $n0 --n1 $n1 --iters ${ITERS:-50} --json > "$f" 2> "$f.err" || cat "$f.err"
    summary "$f"
    if [ $type = fp16 ] && [ "${SKIP_TORCH:-0}" != 1 ]; then
      t="$OUT/b2b_conv/torch_${conv}_r${r}_${n0}_${n1}.json"
      python3 bench/b2b_conv_torch.py --conv $conv --filter $r --n0 $n0 --n1 $n1 --iters ${ITERS:-50} > "$t" 2> "$t.err" || tail -3 "$t.err"
      summary "$t"
    fi
  done
done
for type in ${TYPES:-fp16 int8}; do
  for shape in ${GEMM_SHAPES:-81920x576x64x128 81920x576x64x256 65536x1024x128x256 65536x1024x256x256}; do
    set -- ${shape//x/ }
    f="$OUT/b2b_conv/ozgemm_${type}_gemm_${shape}.json"
    "$NEW/ozgemm" b2b --type $type --m $1 --k $2 --n0 $3 --n1 $4 --iters ${ITERS:-50} --json > "$f" 2> "$f.err" || cat "$f.err"
    summary "$f"
  done
done
} 2>&1 | tee "$OUT/conv.txt"
find "$OUT/b2b_conv" -name '*.err' -empty -delete
(cd "$OUT" && tar czf b2b_conv.tgz b2b_conv && rm -rf b2b_conv)
