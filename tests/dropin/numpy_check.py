"""tests/dropin/numpy_check.py — numpy float64 matmul through a preloaded libozgemm_blas.so.

Run by run_numpy.sh (CPU test: the forwarding path) and run_device.sh (the GPU offload) under a
numpy that uses the system libblas.so.3 (Debian's python3-numpy, not a pip wheel). Prints one JSON
line per case and exits non-zero when a case breaks its expectation:
  --mode forward: the library saw the cblas_dgemm calls, ran none on the GPU, and the result is
                  bit-for-bit the system BLAS's (the library switched off at run time gives the reference);
  --mode offload: every case was run by ozgemm on the GPU; error against the system BLAS (on
                  --rows leading rows, to keep the CPU reference short) printed, at FP64 level.
"""
import argparse
import ctypes
import json
import sys
import time

import numpy as np

p = argparse.ArgumentParser()
p.add_argument("--lib", required=True, help="the preloaded libozgemm_blas.so (its counters)")
p.add_argument("--n", type=int, default=256)
p.add_argument("--rows", type=int, default=256, help="rows of the CPU reference")
p.add_argument("--mode", choices=["forward", "offload"], required=True)
args = p.parse_args()

lib = ctypes.CDLL(args.lib)  # the preloaded copy (same file: the loader returns it)
lib.ozgemmBlasCounter.restype = ctypes.c_ulonglong
lib.ozgemmBlasCounter.argtypes = [ctypes.c_char_p]
lib.ozgemmBlasSetEnabled.restype = ctypes.c_int
lib.ozgemmBlasSetEnabled.argtypes = [ctypes.c_int]


def counter(name):
    return int(lib.ozgemmBlasCounter(name.encode()))


rng = np.random.default_rng(12)
n = args.n
A = rng.standard_normal((n, n))
B = rng.standard_normal((n, n))
R = min(n, args.rows)
bad = 0
cases = [
    ("A @ B", lambda: A @ B, lambda: A[:R] @ B),
    ("np.dot(A, B)", lambda: np.dot(A, B), lambda: np.dot(A[:R], B)),
    ("A.T @ B (transposed operand)", lambda: A.T @ B, lambda: A.T[:R] @ B),
    ("A[1:, 1:] @ B[1:, :-1] (views, ld > cols)", lambda: A[1:, 1:] @ B[1:, :-1], lambda: A[1:R + 1, 1:] @ B[1:, :-1]),
]
for name, run, ref in cases:
    lib.ozgemmBlasResetStats()
    t0 = time.perf_counter()
    C = run()
    t_run = time.perf_counter() - t0
    seen = counter("api:cblas_dgemm") + counter("api:dgemm_")
    intercepted, emulated = counter("intercepted"), counter("emulated")
    native = counter("ozgemm_native")
    prev = lib.ozgemmBlasSetEnabled(0)
    t0 = time.perf_counter()
    Cref = ref()
    t_ref = time.perf_counter() - t0
    lib.ozgemmBlasSetEnabled(prev)
    rows = Cref.shape[0]
    err = float(np.max(np.abs(C[:rows] - Cref)) / np.max(np.abs(Cref)))
    res = {"case": name, "n": n, "mode": args.mode, "calls_seen": seen, "intercepted": intercepted,
           "emulated": emulated, "ozgemm_native": native, "max_rel_err_vs_system_blas": err,
           "reference_rows": rows, "time_s": round(t_run, 4), "system_blas_time_for_rows_s": round(t_ref, 4)}
    ok = seen >= 1
    if args.mode == "forward":
        ok = ok and intercepted == 0 and err == 0.0
    else:
        ok = ok and intercepted >= 1 and err <= 1e-12
    res["ok"] = ok
    bad += not ok
    print(json.dumps(res), flush=True)
sys.exit(1 if bad else 0)
