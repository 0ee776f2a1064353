#!/usr/bin/env bash
# bench/distributed/run.sh — the distributed engines with and without ozgemm on one N-GPU machine
# (docs/distributed.md, "Bench"): PyTorch DTensor (both layouts) and Dask + CuPy, strong scaling (one
# global size on 1..N GPUs) and weak scaling (a fixed size per GPU: n = n1 * sqrt(P), rounded to 1024),
# each run timing the hook off and on in the same job (rotated rounds, medians). JSON lines go to
# $OUT/distributed.jsonl; bench/distributed/summarize.py prints the table.
#
#   bash bench/distributed/run.sh DIST [--strong N] [--weak N1] [--gpus "2 4"] [--rounds R] [--engines "dtensor dask"]
# DIST: the folder `cmake --build build --target dropin_dist` made (libozgemm_hook.so, libozgemm.so.0).
# Memory: the DTensor "rows" layout holds all of B on every GPU (n^2 doubles: 8 GiB at 32768).
set -uo pipefail
dist="$1"; shift
strong=32768 weak=16384 gpus="" rounds=3 engines="dtensor dask"
while [ $# -gt 0 ]; do
  case "$1" in
    --strong) strong="$2"; shift 2 ;;
    --weak) weak="$2"; shift 2 ;;
    --gpus) gpus="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --engines) engines="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")/../.." && pwd)
hook="$(cd "$dist" && pwd)/libozgemm_hook.so"
[ -e "$hook" ] || { echo "no $hook (cmake --build build --target dropin_dist)" >&2; exit 2; }
out="${OUT:-$PWD/out}"
mkdir -p "$out"
json="$out/distributed.jsonl"
total=$(nvidia-smi -L | wc -l)
[ -n "$gpus" ] || gpus=$(seq 1 "$total" | awk '$1 == 1 || $1 % 2 == 0' | tr '\n' ' ')
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OZGEMM_HOOK_LOG=summary
status=0

weak_size() {  # n1 * sqrt(P), a multiple of 1024 (and so of P)
  python3 -c "import math; print(max(1024, round($weak * math.sqrt($1) / 1024) * 1024))"
}

run() {  # run TAG COMMAND...: the command's output to $out/TAG.log, its status counted
  local tag="$1"; shift
  echo "== $tag: $*"
  if ! timeout 540 "$@" > "$out/$tag.log" 2>&1; then
    echo "FAILED (see $out/$tag.log)"; status=1
  fi
  grep -E "^(PASS|FAIL)|^rank|^hook over" "$out/$tag.log" | cut -c1-400
}

for p in $gpus; do
  visible=$(seq -s, 0 $((p - 1)))
  for scaling in strong weak; do
    if [ $scaling = strong ]; then n=$strong; else n=$(weak_size "$p"); fi
    for engine in $engines; do
      case $engine in
        dtensor)
          for layout in rows inner; do
            run "dtensor-$layout-$scaling-p$p" env CUDA_VISIBLE_DEVICES=$visible LD_PRELOAD="$hook" \
              torchrun --standalone --nproc-per-node "$p" "$here/examples/distributed/dtensor_matmul.py" \
              --size "$n" --layout $layout --rounds "$rounds" --json "$json" --tag "$scaling"
          done ;;
        dask)
          run "dask-$scaling-p$p" env CUDA_VISIBLE_DEVICES=$visible LD_PRELOAD="$hook" \
            python3 "$here/examples/distributed/dask_cupy_matmul.py" --size "$n" --rounds "$rounds" \
            --json "$json" --tag "$scaling" ;;
        *) echo "unknown engine $engine" >&2; exit 2 ;;
      esac
    done
  done
done
python3 "$here/bench/distributed/summarize.py" "$json" | tee "$out/distributed.md"
exit $status
