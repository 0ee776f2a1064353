"""ozgemm: FP64 matrix multiplication emulated on INT8 tensor cores (the Ozaki schemes I and II).

>>> import cupy, ozgemm
>>> a = cupy.random.standard_normal((4096, 4096)); b = cupy.random.standard_normal((4096, 4096))
>>> c = ozgemm.matmul(a, b)            # a cupy.ndarray; the same call takes torch tensors, JAX arrays
>>> ozgemm.last_call_info()            # what ran: variant, slice count, why

* :func:`matmul` computes ``alpha * a @ b + beta * out`` for CUDA float64 or complex128 arrays of any
  framework that speaks DLPack or ``__cuda_array_interface__`` (CuPy, PyTorch, JAX, Numba, ...),
  with ``numpy.matmul``'s semantics (stacks with broadcast batch dimensions: one library call per
  matrix; 1-D vectors), on the caller's current stream, and returns the caller's array type.
  Strides the BLAS-style C API can express cost no copy (transposed views, sub-blocks, broadcast
  batches); other views are copied by their framework first, as its own ``matmul`` does.
  PyTorch tensors that require grad get a result with a ``grad_fn`` (the backward runs through
  ozgemm too). complex128 operands run ozgemmZgemm: the complex Ozaki-II scheme ("2M", two INT8
  products per modulus) in FIXED mode; in FP64 mode at the moduli count its proven bound certifies
  for the data, or native ZGEMM where none does or AUTO expects native faster (:func:`last_call_info`
  says which and why).
* :func:`plan` says what a call would run, :func:`info` what this build and machine offer,
  :func:`last_call_info` what the last call ran (``scheme``: ``"native"``, ``"ozaki1"`` or
  ``"ozaki2"``).
* Errors of the library raise :class:`OzgemmError` (``.status``, ``.status_name`` and the
  library's status string); bad arguments raise TypeError/ValueError before anything runs.
* :mod:`ozgemm.reference` runs the same algorithms on the CPU (numpy arrays): the bits every
  emulated GPU variant gives in FIXED mode (Ozaki-I, Ozaki-II, complex Ozaki-II), and the error
  measures of docs/guide.md.

Accuracy modes (docs/guide.md): ``accuracy="fp64"`` (default) chooses per call from the data the
scheme (``scheme="auto"``, default: Ozaki-I or Ozaki-II, whichever is expected faster here) and its
count, the smallest whose proven bound meets ``|C - AB| <= min(4, k) u |A||B|`` entrywise, or runs
native DGEMM where none does or where emulation is slower; ``accuracy="fixed"`` (or ``slices=s``,
or ``scheme="ozaki2", moduli=n``) uses a fixed count, no guarantee beyond the measured tables.
"""
from __future__ import annotations

import atexit
import dataclasses
import threading
from typing import Any, Dict, List, Literal, Optional, Tuple, Union

from . import _arrays, _batch, _cuda_libs, _frameworks

try:  # one cuBLAS per process, the frameworks' (_cuda_libs says why), before the extension loads
    _PRELOADED_CUBLAS: Optional[str] = _cuda_libs.preload_cublas()
except Exception:  # never a reason for the import to fail: the extension's RUNPATH decides then
    _PRELOADED_CUBLAS = None

try:
    from . import _ozgemm  # the C extension (links libozgemm statically)

    _IMPORT_ERROR: Optional[BaseException] = None
except ImportError as e:  # e.g. libcublas.so not found by the loader
    _ozgemm = None  # type: ignore[assignment]
    _IMPORT_ERROR = e

__all__ = [
    "matmul", "plan", "info", "last_call_info", "OzgemmError", "Plan", "CallInfo",
    "VARIANTS", "ACCURACY_MODES", "SCHEMES", "STATUS_NAMES", "DEFAULT_SLICES", "MAX_SLICES", "DEFAULT_MODULI",
    "DEFAULT_COMPLEX_MODULI", "MIN_MODULI", "MAX_MODULI", "__version__",
]

__version__: str = getattr(_ozgemm, "__version__", "unknown")

#: Variant names accepted by ``variant=`` (the C API's ozgemmVariant_t values).
VARIANTS: Dict[str, int] = {"auto": 0, "unfused": 1, "partially_fused": 2, "fully_fused": 3, "native": 4}
_VARIANT_NAMES = {v: k for k, v in VARIANTS.items()}
#: Accuracy modes accepted by ``accuracy=`` (ozgemmAccuracy_t values).
ACCURACY_MODES: Dict[str, int] = {"fp64": 0, "fixed": 1}
#: Emulation schemes accepted by ``scheme=`` (ozgemmScheme_t values).
SCHEMES: Dict[str, int] = {"ozaki1": 0, "ozaki2": 1, "auto": 2}
_SCHEME_NAMES = {v: k for k, v in SCHEMES.items()}
#: Status names by ozgemmStatus_t value.
STATUS_NAMES: Dict[int, str] = {
    0: "OZGEMM_STATUS_SUCCESS", 1: "OZGEMM_STATUS_NOT_INITIALIZED", 2: "OZGEMM_STATUS_INVALID_VALUE",
    3: "OZGEMM_STATUS_ARCH_MISMATCH", 4: "OZGEMM_STATUS_ALLOC_FAILED", 5: "OZGEMM_STATUS_INSUFFICIENT_WORKSPACE",
    6: "OZGEMM_STATUS_EXECUTION_FAILED", 7: "OZGEMM_STATUS_NOT_SUPPORTED", 8: "OZGEMM_STATUS_INTERNAL_ERROR",
}
DEFAULT_SLICES: int = getattr(_ozgemm, "DEFAULT_SLICES", 8)
MAX_SLICES: int = getattr(_ozgemm, "MAX_SLICES", 20)
DEFAULT_MODULI: int = getattr(_ozgemm, "DEFAULT_MODULI", 14)
MIN_MODULI: int = getattr(_ozgemm, "MIN_MODULI", 2)
MAX_MODULI: int = getattr(_ozgemm, "MAX_MODULI", 20)
#: The moduli count of complex128 products in FIXED mode without moduli= (OZGEMM_DEFAULT_COMPLEX_MODULI).
DEFAULT_COMPLEX_MODULI: int = getattr(_ozgemm, "DEFAULT_COMPLEX_MODULI", 16)


_last_device = threading.local()  # the device of this thread's last matmul (last_call_info)


class OzgemmError(RuntimeError):
    """A status other than OZGEMM_STATUS_SUCCESS from the library.

    Attributes: ``status`` (the ozgemmStatus_t value), ``status_name`` (e.g.
    ``"OZGEMM_STATUS_ARCH_MISMATCH"``), ``status_string`` (the library's ozgemmGetStatusString),
    ``function`` (the C function that returned it).
    """

    def __init__(self, status: int, function: str = "ozgemmDgemm", detail: str = ""):
        self.status = int(status)
        self.status_name = STATUS_NAMES.get(self.status, f"status {self.status}")
        if _ozgemm is not None:
            self.status_string = _ozgemm.status_string(self.status)
        else:
            self.status_string = self.status_name
        self.function = function
        super().__init__(f"{function}: {self.status_string}" + (f" [{detail}]" if detail else ""))


#: What ran: native DGEMM, or the emulation scheme (CallInfo.scheme, Plan.scheme).
SchemeRan = Literal["native", "ozaki1", "ozaki2"]


@dataclasses.dataclass(frozen=True)
class CallInfo:
    """What a call ran (:func:`last_call_info`) or would run (:func:`plan`): ozgemmCallInfo_t."""

    variant: str        #: "native" or the emulated variant
    slices: int         #: Ozaki-I: the slice count; 0 otherwise (native DGEMM, Ozaki-II)
    bound: float        #: FP64 mode: the constant c the data achieved (|C - AB| <= c u |A||B|); 0: not computed
    target: float       #: FP64 mode: the contract's constant min(4, k)
    fell_back: bool     #: FP64 mode ran native DGEMM instead of an emulation
    reason: str         #: how the slice count was chosen, or why native ran
    #: "native" (native DGEMM ran: variant "native", slices and moduli 0), "ozaki1" (slices) or
    #: "ozaki2" (moduli)
    scheme: SchemeRan = "ozaki1"
    moduli: int = 0     #: Ozaki-II: the moduli count; 0 otherwise


@dataclasses.dataclass(frozen=True)
class Plan:
    """What :func:`matmul` would run for these arrays and options (:func:`plan`)."""

    call: str                   #: the C API call the arrays map to (transposes, sizes, leading dimensions)
    accuracy: str               #: "fp64" or "fixed"
    variant: Optional[str]      #: the variant that would run; None: decided from the data at call time
    slices: Optional[int]       #: the slice count (0: native DGEMM); None: decided at call time
    bound: float
    target: float
    fell_back: bool
    reason: str
    workspace_bytes: Optional[int]  #: device workspace the call needs (FIXED mode); None: unknown
    source: str                 #: the C API call that answered: "ozgemmPlanCall"
    scheme: SchemeRan = "ozaki1"  #: as CallInfo.scheme: "native", "ozaki1" or "ozaki2"
    moduli: int = 0             #: Ozaki-II: the moduli count; 0 otherwise
    #: the operands matmul copies first ("a", "b": views without a BLAS layout) and "out" when it
    #: is written through a temporary; the call above is the copies'
    copies: Tuple[str, ...] = ()


def _lib() -> Any:
    if _ozgemm is None:
        raise RuntimeError(f"the ozgemm extension module could not be loaded: {_IMPORT_ERROR}")
    return _ozgemm


class _Options:
    """The C API options of one call: ozgemmAccuracy_t, slices (0: default/none), ozgemmScheme_t,
    moduli (0: default), ozgemmVariant_t. The checks that depend on the operands' dtype run in
    :meth:`check` (once the arrays are read)."""

    def __init__(self, accuracy: str, slices: Optional[int], variant: str, scheme: str, moduli: Optional[int]):
        if not isinstance(accuracy, str) or accuracy.lower() not in ACCURACY_MODES:
            raise ValueError(f"accuracy must be one of {sorted(ACCURACY_MODES)}, got {accuracy!r}")
        self.accuracy = ACCURACY_MODES[accuracy.lower()]
        if not isinstance(scheme, str) or scheme.lower().replace("-", "") not in SCHEMES:
            raise ValueError(f"scheme must be one of {sorted(SCHEMES)}, got {scheme!r}")
        self.scheme = SCHEMES[scheme.lower().replace("-", "")]
        self.slices = _count("slices", slices, 1, MAX_SLICES)
        self.moduli = _count("moduli", moduli, MIN_MODULI, MAX_MODULI)
        if self.scheme == SCHEMES["ozaki2"] and slices is not None:
            raise ValueError("slices= is the Ozaki-I count; scheme='ozaki2' takes moduli=")
        if moduli is not None:
            self.accuracy = ACCURACY_MODES["fixed"]  # as ozgemmSetModuli(h, n > 0): a count is FIXED mode
        self._moduli_given, self._slices_given = moduli is not None, slices is not None
        if slices is not None:
            self.accuracy = ACCURACY_MODES["fixed"]  # as ozgemmSetSlices(h, s > 0): a slice count is FIXED mode
        if not isinstance(variant, str) or variant.lower().replace("-", "_") not in VARIANTS:
            raise ValueError(f"variant must be one of {sorted(VARIANTS)}, got {variant!r}")
        self.variant = VARIANTS[variant.lower().replace("-", "_")]

    def check(self, dtype: str) -> None:
        """The options' checks for operands of `dtype`: float64 products take moduli= with
        scheme='ozaki2' only; complex128 products (ozgemmZgemm) run the complex Ozaki-II scheme
        whatever the scheme (auto or ozaki2), so they take moduli= and refuse slices= and 'ozaki1'."""
        if dtype == "complex128":
            if self.scheme == SCHEMES["ozaki1"]:
                raise ValueError("scheme='ozaki1': the Ozaki-I scheme has no complex form; complex128 products run "
                                 "the complex Ozaki-II scheme (scheme='auto' or 'ozaki2', moduli=) or native ZGEMM")
            if self._slices_given:
                raise ValueError("slices= is the Ozaki-I count; complex128 products run the complex Ozaki-II "
                                 "scheme, which takes moduli=")
        elif self._moduli_given and self.scheme != SCHEMES["ozaki2"]:
            raise ValueError("moduli= applies to scheme='ozaki2' (float64) or to complex128 operands")

    def args(self) -> Tuple[int, int, int, int, int]:
        return self.accuracy, self.slices, self.scheme, self.moduli, self.variant

    @property
    def accuracy_name(self) -> str:
        return "fixed" if self.accuracy == ACCURACY_MODES["fixed"] else "fp64"


def _count(name: str, v: Optional[int], lo: int, hi: int) -> int:
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{name} must be an int or None, got {type(v).__name__}")
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be in {lo}..{hi} (None: the default), got {v}")
    return v


Scalar = Union[float, complex]


def _scalar(name: str, v: Any) -> Scalar:
    """v as a Python float, or complex where it is a complex number (Python, numpy or a 0-D
    tensor of a complex dtype); complex ones need complex128 operands (:meth:`_Prepared`)."""
    dtype = getattr(v, "dtype", None)
    if isinstance(v, complex) or getattr(dtype, "kind", None) == "c" or getattr(dtype, "is_complex", False):
        try:
            return complex(v)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a number, got {type(v).__name__}") from None
    try:
        return float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number (or complex, for complex128 operands), "
                        f"got {type(v).__name__}") from None


def _resolve_device(lib: Any, d: _arrays.ArrayDesc, fallback: Optional[int]) -> int:
    """Device of a __cuda_array_interface__ array (which does not say): from its pointer."""
    if d.device is not None:
        return d.device
    err, mem_type, dev = lib.pointer_device(d.ptr)
    if err == 0 and mem_type in (2, 3):  # cudaMemoryTypeDevice, cudaMemoryTypeManaged
        return int(dev)
    if err == 0 and mem_type in (0, 1) and d.ptr != 0:  # unregistered or pinned host memory
        raise TypeError(f"{d.name}: __cuda_array_interface__ points at host memory; ozgemm needs device memory")
    # No driver/GPU (the call reports it) or a null pointer of an empty array.
    return fallback if fallback is not None else 0


class _Prepared:
    """The arrays and options of one matmul/plan call, validated, and the ozgemmDgemm (float64) or
    ozgemmZgemm (complex128) calls that compute it (one per matrix of the broadcast batch:
    ozgemm._batch). Every argument check runs before the first CUDA call (device lookups, copies,
    allocation, stream ordering). A float64 operand of a complex128 product is copied to complex128
    by its framework (numpy's promotion)."""

    def __init__(self, a: Any, b: Any, out: Any, options: _Options, stream: Any, alpha: Scalar, beta: Scalar,
                 allocate: bool, what: str = "ozgemm.matmul"):
        lib = _lib()
        self.options = options
        dev = _arrays.peek_device(a)
        if dev is None:
            dev = _arrays.peek_device(b)
        self.stream = _arrays.stream_handle(stream) if stream is not None else _arrays.current_stream(a, dev)

        def read(x: Any, name: str) -> _arrays.ArrayDesc:
            return _arrays.describe(x, name, stream=self.stream, dlpack_reader=lib.dlpack_info)

        A, B = read(a, "a"), read(b, "b")
        #: "float64" or "complex128": numpy's result dtype of the operands
        self.dtype = dtype = "complex128" if "complex128" in (A.dtype, B.dtype) else "float64"
        if not allocate and dtype == "complex128":
            raise ValueError(f"{what} takes float64 matrices (ozgemmPlanCall has no complex form); a complex128 "
                             "product runs the complex Ozaki-II scheme in FIXED mode (moduli=, default "
                             f"{DEFAULT_COMPLEX_MODULI}) and, in FP64 mode, at the count its bound certifies or "
                             "native ZGEMM")
        options.check(dtype)
        for name, v in (("alpha", alpha), ("beta", beta)):
            if isinstance(v, complex) and dtype == "float64":
                raise TypeError(f"{name} must be a real number for float64 operands, got {v!r} (a complex scalar "
                                "needs complex128 operands)")
        self.shape = shape = _batch.matmul_shape(A.shape, B.shape)
        if not allocate and (len(A.shape), len(B.shape)) != (2, 2):
            raise ValueError(f"{what} takes 2-D matrices, got a of shape {A.shape} and b of shape {B.shape} "
                             "(for a stack, plan one matrix of it: each is a separate call)")
        C: Optional[_arrays.ArrayDesc] = None
        if out is None:
            if beta != 0.0:
                raise ValueError("beta != 0 needs out= (the matrix that beta scales)")
        else:
            C = read(out, "out")
            if C.dtype != dtype:
                raise TypeError(f"out: expected {dtype} (the result's dtype for a {A.dtype} and b {B.dtype}), "
                                f"got {C.dtype}")
            if C.readonly:
                why = "JAX arrays are immutable" if C.framework == "jax" else "the array is read-only"
                raise ValueError(f"out: cannot write the result into it ({why})")
            if C.shape != shape.result:
                raise ValueError(f"out: expected shape {shape.result} (the result of a {A.shape} @ b {B.shape}), "
                                 f"got {C.shape}")
            _arrays.check_no_overlap(C, A, B)
            if _batch.repeats_elements(C):
                raise ValueError(f"out: strides {C.strides} (elements) for shape {C.shape} write several results "
                                 "into one element (a broadcast view, stride 0); pass an array without repeats")
        # What is copied (ozgemm._batch): an out that cannot be written in place (computed into a
        # temporary, a new C-order array, then copied into out); float64 inputs of a complex128
        # product (converted); inputs whose matrices have no BLAS layout, or that are conjugate
        # views the calls cannot take with the written array's layout.
        via_temp = C is not None and not _batch.writable_in_place(_batch.stacked(C, "out", shape))
        written = C if C is not None and not via_temp else _arrays.ArrayDesc(
            "out", "new", 0, shape.result, _arrays.c_strides(shape.result), None, dtype=dtype)
        transposed = _batch.result_transposed(_batch.stacked(written, "out", shape))
        promote_a, promote_b = A.dtype != dtype, B.dtype != dtype
        for flag, x, d in ((promote_a, a, A), (promote_b, b, B)):
            if flag and not _frameworks.can_copy(x):
                raise TypeError(f"{d.name}: a float64 operand of a complex128 product is converted to complex128 "
                                f"(numpy's promotion), which ozgemm does for {', '.join(_frameworks.COPYABLE)} "
                                f"arrays only; got a {d.framework} array (pass it as complex128)")
        copy_a = promote_a or _batch.needs_copy(_batch.stacked(A, "a", shape), transposed)
        copy_b = promote_b or _batch.needs_copy(_batch.stacked(B, "b", shape), transposed)
        for flag, x, d in ((copy_a, a, A), (copy_b, b, B), (via_temp, out, C)):
            if flag and not _frameworks.can_copy(x):
                raise _arrays.layout_error(_batch.matrix(_batch.stacked(d, d.name, shape)),
                                           f"ozgemm copies only {', '.join(_frameworks.COPYABLE)} arrays")
        #: the operands copied to contiguous arrays ("a", "b"), and "out" when written through a temporary
        self.copies = tuple(n for n, f in (("a", copy_a), ("b", copy_b), ("out", via_temp)) if f)
        # CUDA from here on: devices, copies, the result array, stream ordering.
        da = _resolve_device(lib, A, dev)
        db = _resolve_device(lib, B, da)
        if da != db:
            raise ValueError(f"a is on device {da}, b on device {db}; both must be on the same GPU")
        self.device = da
        if C is not None and _resolve_device(lib, C, da) != da:
            raise ValueError(f"out is on another device than a and b (device {da})")
        # The copies live as long as this object: until the calls that read them are queued (the
        # frameworks' allocators reuse a freed block for later work of the same stream only).
        self.copied_inputs: List[Any] = []
        if copy_a:
            self.copied_inputs.append(_frameworks.contiguous_copy(a, da, self.stream, dtype if promote_a else None))
            A = read(self.copied_inputs[-1], "a")
        if copy_b:
            self.copied_inputs.append(_frameworks.contiguous_copy(b, da, self.stream, dtype if promote_b else None))
            B = read(self.copied_inputs[-1], "b")
        self.result: Any = out
        self.temp: Any = None  # the temporary result copied into out (via_temp)
        if C is None or via_temp:
            if allocate:
                if via_temp:  # beta != 0 reads out: the temporary starts as its copy
                    self.temp = (_frameworks.contiguous_copy(out, da, self.stream) if beta != 0.0
                                 else _frameworks.empty(out, shape.result, dtype, da, _device_buffer, self.stream))
                else:
                    self.result = _frameworks.empty(a, shape.result, dtype, da, _device_buffer)
                C = read(self.temp if via_temp else self.result, "out")
            else:  # plan(): the C-order array matmul would allocate
                C = written
        self.calls = _batch.gemm_calls(_batch.stacked(A, "a", shape), _batch.stacked(B, "b", shape),
                                       _batch.stacked(C, "out", shape), shape)
        # __cuda_array_interface__ v3: order after the producers' streams.
        for d in (A, B, C):
            if d.stream is not None and not _same_stream(d.stream, self.stream):
                err = lib.stream_wait(self.device, d.stream, self.stream)
                if err:
                    raise RuntimeError(f"{d.name}: cudaStreamWaitEvent failed: {lib.cuda_error_string(err)}")

    def finish(self) -> None:
        """After the calls: copy the temporary result into out (on the call's stream)."""
        if self.temp is not None:
            _frameworks.copy_into(self.result, self.temp, self.device, self.stream)


def _device_buffer(shape: Tuple[int, ...], dtype: str, device: int) -> Any:
    """A new C-order buffer of ozgemm's ("float64" or "complex128"), exported through DLPack: the
    result for JAX and other producers than CuPy and PyTorch (see matmul)."""
    ok, why, _ = _lib().gpu_status(device)
    if not ok:
        raise OzgemmError(3, "ozgemm.matmul", why)  # OZGEMM_STATUS_ARCH_MISMATCH
    return _lib().device_empty(list(shape), device, dtype == "complex128")


def _same_stream(s1: int, s2: int) -> bool:
    legacy = (0, 1)  # 0 (the null stream in this runtime) and cudaStreamLegacy are the same stream
    return s1 == s2 or (s1 in legacy and s2 in legacy)


def matmul(a: Any, b: Any, *, out: Any = None, alpha: Scalar = 1.0, beta: Scalar = 0.0, accuracy: str = "fp64",
           slices: Optional[int] = None, variant: str = "auto", stream: Any = None, scheme: str = "auto",
           moduli: Optional[int] = None) -> Any:
    """``alpha * a @ b + beta * out`` in FP64 on the GPU, emulated on INT8 tensor cores.

    Args:
        a, b: CUDA float64 or complex128 arrays of CuPy, PyTorch, JAX or any producer of DLPack /
            ``__cuda_array_interface__``, with ``numpy.matmul``'s shapes: matrices (m x k and
            k x n); stacks of matrices (N-D: the last two dimensions; the batch dimensions
            broadcast, numpy's rules), computed as one library call per matrix; 1-D vectors (a of
            shape (k,) is taken as 1 x k, b as k x 1, and that dimension is removed from the
            result). Matrices with one unit stride and a leading dimension at least the other
            extent (C- or F-order, transposed views ``a.T``, sub-blocks) are passed as they are;
            any batch strides are (broadcast batches cost no copy). Other views (``a[::2, ::3]``,
            broadcast rows or columns with stride 0, negative strides) are copied to a C-order
            array first by their own framework (CuPy, PyTorch, JAX) on the call's stream, as
            ``cupy.matmul`` and ``torch.matmul`` do; such views of other producers raise
            ValueError. Host arrays (numpy, CPU tensors) raise TypeError.
            complex128 (either operand) runs ozgemmZgemm: a float64 operand is converted to
            complex128 by its framework first (numpy's promotion; other producers raise
            TypeError). PyTorch's lazy conjugate views (``x.conj()``, ``x.mH``) are passed as
            the conjugate transpose (CUBLAS_OP_C) where the result's layout allows (``a @ b.mH``
            into a C-order result: no copy), else copied with the conjugate resolved.
        out: CUDA array of the result's shape and dtype (must not overlap a or b). Written in place
            when its matrices have such a layout and do not overlap each other; otherwise (CuPy,
            PyTorch) the result is computed into a temporary and copied into ``out``, as
            ``torch.matmul(..., out=)`` does. A broadcast ``out`` (stride 0) raises ValueError.
            None: a new C-contiguous array of a's framework (for JAX and other producers a
            DLPack-capable ozgemm buffer, handed to JAX with ``jax.dlpack.from_dlpack``).
        alpha, beta: scalars, complex for complex128 operands (TypeError for float64 ones);
            ``beta != 0`` needs ``out`` (C is read only when beta != 0).
        accuracy: ``"fp64"`` (default: the slice count is chosen per call from the data so that
            ``|C - AB| <= min(4, k) u |A||B|`` entrywise, or native DGEMM runs) or ``"fixed"``.
        slices: a fixed slice count 1..MAX_SLICES (selects ``"fixed"``, like ozgemmSetSlices);
            None with ``"fixed"``: DEFAULT_SLICES.
        variant: ``"auto"`` (the planner's choice), ``"unfused"``, ``"partially_fused"``,
            ``"fully_fused"`` or ``"native"`` (cuBLAS DGEMM).
        stream: where the call runs: a cudaStream_t as int, or a CuPy/PyTorch/``__cuda_stream__``
            stream object. None: the caller's current stream of a's framework (CuPy's or
            PyTorch's current stream; the legacy default stream for others). The arrays must be
            ready on that stream, as for any work the framework queues there.
        scheme: ``"auto"`` (default: FP64 mode takes whichever of the two schemes meets the bound
            and is expected faster; FIXED mode runs Ozaki-I), ``"ozaki1"`` (slices) or ``"ozaki2"``
            (the integer CRT scheme, one INT8 product per modulus, unfused path; FP64 mode chooses
            the moduli count, ``moduli`` MIN_MODULI..MAX_MODULI selects FIXED mode at that count,
            ``accuracy="fixed"`` without it: DEFAULT_MODULI).
            complex128 operands: FIXED mode (``moduli=``, with scheme ``"auto"`` or ``"ozaki2"``,
            or ``accuracy="fixed"``: DEFAULT_COMPLEX_MODULI) runs the complex Ozaki-II scheme ("2M":
            two INT8 products per modulus; variants ``"auto"``, ``"unfused"``, ``"partially_fused"``);
            FP64 mode takes the count the complex bound certifies, or native ZGEMM
            (``last_call_info().reason`` says which and why). ``scheme="ozaki1"``
            and ``slices=`` raise ValueError there (Ozaki-I has no complex form).

    Autograd: a PyTorch tensor that requires grad (with grad mode on) gives a result with a
    ``grad_fn``: the backward runs ``conj(alpha) * g @ b^H`` and ``conj(alpha) * a^H @ g`` (PyTorch's
    convention for complex gradients; ``b^T``, ``a^T`` for float64) through ozgemm.matmul with the
    same options, summed over broadcast batch dimensions. ``out=`` (and so ``beta``) is
    refused there with ValueError, as PyTorch refuses ``out=`` with autograd.

    Returns:
        ``out`` if given, else the new result array. The call is asynchronous on the stream, as
        the framework's own matmul is (FP64 mode reads A and B to decide, which synchronises the
        stream once per matrix). JAX results are made ready before they are returned.
        :func:`last_call_info` tells what the last matrix's call ran.

    Raises:
        TypeError, ValueError: bad arguments (nothing ran).
        OzgemmError: the library's status, e.g. OZGEMM_STATUS_ARCH_MISMATCH without a usable GPU.
    """
    alpha = _scalar("alpha", alpha)
    beta = _scalar("beta", beta)
    options = _Options(accuracy, slices, variant, scheme, moduli)
    if any(_arrays.requires_grad(x) for x in (a, b, out)):
        from . import _torch_autograd  # torch is loaded: one of the arrays is a tensor

        if _torch_autograd.grad_enabled():
            if out is not None:
                raise ValueError("out=: ozgemm.matmul with out= does not support autograd (as torch.matmul with "
                                 "out=), and a tensor requires grad; drop out= (and beta) or call it under "
                                 "torch.no_grad()")
            return _torch_autograd.matmul(a, b, alpha, dict(accuracy=accuracy, slices=slices, variant=variant,
                                                            stream=stream, scheme=scheme, moduli=moduli))
    p = _Prepared(a, b, out, options, stream, alpha, beta, allocate=True)
    lib = _lib()
    gemm = lib.zgemm if p.dtype == "complex128" else lib.dgemm
    for c in p.calls:
        st = gemm(p.device, p.stream, c.transa, c.transb, c.m, c.n, c.k, alpha, c.A, c.lda, c.B, c.ldb, beta,
                  c.C, c.ldc, *options.args())
        if st != 0:
            raise OzgemmError(st, c.function, f"{c}, device {p.device}")
    if p.calls:
        _last_device.value = p.device
    p.finish()
    if out is None and _frameworks.kind(a) == "jax":
        return _to_jax(p.result, p.device, p.stream)
    return p.result


def _to_jax(buf: Any, device: int, stream: int) -> Any:
    # The buffer is ready once our stream is done; JAX reads it on its own streams.
    err = _lib().stream_synchronize(device, stream)
    if err:
        raise RuntimeError(f"cudaStreamSynchronize failed: {_lib().cuda_error_string(err)}")
    import jax.dlpack

    return jax.dlpack.from_dlpack(buf)


def plan(a: Any, b: Any, *, out: Any = None, accuracy: str = "fp64", slices: Optional[int] = None,
         variant: str = "auto", stream: Any = None, scheme: str = "auto", moduli: Optional[int] = None) -> Plan:
    """What ``matmul(a, b, out=out, ...)`` with these options would run (no GEMM runs).

    Matrices only: a and b must be 2-D (ValueError for stacks and vectors, whose matmul is one
    call per matrix: plan one matrix of the stack), float64 (ValueError for complex128:
    ozgemmPlanCall has no complex form; FIXED mode runs the complex Ozaki-II scheme, FP64 mode
    native ZGEMM). Views that matmul copies are copied here too
    (FP64 mode reads the data); ``Plan.copies`` names them.
    The answer is exact in both accuracy modes (ozgemmPlanCall: FP64 mode reads a and b,
    synchronously, to choose the slice count); FIXED mode also gives the workspace the call needs
    (ozgemmGetWorkspaceSize).
    Raises like :func:`matmul`.
    """
    options = _Options(accuracy, slices, variant, scheme, moduli)
    p = _Prepared(a, b, out, options, stream, 1.0, 0.0, allocate=False, what="ozgemm.plan")
    lib = _lib()
    (c,) = p.calls
    acc = options.accuracy_name
    ws: Optional[int] = None
    if acc == "fixed":  # the workspace is known from the shape in FIXED mode
        st, _, ws = lib.planned_variant(p.device, c.transa, c.transb, c.m, c.n, c.k, *options.args())
        ws = ws if st == 0 else None
    st, info_t = lib.plan_call(p.device, p.stream, c.transa, c.transb, c.m, c.n, c.k, c.A, c.lda, c.B, c.ldb,
                               *options.args())
    if st != 0:
        raise OzgemmError(st, "ozgemmPlanCall", str(c))
    ci = _call_info(info_t)
    return Plan(str(c), acc, ci.variant, ci.slices, ci.bound, ci.target, ci.fell_back, ci.reason, ws,
                "ozgemmPlanCall", ci.scheme, ci.moduli, p.copies)


def _call_info(t: Tuple[int, int, float, float, int, str, int, int]) -> CallInfo:
    """CallInfo of the extension's ozgemmCallInfo_t tuple; where native DGEMM ran, scheme "native"
    and no counts (the C struct's scheme and counts describe an emulation only)."""
    v, s, bound, target, fell_back, reason, scheme, moduli = t
    variant = _VARIANT_NAMES.get(v, str(v))
    if variant == "native":
        return CallInfo(variant, 0, float(bound), float(target), bool(fell_back), reason, "native", 0)
    return CallInfo(variant, int(s), float(bound), float(target), bool(fell_back), reason,
                    _SCHEME_NAMES.get(scheme, str(scheme)), int(moduli))


def last_call_info(device: Optional[int] = None) -> CallInfo:
    """What the last successful :func:`matmul` of this thread on `device` ran (ozgemmGetLastCallInfo),
    float64 or complex128 (a complex one: scheme "ozaki2" with its moduli count, or "native" with
    the reason).

    device: the CUDA device ordinal; None: the device of this thread's last matmul call.
    Raises OzgemmError(OZGEMM_STATUS_NOT_INITIALIZED) before the first call.
    """
    lib = _lib()
    if device is None:
        device = getattr(_last_device, "value", 0)
    st, t = lib.last_call_info(int(device))
    if st != 0:
        raise OzgemmError(st, "ozgemmGetLastCallInfo", f"device {device}: no ozgemm call on this thread yet"
                          if st == 1 else f"device {device}")
    return _call_info(t)




def info() -> Dict[str, Any]:
    """What this build and machine offer; never raises.

    Keys: ``version``; ``extension_loaded`` and ``import_error``; ``build``
    (``cuda_architectures``, ``cutlass_fused_kernels``, ``hopper_kernels``, ``cuda_runtime``,
    ``cuda_toolkit``); ``cuda_runtime_version`` and ``cuda_driver_version`` (e.g. 13000; 0: no
    driver); ``cuda_libraries``: the cuBLAS and CUDA runtime files this process mapped, and
    ``preloaded_cublas``: the frameworks' pip cuBLAS loaded before the extension (None: none was
    installed, the extension's RUNPATH chose); ``device_count`` and ``device_error`` (why there is
    none, or None); ``devices``: per
    GPU ``index``, ``name``, ``usable``, ``reason`` (why ozgemm cannot use it) and ``variants``
    (variant -> "available" or the status that refuses it); ``usable`` and ``reason`` for the
    machine as a whole.
    """
    d: Dict[str, Any] = {"version": __version__, "extension_loaded": _ozgemm is not None,
                         "import_error": None if _IMPORT_ERROR is None else str(_IMPORT_ERROR),
                         "cuda_libraries": _cuda_libs.mapped_cuda_libraries(), "preloaded_cublas": _PRELOADED_CUBLAS}
    if _ozgemm is None:
        d.update(usable=False, reason=f"extension not loaded: {_IMPORT_ERROR}", device_count=0, devices=[])
        return d
    archs, cutlass, sm90, cudart_static, toolkit = _ozgemm.BUILD
    d["build"] = {"cuda_architectures": [a for a in archs.split(",") if a], "cutlass_fused_kernels": cutlass,
                  "hopper_kernels": sm90, "cuda_runtime": "static" if cudart_static else "shared",
                  "cuda_toolkit": toolkit}
    d["cuda_runtime_version"] = _ozgemm.runtime_version()
    d["cuda_driver_version"] = _ozgemm.driver_version()
    n, err, msg = _ozgemm.device_count()
    d["device_count"] = n
    d["device_error"] = None if err == 0 else msg
    devices: List[Dict[str, Any]] = []
    for i in range(n):
        ok, why, name = _ozgemm.gpu_status(i)
        dev: Dict[str, Any] = {"index": i, "name": name, "usable": ok, "reason": None if ok else why}
        if ok:
            variants = {}
            for vname, v in VARIANTS.items():
                st = _ozgemm.variant_status(i, v)
                variants[vname] = "available" if st == 0 else STATUS_NAMES.get(st, str(st))
            dev["variants"] = variants
        devices.append(dev)
    d["devices"] = devices
    d["usable"] = any(x["usable"] for x in devices)
    if not d["usable"]:
        d["reason"] = msg if err else ("no GPU" if n == 0 else "; ".join(f"device {x['index']}: {x['reason']}"
                                                                          for x in devices))
    else:
        d["reason"] = None
    return d


if _ozgemm is not None:
    atexit.register(_ozgemm.release_handles)  # before the CUDA runtime unloads
