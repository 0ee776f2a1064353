"""examples/distributed/dask_cupy_matmul.py — Dask array matmul on CuPy chunks, one Dask worker per GPU
(dask_cuda.LocalCUDACluster), with ozgemm underneath (docs/distributed.md, "Dask + CuPy"):

  export LD_PRELOAD=$PWD/build/dropin-dist/libozgemm_hook.so    # before Python starts: the workers inherit it
  python3 examples/distributed/dask_cupy_matmul.py --size 16384 --chunk 8192

Every chunk product of da.matmul is a CuPy matmul (cublasDgemm / cublasGemmEx in the worker that holds
the chunks); the partial products along k are summed by Dask. The script first asks every worker
(client.run) whether libozgemm_hook.so is mapped in it and on which GPU it runs, and stops when a
worker lacks it. Each round computes C = A @ B with the hook switched off in every worker, then on (rotated
order); the medians, the counters summed over the workers and the check on sampled entries (ozcheck.py:
each chunk product within min(4, chunk) u, then k/chunk - 1 additions: the bound's constant is
min(4, chunk) + k/chunk - 1) are printed, and one JSON line with --json.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ozcheck  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--size", type=int, default=8192, help="global size: A, B and C are n x n float64")
p.add_argument("--chunk", type=int, default=0, help="chunk edge (default: n / number of GPUs)")
p.add_argument("--workers", type=int, default=0, help="workers (default: one per visible GPU)")
p.add_argument("--rounds", type=int, default=3)
p.add_argument("--samples", type=int, default=8)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--json", help="append one JSON line here")
p.add_argument("--tag", default="")
args = p.parse_args()


def worker_probe():
    """In a worker: whether the hook is mapped, the GPU this worker uses, its counters."""
    import cupy
    maps = open("/proc/self/maps").read()
    d = ozcheck.DropIn("hook")
    return {"hook_mapped": "libozgemm_hook.so" in maps, "ld_preload": os.environ.get("LD_PRELOAD", ""),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
            "device_pci": cupy.cuda.Device().pci_bus_id, "stats": d.stats()}


def worker_add_path(path):
    """In a worker: lets it import ozcheck (the functions below refer to it by module name)."""
    if path not in sys.path:
        sys.path.insert(0, path)


def worker_stats():
    return ozcheck.DropIn("hook").stats()


def worker_set_enabled(on):
    ozcheck.DropIn("hook").set_enabled(on)


def worker_reset():
    ozcheck.DropIn("hook").reset()


def sum_stats(per_worker):
    total = {}
    for st in per_worker:
        for key in ("calls", "intercepted", "declined", "failed", "emulated_ozaki1", "emulated_ozaki2",
                    "ozgemm_native"):
            total[key] = total.get(key, 0) + st.get(key, 0)
        for group in ("declined_by_reason", "calls_by_api"):
            g = total.setdefault(group, {})
            for k, v in st.get(group, {}).items():
                g[k] = g.get(k, 0) + v
    return total


def main():
    import cupy as cp
    import dask
    import dask.array as da
    from dask.distributed import Client, wait
    from dask_cuda import LocalCUDACluster

    if not ozcheck.DropIn("hook").loaded:
        print("dask_cupy_matmul: libozgemm_hook.so is not in LD_PRELOAD: both runs are native cuBLAS", flush=True)
    cluster_args = {"dashboard_address": None}
    if args.workers:
        cluster_args["n_workers"] = args.workers
    with LocalCUDACluster(**cluster_args) as cluster, Client(cluster) as client:
        # The workers' Python path must find ozcheck (a plain module next to this script).
        client.run(worker_add_path, os.path.dirname(os.path.abspath(__file__)))
        probes = client.run(worker_probe)
        workers = len(probes)
        for addr, pr in sorted(probes.items()):
            print("worker %s: hook %s, CUDA_VISIBLE_DEVICES=%s, GPU %s" % (
                addr, "mapped" if pr["hook_mapped"] else "NOT mapped", pr["cuda_visible_devices"], pr["device_pci"]),
                flush=True)
        if ozcheck.DropIn("hook").loaded and not all(pr["hook_mapped"] for pr in probes.values()):
            sys.exit("dask_cupy_matmul: a worker lacks libozgemm_hook.so (export LD_PRELOAD before Python starts)")

        n = args.size
        chunk = args.chunk or max(1, n // workers)
        rng = da.random.default_rng(cp.random.default_rng(args.seed))  # CuPy chunks
        A = rng.standard_normal((n, n), chunks=(chunk, chunk), dtype=np.float64).persist()
        B = rng.standard_normal((n, n), chunks=(chunk, chunk), dtype=np.float64).persist()
        wait([A, B])

        def timed(on):
            client.run(worker_set_enabled, on)
            t0 = ozcheck.wall()
            C = (A @ B).persist()
            wait(C)
            dt = ozcheck.wall() - t0
            del C
            return dt

        for on in (False, True):  # warm-up
            timed(on)
        client.run(worker_reset)
        times = ozcheck.rotated_rounds(args.rounds, timed)
        stats = list(client.run(worker_stats).values())

        rows = ozcheck.sample_indices(n, args.samples, args.seed + 5)
        cols = ozcheck.sample_indices(n, args.samples, args.seed + 3)
        a_rows = cp.asnumpy(A[rows, :].compute())
        b_cols = cp.asnumpy(B[:, cols].compute())
        results = {}
        for on in (False, True):
            client.run(worker_set_enabled, on)
            results[on] = cp.asnumpy((A @ B)[rows, :][:, cols].compute())
        client.run(worker_set_enabled, True)
        const = ozcheck.fp64_constant(chunk) + (n + chunk - 1) // chunk - 1
        exact, abs_product = ozcheck.exact_products(a_rows, b_cols)
        ratio_on = ozcheck.contract_ratio(results[True], exact, abs_product, const)
        ratio_off = ozcheck.contract_ratio(results[False], exact, abs_product, const)

    total = sum_stats(stats)
    flop = 2.0 * n * n * n
    t_off, t_on = ozcheck.median(times["off"]), ozcheck.median(times["on"])
    ok = ratio_on <= 1.0 and total.get("failed", 0) == 0
    print("hook over %d workers: %s" % (workers, ozcheck.counters_line({**total, "gemms": 0})), flush=True)
    print("%s dask-cupy n=%d chunk=%d workers=%d: error/bound hook on %.3g, off %.3g (const %d); native %.1f TFLOP/s,"
          " ozgemm %.1f TFLOP/s (x%.2f), medians of %d rounds" % (
              "PASS" if ok else "FAIL", n, chunk, workers, ratio_on, ratio_off, const, ozcheck.tflops(flop, t_off),
              ozcheck.tflops(flop, t_on), t_off / t_on, args.rounds), flush=True)
    ozcheck.write_json(args.json, {
        "engine": "dask-cupy", "n": n, "chunk": chunk, "ranks": workers, "tag": args.tag, "rounds": args.rounds,
        "seconds_off": times["off"], "seconds_on": times["on"], "tflops_off": ozcheck.tflops(flop, t_off),
        "tflops_on": ozcheck.tflops(flop, t_on), "speedup": t_off / t_on, "bound_constant": const,
        "max_ratio_on": ratio_on, "max_ratio_off": ratio_off, "ok": ok, "intercepted": total.get("intercepted", 0),
        "declined_by_reason": {k: v for k, v in total.get("declined_by_reason", {}).items() if v},
        "dask_version": dask.__version__})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
