"""CPU tests of the ozgemm package: the import, info(), argument errors, host arrays rejected,
the strides -> C API mapping (fake __cuda_array_interface__ objects; on host memory through the
host reference, so the mapping is checked by computing), the host reference and the error
measures. No GPU needed; the last tests check what happens without one."""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import ozgemm
from ozgemm import _arrays, reference
from conftest import HAS_GPU, FakeCudaArray, as_cai, cpu_only

ROOT = pathlib.Path(__file__).resolve().parents[2]
U = 2.0**-53


def rng_matrix(rng, r, c, order="C"):
    return np.asarray(rng.standard_normal((r, c)), order=order)


# --- import, version, info ------------------------------------------------------------------------
def test_import_and_version_matches_cmake():
    cmake = (ROOT / "CMakeLists.txt").read_text() if (ROOT / "CMakeLists.txt").exists() else ""
    m = re.search(r"project\(ozgemm VERSION ([0-9.]+)", cmake)
    assert ozgemm.__version__ != "unknown"
    if m:
        assert ozgemm.__version__ == m.group(1)
    assert ozgemm.DEFAULT_SLICES == 8 and ozgemm.MAX_SLICES >= ozgemm.DEFAULT_SLICES


def test_info_never_raises_and_describes_the_build():
    d = ozgemm.info()
    assert d["extension_loaded"], d["import_error"]
    for key in ("version", "build", "cuda_runtime_version", "cuda_driver_version", "device_count", "devices",
                "usable", "reason"):
        assert key in d
    assert d["build"]["cuda_architectures"], d["build"]
    assert d["build"]["cuda_runtime"] in ("static", "shared")
    assert d["cuda_runtime_version"] > 0
    if not d["usable"]:
        assert d["reason"]  # says why there is no usable GPU


@cpu_only
def test_info_without_gpu():
    d = ozgemm.info()
    assert d["usable"] is False and d["device_count"] == 0 and d["devices"] == []
    assert d["device_error"]  # e.g. "CUDA driver version is insufficient for CUDA runtime version"


# --- host arrays rejected ---------------------------------------------------------------------------
def test_numpy_rejected_with_a_clear_message():
    a = np.ones((4, 4))
    with pytest.raises(TypeError, match=r"a: ozgemm.matmul needs a CUDA device array; got a host array \(numpy"):
        ozgemm.matmul(a, a)
    with pytest.raises(TypeError, match="Copy it to the GPU first"):
        ozgemm.matmul(FakeCudaArray((4, 4)), a)
    with pytest.raises(TypeError, match="host array"):
        ozgemm.plan(a, a)


def test_torch_cpu_tensors_rejected():
    torch = pytest.importorskip("torch")
    a = torch.ones(3, 4, dtype=torch.float64)
    with pytest.raises(TypeError, match="a: ozgemm.matmul needs a CUDA device array.*PyTorch tensor on cpu"):
        ozgemm.matmul(a, a.T)
    with pytest.raises(TypeError, match="host array"):  # requires grad: the autograd forward refuses it alike
        ozgemm.matmul(a.requires_grad_(), a.T)


def test_dlpack_host_devices_rejected():
    class HostDLPack:
        def __init__(self, dev_type):
            self.dev_type = dev_type

        def __dlpack_device__(self):
            return (self.dev_type, 0)

        def __dlpack__(self, stream=None):
            raise AssertionError("must not be exported")

    for dev_type, what in ((1, "CPU"), (3, "pinned")):
        with pytest.raises(TypeError, match=f"host array.*{what}"):
            ozgemm.matmul(HostDLPack(dev_type), FakeCudaArray((2, 2)))
    with pytest.raises(TypeError, match="unsupported DLPack device ROCm"):
        ozgemm.matmul(HostDLPack(10), FakeCudaArray((2, 2)))


def test_other_objects_rejected():
    with pytest.raises(TypeError, match="host array"):
        ozgemm.matmul([[1.0]], [[1.0]])
    with pytest.raises(TypeError, match="expected a CUDA float64 or complex128 array"):
        ozgemm.matmul(object(), object())


# --- argument errors (raised before anything runs) -----------------------------------------------------
@pytest.mark.parametrize("kwargs,exc,pattern", [
    (dict(accuracy="fp32"), ValueError, "accuracy must be one of"),
    (dict(variant="fastest"), ValueError, "variant must be one of"),
    (dict(slices=0), ValueError, r"slices must be in 1\.\."),
    (dict(slices=ozgemm.MAX_SLICES + 1), ValueError, r"slices must be in 1\.\."),
    (dict(slices=True), TypeError, "slices must be an int"),
    (dict(slices=7.0), TypeError, "slices must be an int"),
    (dict(beta=1.0), ValueError, "beta != 0 needs out="),
    (dict(alpha=1j), TypeError, "alpha must be a real number"),
    (dict(beta="x"), TypeError, "beta must be a real number"),
    (dict(stream=True), TypeError, "stream must be"),
    (dict(stream=-5), ValueError, "stream must be a cudaStream_t"),
    (dict(stream="s"), TypeError, "stream must be"),
    (dict(scheme="ozaki3"), ValueError, "scheme must be one of"),
    (dict(scheme="ozaki2", slices=7), ValueError, "slices= is the Ozaki-I count"),
    (dict(moduli=8), ValueError, "moduli= applies to scheme='ozaki2'"),
    (dict(scheme="ozaki2", moduli=1), ValueError, r"moduli must be in 2\.\."),
    (dict(scheme="ozaki2", moduli=ozgemm.MAX_MODULI + 1), ValueError, "moduli must be in"),
])
def test_option_errors(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        ozgemm.matmul(FakeCudaArray((3, 4)), FakeCudaArray((4, 5)), **kwargs)


@pytest.mark.parametrize("kwargs,exc,pattern", [
    (dict(scheme="ozaki1"), ValueError, "Ozaki-I scheme has no complex form"),
    (dict(slices=7), ValueError, "complex128 products run the complex Ozaki-II scheme"),
    (dict(accuracy="fixed", slices=7), ValueError, "slices= is the Ozaki-I count"),
    (dict(moduli=1), ValueError, r"moduli must be in 2\.\."),
    (dict(alpha="x"), TypeError, "alpha must be a real number \\(or complex"),
    (dict(beta=1j), ValueError, "beta != 0 needs out="),
])
def test_complex_option_errors(kwargs, exc, pattern):
    """complex128 operands: Ozaki-I options are refused (it has no complex form)."""
    with pytest.raises(exc, match=pattern):
        ozgemm.matmul(FakeCudaArray((3, 4), typestr="<c16"), FakeCudaArray((4, 5), typestr="<c16", ptr=0x90000),
                      **kwargs)


C16 = dict(typestr="<c16")


@pytest.mark.parametrize("a,b,out,kwargs,exc,pattern", [
    # a float64 operand of a complex product is converted by its framework: not for other producers
    (FakeCudaArray((3, 4)), FakeCudaArray((4, 2), **C16), None, {}, TypeError,
     "a: a float64 operand of a complex128 product is converted.*got a cai array"),
    (FakeCudaArray((3, 4), **C16), FakeCudaArray((4, 2)), None, {}, TypeError, "b: a float64 operand"),
    (FakeCudaArray((3, 4), **C16), FakeCudaArray((4, 2), **C16), FakeCudaArray((3, 2), ptr=0x90000), {}, TypeError,
     "out: expected complex128"),
    (FakeCudaArray((3, 4)), FakeCudaArray((4, 2)), FakeCudaArray((3, 2), ptr=0x90000, **C16), {}, TypeError,
     "out: expected float64"),
    (FakeCudaArray((3, 4)), FakeCudaArray((4, 2)), None, dict(alpha=2j), TypeError,
     "alpha must be a real number for float64 operands.*needs complex128 operands"),
    (FakeCudaArray((3, 4), **C16), FakeCudaArray((4, 2), **C16), None, {}, None, None),  # fine until the GPU
    (FakeCudaArray((3, 4), strides=(16, 32), **C16), FakeCudaArray((4, 2), **C16), None, {}, ValueError,
     "cannot be passed"),
    (FakeCudaArray((3, 4), strides=(24, 8), **C16), FakeCudaArray((4, 2), **C16), None, {}, ValueError,
     "not multiples of the element size 16"),
    (FakeCudaArray((3, 4), typestr="<c8"), FakeCudaArray((4, 2), **C16), None, {}, TypeError,
     "expected float64 \\('<f8'\\) or complex128 \\('<c16'\\)"),
    (FakeCudaArray((3, 4), **C16), FakeCudaArray((4, 2), ptr=0x10000 + 48, **C16), None, {}, None, None),
])
def test_complex_array_errors(a, b, out, kwargs, exc, pattern):
    if exc is None:  # valid: what follows needs a GPU (OzgemmError without one)
        if HAS_GPU:
            pytest.skip("the pointers are fake")
        with pytest.raises(ozgemm.OzgemmError, match="ARCH_MISMATCH"):
            ozgemm.matmul(a, b, out=out, **kwargs)
        return
    with pytest.raises(exc, match=pattern):
        ozgemm.matmul(a, b, out=out, **kwargs)


def test_complex_scalars():
    assert ozgemm._scalar("alpha", 2) == 2.0 and isinstance(ozgemm._scalar("alpha", 2), float)
    assert ozgemm._scalar("alpha", 1 - 2j) == 1 - 2j
    assert ozgemm._scalar("alpha", np.complex64(1 + 1j)) == 1 + 1j  # numpy complex scalars keep their imaginary part
    assert isinstance(ozgemm._scalar("alpha", np.float32(3)), float)
    torch = pytest.importorskip("torch")
    assert ozgemm._scalar("alpha", torch.tensor(2 + 3j, dtype=torch.complex128)) == 2 + 3j


def test_plan_refuses_complex():
    with pytest.raises(ValueError, match="ozgemmPlanCall has no complex form"):
        ozgemm.plan(FakeCudaArray((3, 4), **C16), FakeCudaArray((4, 2), ptr=0x90000, **C16))


@pytest.mark.parametrize("a,b,out,exc,pattern", [
    (FakeCudaArray((3, 4)), FakeCudaArray((5, 6)), None, ValueError, "shape mismatch"),
    (FakeCudaArray(()), FakeCudaArray((3, 2)), None, ValueError, "a: a 0-D array"),
    (FakeCudaArray((3, 4, 1)), FakeCudaArray((4, 2)), None, ValueError, "shape mismatch"),
    (FakeCudaArray((3,)), FakeCudaArray((4,)), None, ValueError, "shape mismatch"),
    (FakeCudaArray((2, 3, 4)), FakeCudaArray((3, 4, 2)), None, ValueError, r"batch dimensions \(2,\) of a and \(3,\)"),
    (FakeCudaArray((2, 3, 4)), FakeCudaArray((4, 2)), FakeCudaArray((3, 2), ptr=0x90000), ValueError,
     r"out: expected shape \(2, 3, 2\)"),
    (FakeCudaArray((3,)), FakeCudaArray((3,)), FakeCudaArray((1,), ptr=0x90000), ValueError,
     r"out: expected shape \(\)"),
    (FakeCudaArray((2, 3, 4)), FakeCudaArray((4, 2)), FakeCudaArray((2, 3, 2), strides=(0, 16, 8), ptr=0x90000),
     ValueError, "write several results into one element"),
    (FakeCudaArray((3, 4), strides=(8, 0)), FakeCudaArray((4, 2)), None, ValueError,
     "cannot be passed.*ozgemm copies only torch, cupy, jax arrays"),
    (FakeCudaArray((3, 4), typestr="<f4"), FakeCudaArray((4, 2)), None, TypeError, "expected float64"),
    (FakeCudaArray((3, 4), strides=(12, 4)), FakeCudaArray((4, 2)), None, ValueError, "not multiples of"),
    (FakeCudaArray((3, 4), strides=(-32, 8)), FakeCudaArray((4, 2)), None, ValueError, "cannot be passed"),
    (FakeCudaArray((3, 4), strides=(0, 8)), FakeCudaArray((4, 2)), None, ValueError, "cannot be passed"),
    (FakeCudaArray((3, 4), strides=(16, 64)), FakeCudaArray((4, 2)), None, ValueError, "cannot be passed"),
    (FakeCudaArray((3, 4)), FakeCudaArray((4, 2)), FakeCudaArray((2, 3), ptr=0x90000), ValueError,
     r"out: expected shape \(3, 2\)"),
    (FakeCudaArray((3, 4)), FakeCudaArray((4, 2)), FakeCudaArray((3, 2), ptr=0x10000 + 16), ValueError,
     "out overlaps a"),
    (FakeCudaArray((3, 4)), FakeCudaArray((4, 2)), FakeCudaArray((3, 2), ptr=0x90000, readonly=True), ValueError,
     "read-only"),
    (FakeCudaArray((3, 4)), FakeCudaArray((4, 2)), FakeCudaArray((3, 2), strides=(8, 8), ptr=0x90000), ValueError,
     "out: strides"),
])
def test_array_errors(a, b, out, exc, pattern):
    with pytest.raises(exc, match=pattern):
        ozgemm.matmul(a, b, out=out)


# --- strides -> (op, ld) --------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,strides,expect", [
    ((3, 4), None, ("T", 4)),                   # C-contiguous (CAI strides None): row-major
    ((3, 4), (32, 8), ("T", 4)),                # C-contiguous, explicit
    ((3, 4), (8, 24), ("N", 3)),                # F-contiguous: column-major
    ((3, 4), (8, 80), ("N", 10)),               # column-major sub-block, ld 10
    ((3, 4), (80, 8), ("T", 10)),               # row-major sub-block (a[:, :4] of a 3 x 10 array)
    ((4, 3), (8, 32), ("N", 4)),                # x.T of a C-contiguous 3 x 4 array
    ((3, 4), (16, 64), None),                   # no unit stride (a[::2, ::2])
    ((3, 4), (0, 8), None),                     # broadcast rows
    ((3, 4), (8, 8), None),                     # overlapping columns
    ((3, 4), (8, 16), None),                    # ld 2 < 3 rows
    ((3, 4), (-32, 8), None),                   # negative stride (a[::-1])
    ((1, 4), (123 * 8, 8), ("N", 1)),           # size-1 dimension: its stride is ignored
    ((4, 1), (8, 999 * 8), ("N", 4)),
    ((1, 1), (0, 0), ("N", 1)),
    ((0, 4), (32, 8), ("N", 1)),                # empty
])
def test_blas_layout(shape, strides, expect):
    d = _arrays.describe(FakeCudaArray(shape, strides), "a")
    assert _arrays.blas_layout(d) == expect


def test_gemm_call_flips_for_row_major_out():
    a = _arrays.describe(FakeCudaArray((3, 4), ptr=0x1000), "a")              # row-major
    b = _arrays.describe(FakeCudaArray((4, 5), (8, 32), ptr=0x2000), "b")     # column-major
    c_row = _arrays.describe(FakeCudaArray((3, 5), ptr=0x3000), "out")
    c_col = _arrays.describe(FakeCudaArray((3, 5), (8, 24), ptr=0x3000), "out")
    # C column-major: C = op(A) op(B) with A stored row-major (op T, ld 4), B column-major (N, ld 4).
    assert _arrays.gemm_call(a, b, c_col) == _arrays.GemmCall("T", "N", 3, 5, 4, 0x1000, 4, 0x2000, 4, 0x3000, 3)
    # C row-major: C^T = B^T A^T: B first with its op flipped, m and n swapped, ldc = 5.
    assert _arrays.gemm_call(a, b, c_row) == _arrays.GemmCall("T", "N", 5, 3, 4, 0x2000, 4, 0x1000, 4, 0x3000, 5)


def test_stream_handles():
    class CudaStreamProtocol:
        def __cuda_stream__(self):
            return (0, 1234)

    class CupyLike:
        ptr = 77

    class TorchLike:
        cuda_stream = 88

    assert _arrays.stream_handle(0) == 0
    assert _arrays.stream_handle(5) == 5
    assert _arrays.stream_handle(CudaStreamProtocol()) == 1234
    assert _arrays.stream_handle(CupyLike()) == 77
    assert _arrays.stream_handle(TorchLike()) == 88


def test_cai_stream_and_readonly_are_read():
    d = _arrays.describe(FakeCudaArray((2, 2), stream=7, readonly=True), "a")
    assert d.stream == 7 and d.readonly and d.device is None and d.framework == "cai"
    assert _arrays.describe(FakeCudaArray((2, 2), version=2), "a").stream is None


# --- the mapping checked by computing: host memory through the host reference ---------------------------
def _layouts(rng, r, c):
    """The same r x c matrix in every layout the C API can express, plus ones it cannot."""
    base = rng_matrix(rng, r, c)
    big = rng_matrix(rng, r + 5, c + 7)
    big[2:2 + r, 3:3 + c] = base
    bigf = np.asfortranarray(big)
    return {
        "C": base.copy(),
        "F": np.asfortranarray(base),
        "T_of_C": np.ascontiguousarray(base.T).T,        # F-order through a transposed view
        "T_of_F": np.asfortranarray(base.T).T,           # C-order through a transposed view
        "block_C": big[2:2 + r, 3:3 + c],                # row-major, ld c + 7, at an offset
        "block_F": bigf[2:2 + r, 3:3 + c],               # column-major, ld r + 5, at an offset
    }


@pytest.mark.parametrize("slices", [3, 8])
def test_host_reference_same_bits_in_every_layout(slices):
    rng = np.random.default_rng(1)
    m, n, k = 37, 23, 51
    la, lb = _layouts(rng, m, k), _layouts(rng, k, n)
    ref = reference.ozaki_matmul(la["C"], lb["C"], slices=slices)
    for name_a, a in la.items():
        for name_b, b in lb.items():
            for out_order in ("C", "F"):
                out = np.zeros((m, n), order=out_order)
                got = reference.ozaki_matmul(a, b, slices=slices, out=out)
                assert got is out
                np.testing.assert_array_equal(got, ref, err_msg=f"a {name_a}, b {name_b}, out {out_order}")


def test_ozaki2_host_reference_same_bits_in_every_layout_and_accurate():
    rng = np.random.default_rng(7)
    m, n, k = 21, 17, 33
    la, lb = _layouts(rng, m, k), _layouts(rng, k, n)
    ref = reference.ozaki2_matmul(la["C"], lb["C"], moduli=ozgemm.DEFAULT_MODULI)
    for name_a, a in la.items():
        for name_b, b in lb.items():
            out = np.zeros((m, n), order="F")
            got = reference.ozaki2_matmul(a, b, moduli=ozgemm.DEFAULT_MODULI, out=out)
            np.testing.assert_array_equal(got, ref, err_msg=f"a {name_a}, b {name_b}")
    e = reference.errors(ref, la["C"], lb["C"])
    assert e["normwise"] < 1e-13, e  # 14 moduli: close to FP64 on N(0,1) data
    assert reference.errors(reference.ozaki2_matmul(la["C"], lb["C"], moduli=4), la["C"], lb["C"])["normwise"] > \
        10 * e["normwise"]


def test_host_reference_through_fake_cuda_arrays():
    """describe() of __cuda_array_interface__ objects (byte strides, None = C order) -> gemm_call
    -> the C API's argument order, run by the host reference on the same memory."""
    rng = np.random.default_rng(2)
    m, n, k = 19, 29, 41
    la, lb = _layouts(rng, m, k), _layouts(rng, k, n)
    alpha, beta = 1.5, -0.25
    c0 = rng_matrix(rng, m, n)
    expect = reference.ozaki_matmul(la["C"], lb["C"], slices=6, out=c0.copy(), alpha=alpha, beta=beta)
    for name_a, a in la.items():
        for name_b, b in lb.items():
            for out_order in ("C", "F"):
                out = np.array(c0, order=out_order)
                A = _arrays.describe(as_cai(a), "a")
                B = _arrays.describe(as_cai(b), "b")
                C = _arrays.describe(as_cai(out), "out")
                c = _arrays.gemm_call(A, B, C)
                ozgemm._ozgemm.host_ozaki(c.transa, c.transb, c.m, c.n, c.k, alpha, c.A, c.lda, c.B, c.ldb, beta,
                                          c.C, c.ldc, 6)
                np.testing.assert_array_equal(out, expect, err_msg=f"a {name_a}, b {name_b}, out {out_order}")
    # CAI without strides means C order
    cai = FakeCudaArray((m, k), None, ptr=la["C"].ctypes.data)
    assert _arrays.describe(cai, "a").strides == (k, 1)


def test_host_reference_copies_inexpressible_inputs():
    rng = np.random.default_rng(3)
    a, b = rng_matrix(rng, 20, 30), rng_matrix(rng, 30, 10)
    expect = reference.ozaki_matmul(a[::-1].copy(), b[:, ::-1].copy(), slices=8)
    np.testing.assert_array_equal(reference.ozaki_matmul(a[::-1], b[:, ::-1], slices=8), expect)


def test_host_reference_accuracy_by_slice_count():
    rng = np.random.default_rng(4)
    a, b = rng_matrix(rng, 64, 256), rng_matrix(rng, 256, 48)
    e8 = reference.errors(reference.ozaki_matmul(a, b, slices=8), a, b)
    e4 = reference.errors(reference.ozaki_matmul(a, b, slices=4), a, b)
    assert e8["componentwise"] < 4 * U            # 8 slices: FP64-level on N(0,1) data (docs/numerics.md)
    assert e4["componentwise"] > 100 * e8["componentwise"]
    assert e8["compared"] == 64 * 48 and e8["nonfinite_mismatch"] == 0


def test_host_reference_integers_exact():
    rng = np.random.default_rng(5)
    a = rng.integers(-127, 128, (16, 40)).astype(np.float64)
    b = rng.integers(-127, 128, (40, 12)).astype(np.float64)
    for s in (1, 2, 8):
        np.testing.assert_array_equal(reference.ozaki_matmul(a, b, slices=s), a @ b)


def test_host_reference_argument_errors():
    a = np.ones((3, 4))
    with pytest.raises(TypeError, match="float64"):
        reference.ozaki_matmul(a.astype(np.float32), a.T)
    with pytest.raises(ValueError, match="slices"):
        reference.ozaki_matmul(a, a.T, slices=0)
    with pytest.raises(ValueError, match="shape mismatch"):
        reference.ozaki_matmul(a, a)
    with pytest.raises(ValueError, match="beta != 0 needs out="):
        reference.ozaki_matmul(a, a.T, beta=1.0)


# --- the error measures of docs/guide.md ---------------------------------------------------------------
def test_error_measures_definitions():
    """Integer data: numpy's products are exact, so the expected errors follow from the definitions."""
    rng = np.random.default_rng(6)
    a = rng.integers(-8, 9, (10, 7)).astype(np.float64)
    b = rng.integers(-8, 9, (7, 9)).astype(np.float64)
    c0 = rng.integers(-8, 9, (10, 9)).astype(np.float64)
    alpha, beta = 2.0, -0.5
    exact = alpha * (a @ b) + beta * c0
    e = reference.errors(exact, a, b, alpha=alpha, beta=beta, c0=c0)
    assert e["normwise"] == 0 and e["componentwise"] == 0 and e["elementwise"] == 0
    c = exact.copy()
    c[np.nonzero(exact)[0][0], np.nonzero(exact)[1][0]] += 0.5  # one perturbed nonzero entry
    e = reference.errors(c, a, b, alpha=alpha, beta=beta, c0=c0)
    d = np.abs(c - exact)
    absprod = abs(alpha) * (np.abs(a) @ np.abs(b)) + abs(beta) * np.abs(c0)
    assert e["normwise"] == pytest.approx(np.linalg.norm(d) / np.linalg.norm(exact), rel=1e-12)
    assert e["componentwise"] == pytest.approx(np.max(d / np.where(absprod > 0, absprod, 1)), rel=1e-12)
    nz = exact != 0
    assert e["elementwise"] == pytest.approx(np.max(d[nz] / np.abs(exact[nz])), rel=1e-12)
    assert e["compared"] == c.size


# --- behaviour without a GPU --------------------------------------------------------------------------
@cpu_only
def test_matmul_without_gpu_raises_ozgemm_error():
    a, b = FakeCudaArray((2, 3)), FakeCudaArray((3, 2), ptr=0x20000)
    with pytest.raises(ozgemm.OzgemmError, match="OZGEMM_STATUS_ARCH_MISMATCH") as ei:
        ozgemm.matmul(a, b, out=FakeCudaArray((2, 2), ptr=0x30000))
    e = ei.value
    assert e.status == 3 and e.status_name == "OZGEMM_STATUS_ARCH_MISMATCH" and e.function == "ozgemmDgemm"
    assert "no GPU" in e.status_string
    with pytest.raises(ozgemm.OzgemmError, match="ARCH_MISMATCH.*no NVIDIA driver/GPU found"):
        ozgemm.matmul(a, b)  # the result buffer cannot be allocated either
    with pytest.raises(ozgemm.OzgemmError, match="ARCH_MISMATCH") as ei:  # a stack and a vector: the first call
        ozgemm.matmul(FakeCudaArray((4, 2, 3)), FakeCudaArray((3,), ptr=0x20000),
                      out=FakeCudaArray((4, 2), ptr=0x30000))
    # (2 x 3, row-major) @ (3 x 1): the 2 x 1 result is a column-major matrix with ldc 2
    assert "[ozgemmDgemm(T, N, m=2, n=1, k=3, lda=3, ldb=3, ldc=2), device 0]" in str(ei.value)
    with pytest.raises(ozgemm.OzgemmError, match="ARCH_MISMATCH"):
        ozgemm.plan(FakeCudaArray((2, 3)), FakeCudaArray((3, 2), ptr=0x20000), slices=7)
    with pytest.raises(ozgemm.OzgemmError, match="NOT_INITIALIZED"):
        ozgemm.last_call_info()
    with pytest.raises(RuntimeError):
        ozgemm._ozgemm.device_empty([2, 2], 0)
    with pytest.raises(RuntimeError):
        ozgemm._ozgemm.device_empty([2, 2], 0, True)
    c16 = dict(typestr="<c16")
    with pytest.raises(ozgemm.OzgemmError, match="ARCH_MISMATCH") as ei:  # complex: ozgemmZgemm, op C-free
        ozgemm.matmul(FakeCudaArray((2, 3), **c16), FakeCudaArray((3, 2), ptr=0x20000, **c16),
                      out=FakeCudaArray((2, 2), ptr=0x30000, **c16), alpha=1 + 1j, beta=2j, moduli=12)
    assert ei.value.function == "ozgemmZgemm" and "[ozgemmZgemm(N, N, m=2, n=2, k=3" in str(ei.value)


def test_plan_takes_matrices_only():
    with pytest.raises(ValueError, match=r"ozgemm.plan takes 2-D matrices, got a of shape \(2, 3, 4\)"):
        ozgemm.plan(FakeCudaArray((2, 3, 4)), FakeCudaArray((4, 5), ptr=0x90000))
    with pytest.raises(ValueError, match="ozgemm.plan takes 2-D matrices"):
        ozgemm.plan(FakeCudaArray((4,)), FakeCudaArray((4, 5), ptr=0x90000))


def test_ozgemm_error_attributes():
    e = ozgemm.OzgemmError(2, "ozgemmDgemm", "m=1")
    assert isinstance(e, RuntimeError)
    assert e.status == 2 and e.status_name == "OZGEMM_STATUS_INVALID_VALUE"
    assert str(e).startswith("ozgemmDgemm: OZGEMM_STATUS_INVALID_VALUE") and str(e).endswith("[m=1]")
