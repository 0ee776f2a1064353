"""CPU tests of matmul's numpy semantics in pure Python (ozgemm._batch, ozgemm._arrays): shapes
and broadcasting against numpy.matmul, the address of every matrix of a stack against numpy's own
views, which views are copied and which outs are written through a temporary, and the calls
computed on host memory by a numpy interpreter of the column-major C API (integer data: exact).
The CallInfo scheme and PyTorch autograd (with torch.matmul standing in for the GPU, when torch is
installed) too. None of these needs the extension module or a GPU."""
from __future__ import annotations

import ctypes
import dataclasses
import itertools
import zlib

import numpy as np
import pytest

import ozgemm
from ozgemm import _arrays, _batch
from conftest import as_cai

# --- shapes: numpy.matmul's rules ---------------------------------------------------------------------
SHAPE_PAIRS = [
    ((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (6, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 6)), ((1, 3, 4), (7, 4, 2)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
    ((4,), (2, 4, 5)), ((2, 3, 4), (4,)), ((0, 3, 4), (4, 5)), ((2, 0, 4), (4, 5)), ((3, 0), (0, 5)),
    ((2, 3, 4), (1, 4, 5)), ((1,), (1, 1)),
]
BAD_PAIRS = [((3, 4), (5, 6)), ((4,), (5,)), ((2, 3, 4), (3, 4, 5)), ((2, 3, 4), (3, 3)), ((3, 4), (3,))]


@pytest.mark.parametrize("sa,sb", SHAPE_PAIRS)
def test_matmul_shape_follows_numpy(sa, sb):
    s = _batch.matmul_shape(sa, sb)
    assert s.result == np.matmul(np.zeros(sa), np.zeros(sb)).shape
    assert (s.a_vector, s.b_vector) == (len(sa) == 1, len(sb) == 1)
    assert s.k == sa[-1] and s.count == int(np.prod(s.batch))
    assert s.m == (1 if len(sa) == 1 else sa[-2]) and s.n == (1 if len(sb) == 1 else sb[-1])


@pytest.mark.parametrize("sa,sb", BAD_PAIRS)
def test_matmul_shape_errors_where_numpy_errs(sa, sb):
    with pytest.raises(ValueError):
        np.matmul(np.zeros(sa), np.zeros(sb))
    with pytest.raises(ValueError, match="shape mismatch|do not broadcast"):
        _batch.matmul_shape(sa, sb)


def test_matmul_shape_rejects_scalars():
    with pytest.raises(ValueError, match="a: a 0-D array"):
        _batch.matmul_shape((), (3, 4))
    with pytest.raises(ValueError, match="b: a 0-D array"):
        _batch.matmul_shape((3, 4), ())


# --- stacks: each matrix's address, against numpy's views ---------------------------------------------
def _views():
    """Host arrays with the strides matmul meets: C/F order, transposed stacks, sub-blocks, steps,
    negative steps, broadcast (stride 0) batch dimensions and rows."""
    base = np.arange(2 * 3 * 5 * 7, dtype=np.float64).reshape(2, 3, 5, 7)
    return {
        "C": base,
        "F": np.asfortranarray(base),
        "T": base.transpose(0, 1, 3, 2),
        "block": base[:, 1:, 1:4, 2:],
        "steps": base[::2, ::-1, ::2, ::3],
        "broadcast_batch": np.broadcast_to(base[:1, 1:2], (4, 3, 5, 7)),
        "broadcast_rows": np.broadcast_to(base[0, 0, :1], (3, 5, 7)),
        "matrix": base[1, 2],
        "vector": base[1, 2, 3],
    }


@pytest.mark.parametrize("name", list(_views()))
def test_batch_offsets_address_numpys_matrices(name):
    x = _views()[name]
    d = _arrays.describe(as_cai(x), "a")
    if x.ndim == 1:
        d = _batch.stacked(d, "a", _batch.matmul_shape(x.shape, (x.shape[0], 2)))
        x = x[None, :]
    batch = (2, 1) + x.shape[:-2] if x.ndim > 2 else (3,)  # broadcast further, from the left
    full = np.broadcast_to(x, batch + x.shape[-2:])
    offsets = _batch.batch_offsets(d, batch)
    assert len(offsets) == int(np.prod(batch))
    for idx, off in zip(itertools.product(*map(range, batch)), offsets):
        m = _batch.matrix(d, off)
        view = full[idx]
        assert m.ptr == view.ctypes.data and m.shape == view.shape, (idx, off)
        assert tuple(s * m.itemsize for s, n in zip(m.strides, m.shape) if n > 1) == \
            tuple(s for s, n in zip(view.strides, view.shape) if n > 1)


def test_stacked_inserts_numpys_vector_dimensions():
    s = _batch.matmul_shape((4,), (2, 4, 5))
    a = _batch.stacked(_arrays.ArrayDesc("a", "cai", 0, (4,), (3,), 0), "a", s)
    assert (a.shape, a.strides) == ((1, 4), (0, 3))
    s = _batch.matmul_shape((2, 3, 4), (4,))
    b = _batch.stacked(_arrays.ArrayDesc("b", "cai", 0, (4,), (2,), 0), "b", s)
    assert (b.shape, b.strides) == ((4, 1), (2, 0))
    c = _batch.stacked(_arrays.ArrayDesc("out", "cai", 0, (2, 3), (3, 1), 0), "out", s)
    assert (c.shape, c.strides) == ((2, 3, 1), (3, 1, 0))
    s = _batch.matmul_shape((4,), (4, 5))
    c = _batch.stacked(_arrays.ArrayDesc("out", "cai", 0, (5,), (1,), 0), "out", s)
    assert (c.shape, c.strides) == ((1, 5), (0, 1))
    s = _batch.matmul_shape((4,), (4,))
    c = _batch.stacked(_arrays.ArrayDesc("out", "cai", 0, (), (), 0), "out", s)
    assert (c.shape, c.strides) == ((1, 1), (0, 0))
    assert _arrays.blas_layout(c) == ("N", 1)


# --- copies and temporaries ---------------------------------------------------------------------------
def _desc(x, role="a", other=(7, 2)):
    """x (host) described as `role` of a matmul with an operand of shape `other`, as a stack."""
    d = _arrays.describe(as_cai(x), role)
    shape = _batch.matmul_shape(x.shape, other) if role == "a" else _batch.matmul_shape(other, x.shape)
    return _batch.stacked(d, role, shape)


@pytest.mark.parametrize("view,copied", [
    (lambda x: x, False),                                          # C order
    (lambda x: np.ascontiguousarray(x.swapaxes(1, 2)).swapaxes(1, 2), False),  # column-major matrices
    (lambda x: np.asfortranarray(x), True),                       # F order: no matrix has a unit stride
    (lambda x: x[:, :, ::-1], True),                              # negative column stride
    (lambda x: x[:, ::2, :], False),                              # every other row: ld 14 >= 7
    (lambda x: x[:, :, ::3], True),                               # a[::2, ::3]-like: no unit stride
    (lambda x: x[:, ::2, ::3], True),
    (lambda x: np.broadcast_to(x[:1], x.shape), False),           # broadcast batch: no copy
    (lambda x: np.broadcast_to(x[:, :1, :], x.shape), True),      # broadcast rows (x.expand)
    (lambda x: np.broadcast_to(x[:, :, :1], x.shape), True),      # broadcast columns
    (lambda x: x[::-1], False),                                   # negative batch stride
])
def test_needs_copy(view, copied):
    x = view(np.zeros((3, 10, 21)))
    m = x[0]
    for transposed in (False, True):  # whatever the result's layout (no conjugate views here)
        assert _batch.needs_copy(_desc(x, "a", (x.shape[-1], 2)), transposed) is copied
        assert _batch.needs_copy(_desc(m, "a", (m.shape[-1], 2)), transposed) is copied  # one matrix alike


@pytest.mark.parametrize("stride,copied", [(1, False), (3, False), (0, True), (-1, True)])
def test_needs_copy_vectors(stride, copied):
    """A strided vector is a 1 x k (or k x 1) matrix with ld = its stride; stride 0 or < 0 is copied."""
    for role in ("a", "b"):
        d = _arrays.ArrayDesc(role, "cai", 0x1000, (5,), (stride,), 0)
        s = _batch.matmul_shape((5,), (5, 2)) if role == "a" else _batch.matmul_shape((2, 5), (5,))
        assert _batch.needs_copy(_batch.stacked(d, role, s), True) is copied, role


@pytest.mark.parametrize("shape,strides,in_place", [
    ((2, 3, 4), (12, 4, 1), True),      # C order
    ((2, 3, 4), (1, 2, 6), False),      # F order: no matrix has a unit stride
    ((2, 3, 4), (24, 4, 1), True),      # every other matrix of a larger stack
    ((2, 3, 4), (-12, 4, 1), True),     # reversed batch
    ((2, 3, 4), (4, 4, 1), False),      # matrices overlap: through a temporary
    ((2, 3, 4), (12, 1, 3), True),      # matrices transposed (column-major)
    ((2, 3, 4), (12, 8, 2), False),     # no unit stride
    ((3, 4), (1, 1), False),            # overlapping columns
])
def test_writable_in_place(shape, strides, in_place):
    d = _arrays.ArrayDesc("out", "cai", 0x1000, shape, strides, 0)
    assert _batch.writable_in_place(d) is in_place


@pytest.mark.parametrize("shape,strides,repeats", [
    ((2, 3, 4), (0, 4, 1), True), ((3, 4), (4, 0), True), ((1, 3, 4), (0, 4, 1), False), ((3, 4), (4, 1), False),
])
def test_repeats_elements(shape, strides, repeats):
    assert _batch.repeats_elements(_arrays.ArrayDesc("out", "cai", 0, shape, strides, 0)) is repeats


def test_provably_one_to_one_is_sound():
    """Never True where two indices share an address (brute force over small layouts)."""
    rng = np.random.default_rng(0)
    for _ in range(3000):
        nd = int(rng.integers(1, 4))
        shape = tuple(int(v) for v in rng.integers(1, 4, nd))
        strides = tuple(int(v) for v in rng.integers(-6, 7, nd))
        offsets = [sum(i * s for i, s in zip(idx, strides)) for idx in itertools.product(*map(range, shape))]
        if _batch.provably_one_to_one(_arrays.ArrayDesc("out", "cai", 0, shape, strides, 0)):
            assert len(set(offsets)) == len(offsets), (shape, strides)
        if _batch.repeats_elements(_arrays.ArrayDesc("out", "cai", 0, shape, strides, 0)):
            assert len(set(offsets)) < len(offsets), (shape, strides)
    # dense layouts in any dimension order are recognised
    for perm in itertools.permutations(range(3)):
        x = np.zeros((2, 3, 4)).transpose(perm)
        assert _batch.provably_one_to_one(_arrays.describe(as_cai(x), "out"))


def test_extent_with_negative_strides():
    x = np.zeros((4, 5))
    v = x[::-1, ::-2]
    d = _arrays.describe(as_cai(v), "a")
    first, last = d.extent()
    assert first == x.ctypes.data and last == x.ctypes.data + x.nbytes


# --- the calls, computed on host memory -------------------------------------------------------------------
def _column_major(ptr, rows, cols, ld, dtype="float64"):
    """The rows x cols column-major matrix at host address ptr with leading dimension ld (a view)."""
    if rows == 0 or cols == 0:
        return np.zeros((rows, cols), dtype=dtype)
    size = (cols - 1) * ld + rows
    doubles = size * _arrays.ITEMSIZE[dtype] // 8
    flat = np.ctypeslib.as_array((ctypes.c_double * doubles).from_address(ptr)).view(dtype)
    return np.lib.stride_tricks.as_strided(flat, (rows, cols), (flat.itemsize, flat.itemsize * ld))


_OPS = {"N": lambda x: x, "T": lambda x: x.T, "C": lambda x: x.conj().T}


def run_on_host(calls, alpha=1.0, beta=0.0):
    """Run ozgemmDgemm / ozgemmZgemm calls on host memory: C = alpha op(A) op(B) + beta C (BLAS
    semantics; op "C" the conjugate transpose)."""
    for c in calls:
        ra, ca = (c.m, c.k) if c.transa == "N" else (c.k, c.m)
        rb, cb = (c.k, c.n) if c.transb == "N" else (c.n, c.k)
        A = _column_major(c.A, ra, ca, c.lda, c.dtype)
        B = _column_major(c.B, rb, cb, c.ldb, c.dtype)
        C = _column_major(c.C, c.m, c.n, c.ldc, c.dtype)
        C[...] = alpha * (_OPS[c.transa](A) @ _OPS[c.transb](B)) + (beta * C if beta != 0 else 0)


class LazyConj:
    """A stand-in for PyTorch's lazy conjugate view (``x.conj()``, ``x.mH``): the values are
    conj(mem), the memory is mem's (described with the conjugate bit)."""

    def __init__(self, mem):
        self.mem = mem

    def values(self):
        return self.mem.conj()


def _host_desc(x, name):
    if isinstance(x, LazyConj):
        return dataclasses.replace(_arrays.describe(as_cai(x.mem), name), conj=True)
    return _arrays.describe(as_cai(x), name)


def _values(x):
    return x.values() if isinstance(x, LazyConj) else x


def host_matmul(a, b, out=None, alpha=1.0, beta=0.0, copied=None):
    """_Prepared's steps on host arrays (CAI descriptions of their memory), with numpy making the
    copies (and the conversion of a float64 operand of a complex product): the mapping from
    numpy.matmul's semantics to C API calls, end to end. `copied` (a list) gets the names of the
    operands copied."""
    A, B = _host_desc(a, "a"), _host_desc(b, "b")
    dtype = "complex128" if "complex128" in (A.dtype, B.dtype) else "float64"
    shape = _batch.matmul_shape(A.shape, B.shape)
    target = np.zeros(shape.result, dtype=dtype) if out is None else out
    C = _arrays.describe(as_cai(target), "out")
    temp = None
    if not _batch.writable_in_place(_batch.stacked(C, "out", shape)):
        temp = np.array(target, order="C")
        C = _arrays.describe(as_cai(temp), "out")
    transposed = _batch.result_transposed(_batch.stacked(C, "out", shape))
    if A.dtype != dtype or _batch.needs_copy(_batch.stacked(A, "a", shape), transposed):
        a = np.ascontiguousarray(_values(a), dtype=dtype)
        A = _arrays.describe(as_cai(a), "a")
        copied is not None and copied.append("a")
    if B.dtype != dtype or _batch.needs_copy(_batch.stacked(B, "b", shape), transposed):
        b = np.ascontiguousarray(_values(b), dtype=dtype)
        B = _arrays.describe(as_cai(b), "b")
        copied is not None and copied.append("b")
    run_on_host(_batch.gemm_calls(_batch.stacked(A, "a", shape), _batch.stacked(B, "b", shape),
                                  _batch.stacked(C, "out", shape), shape), alpha, beta)
    if temp is not None:
        target[...] = temp
    return target


def _int_data(rng, shape, dtype="float64"):
    """Small integers (Gaussian integers for complex128): every product and sum is exact."""
    x = rng.integers(-9, 10, shape).astype(np.float64)
    return x + 1j * rng.integers(-9, 10, shape) if dtype == "complex128" else x


CASES = [  # (a shape, b shape, a view, b view)
    ((5, 7), (7, 3), "C", "C"), ((5, 7), (7, 3), "T", "F"), ((2, 5, 7), (2, 7, 3), "C", "T"),
    ((2, 5, 7), (7, 3), "F", "C"), ((5, 7), (4, 7, 3), "T", "T"), ((3, 1, 5, 7), (2, 7, 3), "C", "F"),
    ((7,), (7, 3), "C", "C"), ((5, 7), (7,), "C", "C"), ((7,), (7,), "C", "C"), ((7,), (2, 3, 7, 4), "step", "T"),
    ((2, 5, 7), (7,), "step", "step"), ((5, 7), (7, 3), "step", "step"), ((2, 5, 7), (2, 7, 3), "step", "step"),
    ((2, 5, 7), (2, 7, 3), "bcast_rows", "bcast_batch"), ((0, 5, 7), (7, 3), "C", "C"), ((5, 0), (0, 3), "C", "C"),
    ((2, 5, 7), (1, 7, 3), "rev", "C"),
]


def _view(rng, shape, how, dtype="float64"):
    """Data of `shape` in the layout `how` (the values are what matmul must use)."""
    if how == "C":
        return _int_data(rng, shape, dtype)
    if how == "F":
        return np.asfortranarray(_int_data(rng, shape, dtype))
    if how == "T":
        if len(shape) < 2:
            return _int_data(rng, shape, dtype)
        return np.ascontiguousarray(np.swapaxes(_int_data(rng, shape, dtype), -1, -2)).swapaxes(-1, -2)
    if how == "step":  # every second row and third column of a larger array
        big = _int_data(rng, tuple(2 * d for d in shape[:-1]) + (3 * shape[-1],), dtype)
        return big[tuple(slice(None, None, 2) for _ in shape[:-1]) + (slice(None, None, 3),)]
    if how == "rev":
        return _int_data(rng, shape, dtype)[::-1]
    if how == "bcast_rows":  # x.expand(...) of one row per matrix
        return np.broadcast_to(_int_data(rng, shape[:-2] + (1, shape[-1]), dtype), shape)
    if how == "bcast_batch":
        return np.broadcast_to(_int_data(rng, (1,) + shape[1:], dtype), shape)
    if how == "conj":  # x.conj() of a C-order x: its memory row-major
        return LazyConj(_int_data(rng, shape, dtype))
    if how == "mH":  # y.mH of a C-order y: the memory of conj(x) column-major
        return LazyConj(_view(rng, shape, "T", dtype))
    raise ValueError(how)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("sa,sb,va,vb", CASES)
def test_calls_compute_numpys_matmul(sa, sb, va, vb, dtype):
    rng = np.random.default_rng(zlib.crc32(repr((sa, sb, va, vb, dtype)).encode()))
    a, b = _view(rng, sa, va, dtype), _view(rng, sb, vb, dtype)
    expect = np.matmul(a, b)
    got = host_matmul(a, b)
    assert got.shape == expect.shape
    np.testing.assert_array_equal(got, expect)
    # out= in other layouts, with alpha and beta: transposed matrices (written in place), F order
    # (a stack of them: through a temporary), every third element (a vector: in place, ld 3)
    c0 = _int_data(rng, expect.shape, dtype)
    alpha, beta = (2.0, -1.0) if dtype == "float64" else (2.0 - 1j, -1.0 + 3j)
    outs = [_view_of(c0)] if expect.ndim >= 1 else []
    if expect.ndim >= 2:
        outs += [np.asfortranarray(c0), np.ascontiguousarray(c0.swapaxes(-1, -2)).swapaxes(-1, -2)]
    for out in outs:
        got = host_matmul(a, b, out=out, alpha=alpha, beta=beta)
        assert got is out
        np.testing.assert_array_equal(out, alpha * expect + beta * c0)


CONJ_CASES = [  # (a shape, b shape, a view, b view)
    ((5, 7), (7, 3), "conj", "C"), ((5, 7), (7, 3), "mH", "C"), ((5, 7), (7, 3), "C", "mH"),
    ((5, 7), (7, 3), "mH", "conj"), ((2, 5, 7), (7, 3), "conj", "mH"), ((2, 5, 7), (2, 7, 3), "mH", "T"),
    ((7,), (7, 3), "conj", "C"), ((5, 7), (7,), "C", "conj"), ((7,), (7,), "conj", "conj"),
    ((1, 7), (7, 1), "conj", "mH"), ((0, 7), (7, 3), "conj", "C"),
]


@pytest.mark.parametrize("sa,sb,va,vb", CONJ_CASES)
@pytest.mark.parametrize("out_order", ["C", "F"])
def test_conjugate_views(sa, sb, va, vb, out_order):
    """Lazy conjugate views (PyTorch's conj bit): the values are the conjugates; a view is passed
    as op "C" without a copy exactly where its memory holds X^H for the call's orientation: with
    a row-major result (C order) the column-major ones (x.mH), with a column-major result the
    row-major ones (x.conj())."""
    rng = np.random.default_rng(zlib.crc32(repr((sa, sb, va, vb, out_order)).encode()))
    a, b = _view(rng, sa, va, "complex128"), _view(rng, sb, vb, "complex128")
    expect = np.matmul(_values(a), _values(b))
    out = np.zeros(expect.shape, dtype=np.complex128, order=out_order)
    copied = []
    np.testing.assert_array_equal(host_matmul(a, b, out=out, copied=copied), expect)
    if expect.ndim == 2 and min(expect.shape) > 1:  # a matrix result with one orientation
        for name, view in (("a", va), ("b", vb)):
            if view in ("conj", "mH") and len(sa if name == "a" else sb) >= 2:
                no_copy = "mH" if out_order == "C" else "conj"
                assert (name in copied) == (view != no_copy), (name, view, copied)
    if len(sa) == 1 and va == "conj":  # a conjugate vector: both layouts fit, the one that gives op C is taken
        assert "a" not in copied


def test_mixed_real_complex_promotes_like_numpy():
    rng = np.random.default_rng(11)
    a, b = _int_data(rng, (4, 6)), _int_data(rng, (6, 3), "complex128")
    copied = []
    got = host_matmul(a, b, copied=copied)
    assert got.dtype == np.complex128 and copied == ["a"]
    np.testing.assert_array_equal(got, np.matmul(a, b))


@pytest.mark.parametrize("shape,strides,conj,transposed,expect", [
    ((3, 4), (4, 1), False, False, ("T", 4)), ((3, 4), (4, 1), False, True, ("N", 4)),
    ((3, 4), (4, 1), True, False, ("C", 4)), ((3, 4), (4, 1), True, True, None),      # conj(X)^T held: X^H
    ((3, 4), (1, 3), True, False, None), ((3, 4), (1, 3), True, True, ("C", 3)),      # x.mH of a C-order x
    ((1, 4), (4, 1), True, False, ("C", 4)), ((1, 4), (4, 1), True, True, ("C", 1)),  # a row: both layouts fit
    ((3, 4), (16, 1), True, False, ("C", 16)), ((3, 4), (2, 8), True, False, None),
])
def test_operand_layout(shape, strides, conj, transposed, expect):
    d = _arrays.ArrayDesc("a", "cai", 0x1000, shape, strides, 0, dtype="complex128", conj=conj)
    assert _arrays.operand_layout(d, transposed) == expect
    assert _arrays.operand_layout(dataclasses.replace(d, neg=True), transposed) is None  # lazy negative: copied


def _view_of(c0):
    """c0's values in a strided view (every third column): no BLAS layout, written through a temporary."""
    big = np.zeros(c0.shape[:-1] + (3 * c0.shape[-1],), dtype=c0.dtype)
    v = big[..., ::3]
    v[...] = c0
    return v


# --- what ran: CallInfo.scheme ------------------------------------------------------------------------
def test_call_info_scheme_native():
    native = ozgemm.VARIANTS["native"]
    ci = ozgemm._call_info((native, 0, 0.0, 4.0, 1, "no count met the bound", ozgemm.SCHEMES["ozaki1"], 0))
    assert (ci.scheme, ci.variant, ci.slices, ci.moduli, ci.fell_back) == ("native", "native", 0, 0, True)
    ci = ozgemm._call_info((native, 0, 0.0, 0.0, 0, "variant NATIVE", ozgemm.SCHEMES["ozaki2"], 14))
    assert (ci.scheme, ci.moduli) == ("native", 0)  # scheme="ozaki2", variant="native": nothing emulated
    ci = ozgemm._call_info((ozgemm.VARIANTS["unfused"], 0, 3.5, 4.0, 0, "r", ozgemm.SCHEMES["ozaki2"], 12))
    assert (ci.scheme, ci.moduli, ci.slices) == ("ozaki2", 12, 0)
    ci = ozgemm._call_info((ozgemm.VARIANTS["fully_fused"], 7, 2.0, 4.0, 0, "r", ozgemm.SCHEMES["ozaki1"], 0))
    assert (ci.scheme, ci.slices) == ("ozaki1", 7)


# --- PyTorch autograd, with torch.matmul standing in for the GPU ------------------------------------------
@pytest.fixture
def torch_on_cpu(monkeypatch):
    """The autograd Function with ozgemm.matmul replaced by alpha * torch.matmul (CPU tensors): its
    forward/backward/broadcast logic without a GPU. The options must arrive unchanged."""
    torch = pytest.importorskip("torch")
    from ozgemm import _torch_autograd

    seen = []

    def fake(a, b, *, alpha=1.0, **options):
        seen.append(options)
        return alpha * torch.matmul(a, b)

    monkeypatch.setattr(_torch_autograd, "_ozgemm_matmul", fake)
    return torch, seen


@pytest.mark.parametrize("sa,sb", [((5, 7), (7, 3)), ((2, 4, 5), (5, 3)), ((2, 1, 4, 5), (3, 5, 2)), ((5,), (5, 3)),
                                   ((4, 5), (5,)), ((5,), (5,)), ((5,), (2, 5, 3))])
def test_autograd_function_gradcheck_cpu(torch_on_cpu, sa, sb):
    torch, seen = torch_on_cpu
    g = torch.Generator().manual_seed(0)
    a = torch.randn(sa, dtype=torch.float64, generator=g, requires_grad=True)
    b = torch.randn(sb, dtype=torch.float64, generator=g, requires_grad=True)
    c = ozgemm.matmul(a, b, alpha=1.5, slices=8)
    assert c.grad_fn is not None and c.shape == torch.matmul(a, b).shape
    assert torch.autograd.gradcheck(lambda x, y: ozgemm.matmul(x, y, alpha=1.5, slices=8), (a, b))
    assert torch.autograd.gradgradcheck(lambda x, y: ozgemm.matmul(x, y, alpha=1.5, slices=8), (a, b))
    assert seen and all(o["slices"] == 8 and o["accuracy"] == "fp64" for o in seen)


def test_autograd_only_where_asked(torch_on_cpu):
    torch, _ = torch_on_cpu
    a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, 2, dtype=torch.float64)
    ozgemm.matmul(a, b).sum().backward()
    assert a.grad is not None and b.grad is None
    np.testing.assert_allclose(a.grad.numpy(), np.ones((3, 2)) @ b.numpy().T)
    with pytest.raises(ValueError, match="does not support autograd"):
        ozgemm.matmul(a, b, out=torch.empty(3, 2, dtype=torch.float64))


@pytest.mark.parametrize("sa,sb", [((5, 7), (7, 3)), ((2, 4, 5), (5, 3)), ((5,), (5, 3)), ((4, 5), (5,))])
def test_autograd_complex_gradcheck_cpu(torch_on_cpu, sa, sb):
    """complex128: PyTorch's convention (grad_a = conj(alpha) g @ b^H, grad_b = conj(alpha) a^H @ g),
    checked by gradcheck's Wirtinger derivatives; b^H reaches ozgemm.matmul as a lazy conjugate view."""
    torch, seen = torch_on_cpu
    g = torch.Generator().manual_seed(1)
    a = torch.randn(sa, dtype=torch.complex128, generator=g, requires_grad=True)
    b = torch.randn(sb, dtype=torch.complex128, generator=g, requires_grad=True)
    alpha = 1.5 - 0.5j
    c = ozgemm.matmul(a, b, alpha=alpha, moduli=12)
    assert c.dtype == torch.complex128 and c.grad_fn is not None
    assert torch.autograd.gradcheck(lambda x, y: ozgemm.matmul(x, y, alpha=alpha, moduli=12), (a, b))
    assert torch.autograd.gradgradcheck(lambda x, y: ozgemm.matmul(x, y, alpha=alpha, moduli=12), (a, b))
    assert seen and all(o["moduli"] == 12 for o in seen)


def test_autograd_mixed_real_complex_cpu(torch_on_cpu):
    """A float64 operand of a complex product is promoted (differentiably): its gradient is real."""
    torch, _ = torch_on_cpu
    g = torch.Generator().manual_seed(2)
    a = torch.randn(3, 4, dtype=torch.float64, generator=g, requires_grad=True)
    b = torch.randn(4, 2, dtype=torch.complex128, generator=g, requires_grad=True)
    (ozgemm.matmul(a, b).abs() ** 2).sum().backward()
    a2, b2 = a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    (torch.matmul(a2.to(torch.complex128), b2).abs() ** 2).sum().backward()
    assert a.grad.dtype == torch.float64
    torch.testing.assert_close(a.grad, a2.grad)
    torch.testing.assert_close(b.grad, b2.grad)
    assert torch.autograd.gradcheck(lambda x, y: ozgemm.matmul(x, y), (a, b))
