"""Host (CPU) reference of ozgemm for numpy arrays: no GPU needed.

* :func:`ozaki_matmul` runs the whole Ozaki-I algorithm on the CPU in the documented order: the
  bits every emulated GPU variant gives with ``ozgemm.matmul(..., slices=s)`` (FIXED mode);
  :func:`ozaki2_matmul` the same for the Ozaki scheme II (``scheme="ozaki2", moduli=n``), and for
  complex128 matrices the complex Ozaki-II scheme ("2M"): the bits of ozgemm.matmul on complex128
  arrays in FIXED mode (``moduli=n``).
* :func:`errors` measures a result against a double-double reference with the three error
  measures defined in docs/guide.md (normwise, componentwise, elementwise).

numpy is needed (``pip install numpy``); it is imported when these functions are called.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from . import _arrays

__all__ = ["ozaki_matmul", "ozaki2_matmul", "errors"]


def _lib() -> Any:
    from . import _lib

    return _lib()


def _host_desc(x: Any, name: str, *, writable: bool = False, dtypes: Tuple[str, ...] = ("float64",)
               ) -> _arrays.ArrayDesc:
    import numpy as np

    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name}: expected a numpy.ndarray (the host reference runs on the CPU), "
                        f"got {type(x).__module__}.{type(x).__qualname__}")
    if str(x.dtype) not in dtypes:
        raise TypeError(f"{name}: expected {' or '.join(dtypes)}, got {x.dtype}")
    if x.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array, got shape {x.shape}")
    if writable and not x.flags.writeable:
        raise ValueError(f"{name}: the array is read-only")
    size = _arrays.ITEMSIZE[str(x.dtype)]
    if any(s % size for s in x.strides):
        raise ValueError(f"{name}: strides {x.strides} are not multiples of {size} bytes")
    return _arrays.ArrayDesc(name, "numpy", int(x.ctypes.data), tuple(x.shape), tuple(s // size for s in x.strides),
                             -1, dtype=str(x.dtype))


def _input(x: Any, name: str, dtypes: Tuple[str, ...] = ("float64",)) -> Tuple[Any, _arrays.ArrayDesc]:
    """(array, description); inputs the C API cannot express (negative or zero strides) are
    copied, which is cheap on the host. Keep the returned array alive through the call."""
    import numpy as np

    d = _host_desc(x, name, dtypes=dtypes)
    if _arrays.blas_layout(d) is None:
        x = np.ascontiguousarray(x)
        d = _host_desc(x, name, dtypes=dtypes)
    return x, d


def ozaki_matmul(a: Any, b: Any, *, slices: int = 8, out: Any = None, alpha: float = 1.0,
                 beta: float = 0.0) -> Any:
    """``alpha * a @ b + beta * out`` by the Ozaki-I scheme with `slices` slices, on the CPU.

    a, b, out: float64 numpy matrices; any strides (inputs with strides the C API cannot express
    are copied; ``out`` needs one unit stride). Returns ``out`` (a new C-order array if None).
    The result has the same bits as the GPU's emulated variants in FIXED mode with this slice count.
    """
    return _host_gemm("host_ozaki", a, b, out, alpha, beta, int(slices))


def ozaki2_matmul(a: Any, b: Any, *, moduli: Optional[int] = None, out: Any = None, alpha: Any = 1.0,
                  beta: Any = 0.0) -> Any:
    """As :func:`ozaki_matmul` through the Ozaki scheme II with `moduli` moduli: the bits of
    ``ozgemm.matmul(..., scheme="ozaki2", moduli=moduli)`` on the GPU.

    complex128 a and b (both; out complex128 too; alpha, beta complex): the complex Ozaki-II
    scheme ("2M"), the bits of ``ozgemm.matmul(a, b, moduli=moduli)`` on complex128 GPU arrays.
    moduli None: DEFAULT_MODULI (float64) or DEFAULT_COMPLEX_MODULI (complex128)."""
    import numpy as np

    from . import DEFAULT_COMPLEX_MODULI, DEFAULT_MODULI

    complex_ = any(isinstance(x, np.ndarray) and x.dtype == np.complex128 for x in (a, b))
    if moduli is None:
        moduli = DEFAULT_COMPLEX_MODULI if complex_ else DEFAULT_MODULI
    if complex_:
        return _host_gemm("host_ozaki2_complex", a, b, out, complex(alpha), complex(beta), int(moduli),
                          "complex128")
    return _host_gemm("host_ozaki2", a, b, out, alpha, beta, int(moduli))


def _host_gemm(fn: str, a: Any, b: Any, out: Any, alpha: Any, beta: Any, count: int,
               dtype: str = "float64") -> Any:
    """out = alpha a @ b + beta out through the extension's host reference `fn` (`dtype` arrays;
    alpha and beta float, or complex for complex128)."""
    import numpy as np

    lib = _lib()
    if dtype == "float64":
        alpha, beta = float(alpha), float(beta)
    a_keep, A = _input(a, "a", (dtype,))
    b_keep, B = _input(b, "b", (dtype,))
    (m, k), (k2, n) = A.shape, B.shape
    if k != k2:
        raise ValueError(f"shape mismatch: a is {A.shape}, b is {B.shape}")
    if out is None:
        if beta != 0.0:
            raise ValueError("beta != 0 needs out=")
        out = np.zeros((m, n), dtype=dtype)
    C = _host_desc(out, "out", writable=True, dtypes=(dtype,))
    _arrays.check_no_overlap(C, A, B)
    c = _arrays.gemm_call(A, B, C)
    getattr(lib, fn)(c.transa, c.transb, c.m, c.n, c.k, alpha, c.A, c.lda, c.B, c.ldb, beta, c.C, c.ldc, count)
    del a_keep, b_keep
    return out


def errors(c: Any, a: Any, b: Any, *, alpha: float = 1.0, beta: float = 0.0,
           c0: Optional[Any] = None) -> Dict[str, float]:
    """Errors of a computed ``c`` against ``alpha * a @ b + beta * c0`` evaluated in double-double.

    Returns a dict (docs/guide.md, "What the errors mean"):
      normwise       ||C - Cref||_F / ||Cref||_F
      componentwise  max |C - Cref| / (|alpha| |A| |B| + |beta| |C0|)   (entries where that is 0 must be exact)
      elementwise    max |C - Cref| / |Cref|                             (entries where Cref is 0 must be exact)
      nonfinite_mismatch  entries where exactly one of C, Cref is non-finite (or their class differs)
      compared       entries where both are finite (the ones the three errors cover)
    a, b, c, c0: float64 numpy matrices (host). ``c`` may be a device array's host copy
    (``cupy.asnumpy(x)``, ``x.cpu().numpy()``).
    """
    import numpy as np

    lib = _lib()
    A = np.asfortranarray(a, dtype=np.float64)
    B = np.asfortranarray(b, dtype=np.float64)
    C = np.asfortranarray(c, dtype=np.float64)
    if A.ndim != 2 or B.ndim != 2 or C.ndim != 2:
        raise ValueError("a, b and c must be 2-D")
    (m, k), (k2, n) = A.shape, B.shape
    if k != k2 or C.shape != (m, n):
        raise ValueError(f"shapes do not match: a {A.shape}, b {B.shape}, c {C.shape}")
    beta = float(beta)
    if beta != 0.0:
        if c0 is None:
            raise ValueError("beta != 0 needs c0 (the C that beta scaled)")
        C0 = np.asfortranarray(c0, dtype=np.float64)
        if C0.shape != (m, n):
            raise ValueError(f"c0: expected shape {(m, n)}, got {C0.shape}")
    else:
        C0 = np.zeros((max(1, m), 1), dtype=np.float64, order="F")  # not read
    ld = max(1, m)
    return dict(lib.host_errors("N", "N", m, n, k, float(alpha), A.ctypes.data, ld, B.ctypes.data, max(1, k),
                                beta, C0.ctypes.data, ld, C.ctypes.data, ld))
