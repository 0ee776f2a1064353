#!/usr/bin/env bash
# bench/device_verify.sh — one device call that re-verifies carried binaries ($NEW) on the GPU:
#   1. every GPU suite (TESTS, default all four), brief logs;
#   2. compute-sanitizer (SAN_TOOLS, default synccheck racecheck memcheck) on test_gpu_b2b's
#      SAN_FILTER (default the warp-specialised schedule's test);
#   3. optional ncu of one kernel (NCU_KERNEL regex, NCU_ARGS: the ozgemm command line), --set full;
# Output: $OUT/verify.txt and $OUT/verify.tgz (logs, ncu report as text).
source "$(dirname "$0")/device_env.sh" verify
V="$OUT/verify"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
echo "commit $OZGEMM_COMMIT"
for t in ${TESTS:-test_gpu_b2b test_gpu_ozaki2 test_gpu_fp64 test_gpu_emulated}; do gpu_suite "$V" $t; done
for tool in ${SAN_TOOLS:-synccheck racecheck memcheck}; do
  sanitize "$V" $tool test_gpu_b2b "${SAN_FILTER:-*WarpSpecialised*}" ${SAN_TIMEOUT:-300}
done
if [ -n "${NCU_KERNEL:-}" ]; then
  ncu --set full -k "regex:$NCU_KERNEL" -c 1 "$NEW/ozgemm" $NCU_ARGS > "$V/ncu_raw.txt" 2>&1
  echo "ncu exit $?"
  grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|L2 Cache Throughput|L1/TEX Cache Throughput|Issue Slots Busy|Executed Ipc A" "$V/ncu_raw.txt" | head -30
  # Where the warps stall, by source line (the build's -lineinfo): the report's source page, CUDA lines.
  ncu --set full --import-source yes -k "regex:$NCU_KERNEL" -c 1 -o "$V/ncu_rep" "$NEW/ozgemm" $NCU_ARGS > /dev/null 2>&1
  ncu -i "$V/ncu_rep.ncu-rep" --page source --print-source cuda --csv > "$V/ncu_source.csv" 2> "$V/ncu_source.err"
  echo "ncu source page exit $?"
  python3 - "$V/ncu_source.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
hdr = next((i for i, r in enumerate(rows) if any("Sampling" in c for c in r)), None)
if hdr is None:
    print("no sampling column; first lines:", rows[:3]); sys.exit()
h = rows[hdr]
col = next(i for i, c in enumerate(h) if "Sampling" in c and "All" in c)
src = next((i for i, c in enumerate(h) if c.lower() in ("source", "cuda source")), 1)
def num(x):
    try: return float(x.replace(",", ""))
    except ValueError: return 0.0
body = [r for r in rows[hdr + 1:] if len(r) > col]
tot = sum(num(r[col]) for r in body) or 1.0
print("columns:", [c for c in h][:12])
for r in sorted(body, key=lambda r: -num(r[col]))[:30]:
    print(f"{100 * num(r[col]) / tot:5.1f}%  line {r[0]:>5}  {r[src].strip()[:110]}")
PY
fi
} 2>&1 | tee "$OUT/verify.txt"
(cd "$OUT" && tar czf verify.tgz verify && rm -rf verify)
