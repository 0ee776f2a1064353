"""Shared helpers of the ozgemm Python tests (python/tests).

CPU tests run everywhere (CI has no GPU); GPU tests skip with a reason when info() finds no
usable GPU, and per framework when CuPy / PyTorch / JAX is not installed.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Optional, Tuple

# JAX (when installed) must not take most of the GPU's memory for itself: CuPy and PyTorch share it.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import pytest

import ozgemm

INFO = ozgemm.info()
HAS_GPU: bool = bool(INFO.get("usable"))
NO_GPU_REASON: str = f"no usable GPU: {INFO.get('reason')}"

gpu = pytest.mark.skipif(not HAS_GPU, reason=NO_GPU_REASON)
cpu_only = pytest.mark.skipif(HAS_GPU, reason="checks the behaviour without a GPU")


class FakeCudaArray:
    """An object that only exposes __cuda_array_interface__ (metadata; never dereferenced
    unless `ptr` is real host memory handed to the host reference by the test itself)."""

    def __init__(self, shape: Tuple[int, ...], strides: Optional[Tuple[int, ...]] = None, ptr: int = 0x10000,
                 typestr: str = "<f8", readonly: bool = False, stream: Optional[int] = None, version: int = 3):
        self.__cuda_array_interface__ = dict(shape=tuple(shape), strides=None if strides is None else tuple(strides),
                                             typestr=typestr, data=(ptr, readonly), version=version)
        if stream is not None:
            self.__cuda_array_interface__["stream"] = stream


def as_cai(x: Any) -> FakeCudaArray:
    """A fake CUDA array over a numpy array's host memory (same pointer, shape, byte strides)."""
    return FakeCudaArray(x.shape, x.strides, ptr=x.ctypes.data, typestr=x.dtype.str, readonly=not x.flags.writeable)


FRAMEWORKS = ["cupy", "torch"]


def framework(name: str) -> Tuple[Any, Callable[[Any], Any], Callable[[Any], Any]]:
    """(module, to_device(numpy) -> device array, to_host(device array) -> numpy) of a framework;
    skips when it is not installed."""
    if name == "cupy":
        cp = pytest.importorskip("cupy")
        return cp, lambda x: cp.asarray(x), lambda x: cp.asnumpy(x)
    if name == "torch":
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("torch has no CUDA device")
        return torch, lambda x: torch.from_numpy(x.copy(order="K")).cuda(), lambda x: x.detach().cpu().numpy()
    raise ValueError(name)
