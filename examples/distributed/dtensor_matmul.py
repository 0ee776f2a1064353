"""examples/distributed/dtensor_matmul.py — PyTorch DTensor float64 matmul with ozgemm underneath
(docs/distributed.md, "PyTorch DTensor"). One process per GPU:

  LD_PRELOAD=$PWD/build/dropin-dist/libozgemm_hook.so torchrun --nproc-per-node 4 \
      examples/distributed/dtensor_matmul.py --size 16384

Layouts (--layout):
  rows   A Shard(0) @ B Replicate() -> C Shard(0): each rank's local product is (n/P) x n x n, no
         communication in the product.
  inner  A Shard(1) @ B Shard(0) -> C Partial, redistributed to Replicate(): each rank's local product is
         n x n x (n/P), then an all-reduce of C (n^2 doubles) over NCCL.

Each round runs the same distributed matmul with the hook switched off (cuBLAS) and on (ozgemm), in
rotated order; rank 0 prints the medians and, with --json, appends one JSON line. The results are
checked on sampled entries against the exact products (ozcheck.py): ozgemm's within the contract
min(4, k) u |A||B| for `rows`; for `inner` each rank's partial product is within min(4, n/P) u |A_r||B_r|
and the all-reduce adds at most P - 1 roundings, so the bound there is (min(4, n/P) + P - 1) u |A||B|.
The native result's ratio to the same bound is printed beside it (the engine's own error). Each rank
prints the hook's counters of the "on" runs.
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Replicate, Shard

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ozcheck  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--size", type=int, default=8192, help="global size: A, B and C are n x n float64")
p.add_argument("--layout", choices=["rows", "inner"], default="rows")
p.add_argument("--rounds", type=int, default=5, help="timed rounds (each: one product off, one on)")
p.add_argument("--samples", type=int, default=8, help="sampled rows (and columns) per rank for the check")
p.add_argument("--seed", type=int, default=1)
p.add_argument("--json", help="append one JSON line (rank 0) here")
p.add_argument("--tag", default="", help="label for the JSON line")
args = p.parse_args()

local_rank = int(os.environ.get("LOCAL_RANK", "0"))
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
rank, world = dist.get_rank(), dist.get_world_size()
mesh = init_device_mesh("cuda", (world,))
n = args.size
if n % world:
    sys.exit("--size must be a multiple of the number of ranks (%d)" % world)
part = n // world
hook = ozcheck.DropIn("hook")
if rank == 0 and not hook.loaded:
    print("dtensor_matmul: libozgemm_hook.so is not in LD_PRELOAD: both runs are native cuBLAS", flush=True)

# Each rank makes only its own shards (a replicated B: the same generator state on every rank), so
# no rank ever holds a whole A.
gen = torch.Generator(device="cuda")


def normal(rows, cols, stream_id):
    gen.manual_seed(args.seed * 1000003 + stream_id)
    return torch.randn(rows, cols, generator=gen, dtype=torch.float64, device="cuda")


if args.layout == "rows":
    A = DTensor.from_local(normal(part, n, 1 + rank), mesh, [Shard(0)], run_check=False)
    B = DTensor.from_local(normal(n, n, 0), mesh, [Replicate()], run_check=False)
else:
    A = DTensor.from_local(normal(n, part, 1 + rank), mesh, [Shard(1)], run_check=False)
    B = DTensor.from_local(normal(part, n, 100 + rank), mesh, [Shard(0)], run_check=False)


def product():
    C = A @ B
    if args.layout == "inner":
        C = C.redistribute(mesh, [Replicate()])  # Partial -> Replicate: the all-reduce
    return C


def timed(on):
    hook.set_enabled(on)
    torch.cuda.synchronize()
    dist.barrier()
    t0 = ozcheck.wall()
    C = product()
    C.to_local()
    torch.cuda.synchronize()
    dist.barrier()
    return ozcheck.wall() - t0


# Warm-up (workspaces, NCCL communicators, cuBLAS handles) in both modes, then the counters of the
# timed "on" runs only.
for on in (False, True):
    timed(on)
hook.reset()
times = ozcheck.rotated_rounds(args.rounds, timed)
stats = hook.stats()

# The check: the result of each mode on sampled entries, against the exact products.
# "rows": each rank samples its own rows; "inner": every rank the same rows (their k-slices are gathered).
rows_local = ozcheck.sample_indices(part if args.layout == "rows" else n, args.samples,
                                    args.seed + (7 * rank if args.layout == "rows" else 0))
cols = ozcheck.sample_indices(n, args.samples, args.seed + 3)
results = {}
for on in (False, True):
    hook.set_enabled(on)
    C = product().to_local()
    results[on] = C[torch.as_tensor(rows_local, device="cuda")][:, torch.as_tensor(cols, device="cuda")].cpu().numpy()
    del C
hook.set_enabled(True)
if args.layout == "rows":
    a_rows = A.to_local()[torch.as_tensor(rows_local, device="cuda")].cpu().numpy()
    b_cols = B.to_local()[:, torch.as_tensor(cols, device="cuda")].cpu().numpy()
    const = ozcheck.fp64_constant(n)
else:
    # The sampled rows of A and columns of B, gathered along k (rank r holds k-slice r).
    a_part = A.to_local()[torch.as_tensor(rows_local, device="cuda")].contiguous()
    b_part = B.to_local()[:, torch.as_tensor(cols, device="cuda")].contiguous()
    a_all = [torch.empty_like(a_part) for _ in range(world)]
    b_all = [torch.empty_like(b_part) for _ in range(world)]
    dist.all_gather(a_all, a_part)
    dist.all_gather(b_all, b_part)
    a_rows = torch.cat(a_all, dim=1).cpu().numpy()
    b_cols = torch.cat(b_all, dim=0).cpu().numpy()
    const = ozcheck.fp64_constant(part) + world - 1
exact, abs_product = ozcheck.exact_products(a_rows, b_cols)
ratio_on = ozcheck.contract_ratio(results[True], exact, abs_product, const)
ratio_off = ozcheck.contract_ratio(results[False], exact, abs_product, const)

mine = {"rank": rank, "device": torch.cuda.current_device(), "ratio_on": ratio_on, "ratio_off": ratio_off,
        "stats": stats}
everyone = [None] * world
dist.all_gather_object(everyone, mine)
if rank == 0:
    flop = 2.0 * n * n * n
    t_off, t_on = ozcheck.median(times["off"]), ozcheck.median(times["on"])
    ok = all(e["ratio_on"] <= 1.0 for e in everyone) and all(e["stats"].get("failed", 0) == 0 for e in everyone)
    for e in everyone:
        print("rank %d (device %d): error/bound hook on %.3g, off %.3g; hook: %s" % (
            e["rank"], e["device"], e["ratio_on"], e["ratio_off"], ozcheck.counters_line(e["stats"])), flush=True)
    print("%s dtensor %s n=%d ranks=%d: native %.1f TFLOP/s, ozgemm %.1f TFLOP/s (x%.2f), medians of %d rounds; "
          "bound const %d" % ("PASS" if ok else "FAIL", args.layout, n, world, ozcheck.tflops(flop, t_off),
                              ozcheck.tflops(flop, t_on), t_off / t_on, args.rounds, const), flush=True)
    ozcheck.write_json(args.json, {
        "engine": "dtensor", "layout": args.layout, "n": n, "ranks": world, "tag": args.tag,
        "device_name": torch.cuda.get_device_name(), "rounds": args.rounds, "seconds_off": times["off"],
        "seconds_on": times["on"], "tflops_off": ozcheck.tflops(flop, t_off), "tflops_on": ozcheck.tflops(flop, t_on),
        "speedup": t_off / t_on, "bound_constant": const, "max_ratio_on": max(e["ratio_on"] for e in everyone),
        "max_ratio_off": max(e["ratio_off"] for e in everyone), "ok": ok, "hook_loaded": hook.loaded,
        "intercepted": [e["stats"].get("intercepted", 0) for e in everyone],
        "declined_by_reason": [{k: v for k, v in e["stats"].get("declined_by_reason", {}).items() if v}
                               for e in everyone]})
    exit_code = 0 if ok else 1
else:
    exit_code = 0
dist.destroy_process_group()
sys.exit(exit_code)
