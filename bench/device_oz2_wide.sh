#!/usr/bin/env bash
# bench/device_oz2_wide.sh — one device call for the wide moduli counts (17..20: A' past int64).
#   1. (unless SKIP_TESTS=1) test_gpu_ozaki2 and test_gpu_fp64; compute-sanitizer memcheck on the
#      wide-count tests.
#   2. FIXED mode, partially fused, at each of MODULI (default "16 17 18 20") for FIXED_SHAPES (n or
#      MxNxK), phi 0.5, beside native DGEMM of the same run.
#   3. FP64 mode forced to Ozaki-II past AUTO's rules (--scheme ozaki2 --variant partially-fused) and
#      the library's defaults (--variant auto) for CASES (SHAPE:PHI); WHICH ("forced auto") picks.
# ITERS (5) medians. Output under $OUT/oz2_wide (tar'd: oz2_wide.tgz).
source "$(dirname "$0")/device_env.sh" oz2_wide
P="$OUT/oz2_wide"
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  gpu_suite "$P" test_gpu_ozaki2
  gpu_suite "$P" test_gpu_fp64
  sanitize "$P" memcheck test_gpu_ozaki2 "*WideCounts*" ${SANITIZE_TIMEOUT:-300}
fi
dims() { IFS=x read -r sm sn sk <<< "$1"; sn=${sn:-$sm}; sk=${sk:-$sm}; }
for shape in ${FIXED_SHAPES:-8192 16384}; do
  dims "$shape"
  for N in ${MODULI:-16 17 18 20}; do
    f="$P/fixed_${shape}_N$N.json"
    "$NEW/ozgemm" bench --m $sm --n $sn --k $sk --phi 0.5 --scheme ozaki2 --variant partially-fused --moduli $N \
      --json --iters ${ITERS:-5} > "$f" 2> "${f%.json}.err"
    bench_summary "$f" "fixed phi=0.5"
  done
done
for case in ${CASES:-8192:1 16384:0.5 16384:1}; do
  shape=${case%%:*} phi=${case##*:}
  dims "$shape"
  for which in ${WHICH:-forced auto}; do
    f="$P/fp64_${which}_${shape}_phi$phi.json"
    if [ $which = forced ]; then v=(--scheme ozaki2 --variant partially-fused); else v=(--variant auto); fi
    "$NEW/ozgemm" bench --m $sm --n $sn --k $sk --phi $phi --accuracy fp64 "${v[@]}" --json --iters ${ITERS:-5} \
      > "$f" 2> "${f%.json}.err"
    bench_summary "$f" "fp64 $which phi=$phi"
  done
done
find "$P" -name '*.err' -empty -delete
(cd "$OUT" && tar czf oz2_wide.tgz oz2_wide && rm -rf oz2_wide)
