"""What :func:`ozgemm.matmul` asks of the arrays' own frameworks: a new result array, a contiguous
copy of a view the C API cannot express, and the copy of a temporary result into ``out``.

Copies are made by the array's framework (CuPy, PyTorch, JAX: the frameworks ozgemm can copy, as
their own ``matmul`` copies such views) on the array's device and, for CuPy and PyTorch, on the
call's stream: the inputs are ready there (the caller's contract), the GEMMs that read a copy run
there, and the framework's stream-ordered allocator frees the copy for later work of that stream
only. JAX copies are ordered by JAX and exported to the call's stream through DLPack. Frameworks
are imported only for arrays of theirs.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional, Tuple

from ._arrays import framework_of

COPYABLE = ("torch", "cupy", "jax")  #: the frameworks whose arrays ozgemm copies


def kind(x: Any) -> str:
    """x's framework as ozgemm handles it: "torch", "cupy", "jax" or its top-level package."""
    fw = framework_of(x)
    return "jax" if fw == "jaxlib" else fw


def can_copy(x: Any) -> bool:
    return kind(x) in COPYABLE


@contextlib.contextmanager
def on_stream(x: Any, device: int, stream: int) -> Iterator[None]:
    """Make x's framework queue its work on `device`'s `stream` (a cudaStream_t as int) in this scope."""
    fw = kind(x)
    if fw == "torch":
        import torch

        with torch.cuda.device(device):
            if int(torch.cuda.current_stream().cuda_stream) == stream:
                yield
            else:
                with torch.cuda.stream(torch.cuda.ExternalStream(stream)):
                    yield
    elif fw == "cupy":
        import cupy

        with cupy.cuda.Device(device):
            if int(cupy.cuda.get_current_stream().ptr) == stream:
                yield
            else:
                with cupy.cuda.ExternalStream(stream):
                    yield
    else:
        yield


def contiguous_copy(x: Any, device: int, stream: int, dtype: Optional[str] = None) -> Any:
    """A C-order copy of x made by its framework (:data:`COPYABLE`) on `device` and `stream`,
    converted to `dtype` ("float64", "complex128"; None: x's dtype): numpy's promotion of a real
    operand of a complex product. PyTorch's lazy conjugate and negative bits are resolved."""
    fw = kind(x)
    with on_stream(x, device, stream):
        if fw == "torch":
            import torch

            if dtype is not None:
                return x.detach().to(dtype=getattr(torch, dtype), memory_format=torch.contiguous_format, copy=True)
            return x.detach().clone(memory_format=torch.contiguous_format)
        if fw == "cupy":
            return x.astype(dtype, order="C", copy=True) if dtype is not None else x.copy(order="C")
        if fw == "jax":
            import jax.numpy as jnp

            return jnp.array(x, dtype=dtype, copy=True)
    raise TypeError(f"ozgemm cannot copy {type(x).__module__}.{type(x).__qualname__} arrays")


def empty(like: Any, shape: Tuple[int, ...], dtype: str, device: int, new_buffer: Any,
          stream: Optional[int] = None) -> Any:
    """A new C-order array of `shape` and `dtype` ("float64", "complex128") on `device`: of like's
    framework for PyTorch and CuPy, allocated for `stream` (None: the framework's current stream; a
    temporary's is the call's), else ``new_buffer(shape, dtype, device)`` (ozgemm's DLPack buffer;
    see ozgemm.matmul)."""
    fw = kind(like)
    with on_stream(like, device, stream) if stream is not None else contextlib.nullcontext():
        if fw == "torch":
            import torch

            return torch.empty(shape, dtype=getattr(torch, dtype), device=torch.device("cuda", device))
        if fw == "cupy":
            import cupy

            with cupy.cuda.Device(device):
                return cupy.empty(shape, dtype=dtype)
    return new_buffer(shape, dtype, device)


def copy_into(dst: Any, src: Any, device: int, stream: int) -> None:
    """dst[...] = src by dst's framework (PyTorch or CuPy: the arrays ozgemm writes through a
    temporary) on `device` and `stream`."""
    fw = kind(dst)
    with on_stream(dst, device, stream):
        if fw == "torch":
            import torch

            with torch.no_grad():
                dst.copy_(src)
            return
        if fw == "cupy":
            import cupy

            cupy.copyto(dst, src)
            return
    raise TypeError(f"ozgemm cannot write into {type(dst).__module__}.{type(dst).__qualname__} arrays")
