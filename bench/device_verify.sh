#!/usr/bin/env bash
# bench/device_verify.sh — one device call that re-verifies carried binaries ($NEW) on the GPU:
#   1. every GPU suite (TESTS, default all four; empty: none), brief logs;
#   2. compute-sanitizer (SAN_TOOLS, default synccheck racecheck memcheck; empty: none) on
#      test_gpu_b2b's SAN_FILTER (default the warp-specialised schedule's test);
#   3. optional ncu of one kernel (NCU_KERNEL regex, NCU_ARGS: the ozgemm command line), --set full,
#      its main figures printed;
# Output: $OUT/verify.txt and $OUT/verify.tgz (logs, ncu report as text).
source "$(dirname "$0")/device_env.sh" verify
V="$OUT/verify"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
echo "commit $OZGEMM_COMMIT"
for t in ${TESTS-test_gpu_b2b test_gpu_ozaki2 test_gpu_fp64 test_gpu_emulated}; do gpu_suite "$V" $t; done
for tool in ${SAN_TOOLS-synccheck racecheck memcheck}; do
  sanitize "$V" $tool test_gpu_b2b "${SAN_FILTER:-*WarpSpecialised*}" ${SAN_TIMEOUT:-300}
done
if [ -n "${NCU_KERNEL:-}" ]; then
  ncu --set full -k "regex:$NCU_KERNEL" -c 1 "$NEW/ozgemm" $NCU_ARGS > "$V/ncu_raw.txt" 2>&1
  echo "ncu exit $?"
  grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|L2 Cache Throughput|L1/TEX Cache Throughput|Issue Slots Busy|Executed Ipc A" "$V/ncu_raw.txt" | head -30
fi
} 2>&1 | tee "$OUT/verify.txt"
(cd "$OUT" && tar czf verify.tgz verify && rm -rf verify)
