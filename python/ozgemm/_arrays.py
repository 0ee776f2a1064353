"""Array handling for :func:`ozgemm.matmul`, in pure Python.

Nothing here calls CUDA: arrays are described by their metadata (pointer, shape, strides in
elements, device) and the description is mapped to the arguments of the column-major C API,
``ozgemmDgemm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)`` (float64) or
``ozgemmZgemm`` with the same arguments (complex128). The tests run this mapping on the CPU with
fake ``__cuda_array_interface__`` objects and with numpy memory through the host reference.

Mapping. A column-major matrix with leading dimension ``ld`` has element (i, j) at
``ptr + i + j * ld``. A 2-D view of shape (r, c) with element strides (s0, s1) is

* column-major (``op = "N"``, ``ld = s1``) when s0 == 1 and s1 >= r: F-order arrays, sub-blocks
  of them, ``x.T`` of a C-order array;
* row-major (``op = "T"``: the buffer holds X^T as a c x r column-major matrix, ``ld = s0``)
  when s1 == 1 and s0 >= c: C-order arrays, their sub-blocks, ``x.T`` of an F-order array.

The stride of a dimension of size 1 is meaningless (PyTorch reports arbitrary values) and is
ignored, and so are the strides of an empty array. Anything else (no unit stride, zero/broadcast or
negative strides, overlapping rows) cannot be expressed without a copy: :mod:`ozgemm._batch` decides
where one is made (ozgemm.matmul makes it in the array's framework). With C row-major the call
computes C^T = B^T A^T.

Conjugate views (complex128 PyTorch tensors with the lazy conjugate bit, ``x.conj()``, ``x.mH``)
hold conj(X) in memory: a row-major one is passed as ``op = "C"`` (the buffer holds X^H), a
column-major one would need the conjugate without a transpose ("R"), which the C API lacks; with
C row-major the ops of A and B are transposed (N <-> T, C <-> R), so which conjugate views cost no
copy depends on the result's layout (:func:`operand_layout`). The others are copied (the copy
resolves the bit), and so are PyTorch's lazy negative views (``is_neg()``).

Arrays of any dimension are described here (stacks of matrices, 1-D vectors, a 0-D ``out``);
:mod:`ozgemm._batch` maps them onto one call per matrix.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, List, Optional, Tuple

INT_MAX = 2**31 - 1
#: Bytes per element of the dtypes ozgemm takes (float64: ozgemmDgemm; complex128: ozgemmZgemm).
ITEMSIZE = {"float64": 8, "complex128": 16}

# DLPack device types
KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
_DLPACK_DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host (pinned)", 4: "OpenCL", 7: "Vulkan", 8: "Metal",
                        10: "ROCm", 11: "ROCm host", 13: "CUDA managed", 14: "oneAPI"}

_HOST_HINT = ("copy it to the GPU first: cupy.asarray(x), torch.as_tensor(x, device='cuda'), "
              "jax.device_put(x, jax.devices('gpu')[0])")


@dataclasses.dataclass(frozen=True)
class ArrayDesc:
    """One float64 or complex128 CUDA array (any dimension) as ozgemm sees it."""

    name: str                     # argument name, for messages ("a", "b", "out")
    framework: str                # "torch", "cupy", "jax", "dlpack" (other producers), "cai"
    ptr: int                      # address of element (0, 0)
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]      # in elements
    device: Optional[int]         # CUDA device ordinal; None: unknown (CAI), resolved from the pointer
    readonly: bool = False
    stream: Optional[int] = None  # CAI v3: the producer's stream to order after (None: none needed)
    dtype: str = "float64"        # "float64" or "complex128" (ITEMSIZE)
    conj: bool = False            # PyTorch's lazy conjugate bit: the values are conj(memory)
    neg: bool = False             # PyTorch's lazy negative bit: the values are -memory

    @property
    def itemsize(self) -> int:
        return ITEMSIZE[self.dtype]

    def extent(self) -> Tuple[int, int]:
        """[first, last) byte addresses the array spans (for overlap checks; any strides)."""
        if any(d == 0 for d in self.shape):
            return self.ptr, self.ptr
        low = sum((d - 1) * s for d, s in zip(self.shape, self.strides) if s < 0)
        high = sum((d - 1) * s for d, s in zip(self.shape, self.strides) if s > 0)
        return self.ptr + low * self.itemsize, self.ptr + (high + 1) * self.itemsize


def framework_of(x: Any) -> str:
    """The top-level package of x's type ("numpy", "cupy", "torch", "jax", "jaxlib", ...)."""
    return type(x).__module__.split(".")[0]


def _type_name(x: Any) -> str:
    return f"{type(x).__module__}.{type(x).__qualname__}"


def _host_error(name: str, x: Any, what: str = "") -> TypeError:
    return TypeError(f"{name}: ozgemm.matmul needs a CUDA device array; got a host array "
                     f"({what or _type_name(x)}). {_HOST_HINT[0].upper()}{_HOST_HINT[1:]}.")


def requires_grad(x: Any) -> bool:
    """x is a PyTorch tensor that requires grad (torch is not imported for other arrays)."""
    return framework_of(x) == "torch" and bool(getattr(x, "requires_grad", False))


def c_strides(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    """Element strides of a C-order (row-major, contiguous) array of `shape`."""
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def describe(x: Any, name: str, *, stream: int = 0,
             dlpack_reader: Optional[Callable[[Any], tuple]] = None) -> ArrayDesc:
    """Describe `x` (a CUDA float64 or complex128 array of any dimension) without copying it.

    Fast paths read PyTorch tensors and CuPy arrays directly; other producers go through DLPack
    (``x.__dlpack__(stream=...)``: the producer makes the data ready on `stream`, the consumer
    stream; `dlpack_reader` parses the capsule) or ``__cuda_array_interface__``. Host arrays
    (numpy, CPU tensors, DLPack CPU devices) raise TypeError with what to do instead.
    """
    fw = framework_of(x)
    if fw == "numpy":
        raise _host_error(name, x)
    if fw == "torch" and hasattr(x, "data_ptr") and hasattr(x, "is_cuda"):
        return _describe_torch(x, name)
    if fw == "cupy" and hasattr(x, "data") and hasattr(getattr(x, "data"), "ptr"):
        return _describe_cupy(x, name)
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        return _describe_dlpack(x, name, fw, stream, dlpack_reader)
    if hasattr(x, "__cuda_array_interface__"):
        return describe_cai(x.__cuda_array_interface__, name)
    if hasattr(x, "__array_interface__") or hasattr(x, "__array__") or isinstance(x, (list, tuple)):
        raise _host_error(name, x)
    raise TypeError(f"{name}: expected a CUDA float64 or complex128 array (DLPack or __cuda_array_interface__: CuPy, "
                    f"PyTorch, JAX, Numba, ...), got {_type_name(x)}")


def _describe_torch(x: Any, name: str) -> ArrayDesc:
    import torch

    if not x.is_cuda:
        raise _host_error(name, x, f"a PyTorch tensor on {x.device}; use x.cuda()")
    if x.layout != torch.strided:
        raise TypeError(f"{name}: expected a dense (strided) tensor, got layout {x.layout}")
    dtypes = {torch.float64: "float64", torch.complex128: "complex128"}
    if x.dtype not in dtypes:
        raise TypeError(f"{name}: expected float64 or complex128, got {x.dtype} (ozgemm is an FP64 GEMM; "
                        f"use x.double() or x.cdouble() to convert explicitly)")
    device = x.device.index if x.device.index is not None else torch.cuda.current_device()
    return ArrayDesc(name, "torch", int(x.data_ptr()), tuple(int(d) for d in x.shape),
                     tuple(int(s) for s in x.stride()), int(device), dtype=dtypes[x.dtype],
                     conj=bool(x.is_conj()), neg=bool(x.is_neg()))


def _describe_cupy(x: Any, name: str) -> ArrayDesc:
    dtype = str(x.dtype)
    if dtype not in ITEMSIZE:
        raise TypeError(f"{name}: expected float64 or complex128, got {x.dtype} (use x.astype(cupy.float64) or "
                        "x.astype(cupy.complex128) to convert explicitly)")
    strides = _byte_strides_to_elements(name, tuple(x.strides), dtype)
    readonly = False
    flags = getattr(x, "flags", None)
    if flags is not None and hasattr(flags, "writeable"):
        readonly = not bool(flags.writeable)
    return ArrayDesc(name, "cupy", int(x.data.ptr), tuple(int(d) for d in x.shape), strides, int(x.device.id),
                     readonly, dtype=dtype)


def _byte_strides_to_elements(name: str, strides: Tuple[int, ...], dtype: str) -> Tuple[int, ...]:
    size = ITEMSIZE[dtype]
    if any(int(s) % size for s in strides):
        raise ValueError(f"{name}: strides {tuple(strides)} (bytes) are not multiples of the element size {size}")
    return tuple(int(s) // size for s in strides)


#: DLPack (type code, bits, lanes) of the dtypes ozgemm takes: kDLFloat 64, kDLComplex 128.
_DLPACK_DTYPES = {(2, 64, 1): "float64", (5, 128, 1): "complex128"}
#: __cuda_array_interface__ typestrs of the dtypes ozgemm takes (little-endian or native order).
_CAI_DTYPES = {"<f8": "float64", "=f8": "float64", "<c16": "complex128", "=c16": "complex128"}


def _describe_dlpack(x: Any, name: str, fw: str, stream: int,
                     dlpack_reader: Optional[Callable[[Any], tuple]]) -> ArrayDesc:
    dev_type, dev_id = (int(v) for v in x.__dlpack_device__())
    if dev_type in (KDL_CPU, KDL_CUDA_HOST):
        raise _host_error(name, x, f"{_type_name(x)} on DLPack device {_DLPACK_DEVICE_NAMES[dev_type]}")
    if dev_type not in (KDL_CUDA, KDL_CUDA_MANAGED):
        raise TypeError(f"{name}: unsupported DLPack device "
                        f"{_DLPACK_DEVICE_NAMES.get(dev_type, dev_type)} ({_type_name(x)}); ozgemm needs CUDA memory")
    if dlpack_reader is None:
        raise RuntimeError("ozgemm extension not loaded: cannot read DLPack capsules")
    # The DLPack handshake: the producer makes the data ready on the consumer's stream (1 = the
    # legacy default stream; the spec does not allow 0).
    try:
        capsule = x.__dlpack__(stream=stream if stream != 0 else 1)
    except TypeError:  # producers that predate the stream keyword
        capsule = x.__dlpack__()
    ptr, shape, strides, (code, bits, lanes), (_, dev) = dlpack_reader(capsule)
    dtype = _DLPACK_DTYPES.get((code, bits, lanes))
    if dtype is None:
        hint = ""
        if fw in ("jax", "jaxlib") and (code, bits) in ((2, 32), (5, 64)):
            hint = " (JAX makes float32 / complex64 arrays unless jax.config.update('jax_enable_x64', True))"
        raise TypeError(f"{name}: expected float64 or complex128, got DLPack dtype code {code}, {bits} bits x "
                        f"{lanes}{hint}")
    shape = tuple(int(d) for d in shape)
    kind = "jax" if fw in ("jax", "jaxlib") else "dlpack"
    return ArrayDesc(name, kind, int(ptr), shape, tuple(int(s) for s in strides), int(dev),
                     readonly=kind == "jax", dtype=dtype)


def describe_cai(cai: dict, name: str) -> ArrayDesc:
    """Describe an array from its ``__cuda_array_interface__`` dict (versions 0-3)."""
    typestr = cai.get("typestr")
    dtype = _CAI_DTYPES.get(typestr)  # type: ignore[arg-type]
    if dtype is None:
        raise TypeError(f"{name}: expected float64 ('<f8') or complex128 ('<c16'), got __cuda_array_interface__ "
                        f"typestr {typestr!r}")
    if cai.get("mask") is not None:
        raise TypeError(f"{name}: masked arrays are not supported")
    shape = tuple(int(d) for d in cai["shape"])
    ptr, readonly = cai["data"]
    strides = cai.get("strides")
    elem: Tuple[int, ...]
    if strides is None:  # C-contiguous
        elem = c_strides(shape)
    else:
        elem = _byte_strides_to_elements(name, tuple(strides), dtype)
    stream = cai.get("stream")
    return ArrayDesc(name, "cai", int(ptr or 0), shape, elem, None, bool(readonly),
                     None if stream is None else int(stream), dtype=dtype)


def blas_layouts(d: ArrayDesc) -> List[Tuple[str, int]]:
    """Every (op, ld) of a column-major buffer at d.ptr that holds the matrix d (op "N") or d^T
    (op "T"), "N" first; both where a dimension has size <= 1, none where the strides cannot be
    expressed so. (The conjugate bit is not applied here: :func:`operand_layout`.)"""
    (r, c), (s0, s1) = d.shape, d.strides
    if r == 0 or c == 0:  # empty: nothing is read or written, any valid ld will do
        return [("N", max(r, 1)), ("T", max(c, 1))]
    out = []
    if (s0 == 1 or r <= 1) and (c <= 1 or s1 >= max(r, 1)):
        out.append(("N", s1 if c > 1 else max(r, 1)))
    if (s1 == 1 or c <= 1) and (r <= 1 or s0 >= max(c, 1)):
        out.append(("T", s0 if r > 1 else max(c, 1)))
    return out


def blas_layout(d: ArrayDesc) -> Optional[Tuple[str, int]]:
    """The first of :func:`blas_layouts` (op "N" or "T", ld); None when there is none."""
    lays = blas_layouts(d)
    return lays[0] if lays else None


#: The op of X^T for the op of X: "R" (conjugate, no transpose) has no cuBLAS value.
_FLIP = {"N": "T", "T": "N", "C": "R", "R": "C"}


def operand_layout(d: ArrayDesc, transposed: bool) -> Optional[Tuple[str, int]]:
    """(op, ld) of the operand matrix d as the C API takes it: "N", "T" or "C" (d is a conjugate
    view held row-major); with `transposed` (C row-major: the call computes C^T = B^T A^T) the op of
    d^T. None when no layout gives one of those (copy first: a conjugate view held column-major,
    a lazy negative view, strides without a BLAS layout)."""
    if d.neg:
        return None
    for op, ld in blas_layouts(d):
        if d.conj:
            op = "C" if op == "T" else "R"
        if transposed:
            op = _FLIP[op]
        if op != "R":
            return op, ld
    return None


@dataclasses.dataclass(frozen=True)
class GemmCall:
    """The ozgemmDgemm (float64) or ozgemmZgemm (complex128) arguments that compute
    out = alpha a @ b + beta out; transa, transb: "N", "T" or "C" (complex128 only)."""

    transa: str
    transb: str
    m: int
    n: int
    k: int
    A: int
    lda: int
    B: int
    ldb: int
    C: int
    ldc: int
    dtype: str = "float64"

    @property
    def function(self) -> str:
        return "ozgemmZgemm" if self.dtype == "complex128" else "ozgemmDgemm"

    def __str__(self) -> str:
        return (f"{self.function}({self.transa}, {self.transb}, m={self.m}, n={self.n}, k={self.k}, "
                f"lda={self.lda}, ldb={self.ldb}, ldc={self.ldc})")


_LAYOUT_NEED = "one unit stride and a leading dimension at least the other extent"


def layout_error(d: ArrayDesc, why: str) -> ValueError:
    """The error for a matrix whose strides the C API cannot take and that ozgemm does not copy."""
    if d.neg or (d.conj and blas_layouts(d)):
        lazy = "negative" if d.neg else "conjugate"
        return ValueError(f"{d.name}: a lazy {lazy} view (PyTorch's is_{lazy[:3]}() bit) in this layout cannot be "
                          f"passed to the C API without resolving it: {why} (pass x.resolve_{lazy[:3]}())")
    return ValueError(f"{d.name}: strides {d.strides} (elements) for shape {d.shape} cannot be passed to the "
                      f"BLAS-style C API without a copy (it needs {_LAYOUT_NEED}): {why} (pass a contiguous copy)")


def _checked_ld(d: ArrayDesc, lay: Optional[Tuple[str, int]]) -> Tuple[str, int]:
    if lay is None:
        raise layout_error(d, "not copied")
    if lay[1] > INT_MAX:
        raise ValueError(f"{d.name}: leading dimension {lay[1]} exceeds the C API's int range")
    return lay


def out_transposed(out: ArrayDesc) -> bool:
    """The call computes C^T = B^T A^T: the matrix `out` is held row-major (its first BLAS layout is
    "T"; a row-major result of a GEMM is the column-major buffer of its transpose)."""
    lay = blas_layout(out)
    return lay is not None and lay[0] == "T"


def gemm_call(a: ArrayDesc, b: ArrayDesc, out: ArrayDesc) -> GemmCall:
    """Map out = a @ b (a: m x k, b: k x n, out: m x n) onto one column-major ozgemmDgemm call
    (ozgemmZgemm for complex128 arrays: a, b and out of one dtype)."""
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        raise ValueError(f"shape mismatch: a is {a.shape}, b is {b.shape} (a's columns must equal b's rows)")
    if out.shape != (m, n):
        raise ValueError(f"out: expected shape {(m, n)}, got {out.shape}")
    if not a.dtype == b.dtype == out.dtype:
        raise TypeError(f"a, b and out must have one dtype, got {a.dtype}, {b.dtype} and {out.dtype}")
    for v, what in ((m, "m"), (n, "n"), (k, "k")):
        if v > INT_MAX:
            raise ValueError(f"{what} = {v} exceeds the C API's int range")
    if out.conj or out.neg:
        raise layout_error(out, "out is written through a temporary")
    opc, ldc = _checked_ld(out, blas_layout(out))
    flip = opc == "T"
    opa, lda = _checked_ld(a, operand_layout(a, flip))
    opb, ldb = _checked_ld(b, operand_layout(b, flip))
    if not flip:  # out column-major: C = op(A) op(B)
        return GemmCall(opa, opb, m, n, k, a.ptr, lda, b.ptr, ldb, out.ptr, ldc, a.dtype)
    # out row-major: the buffer holds C^T = B^T A^T (n x m, column-major, ld = ldc); the ops are
    # already those of A^T and B^T (operand_layout)
    return GemmCall(opb, opa, n, m, k, b.ptr, ldb, a.ptr, lda, out.ptr, ldc, a.dtype)


def check_no_overlap(out: ArrayDesc, *inputs: ArrayDesc) -> None:
    o0, o1 = out.extent()
    for x in inputs:
        x0, x1 = x.extent()
        if o0 < x1 and x0 < o1:
            raise ValueError(f"out overlaps {x.name} in memory; ozgemm.matmul cannot compute in place")


def stream_handle(s: Any) -> int:
    """A cudaStream_t value (as int) from an int or a stream object: the CUDA stream protocol
    (``__cuda_stream__``), CuPy (``.ptr``), PyTorch (``.cuda_stream``), cuda-python (``int(s)``)."""
    if isinstance(s, bool):
        raise TypeError("stream must be an int (cudaStream_t) or a stream object, not bool")
    if isinstance(s, int):
        if s < 0:
            raise ValueError(f"stream must be a cudaStream_t value (>= 0), got {s}")
        return s
    if hasattr(s, "__cuda_stream__"):
        _, ptr = s.__cuda_stream__()
        return int(ptr)
    for attr in ("cuda_stream", "ptr", "handle"):
        if hasattr(s, attr):
            return int(getattr(s, attr))
    try:
        return int(s)
    except (TypeError, ValueError):
        pass
    raise TypeError(f"stream must be an int (cudaStream_t) or a stream object (CuPy, PyTorch, "
                    f"__cuda_stream__), got {_type_name(s)}")


def peek_device(x: Any) -> Optional[int]:
    """The device ordinal of x if it says so without a DLPack export; None otherwise."""
    fw = framework_of(x)
    try:
        if fw == "torch" and hasattr(x, "is_cuda") and x.is_cuda:
            return x.device.index
        if fw == "cupy" and hasattr(x, "device"):
            return int(x.device.id)
        if hasattr(x, "__dlpack_device__"):
            dev_type, dev_id = x.__dlpack_device__()
            return int(dev_id) if int(dev_type) in (KDL_CUDA, KDL_CUDA_MANAGED) else None
    except Exception:  # a malformed object is reported by describe()
        return None
    return None


def current_stream(x: Any, device: Optional[int]) -> int:
    """The caller's current stream for x's framework on `device` (0, the legacy default stream,
    for producers without a notion of one, e.g. JAX and __cuda_array_interface__ objects)."""
    fw = framework_of(x)
    if fw == "torch" and getattr(x, "is_cuda", False):  # a CPU tensor is refused by describe()
        import torch

        return int(torch.cuda.current_stream(device).cuda_stream)
    if fw == "cupy":
        import cupy

        if device is None:
            return int(cupy.cuda.get_current_stream().ptr)
        with cupy.cuda.Device(device):
            return int(cupy.cuda.get_current_stream().ptr)
    return 0
