source bench/device_env.sh order
S=.carry/gemmul8/side_by_side
run() { echo "== $*"; env "$@" 2>>$OUT/order/err.txt | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print('%6d %-14s N=%2d %-16s %8.2f ms %6.1f TF %.2e'%(r['n'],r['method'],r['moduli'],r['mode'],r['ms'],r['tflops'],r['componentwise']))"; }
for n in 8192; do
run SLICES=0 SKIP_GEMMUL8=1 $S $n 14,15 0.5 10 20261123
run SLICES=0 SKIP_GEMMUL8=1 $S $n 15 0.5 10 20261123
run SLICES=0 SKIP_GEMMUL8=1 $S $n 15,14 0.5 10 20261123
run SLICES=0 SKIP_GEMMUL8=1 FRESH_HANDLE=1 $S $n 14,15 0.5 10 20261123
done
run SLICES=0 SKIP_GEMMUL8=1 $S 16384 15 0.5 10 20261123
run SLICES=0 SKIP_GEMMUL8=1 FRESH_HANDLE=1 $S 16384 14,15 0.5 10 20261123
