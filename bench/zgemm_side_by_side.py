"""bench/zgemm_side_by_side.py — complex FP64 GEMM, native cuBLAS ZGEMM beside ozgemmZgemm, one process.

    LD_LIBRARY_PATH=<dir of libozgemm.so.0> python3 bench/zgemm_side_by_side.py N [MODULI,...] [PHI] [ROUNDS]

Same inputs for every method (real and imaginary parts (U(0,1) - 0.5) * exp(PHI * N(0,1)), PHI < 0:
N(0,1)); native ZGEMM through CuPy's matmul (cublasGemmEx CUDA_C_64F / cublasZgemm), ozgemm through the C
API (ctypes: ozgemmZgemm, FIXED mode at each moduli count, variant AUTO, then FP64 mode, the library's
default). Timing: CUDA events, 2 warm-up calls, ITERS calls per method per round, the method order
rotated each round (the card's power-limit clock swing); the median over rounds of each round's median.
TFLOPS count 8 n^3 flops. Error: componentwise max |C - AB| / (|A||B|) over SAMPLE rows against a
float128 (numpy longdouble) product of those rows. One JSON line per method on stdout.
"""
from __future__ import annotations

import ctypes
import json
import statistics
import sys

import cupy as cp
import numpy as np

N = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
MODULI = [int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "16").split(",")]
PHI = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
ROUNDS = int(sys.argv[4]) if len(sys.argv) > 4 else 3
ITERS, SAMPLE = 5, 4


class Complex(ctypes.Structure):
    _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double)]


lib = ctypes.CDLL("libozgemm.so.0")
handle = ctypes.c_void_p()
assert lib.ozgemmCreate(ctypes.byref(handle)) == 0, "ozgemmCreate failed"


class CallInfo(ctypes.Structure):  # ozgemmCallInfo_t (include/ozgemm/ozgemm.h)
    _fields_ = [("scheme", ctypes.c_int), ("moduli", ctypes.c_int), ("variant", ctypes.c_int),
                ("slices", ctypes.c_int), ("bound", ctypes.c_double), ("target", ctypes.c_double),
                ("fell_back", ctypes.c_int), ("reason", ctypes.c_char * 160)]


def part(rng, shape):
    if PHI < 0:
        return rng.standard_normal(shape)
    return (rng.random(shape) - 0.5) * np.exp(PHI * rng.standard_normal(shape))


rng = np.random.default_rng(20261126)
a_h = part(rng, (N, N)) + 1j * part(rng, (N, N))
b_h = part(rng, (N, N)) + 1j * part(rng, (N, N))
# Column-major device buffers for the C API: A^T's C-order buffer is A in column-major.
A = cp.asarray(a_h)
B = cp.asarray(b_h)
A_f, B_f = cp.asfortranarray(A), cp.asfortranarray(B)
C_f = cp.empty((N, N), dtype=cp.complex128, order="F")
one, zero = Complex(1.0, 0.0), Complex(0.0, 0.0)
stream = cp.cuda.get_current_stream()
lib.ozgemmSetStream(handle, ctypes.c_void_p(stream.ptr))


def run_ozgemm(moduli: int):
    def f():
        lib.ozgemmSetModuli(handle, moduli)  # 0: FP64 mode (ozgemmSetAccuracy below)
        if moduli == 0:
            lib.ozgemmSetAccuracy(handle, 0)
        st = lib.ozgemmZgemm(handle, 0, 0, N, N, N, ctypes.byref(one), ctypes.c_void_p(A_f.data.ptr), N,
                             ctypes.c_void_p(B_f.data.ptr), N, ctypes.byref(zero), ctypes.c_void_p(C_f.data.ptr), N)
        assert st == 0, f"ozgemmZgemm status {st}"
        return C_f
    return f


methods = {"native_zgemm": lambda: cp.matmul(A, B)}
for m in MODULI:
    methods[f"ozgemm_fixed_{m}"] = run_ozgemm(m)
methods["ozgemm_fp64_mode"] = run_ozgemm(0)

rows = np.arange(SAMPLE) * (N // SAMPLE)
ref = a_h[rows].astype(np.clongdouble) @ b_h.astype(np.clongdouble)
absprod = np.abs(a_h[rows]) @ np.abs(b_h)


def error(c) -> float:
    c_rows = cp.asnumpy(c[rows]) if c.flags.c_contiguous else cp.asnumpy(c)[rows]
    return float(np.max(np.abs(c_rows.astype(np.clongdouble) - ref) / absprod))


times = {k: [] for k in methods}
errs, infos = {}, {}
names = list(methods)
start, end = cp.cuda.Event(), cp.cuda.Event()
for r in range(ROUNDS):
    order = names[r % len(names):] + names[:r % len(names)]
    for k in order:
        f = methods[k]
        for _ in range(2):
            f()
        ts = []
        for _ in range(ITERS):
            start.record(stream)
            c = f()
            end.record(stream)
            end.synchronize()
            ts.append(cp.cuda.get_elapsed_time(start, end))
        times[k].append(statistics.median(ts))
        if k not in errs:
            errs[k] = error(c)
            if k != "native_zgemm":
                info = CallInfo()
                lib.ozgemmGetLastCallInfo(handle, ctypes.byref(info))
                infos[k] = info.reason.decode()
native = statistics.median(times["native_zgemm"])
for k in names:
    ms = statistics.median(times[k])
    print(json.dumps({"n": N, "phi": PHI, "method": k, "ms": ms, "tflops": 8 * N**3 / (ms * 1e9),
                      "speedup_vs_native": native / ms, "rounds_ms": times[k], "componentwise": errs[k],
                      "ran": infos.get(k, "cuBLAS ZGEMM (CuPy matmul)")}))
lib.ozgemmDestroy(handle)
