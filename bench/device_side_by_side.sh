#!/usr/bin/env bash
# bench/device_side_by_side.sh — one device call: issue 11's comparison table, every method on the same
# inputs in one process (bench/gemmul8/side_by_side: native cuBLAS DGEMM, ozgemm Ozaki-II unfused and
# partially fused at the MODULI counts, ozgemm Ozaki-I at SLICES in every variant, GEMMul8 fast and
# accurate at the MODULI counts), in rounds (ROUNDS_<n>, default 3; each round starts one method later)
# whose median is taken. A method that fails prints to side_by_side.err and has no line.
# Carried: $NEW (libozgemm.so.0[.xz]) and SIDE_BY_SIDE (default .carry/gemmul8/side_by_side, built by
# bench/gemmul8/build.sh outside the repository's sources). Output under $OUT/side_by_side: the JSON
# lines, stderr, and summary.txt (one line a method: median TFLOPS, the rounds' range, the error).
#   SIDE_SIZES="4096 8192 16384" SIDE_PHIS="0.5 -1 1" MODULI="14 15" SLICES=7 ROUNDS_16384=2 ITERS=10
source "$(dirname "$0")/device_env.sh" side_by_side
SBS=${SIDE_BY_SIDE:-.carry/gemmul8/side_by_side}
D="$OUT/side_by_side"
M=${MODULI:-14 15}
nvidia-smi --query-gpu=name,driver_version,power.limit,temperature.gpu --format=csv | tee "$D/device.txt"
nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm --format=csv -lms 500 > "$D/power.csv" 2>&1 &
SMI=$!
for n in ${SIDE_SIZES:-4096 8192 16384}; do for phi in ${SIDE_PHIS:-0.5 -1 1}; do
  rv="ROUNDS_$n"
  ROUNDS=${!rv:-3} SLICES=${SLICES:-7} "$SBS" $n "${M// /,}" $phi ${ITERS:-10} ${SEED:-20261123} >> "$D/side_by_side.jsonl" 2>> "$D/side_by_side.err"
  echo "side_by_side $n phi=$phi rounds=${!rv:-3} exit $?"
done; done
kill $SMI 2>/dev/null
python3 - "$D/side_by_side.jsonl" <<'PY' | tee "$D/summary.txt"
import collections, json, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except Exception:
        continue
    runs[(r["n"], r["phi"], r["method"], r["moduli"], r["mode"])].append(r)
native = {}
for (n, phi, method, N, mode), rs in runs.items():
    if method == "native_dgemm":
        native[(n, phi)] = statistics.median(x["tflops"] for x in rs)
for key in sorted(runs, key=lambda k: (k[0], k[1], k[2] != "native_dgemm", k[2], k[3], k[4])):
    n, phi, method, N, mode = key
    rs = runs[key]
    tf = [x["tflops"] for x in rs]
    med = statistics.median(tf)
    errs = {float("inf") if x["componentwise"] is None else x["componentwise"] for x in rs}
    print(f'{n:6d}^3 phi={phi:4g} {method:14s} {"s" if method == "ozgemm_ozaki1" else "N"}={N:2d} {mode:16s} '
          f'{med:6.1f} TF (rounds {len(tf)}: {min(tf):.1f}-{max(tf):.1f}) {med / native.get((n, phi), float("nan")):5.2f}x native '
          f'comperr {max(errs):.2e}{"" if len(errs) == 1 else " (varied!)"}')
PY
