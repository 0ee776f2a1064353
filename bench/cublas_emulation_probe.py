"""bench/cublas_emulation_probe.py — what cuBLAS's own FP64 emulation does on one call (issue 32's question:
how many INT8 products per modulus, how many moduli).

    LD_LIBRARY_PATH=<cuBLAS 13.10 dir> ncu --profile-from-start off --metrics gpu__time_duration.sum --csv \
        python3 bench/cublas_emulation_probe.py --type z --n 4096 --phi 0.5 > kernels.csv

One cublasDgemm / cublasZgemm on a handle with CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH and the EAGER strategy
(the mantissa control cuBLAS's default, dynamic), after one warm-up call; only the timed call lies between
cudaProfilerStart and cudaProfilerStop, so a profiler started with --profile-from-start off lists that
call's kernels alone. cuBLAS writes the mantissa bit count its dynamic control chose into the int that
cublasSetFixedPointEmulationMantissaBitCountPointer names (managed memory here): printed on stderr with
the version, the call's time (CUDA events) and its componentwise error on SAMPLE rows (numpy longdouble).
Inputs as bench/emulation_side_by_side.py: (U(0,1) - 0.5) exp(PHI N(0,1)), PHI < 0: N(0,1).
"""
from __future__ import annotations

import argparse
import ctypes
import sys

import numpy as np

from fp64_ctypes import Complex, check, cublas, cublas_version, device_copy, phi_part, rt

p = argparse.ArgumentParser()
p.add_argument("--type", choices=["d", "z"], default="z")
p.add_argument("--n", type=int, default=4096)
p.add_argument("--phi", type=float, default=0.5)
p.add_argument("--sample", type=int, default=4)
p.add_argument("--seed", type=int, default=20261126)
args = p.parse_args()
n = args.n
cplx = args.type == "z"
dtype, esize = (np.complex128, 16) if cplx else (np.float64, 8)

rng = np.random.default_rng(args.seed)


def operand():
    re_part = phi_part(rng, (n, n), args.phi)
    return np.asfortranarray((re_part + (1j * phi_part(rng, (n, n), args.phi) if cplx else 0)).astype(dtype))


a_h, b_h = operand(), operand()
A, B = device_copy(a_h), device_copy(b_h)
C = ctypes.c_void_p()
check(rt.cudaMalloc(ctypes.byref(C), ctypes.c_size_t(n * n * esize)), "cudaMalloc C")
h = ctypes.c_void_p()
check(cublas.cublasCreate_v2(ctypes.byref(h)), "cublasCreate")
check(cublas.cublasSetMathMode(h, 8), "cublasSetMathMode(CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH)")
check(cublas.cublasSetEmulationStrategy(h, 2), "cublasSetEmulationStrategy(EAGER)")
bits = ctypes.c_void_p()
check(rt.cudaMallocManaged(ctypes.byref(bits), ctypes.c_size_t(4), 1), "cudaMallocManaged")
ctypes.cast(bits, ctypes.POINTER(ctypes.c_int))[0] = -1
st = cublas.cublasSetFixedPointEmulationMantissaBitCountPointer(h, bits)
control, max_bits, offset = ctypes.c_int(-1), ctypes.c_int(-1), ctypes.c_int(0)
cublas.cublasGetFixedPointEmulationMantissaControl(h, ctypes.byref(control))
cublas.cublasGetFixedPointEmulationMaxMantissaBitCount(h, ctypes.byref(max_bits))
cublas.cublasGetFixedPointEmulationMantissaBitOffset(h, ctypes.byref(offset))
one, zero = (Complex(1.0, 0.0), Complex(0.0, 0.0)) if cplx else (ctypes.c_double(1.0), ctypes.c_double(0.0))
gemm = cublas.cublasZgemm_v2 if cplx else cublas.cublasDgemm_v2


def call():
    check(gemm(h, 0, 0, n, n, n, ctypes.byref(one), A, n, B, n, ctypes.byref(zero), C, n), "cuBLAS GEMM")


call()  # warm-up (outside the profiled range)
check(rt.cudaDeviceSynchronize(), "sync")
ev = [ctypes.c_void_p(), ctypes.c_void_p()]
for e in ev:
    check(rt.cudaEventCreate(ctypes.byref(e)), "cudaEventCreate")
rt.cudaProfilerStart()
rt.cudaEventRecord(ev[0], None)
call()
rt.cudaEventRecord(ev[1], None)
check(rt.cudaDeviceSynchronize(), "sync")
rt.cudaProfilerStop()
ms = ctypes.c_float()
rt.cudaEventElapsedTime(ctypes.byref(ms), ev[0], ev[1])
c_h = np.empty((n, n), dtype=dtype, order="F")
check(rt.cudaMemcpy(c_h.ctypes.data_as(ctypes.c_void_p), C, ctypes.c_size_t(c_h.nbytes), 2), "cudaMemcpy C")
rows = rng.choice(n, size=min(args.sample, n), replace=False)
ld = np.clongdouble if cplx else np.longdouble
exact = a_h[rows].astype(ld) @ b_h.astype(ld)
err = np.max(np.abs(c_h[rows].astype(ld) - exact) / (np.abs(a_h[rows]).astype(np.longdouble) @ np.abs(b_h)))
flops = (8 if cplx else 2) * float(n) ** 3
print(f"cuBLAS {cublas_version()} emulated {'ZGEMM' if cplx else 'DGEMM'} {n}^3 phi {args.phi}: {ms.value:.3f} ms "
      f"{flops / ms.value / 1e9:.1f} TF, componentwise {float(err):.2e}; mantissa control {control.value} "
      f"(0: dynamic), max bits {max_bits.value}, offset {offset.value}, bit count pointer status {st}, "
      f"bits used {ctypes.cast(bits, ctypes.POINTER(ctypes.c_int))[0]}", file=sys.stderr)
