#!/usr/bin/env bash
# bench/device_fp64_profile.sh — one device call: FP64 mode's decision on the H100, where its time
# goes and what it costs end to end.
#   1. (TESTS, default test_gpu_fp64 test_gpu_ozaki2) the GPU suites; compute-sanitizer memcheck and
#      racecheck on SANITIZE_FILTER.
#   2. Every kernel of one FP64-mode call and of one FIXED call at MODULI (16), durations only (ncu,
#      gpu__time_duration; cuBLAS's kernels left out: the autotuning's trials would fill the list).
#      With OLD (a folder of earlier binaries), the same list for them.
#   3. The Ozaki-II bound kernel with the full sections.
#   4. `ozgemm bench` (median of ITERS) FP64 mode beside FIXED at MODULI and native DGEMM, for
#      SIZES (n for n^3, or MxNxK) x PHIS. The JSON's phase_lead_ms is the decision (before the emulation's first phase).
# SIZE (8192) for 2-3. Output under $OUT/fp64_profile (tar'd: fp64_profile.tgz).
source "$(dirname "$0")/device_env.sh" fp64_profile
P="$OUT/fp64_profile"
n=${SIZE:-8192}
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  for t in ${TESTS:-test_gpu_fp64 test_gpu_ozaki2}; do gpu_suite "$P" $t; done
  for tool in memcheck racecheck; do
    sanitize "$P" $tool test_gpu_fp64 "${SANITIZE_FILTER:-*Schemes*ManyBlocks*/Ozaki2:*Schemes*PlanCall*}" ${SANITIZE_TIMEOUT:-200}
  done
fi
kernel_list() {  # $1 label, $2 binary folder, then the bench arguments
  local label=$1 dir=$2; shift 2
  LD_LIBRARY_PATH="$dir" ncu --clock-control none --metrics gpu__time_duration.sum --csv --print-units base \
    -k "regex:^(?!sm90_xmma|cutlass::Kernel|.*gemv).*" -c ${COUNT:-24} "$dir/ozgemm" bench "$@" \
    > "$P/kernels_$label.csv" 2> "$P/kernels_$label.err"
  echo "== $label (ncu exit $?)"
  python3 - "$P/kernels_$label.csv" <<'PY'
import csv, sys, io
txt = open(sys.argv[1]).read()
start = txt.find('"ID"')
rows = [r for r in csv.DictReader(io.StringIO(txt[start:]))] if start >= 0 else []
total = 0.0
for r in rows:
    us = float(r["Metric Value"].replace(",", "")) / 1e3
    total += us
    print(f'{r["ID"]:>4} {us:10.1f} us  {r["Kernel Name"][:90]}')
print(f"sum {total/1e3:.3f} ms over {len(rows)} kernels")
PY
}
common=(--m $n --n $n --k $n --phi ${PHI:-0.5} --scheme ozaki2 --variant partially-fused --json --iters 1)
kernel_list fp64 "$NEW" "${common[@]}" --accuracy fp64
[ -n "${OLD:-}" ] && kernel_list fp64_old "$OLD" "${common[@]}" --accuracy fp64
SECTIONS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
  --section Occupancy --section WarpStateStats --section InstructionStats --section SchedulerStats --section LaunchStats"
ncu --clock-control none $SECTIONS -k "regex:oz2_bound|extra_shifts" -c 2 -o "$P/bound" -f \
  "$NEW/ozgemm" bench "${common[@]}" --accuracy fp64 > "$P/bound_run.log" 2>&1
echo "ncu bound exit $?"
ncu --import "$P/bound.ncu-rep" --page details > "$P/bound.txt" 2>&1
grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc Active" \
  "$P/bound.txt" | head -30
for shape in ${SIZES:-8192}; do for phi in ${PHIS:-0.5 -1 1}; do  # a shape: n (n^3) or MxNxK
  IFS=x read -r sm sn sk <<< "$shape"; sn=${sn:-$sm}; sk=${sk:-$sm}
  for which in fp64 fixed; do
    f="$P/bench_${which}_${shape}_phi$phi.json"
    "$NEW/ozgemm" bench --m $sm --n $sn --k $sk --phi $phi --scheme ozaki2 --variant partially-fused --json --iters ${ITERS:-5} \
      $([ $which = fp64 ] && echo "--accuracy fp64" || echo "--moduli ${MODULI:-16}") > "$f" 2> "${f%.json}.err"
    python3 -c "
import json; r=json.load(open('$f')); o=r['ozgemm']; nt=r['native_dgemm']
ph={k[:-3]:round(v,2) for k,v in o.items() if k.endswith('_ms') and k!='ms'}
print(f\"$which {r['m']}x{r['n']}x{r['k']} phi=$phi {r.get('scheme')} N={r.get('moduli')}: {o['ms']:.2f} ms {o['tflops']:.1f} TF err {o['componentwise']:.1e} | native {nt['ms']:.2f} ms {nt['tflops']:.1f} TF err {nt['componentwise']:.1e} | x{nt['ms']/o['ms']:.3f} | {ph} | {r.get('decision')}\")" || tail -3 "${f%.json}.err"
  done
done; done
find "$P" -name '*.err' -empty -delete
(cd "$OUT" && tar czf fp64_profile.tgz fp64_profile && rm -rf fp64_profile)
