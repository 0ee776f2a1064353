"""numpy.matmul's semantics on the one-matrix C API, in pure Python (no CUDA, no framework).

:func:`ozgemm.matmul` takes what ``numpy.matmul`` / ``cupy.matmul`` / ``torch.matmul`` take:

* N-D operands (N >= 3) are stacks of matrices in the last two dimensions; the batch dimensions
  (all but the last two) broadcast against each other (numpy's rules: aligned from the right, a
  size-1 or missing dimension repeats). The library has no batched entry point: one ozgemmDgemm
  call per matrix of the broadcast batch, in C order of the batch index.
* A 1-D operand: ``a`` of shape (k,) is the matrix (1, k), ``b`` of shape (k,) is (k, 1), and that
  dimension is removed from the result (1-D @ 1-D gives a 0-D result).
* Any batch strides work without a copy (a matrix's address is computed from them: broadcast views
  with stride 0, negative strides); the strides of the last two dimensions must form a BLAS layout
  (:func:`ozgemm._arrays.blas_layout`), else the operand is copied (:func:`needs_copy`).
* ``out`` has the result's shape exactly. It is written in place when its matrices have a BLAS
  layout and provably do not overlap each other (:func:`writable_in_place`); otherwise the result is
  computed into a temporary and copied into ``out``, except where ``out`` repeats an element
  (a dimension of stride 0: :func:`repeats_elements`), which is refused, as PyTorch refuses it.
* complex128 operands run ozgemmZgemm with the same mapping; PyTorch's lazy conjugate views are
  passed as op "C" where the result's layout allows (:func:`ozgemm._arrays.operand_layout`), else
  copied.

Descriptions (:class:`ozgemm._arrays.ArrayDesc`) are turned into stacks (:func:`stacked`: the
size-1 dimensions numpy inserts for 1-D operands, with stride 0, which is never used) and into
one :class:`ozgemm._arrays.GemmCall` per matrix (:func:`gemm_calls`).
"""
from __future__ import annotations

import dataclasses
import itertools
from typing import List, Tuple

from ._arrays import ArrayDesc, GemmCall, blas_layout, gemm_call, operand_layout, out_transposed


@dataclasses.dataclass(frozen=True)
class MatmulShape:
    """The shapes of ``a @ b`` under numpy.matmul's rules."""

    batch: Tuple[int, ...]   #: the broadcast batch dimensions (empty for matrix @ matrix)
    m: int                   #: rows of each matrix of a (1 for a 1-D a)
    n: int                   #: columns of each matrix of b (1 for a 1-D b)
    k: int                   #: the contracted dimension
    result: Tuple[int, ...]  #: the result's shape: batch + (m,) unless a is 1-D + (n,) unless b is 1-D
    a_vector: bool           #: a is 1-D: (k,) taken as the matrix (1, k)
    b_vector: bool           #: b is 1-D: (k,) taken as the matrix (k, 1)

    @property
    def count(self) -> int:
        """The number of matrices (ozgemmDgemm calls) in the batch."""
        c = 1
        for d in self.batch:
            c *= d
        return c


def broadcast_batch(a: Tuple[int, ...], b: Tuple[int, ...]) -> Tuple[int, ...]:
    """numpy's broadcast of two batch shapes (aligned from the right; 1 repeats); ValueError if none."""
    out = []
    for x, y in itertools.zip_longest(reversed(a), reversed(b), fillvalue=1):
        if x != y and x != 1 and y != 1:
            raise ValueError(f"batch dimensions {tuple(a)} of a and {tuple(b)} of b do not broadcast "
                             f"(numpy.matmul's rules: sizes equal or 1, aligned from the right)")
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


def matmul_shape(a: Tuple[int, ...], b: Tuple[int, ...]) -> MatmulShape:
    """The shapes of ``a @ b`` for operands of shapes `a` and `b` (numpy.matmul); ValueError for
    0-D operands, a contracted-dimension mismatch or batch dimensions that do not broadcast."""
    for name, s in (("a", a), ("b", b)):
        if len(s) == 0:
            raise ValueError(f"{name}: a 0-D array (a scalar) has no matrix dimension; matmul needs 1-D or more "
                             "(for scaling use alpha= or the framework's multiply)")
    a_vector, b_vector = len(a) == 1, len(b) == 1
    a2 = (1,) + tuple(a) if a_vector else tuple(a)
    b2 = tuple(b) + (1,) if b_vector else tuple(b)
    (m, k), (k2, n) = a2[-2:], b2[-2:]
    if k != k2:
        raise ValueError(f"shape mismatch: a is {tuple(a)}, b is {tuple(b)} (a's columns, its last dimension, "
                         f"must equal b's rows, {'its only' if b_vector else 'its second to last'} dimension)")
    batch = broadcast_batch(a2[:-2], b2[:-2])
    result = batch + (() if a_vector else (m,)) + (() if b_vector else (n,))
    return MatmulShape(batch, m, n, k, result, a_vector, b_vector)


def stacked(d: ArrayDesc, role: str, shape: MatmulShape) -> ArrayDesc:
    """`d` (role "a", "b" or "out") as a stack of matrices: with the size-1 dimension numpy.matmul
    inserts for a 1-D a (rows), a 1-D b (columns) and the result of either (stride 0: the stride of
    a size-1 dimension is never used)."""
    dims, strides = tuple(d.shape), tuple(d.strides)
    if role == "a" and shape.a_vector:
        dims, strides = (1,) + dims, (0,) + strides
    elif role == "b" and shape.b_vector:
        dims, strides = dims + (1,), strides + (0,)
    elif role == "out":
        if shape.b_vector:  # batch + (m,) -> batch + (m, 1)
            dims, strides = dims + (1,), strides + (0,)
        if shape.a_vector:  # batch + (n,) -> batch + (1, n)
            dims, strides = dims[:-1] + (1,) + dims[-1:], strides[:-1] + (0,) + strides[-1:]
    return dataclasses.replace(d, shape=dims, strides=strides)


def matrix(d: ArrayDesc, offset: int = 0) -> ArrayDesc:
    """The matrix of the stack `d` that starts `offset` elements after d.ptr (its last two dimensions)."""
    return dataclasses.replace(d, ptr=d.ptr + offset * d.itemsize, shape=d.shape[-2:], strides=d.strides[-2:])


def batch_offsets(d: ArrayDesc, batch: Tuple[int, ...]) -> List[int]:
    """Element offsets from d.ptr of the matrices of the stack `d` for each index of the broadcast
    `batch`, in C order: d's batch dimensions align with batch's from the right; a missing or
    size-1 dimension repeats its only matrix (offset step 0)."""
    own = len(d.shape) - 2
    pad = len(batch) - own
    offsets = [0]
    for j, size in enumerate(batch):
        jd = j - pad
        step = d.strides[jd] if jd >= 0 and d.shape[jd] != 1 else 0
        offsets = [o + i * step for o in offsets for i in range(size)]
    return offsets


def needs_copy(d: ArrayDesc, transposed: bool) -> bool:
    """The stack `d` (an input, :func:`stacked`) cannot be passed without a copy: the strides of its
    matrices form no BLAS layout (its batch strides never need one), or it is a lazy conjugate
    (negative) view that the call cannot take as it is (:func:`ozgemm._arrays.operand_layout`).
    `transposed`: the call computes C^T (:func:`result_transposed`)."""
    return operand_layout(matrix(d), transposed) is None


def result_transposed(out: ArrayDesc) -> bool:
    """The calls that write the stack `out` compute C^T = B^T A^T (its matrices are row-major)."""
    return out_transposed(matrix(out))


def repeats_elements(d: ArrayDesc) -> bool:
    """Two indices of `d` address the same element through a dimension of stride 0 (a broadcast
    view): writing such an ``out`` is refused. (Overlap of other kinds is not detected here.)"""
    return any(size > 1 and stride == 0 for size, stride in zip(d.shape, d.strides))


def provably_one_to_one(d: ArrayDesc) -> bool:
    """No two indices of `d` address the same element: with the dimensions sorted by |stride|,
    each stride exceeds the span of the smaller ones. Sufficient, not necessary (some interleaved
    layouts are one-to-one and fail the test)."""
    if any(size == 0 for size in d.shape):
        return True
    span = 0  # the largest offset the dimensions taken so far reach
    for stride, size in sorted((abs(s), n) for n, s in zip(d.shape, d.strides) if n > 1):
        if stride <= span:
            return False
        span += (size - 1) * stride
    return True


def writable_in_place(d: ArrayDesc) -> bool:
    """The result can be written straight into the stack `d` (an ``out``, :func:`stacked`): its
    matrices have a BLAS layout, no two of its elements share an address, and it is no lazy
    conjugate or negative view (PyTorch's bits: written through a temporary, which its copy_ resolves)."""
    return blas_layout(matrix(d)) is not None and provably_one_to_one(d) and not (d.conj or d.neg)


def gemm_calls(a: ArrayDesc, b: ArrayDesc, out: ArrayDesc, shape: MatmulShape) -> List[GemmCall]:
    """One ozgemmDgemm (ozgemmZgemm) call per matrix of the batch (C order) computing out = a @ b; a, b and out are
    stacks (:func:`stacked`). Raises ValueError for a matrix layout the C API cannot take (copy
    first: :func:`needs_copy`, :func:`writable_in_place`)."""
    return [gemm_call(matrix(a, oa), matrix(b, ob), matrix(out, oc))
            for oa, ob, oc in zip(batch_offsets(a, shape.batch), batch_offsets(b, shape.batch),
                                  batch_offsets(out, shape.batch))]
