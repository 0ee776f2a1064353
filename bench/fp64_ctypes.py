"""bench/fp64_ctypes.py — what the ctypes FP64 benches share (emulation_side_by_side.py,
cublas_emulation_probe.py): the CUDA runtime and cuBLAS that LD_LIBRARY_PATH finds first, status checks,
the cuDoubleComplex layout, device copies, cuBLAS's version and the phi inputs."""
from __future__ import annotations

import ctypes
import sys

import numpy as np

rt = ctypes.CDLL("libcudart.so.13")
cublas = ctypes.CDLL("libcublas.so.13")


def check(status, what):
    if status != 0:
        sys.exit(f"{what} failed with status {status}")


class Complex(ctypes.Structure):  # cuDoubleComplex
    _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double)]


def device_copy(host: np.ndarray) -> ctypes.c_void_p:
    ptr = ctypes.c_void_p()
    check(rt.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(max(1, host.nbytes))), "cudaMalloc")
    check(rt.cudaMemcpy(ptr, host.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(host.nbytes), 1), "cudaMemcpy")
    return ptr


def cublas_version() -> str:
    parts = []
    for i in range(3):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
        v = ctypes.c_int()
        cublas.cublasGetProperty(i, ctypes.byref(v))
        parts.append(str(v.value))
    return ".".join(parts)


def phi_part(rng, shape, phi: float):
    """Entries (U(0,1) - 0.5) exp(phi N(0,1)); phi < 0: N(0,1)."""
    if phi < 0:
        return rng.standard_normal(shape)
    return (rng.random(shape) - 0.5) * np.exp(phi * rng.standard_normal(shape))
