"""examples/distributed/cublasmp_matmul.py — cuBLASMp's distributed FP64 matmul (cublasMpMatmul, through
nvmath-python's nvmath.distributed.linalg.advanced.Matmul) with ozgemm underneath (docs/distributed.md,
"cuBLASMp"). One MPI rank per GPU:

  mpirun -n 4 -x LD_PRELOAD=$PWD/build/dropin-dist/libozgemm_hook.so \
      python3 examples/distributed/cublasmp_matmul.py --size 16384

Layout (nvmath-python's Slab distributions, cuBLASMp's column-major view): A (m x k) and B (k x n) are
split along k, C (m x n) along its columns: each rank multiplies its k-slice and cuBLASMp reduce-scatters
the partial products (its GEMM + ReduceScatter algorithm). Which cuBLAS calls run the local products
is cuBLASMp's choice: libcublasmp.so imports both cublasGemmEx (which the hook takes) and
cublasLtMatmul (which it does not); the counters printed per rank (calls by entry point) say which
this build runs. The check on sampled entries uses the bound constant min(4, k/P) + P - 1 (each
k-slice's product, then P - 1 additions), against the exact products (ozcheck.py).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ozcheck  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--size", type=int, default=8192, help="global size: m = n = k")
p.add_argument("--rounds", type=int, default=5)
p.add_argument("--samples", type=int, default=8)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--json", help="append one JSON line (rank 0) here")
p.add_argument("--tag", default="")
args = p.parse_args()

import cupy as cp  # noqa: E402
from mpi4py import MPI  # noqa: E402
import nvmath.distributed  # noqa: E402
from nvmath.distributed.distribution import Slab  # noqa: E402

comm = MPI.COMM_WORLD
rank, world = comm.Get_rank(), comm.Get_size()
device_id = rank % cp.cuda.runtime.getDeviceCount()
cp.cuda.Device(device_id).use()
nvmath.distributed.initialize(device_id, comm, backends=["nvshmem", "nccl"])  # cuBLASMp needs both
hook = ozcheck.DropIn("hook")
if rank == 0 and not hook.loaded:
    print("cublasmp_matmul: libozgemm_hook.so is not in LD_PRELOAD: both runs are native", flush=True)

n = args.size
if n % world:
    sys.exit("--size must be a multiple of the number of ranks (%d)" % world)
part = n // world
rows_split, cols_split = Slab.X, Slab.Y
# Row-major buffers whose transposes are the column-major operands: a_buf (k x m) split by rows is
# A = a_buf.T (m x k) split by columns (k); b_buf (n x k) split by columns is B = b_buf.T (k x n) split
# by rows (k).
rng = cp.random.default_rng(args.seed * 1000003 + rank)
a_buf = rng.standard_normal(rows_split.shape(rank, (n, n)), dtype=cp.float64)  # (k/P) x m
b_buf = rng.standard_normal(cols_split.shape(rank, (n, n)), dtype=cp.float64)  # n x (k/P)
A, B = a_buf.T, b_buf.T  # (m x k/P) and (k/P x n), column-major
distributions = [cols_split, rows_split, cols_split]  # A by k, B by k, C by columns

mm = nvmath.distributed.linalg.advanced.Matmul(A, B, distributions=distributions)
mm.plan()
stream = cp.cuda.get_current_stream()


def timed(on):
    hook.set_enabled(on)
    stream.synchronize()
    comm.Barrier()
    t0 = ozcheck.wall()
    C = mm.execute()
    stream.synchronize()
    comm.Barrier()
    dt = ozcheck.wall() - t0
    del C
    return dt


for on in (False, True):  # warm-up
    timed(on)
hook.reset()
times = ozcheck.rotated_rounds(args.rounds, timed)
stats = hook.stats()

# The check: every rank takes the same sampled rows I and columns J; the sampled rows of A and
# columns of B are gathered along k; each rank checks the columns of J it holds in C.
I = ozcheck.sample_indices(n, args.samples, args.seed + 5)
J = ozcheck.sample_indices(n, args.samples, args.seed + 3)
a_rows = np.concatenate(comm.allgather(cp.asnumpy(A[cp.asarray(I), :])), axis=1)
b_cols = np.concatenate(comm.allgather(cp.asnumpy(B[:, cp.asarray(J)])), axis=0)
mine = J[(J >= rank * part) & (J < (rank + 1) * part)]
pick = np.searchsorted(J, mine)
results = {}
for on in (False, True):
    hook.set_enabled(on)
    C = mm.execute()  # m x (n/P), column-major: this rank's columns
    stream.synchronize()
    results[on] = cp.asnumpy(C[cp.asarray(I)][:, cp.asarray(mine - rank * part)])
    del C
hook.set_enabled(True)
const = ozcheck.fp64_constant(part) + world - 1
if len(mine):
    exact, abs_product = ozcheck.exact_products(a_rows, b_cols[:, pick])
    ratio_on = ozcheck.contract_ratio(results[True], exact, abs_product, const)
    ratio_off = ozcheck.contract_ratio(results[False], exact, abs_product, const)
else:
    ratio_on = ratio_off = 0.0
mm.free()

everyone = comm.gather({"rank": rank, "device": device_id, "ratio_on": ratio_on, "ratio_off": ratio_off,
                        "stats": stats}, root=0)
exit_code = 0
if rank == 0:
    flop = 2.0 * n * n * n
    t_off, t_on = ozcheck.median(times["off"]), ozcheck.median(times["on"])
    ok = all(e["ratio_on"] <= 1.0 and e["stats"].get("failed", 0) == 0 for e in everyone)
    for e in everyone:
        print("rank %d (device %d): error/bound hook on %.3g, off %.3g; hook: %s" % (
            e["rank"], e["device"], e["ratio_on"], e["ratio_off"], ozcheck.counters_line(e["stats"])), flush=True)
    seen = sum(e["stats"].get("calls", 0) for e in everyone)
    if hook.loaded and seen == 0:
        print("note: the hook saw no cuBLAS GEMM call: this cuBLASMp runs its local products through cublasLt",
              flush=True)
    print("%s cublasmp n=%d ranks=%d: native %.1f TFLOP/s, with the hook %.1f TFLOP/s (x%.2f), medians of %d rounds;"
          " bound const %d" % ("PASS" if ok else "FAIL", n, world, ozcheck.tflops(flop, t_off),
                               ozcheck.tflops(flop, t_on), t_off / t_on, args.rounds, const), flush=True)
    ozcheck.write_json(args.json, {
        "engine": "cublasmp", "n": n, "ranks": world, "tag": args.tag, "rounds": args.rounds,
        "seconds_off": times["off"], "seconds_on": times["on"], "tflops_off": ozcheck.tflops(flop, t_off),
        "tflops_on": ozcheck.tflops(flop, t_on), "speedup": t_off / t_on, "bound_constant": const,
        "max_ratio_on": max(e["ratio_on"] for e in everyone), "max_ratio_off": max(e["ratio_off"] for e in everyone),
        "ok": ok, "hook_calls_seen": seen, "intercepted": [e["stats"].get("intercepted", 0) for e in everyone],
        "calls_by_api": [{k: v for k, v in e["stats"].get("calls_by_api", {}).items() if v} for e in everyone]})
    exit_code = 0 if ok else 1
nvmath.distributed.finalize()
sys.exit(exit_code)
