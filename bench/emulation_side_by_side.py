"""bench/emulation_side_by_side.py — FP64 GEMM (real or complex): native cuBLAS, cuBLAS's own FP64 emulation
and ozgemm's modes, one process, the same inputs, rotated rounds.

    LD_LIBRARY_PATH=<cuBLAS dir>:<dir of libozgemm.so.0> python3 bench/emulation_side_by_side.py \
        --type z --n 8192 [--m M --k K] --phi 0.5 --rounds 3 --methods native,cublas_emu,fixed15,fp64,fp64_pf

Everything goes through ctypes (the CUDA runtime, cuBLAS and libozgemm): no framework loads a second
cuBLAS, so cuBLAS and ozgemm's own cuBLAS calls are the one libcublas.so.13 that LD_LIBRARY_PATH
finds first (its version is printed: put cuBLAS 13.10's folder first to measure its emulation).
Methods: `native` (cublasDgemm / cublasZgemm, default math), `cublas_emu` (the same call on a handle with
CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH and the EAGER emulation strategy; the mantissa control is cuBLAS's
default, printed), `fixedN` (ozgemm FIXED mode, Ozaki-II at N moduli, variant AUTO), `fp64` (ozgemm's
default: FP64 mode, the proven bound), `fp64_pf` (FP64 mode with the variant set to partially fused).
Inputs: entries (U(0,1) - 0.5) * exp(PHI * N(0,1)) (PHI < 0: N(0,1)), real and imaginary parts alike.
Timing: CUDA events, 2 warm-up calls then ITERS calls per method per round, the method order rotated each
round (the card's power-limit clock swing); the median over rounds of each round's median. TFLOPS: 2mnk
(real) or 8mnk (complex) flops. Error: componentwise max |C - AB| / (|A||B|) over SAMPLE rows against a
numpy longdouble product of those rows. One JSON line per method on stdout.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys

import numpy as np

from fp64_ctypes import Complex, check, cublas, cublas_version as read_cublas_version, device_copy, phi_part, rt

p = argparse.ArgumentParser()
p.add_argument("--type", choices=["d", "z"], default="d")
p.add_argument("--n", type=int, default=8192)
p.add_argument("--m", type=int, default=0)
p.add_argument("--k", type=int, default=0)
p.add_argument("--phi", type=float, default=0.5)
p.add_argument("--rounds", type=int, default=3)
p.add_argument("--iters", type=int, default=5)
p.add_argument("--sample", type=int, default=4)
p.add_argument("--seed", type=int, default=20261126)
p.add_argument("--methods", default="native,cublas_emu,fixed15,fp64,fp64_pf")
args = p.parse_args()
M, N, K = args.m or args.n, args.n, args.k or args.n
cplx = args.type == "z"
dtype = np.complex128 if cplx else np.float64
esize = 16 if cplx else 8

oz = ctypes.CDLL("libozgemm.so.0")


class CallInfo(ctypes.Structure):  # ozgemmCallInfo_t (include/ozgemm/ozgemm.h)
    _fields_ = [("scheme", ctypes.c_int), ("moduli", ctypes.c_int), ("variant", ctypes.c_int),
                ("slices", ctypes.c_int), ("bound", ctypes.c_double), ("target", ctypes.c_double),
                ("fell_back", ctypes.c_int), ("reason", ctypes.c_char * 160)]


def part(rng, shape):
    return phi_part(rng, shape, args.phi)


rng = np.random.default_rng(args.seed)
a_h = part(rng, (M, K)) + (1j * part(rng, (M, K)) if cplx else 0)
b_h = part(rng, (K, N)) + (1j * part(rng, (K, N)) if cplx else 0)
a_h, b_h = np.asfortranarray(a_h.astype(dtype)), np.asfortranarray(b_h.astype(dtype))
A, B = device_copy(a_h), device_copy(b_h)
C = ctypes.c_void_p()
check(rt.cudaMalloc(ctypes.byref(C), ctypes.c_size_t(M * N * esize)), "cudaMalloc C")
stream = ctypes.c_void_p()
check(rt.cudaStreamCreate(ctypes.byref(stream)), "cudaStreamCreate")

cublas_version = read_cublas_version()

if cplx:
    one, zero = Complex(1.0, 0.0), Complex(0.0, 0.0)
else:
    one, zero = ctypes.c_double(1.0), ctypes.c_double(0.0)


def cublas_handle(emulated: bool):
    h = ctypes.c_void_p()
    check(cublas.cublasCreate_v2(ctypes.byref(h)), "cublasCreate")
    check(cublas.cublasSetStream_v2(h, stream), "cublasSetStream")
    extra = ""
    if emulated:
        check(cublas.cublasSetMathMode(h, 8), "cublasSetMathMode(CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH)")
        check(cublas.cublasSetEmulationStrategy(h, 2), "cublasSetEmulationStrategy(EAGER)")
        control = ctypes.c_int(-1)
        cublas.cublasGetFixedPointEmulationMantissaControl(h, ctypes.byref(control))
        extra = f", mantissa control {control.value} (0: dynamic)"
    gemm = cublas.cublasZgemm_v2 if cplx else cublas.cublasDgemm_v2

    def f():
        check(gemm(h, 0, 0, M, N, K, ctypes.byref(one), A, M, B, K, ctypes.byref(zero), C, M), "cuBLAS GEMM")
    return f, ("cuBLAS %s %s%s" % (cublas_version, "emulated (EAGER)" if emulated else "native", extra))


oz_handle = ctypes.c_void_p()  # one handle for every ozgemm method: one workspace, as a user with one handle has
check(oz.ozgemmCreate(ctypes.byref(oz_handle)), "ozgemmCreate")
check(oz.ozgemmSetStream(oz_handle, stream), "ozgemmSetStream")


def ozgemm_method(moduli: int, variant: int = 0):
    """FIXED Ozaki-II at `moduli` (0: FP64 mode), variant (0: AUTO), set on the shared handle before each call."""
    h = oz_handle
    gemm = oz.ozgemmZgemm if cplx else oz.ozgemmDgemm

    def f():
        if moduli:
            check(oz.ozgemmSetScheme(h, 1), "ozgemmSetScheme(OZAKI2)")
            check(oz.ozgemmSetModuli(h, moduli), "ozgemmSetModuli")
        else:
            check(oz.ozgemmSetScheme(h, 2), "ozgemmSetScheme(AUTO)")
            check(oz.ozgemmSetAccuracy(h, 0), "ozgemmSetAccuracy(FP64)")
        check(oz.ozgemmSetVariant(h, variant), "ozgemmSetVariant")
        check(gemm(h, 0, 0, M, N, K, ctypes.byref(one), A, M, B, K, ctypes.byref(zero), C, M), "ozgemm GEMM")

    def ran():
        info = CallInfo()
        oz.ozgemmGetLastCallInfo(h, ctypes.byref(info))
        return info.reason.decode()
    return f, ran


methods, describe = {}, {}
for name in args.methods.split(","):
    if name == "native":
        methods[name], d = cublas_handle(False)
        describe[name] = lambda d=d: d
    elif name == "cublas_emu":
        methods[name], d = cublas_handle(True)
        describe[name] = lambda d=d: d
    elif name.startswith("fixed"):
        methods[name], describe[name] = ozgemm_method(int(name[5:]))
    elif name == "fp64":
        methods[name], describe[name] = ozgemm_method(0)
    elif name == "fp64_pf":
        methods[name], describe[name] = ozgemm_method(0, 2)
    else:
        sys.exit(f"unknown method {name}")

rows = np.arange(args.sample) * (M // args.sample)
ref = a_h[rows].astype(np.clongdouble if cplx else np.longdouble) @ b_h.astype(np.clongdouble if cplx else np.longdouble)
absprod = np.abs(a_h[rows]) @ np.abs(b_h)


def error() -> float:
    c = np.empty((M, N), dtype=dtype, order="F")
    check(rt.cudaMemcpy(c.ctypes.data_as(ctypes.c_void_p), C, ctypes.c_size_t(c.nbytes), 2), "cudaMemcpy C")
    got = c[rows].astype(ref.dtype)
    return float(np.max(np.abs(got - ref) / absprod))


start, end = ctypes.c_void_p(), ctypes.c_void_p()
rt.cudaEventCreate(ctypes.byref(start))
rt.cudaEventCreate(ctypes.byref(end))
names = list(methods)
times = {k: [] for k in names}
errs, ran = {}, {}
for r in range(args.rounds):
    order = names[r % len(names):] + names[:r % len(names)]
    for k in order:
        f = methods[k]
        for _ in range(2):
            f()
        ts = []
        for _ in range(args.iters):
            rt.cudaEventRecord(start, stream)
            f()
            rt.cudaEventRecord(end, stream)
            check(rt.cudaEventSynchronize(end), "cudaEventSynchronize")
            ms = ctypes.c_float()
            rt.cudaEventElapsedTime(ctypes.byref(ms), start, end)
            ts.append(ms.value)
        times[k].append(statistics.median(ts))
        if k not in errs:
            check(rt.cudaMemset(C, 0xff, ctypes.c_size_t(M * N * esize)), "cudaMemset")  # NaN poison
            f()
            check(rt.cudaStreamSynchronize(stream), "cudaStreamSynchronize")
            errs[k] = error()
            ran[k] = describe[k]()
flops = (8 if cplx else 2) * M * N * K
base = statistics.median(times[names[0]])
for k in names:
    ms = statistics.median(times[k])
    print(json.dumps({"type": args.type, "m": M, "n": N, "k": K, "phi": args.phi, "method": k, "ms": ms,
                      "tflops": flops / (ms * 1e9), f"speedup_vs_{names[0]}": base / ms, "rounds_ms": times[k],
                      "componentwise": errs[k], "ran": ran[k], "cublas": cublas_version}), flush=True)
