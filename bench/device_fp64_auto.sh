#!/usr/bin/env bash
# bench/device_fp64_auto.sh — one device call: the library's defaults (FP64 mode, scheme and variant
# AUTO) on the device: test_gpu_fp64 (with the Hopper rule's test), then `ozgemm bench --accuracy fp64
# --variant auto` beside native DGEMM for SHAPES (n or MxNxK) x PHIS. Output under $OUT/fp64_auto.
source "$(dirname "$0")/device_env.sh" fp64_auto
P="$OUT/fp64_auto"
gpu_suite "$P" test_gpu_fp64
grep "defaults:" "$P/test_gpu_fp64.log"
for shape in ${SHAPES:-8192 12288 4096}; do for phi in ${PHIS:-0.5 1}; do
  IFS=x read -r sm sn sk <<< "$shape"; sn=${sn:-$sm}; sk=${sk:-$sm}
  f="$P/auto_${shape}_phi$phi.json"
  "$NEW/ozgemm" bench --m $sm --n $sn --k $sk --phi $phi --accuracy fp64 --variant auto --json --iters ${ITERS:-5} \
    > "$f" 2> "${f%.json}.err"
  python3 -c "
import json; r=json.load(open('$f')); o=r['ozgemm']; nt=r['native_dgemm']
print(f\"{r['m']}x{r['n']}x{r['k']} phi=$phi: {o['ms']:.2f} ms {o['tflops']:.1f} TF err {o['componentwise']:.1e} | native {nt['ms']:.2f} ms {nt['tflops']:.1f} TF err {nt['componentwise']:.1e} | x{nt['ms']/o['ms']:.3f} | {r.get('decision')}\")" || tail -3 "${f%.json}.err"
done; done
find "$P" -name '*.err' -empty -delete
