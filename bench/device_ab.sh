#!/usr/bin/env bash
# bench/device_ab.sh — one device call: two builds of the library (NEW and OLD, each a folder with
# `ozgemm` and libozgemm.so.0[.xz]) timed on the same configurations in rounds; within a round each
# configuration runs on both builds, and the order of the builds alternates from round to round (the
# card's power-limit clock swing). Every run is `ozgemm bench --json` (its own native DGEMM beside it,
# same seed, same inputs) or `ozgemm b2b --conv --json`. Output under $OUT/ab: the JSON files and
# summary.txt (per configuration and build: median TFLOPS over the rounds, their range, median
# speed-up over the same runs' native DGEMM, the componentwise error, what ran).
#   NEW=.carry/new OLD=.carry/old ROUNDS=3 ITERS=10 bash bench/device_ab.sh
source "$(dirname "$0")/device_env.sh" ab
OLD=${OLD:?OLD: the folder of the baseline build}
D="$OUT/ab"
CONFIGS=${CONFIGS:-"fixed_oz2_15_8192 fp64_8192 fp64_16384 oz1_s7_pf_8192 b2b_conv"}
args_of() {
  case $1 in
    fixed_oz2_15_8192) echo "bench --m 8192 --n 8192 --k 8192 --accuracy fixed --scheme ozaki2 --moduli 15 --variant auto" ;;
    fp64_8192) echo "bench --m 8192 --n 8192 --k 8192 --accuracy fp64 --variant auto" ;;
    fp64_pf_8192) echo "bench --m 8192 --n 8192 --k 8192 --accuracy fp64 --variant partially-fused" ;;
    fp64_16384) echo "bench --m 16384 --n 16384 --k 16384 --accuracy fp64 --variant auto" ;;
    oz1_s7_pf_8192) echo "bench --m 8192 --n 8192 --k 8192 --accuracy fixed --slices 7 --variant partially-fused" ;;
    b2b_conv) echo "b2b --type fp16 --conv 32x56x56x64 --filter 1 --n0 256 --n1 128 --iters 50" ;;
  esac
}
nvidia-smi --query-gpu=name,driver_version,power.limit,temperature.gpu --format=csv | tee "$D/device.txt"
for round in $(seq 1 "${ROUNDS:-3}"); do
  builds="new old"; [ $((round % 2)) = 0 ] && builds="old new"
  for c in $CONFIGS; do
    for b in $builds; do
      dir=$NEW; [ $b = old ] && dir=$OLD
      f="$D/${c}_${b}_r$round.json"
      extra="--iters ${ITERS:-10}"; [ $c = b2b_conv ] && extra=""
      LD_LIBRARY_PATH="$dir" "$dir/ozgemm" $(args_of $c) $extra --json > "$f" 2> "${f%.json}.err" || tail -2 "${f%.json}.err"
    done
  done
  echo "round $round done"
done
python3 - "$D" <<'PY' | tee "$D/summary.txt"
import collections, glob, json, os, statistics, sys
runs = collections.defaultdict(list)
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*_r*.json"))):
    name = os.path.basename(f)[:-5]
    cfg, build, _ = name.rsplit("_", 2)
    try:
        r = json.load(open(f))
    except Exception:
        continue
    runs[(cfg, build)].append(r)
def tflops(r):
    if "ozgemm" in r:
        return r["ozgemm"]["tflops"], r["native_dgemm"]["tflops"], r["ozgemm"].get("componentwise"), r.get("decision") or r.get("scheme")
    # b2b: the Hopper fused pair's rate (the path named "... sm90 wgmma"), else the first that ran
    paths = [p for p in r.get("paths") or [] if p.get("ran")]
    best = next((p for p in paths if "sm90" in p["path"]), paths[0] if paths else {})
    return best.get("tflops", float("nan")), float("nan"), best.get("max_rel_error"), best.get("path")
for (cfg, build) in sorted(runs):
    rs = [tflops(r) for r in runs[(cfg, build)]]
    tf = [x[0] for x in rs]
    sp = [x[0] / x[1] for x in rs if x[1] == x[1] and x[1]]
    errs = {x[2] for x in rs}
    print(f"{cfg:18s} {build}: {statistics.median(tf):7.2f} TF (rounds {len(tf)}: {min(tf):.2f}-{max(tf):.2f})"
          + (f" {statistics.median(sp):.3f}x native" if sp else "") + f" comperr {errs} | {str(rs[-1][3])[:140]}")
PY

