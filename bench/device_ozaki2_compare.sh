#!/usr/bin/env bash
# bench/device_ozaki2_compare.sh — one device call: two carried builds (.carry/new, .carry/old) in the
# same run: the GPU tests of the new one, Ozaki-I at 7 slices (8192^3, unfused and partially fused:
# their slicing pass shares the operand tile load) and Ozaki-II at 16384^3 (N = 15, 14 new; 15 old).
# The new build's set-up as the other device scripts (OUT, NEW on LD_LIBRARY_PATH); the old one is named per run.
source "$(dirname "$0")/device_env.sh" ozaki1
"$NEW"/test_gpu_fp64 --gtest_brief=1 > $OUT/test_gpu_fp64.log 2>&1; echo "fp64 exit $? $(tail -1 $OUT/test_gpu_fp64.log)"
"$NEW"/test_gpu_emulated --gtest_brief=1 --gtest_filter='*ShapesBitwise*:*SpecialValues*:*KSplit*:*TransposesLeading*' > $OUT/test_gpu_emulated.log 2>&1; echo "emulated exit $? $(grep -E 'tests? from .* ran|PASSED|FAILED' $OUT/test_gpu_emulated.log | tr '\n' ' ')"
for tag in new old; do for v in unfused partially-fused; do
  f=$OUT/ozaki1/${tag}_${v}.json
  LD_LIBRARY_PATH=$PWD/.carry/$tag OZGEMM_COMMIT=$(cat .carry/$tag/COMMIT) .carry/$tag/ozgemm bench --m 8192 --n 8192 --k 8192 --slices 7 --variant $v --iters 10 --json > $f 2>$f.err
  python3 -c "import json,sys;r=json.load(open('$f'));o=r['ozgemm'];n=r['native_dgemm'];print('$tag', r['variant'], 'ozaki1 s=7 8192^3: %.2f ms %.1f TF | native %.2f ms | max_reduce %.2f slicing %.2f products %.2f epilogue %.2f'%(o['ms'],o['tflops'],n['ms'],o.get('max_reduce_ms',0),o.get('slicing_ms',0),o.get('products_ms',0),o.get('epilogue_ms',0)))" || cat $f.err
done; done
ITERS=10 SKIP_TESTS=1 SIZES="16384" MODULI="15 14" bash bench/device_ozaki2.sh 2>&1 | grep -v "^$"
mkdir -p $OUT/old; OUT=$OUT/old NEW=.carry/old ITERS=10 SKIP_TESTS=1 SIZES="16384" MODULI=15 bash bench/device_ozaki2.sh
