#!/usr/bin/env python3
"""python/tests/bench_matmul.py — n x n float64 ozgemm.matmul beside the framework's own matmul
(cupy.matmul, torch.matmul: cuBLAS DGEMM) on CuPy arrays and PyTorch tensors.

Per call: the median time of --iters runs after --warmup runs (CUDA events on the current
stream), TFLOPS (2 n^3 / time), what ozgemm ran (variant, slice count), and the errors against a
double-double reference on a sampled block (--sample rows x --sample columns of C, computed exactly
from the same rows of A and columns of B; docs/guide.md defines the three errors), plus the
normwise difference to the native float64 result over the whole matrix.

  python3 python/tests/bench_matmul.py [--n 4096] [--iters 10] [--out DIR]

Writes DIR/python_matmul_<n>.json (DIR: --out, else $OUT, else nothing) and prints a table.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from typing import Any, Callable, Dict, List

import numpy as np

import ozgemm
from ozgemm import reference


def timer(fw: str, mod: Any) -> Callable[[Callable[[], Any], int, int], List[float]]:
    def run(fn: Callable[[], Any], warmup: int, iters: int) -> List[float]:
        for _ in range(warmup):
            fn()
        times = []
        for _ in range(iters):
            if fw == "cupy":
                e0, e1 = mod.cuda.Event(), mod.cuda.Event()
                e0.record()
                fn()
                e1.record()
                e1.synchronize()
                times.append(mod.cuda.get_elapsed_time(e0, e1))
            else:
                e0, e1 = mod.cuda.Event(enable_timing=True), mod.cuda.Event(enable_timing=True)
                e0.record()
                fn()
                e1.record()
                e1.synchronize()
                times.append(e0.elapsed_time(e1))
        return times
    return run


def load(fw: str) -> Any:
    try:
        if fw == "cupy":
            import cupy

            cupy.cuda.runtime.getDeviceCount()
            return cupy
        import torch

        return torch if torch.cuda.is_available() else None
    except Exception as e:  # not installed or no GPU
        print(f"{fw}: unavailable ({e})")
        return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--sample", type=int, default=256, help="rows and columns of the exactly checked block")
    ap.add_argument("--slices", default="7,8", help="FIXED-mode slice counts to time besides FP64 mode")
    ap.add_argument("--frameworks", default="cupy,torch")
    ap.add_argument("--out", default=os.environ.get("OUT"))
    args = ap.parse_args()

    d = ozgemm.info()
    dev = d["devices"][0]["name"] if d.get("devices") else "none"
    print(f"ozgemm {ozgemm.__version__}; device: {dev}; build: {d.get('build')}")
    if not d.get("usable"):
        print(f"no usable GPU: {d.get('reason')}")
        return 77

    n = args.n
    rng = np.random.default_rng(2026)
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, n))
    rows = np.sort(rng.choice(n, size=min(args.sample, n), replace=False))
    cols = np.sort(rng.choice(n, size=min(args.sample, n), replace=False))
    a_s, b_s = a[rows, :], b[:, cols]
    flops = 2.0 * n**3
    results: List[Dict[str, Any]] = []
    for fw in [f for f in args.frameworks.split(",") if f]:
        mod = load(fw)
        if mod is None:
            continue
        if fw == "cupy":
            A, B = mod.asarray(a), mod.asarray(b)
            to_host = mod.asnumpy
            native = lambda: mod.matmul(A, B)  # noqa: E731
            nname = "cupy.matmul"
            norm = lambda x: float(mod.linalg.norm(x))  # noqa: E731
            ri, ci = mod.asarray(rows), mod.asarray(cols)
        else:
            A, B = mod.from_numpy(a).cuda(), mod.from_numpy(b).cuda()
            to_host = lambda x: x.cpu().numpy()  # noqa: E731
            native = lambda: mod.matmul(A, B)  # noqa: E731
            nname = "torch.matmul"
            norm = lambda x: float(mod.linalg.norm(x))  # noqa: E731
            ri, ci = mod.as_tensor(rows, device=A.device), mod.as_tensor(cols, device=A.device)
        run = timer(fw, mod)
        calls = [(nname, native, None)]
        calls.append(("ozgemm.matmul fp64", lambda: ozgemm.matmul(A, B), "fp64"))
        for s in [int(x) for x in args.slices.split(",") if x]:
            calls.append((f"ozgemm.matmul slices={s}", (lambda s=s: ozgemm.matmul(A, B, slices=s)), f"fixed {s}"))
        c_native = native()
        for name, fn, mode in calls:
            times = run(fn, args.warmup, args.iters)
            c = fn()
            ran = ozgemm.last_call_info() if mode else None
            ms = statistics.median(times)
            e = reference.errors(to_host(c[ri][:, ci]), a_s, b_s)
            diff = norm(c - c_native) / norm(c_native)
            r = {"framework": fw, "call": name, "n": n, "ms_median": ms, "ms_min": min(times), "tflops": flops / ms / 1e9,
                 "normwise": e["normwise"], "componentwise": e["componentwise"], "elementwise": e["elementwise"],
                 "normwise_vs_native": diff,
                 "ran": None if ran is None else {"variant": ran.variant, "slices": ran.slices, "fell_back": ran.fell_back,
                                                  "reason": ran.reason}}
            results.append(r)
            what = "" if ran is None else f"  [{ran.variant}, {ran.slices} slices{', fell back' if ran.fell_back else ''}]"
            print(f"{fw:5s} {name:26s} {ms:9.3f} ms {r['tflops']:7.2f} TFLOPS  normwise {e['normwise']:.2e}  "
                  f"componentwise {e['componentwise']:.2e}  vs native {diff:.2e}{what}", flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, f"python_matmul_{n}.json")
        with open(path, "w") as f:
            json.dump({"device": dev, "info": d, "sample": args.sample, "iters": args.iters, "results": results}, f,
                      indent=1)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
