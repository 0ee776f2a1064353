"""bench/syrk_side_by_side.py — SYRK and SYMM, native cuBLAS beside ozgemm's symmetric routines, one process.

    LD_LIBRARY_PATH=<dir of libozgemm.so.0> python3 bench/syrk_side_by_side.py [N,...] [MODULI] [PHI] [ROUNDS]

For each N (default 8192,16384; k = N): C = A A^T (lower, trans N) with native cublasDsyrk_v2,
ozgemmDsyrk in FP64 mode (the library's default: src/plan/symmetric_plan.cpp decides between native
and the blocked triangle) and ozgemmDsyrk in FIXED mode at MODULI Ozaki-II moduli (default 18: always
the blocked triangle, so its cost is measured even where FP64 mode runs native); then C = A B with A
symmetric (lower stored, NaN in its upper triangle, side left): native cublasDsymm_v2, ozgemmDsymm FP64
mode and FIXED mode. Inputs (U(0,1) - 0.5) * exp(PHI * N(0,1)) (PHI < 0: N(0,1)). Timing: CUDA events,
2 warm-up calls, ITERS calls a method a round, the methods' order rotated each round; the median over
rounds of each round's median. TFLOPS count N^2 k (SYRK: the triangle's N (N + 1) / 2 entries, 2k
flops each) and 2 N^3 (SYMM). Checks, each method once after timing, on a C whose other triangle
holds a pattern: that triangle bit for bit unchanged (SYRK; `untouched_ok`), and the written part's
componentwise max |C - AB| / (|A||B|) over SAMPLE rows against a float128 (numpy longdouble) product,
with `contract_ok` when it is at most 4 u (u = 2^-53: FP64 mode's contract, min(4, k) u (|A||B|)) —
FIXED mode has no such guarantee (reported, not required). One JSON line per method on stdout.
"""
from __future__ import annotations

import ctypes
import json
import statistics
import sys

import cupy as cp
import numpy as np

SIZES = [int(x) for x in (sys.argv[1] if len(sys.argv) > 1 else "8192,16384").split(",")]
MODULI = int(sys.argv[2]) if len(sys.argv) > 2 else 18
PHI = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
ROUNDS = int(sys.argv[4]) if len(sys.argv) > 4 else 3
ITERS, SAMPLE = 3, 4
U = 2.0 ** -53
LOWER, OP_N, SIDE_LEFT = 0, 0, 0  # CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_SIDE_LEFT

lib = ctypes.CDLL("libozgemm.so.0")
cublas = None
for name in ("libcublas.so.13", "libcublas.so.12", "libcublas.so"):
    try:
        cublas = ctypes.CDLL(name)
        break
    except OSError:
        pass
assert cublas is not None, "no libcublas.so found"


class CallInfo(ctypes.Structure):  # ozgemmCallInfo_t (include/ozgemm/ozgemm.h)
    _fields_ = [("scheme", ctypes.c_int), ("moduli", ctypes.c_int), ("variant", ctypes.c_int),
                ("slices", ctypes.c_int), ("bound", ctypes.c_double), ("target", ctypes.c_double),
                ("fell_back", ctypes.c_int), ("reason", ctypes.c_char * 160)]


stream = cp.cuda.get_current_stream()
cublas_handle = ctypes.c_void_p()
assert cublas.cublasCreate_v2(ctypes.byref(cublas_handle)) == 0
assert cublas.cublasSetStream_v2(cublas_handle, ctypes.c_void_p(stream.ptr)) == 0
handles = {}
for mode in ("fp64", "fixed"):
    h = ctypes.c_void_p()
    assert lib.ozgemmCreate(ctypes.byref(h)) == 0, "ozgemmCreate failed"
    assert lib.ozgemmSetStream(h, ctypes.c_void_p(stream.ptr)) == 0
    if mode == "fixed":
        # Ozaki-II at MODULI, variant partially fused: every block emulated (variant AUTO may run a
        # block native where the AUTO rules say native is faster), so the blocked routine's own cost shows.
        assert lib.ozgemmSetScheme(h, 1) == 0 and lib.ozgemmSetModuli(h, MODULI) == 0
        assert lib.ozgemmSetVariant(h, 2) == 0
    handles[mode] = h


def ptr(a) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.data.ptr)


def dbl(x: float):
    return ctypes.byref(ctypes.c_double(x))


def part(rng, shape):
    if PHI < 0:
        return rng.standard_normal(shape)
    return (rng.random(shape) - 0.5) * np.exp(PHI * rng.standard_normal(shape))


def time_rounds(methods: dict) -> dict:
    """methods: name -> callable; returns name -> median milliseconds (rotated order each round)."""
    names = list(methods)
    per_round = {n: [] for n in names}
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for f in methods.values():
        for _ in range(2):
            f()
    stream.synchronize()
    for r in range(ROUNDS):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            times = []
            for _ in range(ITERS):
                start.record(stream)
                methods[name]()
                end.record(stream)
                end.synchronize()
                times.append(cp.cuda.get_elapsed_time(start, end))
            per_round[name].append(statistics.median(times))
    return {n: statistics.median(v) for n, v in per_round.items()}


def last_reason(mode: str) -> str:
    info = CallInfo()
    lib.ozgemmGetLastCallInfo(handles[mode], ctypes.byref(info))
    return info.reason.decode(errors="replace")


def bench_syrk(n: int, rng) -> None:
    k = n
    a_h = part(rng, (n, k))
    A = cp.asfortranarray(cp.asarray(a_h))
    C = cp.zeros((n, n), dtype=cp.float64, order="F")
    lda = ldc = n
    methods = {
        "native cublasDsyrk": lambda: cublas.cublasDsyrk_v2(cublas_handle, LOWER, OP_N, n, k, dbl(1.0), ptr(A), lda,
                                                            dbl(0.0), ptr(C), ldc),
        "ozgemmDsyrk fp64": lambda: lib.ozgemmDsyrk(handles["fp64"], LOWER, OP_N, n, k, dbl(1.0), ptr(A), lda,
                                                    dbl(0.0), ptr(C), ldc),
        f"ozgemmDsyrk fixed {MODULI} moduli": lambda: lib.ozgemmDsyrk(handles["fixed"], LOWER, OP_N, n, k, dbl(1.0),
                                                                     ptr(A), lda, dbl(0.0), ptr(C), ldc),
    }
    ms = time_rounds(methods)
    rows = rng.choice(n, SAMPLE, replace=False)
    a_l = a_h.astype(np.longdouble)
    ref = a_l[rows] @ a_l.T                     # rows x n
    mag = np.abs(a_l[rows]) @ np.abs(a_l).T
    pattern = cp.asfortranarray(cp.asarray(rng.standard_normal((n, n))))
    upper = cp.triu(cp.ones((n, n), dtype=bool), 1)
    for name, f in methods.items():
        C[...] = pattern
        f()
        stream.synchronize()
        untouched = bool(cp.all((C == pattern) | ~upper).get())   # bit for bit: pattern has no NaN, no -0
        got = cp.asnumpy(C[rows]).astype(np.longdouble)
        lower_mask = np.arange(n)[None, :] <= rows[:, None]
        err = float(np.max(np.where(lower_mask, np.abs(got - ref) / np.maximum(mag, np.finfo(float).tiny), 0)))
        mode = "fp64" if "fp64" in name else "fixed" if "fixed" in name else None
        print(json.dumps({"routine": "syrk", "n": n, "k": k, "phi": PHI, "method": name, "ms": round(ms[name], 3),
                          "tflops": round(n * (n + 1) * k / ms[name] * 1e-9, 2), "untouched_ok": untouched,
                          "max_err_over_u": round(err / U, 3), "contract_ok": err <= 4 * U,
                          "reason": last_reason(mode) if mode else ""}), flush=True)


def bench_symm(n: int, rng) -> None:
    a_h = part(rng, (n, n))
    a_h = np.tril(a_h) + np.tril(a_h, -1).T       # symmetric
    stored = np.tril(a_h) + np.triu(np.full((n, n), np.nan), 1)  # the upper triangle must not be read
    b_h = part(rng, (n, n))
    A = cp.asfortranarray(cp.asarray(stored))
    B = cp.asfortranarray(cp.asarray(b_h))
    C = cp.zeros((n, n), dtype=cp.float64, order="F")
    methods = {
        "native cublasDsymm": lambda: cublas.cublasDsymm_v2(cublas_handle, SIDE_LEFT, LOWER, n, n, dbl(1.0), ptr(A), n,
                                                            ptr(B), n, dbl(0.0), ptr(C), n),
        "ozgemmDsymm fp64": lambda: lib.ozgemmDsymm(handles["fp64"], SIDE_LEFT, LOWER, n, n, dbl(1.0), ptr(A), n,
                                                    ptr(B), n, dbl(0.0), ptr(C), n),
        f"ozgemmDsymm fixed {MODULI} moduli": lambda: lib.ozgemmDsymm(handles["fixed"], SIDE_LEFT, LOWER, n, n,
                                                                     dbl(1.0), ptr(A), n, ptr(B), n, dbl(0.0),
                                                                     ptr(C), n),
    }
    ms = time_rounds(methods)
    rows = rng.choice(n, SAMPLE, replace=False)
    a_l, b_l = a_h.astype(np.longdouble), b_h.astype(np.longdouble)
    ref = a_l[rows] @ b_l
    mag = np.abs(a_l[rows]) @ np.abs(b_l)
    for name, f in methods.items():
        f()
        stream.synchronize()
        got = cp.asnumpy(C[rows]).astype(np.longdouble)
        err = float(np.max(np.abs(got - ref) / np.maximum(mag, np.finfo(float).tiny)))
        mode = "fp64" if "fp64" in name else "fixed" if "fixed" in name else None
        print(json.dumps({"routine": "symm", "n": n, "phi": PHI, "method": name, "ms": round(ms[name], 3),
                          "tflops": round(2.0 * n ** 3 / ms[name] * 1e-9, 2),
                          "max_err_over_u": round(err / U, 3), "contract_ok": err <= 4 * U,
                          "reason": last_reason(mode) if mode else ""}), flush=True)


rng = np.random.default_rng(20261126)
for n in SIZES:
    bench_syrk(n, rng)
    bench_symm(n, rng)
