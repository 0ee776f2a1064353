#!/usr/bin/env bash
# bench/device_ozaki2_profile.sh — one device call: Nsight Compute on the Ozaki-II path's kernels
# (VARIANT: unfused, the default, or partially-fused) at one size (default 8192^3, N = 15, phi = 0.5):
# the passes over A and B (row shifts, norms, residues), the reconstruction (PASSES=7) and, with
# partially-fused and PASSES=8, the fused products (their kernel's name holds oz2_sm90); then the
# first kernels not ours (GEMMS of them: cuBLASLt's products, unfused). Clocks left alone
# (--clock-control none, METHOD.md). Output under $OUT/ozaki2_profile: one text report per group
# (ncu's details page) and the .ncu-rep files.
source "$(dirname "$0")/device_env.sh" ozaki2_profile
P="$OUT/ozaki2_profile"
n=${SIZE:-8192}
N=${MODULI:-15}
SECTIONS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
  --section Occupancy --section WarpStateStats --section InstructionStats --section SchedulerStats --section LaunchStats"
bench=("$NEW/ozgemm" bench --m $n --n $n --k $n --phi ${PHI:-0.5} --scheme ozaki2 --moduli $N --variant ${VARIANT:-unfused} --iters 1 --json)
# The first call's passes: row shifts of A and B, norms, residues, then reconstruction (7 launches).
ncu --clock-control none $SECTIONS -k "regex:row_shifts|oz2_" -c ${PASSES:-7} -o "$P/passes" -f \
  "${bench[@]}" > "$P/passes_run.log" 2>&1
echo "ncu passes exit $?"
ncu --import "$P/passes.ncu-rep" --page details > "$P/passes.txt" 2>&1
# The INT8 products: cuBLASLt's kernels (any name but ours), after the passes.
ncu --clock-control none $SECTIONS -k "regex:^(?!.*(row_shifts|oz2_|dgemm|fill|copy)).*" -c ${GEMMS:-3} \
  -o "$P/products" -f "${bench[@]}" > "$P/products_run.log" 2>&1
echo "ncu products exit $?"
ncu --import "$P/products.ncu-rep" --page details > "$P/products.txt" 2>&1
# A short summary: kernel, duration, throughputs, the busiest pipe.
for f in passes products; do
  grep -E "^  [a-zA-Z_].*\(|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Executed Ipc Active|Issue Slots Busy" \
    "$P/$f.txt" | head -120
done
