"""GPU tests of ozgemm.matmul on CuPy arrays and PyTorch tensors (and JAX arrays when installed).
They skip without a usable GPU (ozgemm.info()) and per framework when it is not installed.

* FIXED mode: every emulated variant gives the host reference's bits (ozgemm.reference), for every
  layout (C/F order, transposed views, sub-blocks at an offset), with out=, alpha and beta.
* The C API's bits: with OZGEMM_LIBRARY=/path/libozgemm.so.0 the same call through ctypes
  (ozgemmDgemm on the same pointers) must give the same bits, in FP64 and FIXED mode.
* FP64 mode: the contract |C - AB| <= min(4, k) u |A||B| (+ the final rounding) against double-double.
* Streams (the caller's current stream, explicit streams), threads, plan(), error cases.
* complex128 (ozgemmZgemm): FIXED-mode bits equal to the complex host reference in every layout
  (transposed and conjugate views: CUBLAS_OP_C), the contract against the framework's own matmul,
  stacks, numpy's promotion of a float64 operand, call info, autograd, JAX, CAI '<c16'.
"""
from __future__ import annotations

import ctypes
import os
import threading

import numpy as np
import pytest

import ozgemm
from ozgemm import _batch, reference
from conftest import FRAMEWORKS, HAS_GPU, INFO, FakeCudaArray, framework, gpu

pytestmark = gpu
U = 2.0**-53
SLICES = 7
# Tests that compare with the host reference's bits name an emulated variant: AUTO may run native
# DGEMM (on Hopper it does at every size), whose bits differ.
BITS_VARIANT = "unfused"


def _variants(status: str):
    if not HAS_GPU:
        return []
    return [v for v, s in INFO["devices"][0]["variants"].items() if (s == "available") == (status == "available")]


EMULATED = [v for v in _variants("available") if v not in ("auto", "native")]
UNSUPPORTED = _variants("unsupported")


def problem(seed=0, m=300, n=200, k=500, phi=None):
    rng = np.random.default_rng(seed)
    if phi is None:
        return rng.standard_normal((m, k)), rng.standard_normal((k, n))
    f = lambda r, c: (rng.random((r, c)) - 0.5) * np.exp(phi * rng.standard_normal((r, c)))  # noqa: E731
    return f(m, k), f(k, n)


def device_layouts(fw, x):
    """x (numpy, r x c) on the device in several layouts: name -> device view."""
    mod, dev, _ = framework(fw)
    r, c = x.shape
    big = np.zeros((r + 5, c + 7))
    big[2:2 + r, 3:3 + c] = x
    if fw == "cupy":
        X = dev(x)
        return {"C": X, "F": mod.asfortranarray(X), "T_view": dev(np.ascontiguousarray(x.T)).T,
                "block_C": dev(big)[2:2 + r, 3:3 + c], "block_F": mod.asfortranarray(dev(big))[2:2 + r, 3:3 + c]}
    X = dev(x)
    Bg = dev(big)
    return {"C": X, "F": X.t().contiguous().t(), "T_view": dev(np.ascontiguousarray(x.T)).t(),
            "block_C": Bg[2:2 + r, 3:3 + c], "block_F": Bg.t().contiguous().t()[2:2 + r, 3:3 + c]}


def swap_last(fw, x):
    """The transposed view of x's matrices (last two dimensions), no copy."""
    return x.transpose(-1, -2) if fw == "torch" else x.swapaxes(-1, -2)


def broadcast_to(fw, x, shape):
    """A broadcast view of x (stride 0 where it repeats), no copy: torch's expand, cupy.broadcast_to."""
    if fw == "torch":
        return x.expand(*shape)
    import cupy

    return cupy.broadcast_to(x, shape)


def reference_stack(a, b, slices=SLICES, out=None, alpha=1.0, beta=0.0, moduli=None):
    """numpy.matmul's semantics (stacks, broadcast batch, 1-D operands) over the host reference's
    2-D Ozaki-I product (with `moduli`: Ozaki-II, the complex scheme for complex128 operands): the
    bits ozgemm.matmul gives in FIXED mode, matrix by matrix."""
    s = _batch.matmul_shape(a.shape, b.shape)
    a2 = a[None, :] if s.a_vector else a
    b2 = b[:, None] if s.b_vector else b
    A = np.broadcast_to(a2, s.batch + a2.shape[-2:])
    B = np.broadcast_to(b2, s.batch + b2.shape[-2:])
    dtype = np.result_type(a, b)
    c0 = np.zeros(s.result, dtype=dtype) if out is None else out
    C0 = c0.reshape(s.batch + (s.m, s.n))
    result = np.empty(s.batch + (s.m, s.n), dtype=dtype)
    for idx in np.ndindex(*s.batch):
        ai, bi = np.ascontiguousarray(A[idx], dtype=dtype), np.ascontiguousarray(B[idx], dtype=dtype)
        if moduli is None:
            result[idx] = reference.ozaki_matmul(ai, bi, slices=slices, out=C0[idx].copy(), alpha=alpha, beta=beta)
        else:
            result[idx] = reference.ozaki2_matmul(ai, bi, moduli=moduli, out=C0[idx].copy(), alpha=alpha, beta=beta)
    return result.reshape(s.result)


def assert_within_contract(c, expect, a, b):
    """|c - expect| <= (min(4, k) + k) u |a||b| (+ the smallest normal), entrywise, on the host:
    ozgemm's contract plus the native DGEMM error bound (k u |A||B|) of the framework's own result
    `expect`. |a||b| is computed in float64 from the absolute values."""
    k = a.shape[-1]
    absprod = np.matmul(np.abs(a), np.abs(b))  # complex: the moduli, |A||B| in float64
    assert c.shape == expect.shape, (c.shape, expect.shape)
    err = np.abs(c - expect)
    bound = (min(4, k) + k) * U * absprod + np.finfo(np.float64).tiny
    assert np.all(err <= bound), float(np.max(err / np.maximum(absprod, np.finfo(np.float64).tiny)))


# --- FIXED mode: the host reference's bits ----------------------------------------------------------
@pytest.mark.parametrize("variant", EMULATED or ["unfused"])
@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_fixed_mode_bits_equal_host_reference(fw, variant):
    mod, dev, host = framework(fw)
    a, b = problem(1)
    A = dev(a)
    c = ozgemm.matmul(A, dev(b), slices=SLICES, variant=variant)
    assert type(c) is type(A) and tuple(c.shape) == (a.shape[0], b.shape[1])
    info = ozgemm.last_call_info()
    assert info.variant == variant and info.slices == SLICES, info
    np.testing.assert_array_equal(host(c), reference.ozaki_matmul(a, b, slices=SLICES))


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_ozaki2_bits_equal_host_reference(fw):
    mod, dev, host = framework(fw)
    a, b = problem(14)
    for moduli in (None, 8):  # FIXED mode: the default count, or the count given
        c = ozgemm.matmul(dev(a), dev(b), scheme="ozaki2", moduli=moduli, accuracy="fixed", variant="unfused")
        info = ozgemm.last_call_info()
        expect = moduli or ozgemm.DEFAULT_MODULI
        assert (info.scheme, info.moduli, info.variant) == ("ozaki2", expect, "unfused"), info
        np.testing.assert_array_equal(host(c), reference.ozaki2_matmul(a, b, moduli=expect))
    # FP64 mode: the count chosen from the data, with its bound; the bits of that count.
    c = ozgemm.matmul(dev(a), dev(b), scheme="ozaki2", variant="unfused")
    info = ozgemm.last_call_info()
    assert info.scheme == "ozaki2" and info.variant == "unfused" and not info.fell_back, info
    assert ozgemm.MIN_MODULI <= info.moduli <= ozgemm.MAX_MODULI and 0 < info.bound <= info.target, info
    np.testing.assert_array_equal(host(c), reference.ozaki2_matmul(a, b, moduli=info.moduli))


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_every_layout_same_bits(fw):
    mod, dev, host = framework(fw)
    a, b = problem(2, m=123, n=77, k=301)
    m, n = a.shape[0], b.shape[1]
    ref = reference.ozaki_matmul(a, b, slices=SLICES)
    la, lb = device_layouts(fw, a), device_layouts(fw, b)
    for na, A in la.items():
        for nb, B in lb.items():
            c = ozgemm.matmul(A, B, slices=SLICES, variant="unfused")
            np.testing.assert_array_equal(host(c), ref, err_msg=f"a {na}, b {nb}")
    # out= in both orders, with alpha and beta
    rng = np.random.default_rng(3)
    c0 = rng.standard_normal((m, n))
    ref2 = reference.ozaki_matmul(a, b, slices=SLICES, out=c0.copy(), alpha=1.5, beta=-0.5)
    for name, out in device_layouts(fw, c0).items():
        got = ozgemm.matmul(la["T_view"], lb["block_F"], out=out, alpha=1.5, beta=-0.5, slices=SLICES,
                            variant="unfused")
        assert got is out
        np.testing.assert_array_equal(host(out), ref2, err_msg=f"out {name}")


# --- the C API's bits through ctypes ---------------------------------------------------------------------
class CallInfo(ctypes.Structure):  # ozgemmCallInfo_t
    _fields_ = [("scheme", ctypes.c_int), ("moduli", ctypes.c_int), ("variant", ctypes.c_int), ("slices", ctypes.c_int), ("bound", ctypes.c_double),
                ("target", ctypes.c_double), ("fell_back", ctypes.c_int), ("reason", ctypes.c_char * 160)]


@pytest.fixture(scope="module")
def capi():
    path = os.environ.get("OZGEMM_LIBRARY")
    if not path:
        pytest.skip("set OZGEMM_LIBRARY=/path/to/libozgemm.so.0 to compare with the C API through ctypes")
    lib = ctypes.CDLL(path)
    lib.ozgemmGetStatusString.restype = ctypes.c_char_p
    h = ctypes.c_void_p()
    assert lib.ozgemmCreate(ctypes.byref(h)) == 0
    yield lib, h
    lib.ozgemmDestroy(h)


@pytest.mark.parametrize("slices", [0, SLICES])  # 0: FP64 mode
@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_bits_equal_c_api(fw, slices, capi):
    lib, h = capi
    mod, dev, host = framework(fw)
    a, b = problem(4, phi=1.0)
    m, k = a.shape
    n = b.shape[1]
    A, B = dev(a), dev(b)  # C order: the C API computes C^T = B^T A^T into a C-order C
    c = ozgemm.matmul(A, B, slices=slices or None, stream=0)
    C2 = dev(np.zeros((m, n)))
    ptr = (lambda x: x.data.ptr) if fw == "cupy" else (lambda x: x.data_ptr())
    one, zero = ctypes.c_double(1.0), ctypes.c_double(0.0)
    assert lib.ozgemmSetStream(h, ctypes.c_void_p(0)) == 0
    assert lib.ozgemmSetSlices(h, slices) == 0
    st = lib.ozgemmDgemm(h, 0, 0, n, m, k, ctypes.byref(one), ctypes.c_void_p(ptr(B)), n, ctypes.c_void_p(ptr(A)), k,
                         ctypes.byref(zero), ctypes.c_void_p(ptr(C2)), n)
    assert st == 0, lib.ozgemmGetStatusString(st)
    info = CallInfo()
    assert lib.ozgemmGetLastCallInfo(h, ctypes.byref(info)) == 0
    np.testing.assert_array_equal(host(c), host(C2))
    mine = ozgemm.last_call_info()
    assert (mine.variant, mine.slices) == (ozgemm._VARIANT_NAMES[info.variant], info.slices)


# --- FP64 mode: the accuracy contract --------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["auto", BITS_VARIANT])  # AUTO is native on Hopper at these sizes: the emulation too
@pytest.mark.parametrize("phi", [None, 2.0])
@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_fp64_mode_meets_its_bound(fw, phi, variant):
    mod, dev, host = framework(fw)
    a, b = problem(5, phi=phi)
    k = a.shape[1]
    c = ozgemm.matmul(dev(a), dev(b), variant=variant)
    info = ozgemm.last_call_info()
    counts = {"native": (info.slices, info.moduli) == (0, 0), "ozaki1": info.slices > 0 and info.moduli == 0,
              "ozaki2": info.moduli > 0 and info.slices == 0}
    assert counts[info.scheme] and (info.scheme == "native") == (info.variant == "native"), info
    assert info.reason, info
    e = reference.errors(host(c), a, b)
    assert e["nonfinite_mismatch"] == 0
    if info.variant == "native":  # no count met the bound: native DGEMM's own bound k u
        assert info.fell_back and e["componentwise"] <= k * U, (e, info)
    else:  # the contract, plus the final rounding; the bound the data achieved, too
        assert 0 < info.bound <= info.target and e["componentwise"] <= (info.bound + 1) * U, (e, info)


# --- streams and threads ----------------------------------------------------------------------------------
def test_torch_current_stream_is_used():
    torch, dev, host = framework("torch")
    a, b = problem(6, m=512, n=512, k=512)
    A, B = dev(a), dev(b)
    x = torch.zeros_like(A)
    torch.cuda.synchronize()  # A, B and x are ready before the side stream reads them
    ref = reference.ozaki_matmul(a, b, slices=SLICES)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)  # keeps s busy: a call on another stream would read zeros
        x.copy_(A)
        c = ozgemm.matmul(x, B, slices=SLICES, variant=BITS_VARIANT)
    s.synchronize()
    np.testing.assert_array_equal(host(c), ref)
    # an explicit stream object, outside the context
    y = torch.zeros_like(A)
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)
        y.copy_(A)
    c2 = torch.empty_like(c)
    torch.cuda.current_stream().synchronize()
    ozgemm.matmul(y, B, out=c2, slices=SLICES, variant=BITS_VARIANT, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(host(c2), ref)


def test_cupy_stream():
    cp, dev, host = framework("cupy")
    a, b = problem(7)
    ref = reference.ozaki_matmul(a, b, slices=SLICES)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        A, B = cp.asarray(a), cp.asarray(b)
        c = ozgemm.matmul(A, B, slices=SLICES, variant=BITS_VARIANT)  # on s, CuPy's current stream
    s.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(c), ref)
    c2 = ozgemm.matmul(A, B, slices=SLICES, variant=BITS_VARIANT, stream=s.ptr)  # a raw cudaStream_t
    s.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(c2), ref)


def test_threads_have_their_own_handles():
    cp, dev, host = framework("cupy")
    a, b = problem(8, m=256, n=256, k=256)
    ref = reference.ozaki_matmul(a, b, slices=SLICES)
    results, errors = {}, []

    def work(i):
        try:
            with cp.cuda.Stream(non_blocking=True) as s:
                c = ozgemm.matmul(cp.asarray(a), cp.asarray(b), slices=SLICES, variant=BITS_VARIANT)
                s.synchronize()
                results[i] = cp.asnumpy(c)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for r in results.values():
        np.testing.assert_array_equal(r, ref)


def test_cuda_array_interface_producer():
    """An object with only __cuda_array_interface__ (like Numba's): the result is ozgemm's own
    DLPack buffer."""
    cp, dev, host = framework("cupy")
    a, b = problem(9, m=64, n=48, k=80)
    A, B = cp.asarray(a), cp.asarray(b)
    fa = FakeCudaArray(A.shape, A.strides, ptr=A.data.ptr, stream=1)
    fb = FakeCudaArray(B.shape, B.strides, ptr=B.data.ptr)
    c = ozgemm.matmul(fa, fb, slices=SLICES, variant=BITS_VARIANT)
    cp.cuda.Device().synchronize()
    np.testing.assert_array_equal(cp.asnumpy(cp.from_dlpack(c)), reference.ozaki_matmul(a, b, slices=SLICES))


@pytest.fixture(scope="module")
def jax_gpu():
    """(jax, jax.numpy, the first GPU device) with float64 enabled; skips without JAX or its GPU backend."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    try:
        dev = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("JAX has no GPU backend")
    import jax.numpy as jnp

    return jax, jnp, dev


def test_jax_arrays(jax_gpu):
    jax, jnp, gpu_dev = jax_gpu
    a, b = problem(10, m=96, n=64, k=128)
    A, B = jax.device_put(a, gpu_dev), jax.device_put(b, gpu_dev)
    c = ozgemm.matmul(A, B, slices=SLICES, variant=BITS_VARIANT)
    assert isinstance(c, jax.Array)
    np.testing.assert_array_equal(np.asarray(c), reference.ozaki_matmul(a, b, slices=SLICES))
    with pytest.raises(ValueError, match="immutable"):
        ozgemm.matmul(A, B, out=c)
    with pytest.raises(TypeError, match="float64"):
        ozgemm.matmul(jax.device_put(jnp.ones((2, 2), dtype=jnp.float32), gpu_dev), B[:2, :2])


# --- plan() and info() ------------------------------------------------------------------------------------
@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_plan_says_what_runs(fw):
    mod, dev, host = framework(fw)
    a, b = problem(11)
    A, B = dev(a), dev(b)
    p = ozgemm.plan(A, B, slices=SLICES)
    assert p.accuracy == "fixed" and p.variant in ozgemm.VARIANTS and p.call.startswith("ozgemmDgemm(")
    ozgemm.matmul(A, B, slices=SLICES)
    ran = ozgemm.last_call_info()
    assert (ran.variant, ran.slices) == (p.variant, p.slices), (p, ran)
    p = ozgemm.plan(A, B)  # FP64 mode
    assert p.accuracy == "fp64"
    ozgemm.matmul(A, B)
    ran = ozgemm.last_call_info()
    assert p.source == "ozgemmPlanCall"
    assert (ran.variant, ran.slices, ran.fell_back, ran.reason, ran.scheme, ran.moduli) == \
        (p.variant, p.slices, p.fell_back, p.reason, p.scheme, p.moduli), (p, ran)
    assert ran.reason  # a filled-in record, never the empty struct
    assert p.copies == () and ozgemm.plan(A[:, ::2], B[::2, ::2]).copies == ("a", "b")
    with pytest.raises(ValueError, match="ozgemm.plan takes 2-D matrices"):
        ozgemm.plan(A[None], B)


def test_info_on_gpu():
    d = ozgemm.info()
    assert d["usable"] and d["device_count"] >= 1 and d["reason"] is None
    dev0 = d["devices"][0]
    assert dev0["name"] and dev0["variants"]["unfused"] == "available" and dev0["variants"]["native"] == "available"


# --- errors -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_error_cases(fw):
    mod, dev, host = framework(fw)
    a, b = problem(12, m=8, n=6, k=4)
    A, B = dev(a), dev(b)
    f32 = (lambda x: x.astype(mod.float32)) if fw == "cupy" else (lambda x: x.float())
    with pytest.raises(TypeError, match="float64"):
        ozgemm.matmul(f32(A), B)
    with pytest.raises(TypeError, match="host array"):
        ozgemm.matmul(A, b)
    with pytest.raises(ValueError, match="shape mismatch"):
        ozgemm.matmul(A, A)
    with pytest.raises(ValueError, match="beta != 0 needs out="):
        ozgemm.matmul(A, B, beta=1.0)
    sq = dev(np.ones((4, 4)))
    with pytest.raises(ValueError, match="overlaps"):
        ozgemm.matmul(sq, sq, out=sq)
    with pytest.raises(TypeError, match="float64"):
        ozgemm.matmul(A, B, out=f32(dev(np.zeros((8, 6)))))
    with pytest.raises(ValueError, match="write several results into one element"):
        ozgemm.matmul(A, B, out=broadcast_to(fw, dev(np.zeros((1, 6))), (8, 6)))
    with pytest.raises(ValueError, match="do not broadcast"):
        ozgemm.matmul(dev(np.ones((2, 8, 4))), dev(np.ones((3, 4, 6))))
    if fw == "torch":
        with pytest.raises(TypeError, match="host array"):
            ozgemm.matmul(A.cpu(), B)
        g = A.clone().requires_grad_(True)
        with pytest.raises(ValueError, match="does not support autograd"):
            ozgemm.matmul(g, B, out=mod.empty_like(A @ B))


@pytest.mark.skipif(HAS_GPU and not UNSUPPORTED, reason="every variant is available on this GPU and build")
def test_unsupported_variant_raises_status():
    cp, dev, host = framework("cupy")
    a, b = problem(13, m=8, n=8, k=8)
    with pytest.raises(ozgemm.OzgemmError, match="NOT_SUPPORTED") as ei:
        ozgemm.matmul(cp.asarray(a), cp.asarray(b), slices=SLICES, variant=UNSUPPORTED[0])
    assert ei.value.status == 7


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_empty_and_k0(fw):
    mod, dev, host = framework(fw)
    c0 = np.arange(12.0).reshape(3, 4)
    out = dev(c0)
    ozgemm.matmul(dev(np.zeros((3, 0))), dev(np.zeros((0, 4))), out=out, beta=2.0)  # k = 0: C = beta C
    np.testing.assert_array_equal(host(out), 2.0 * c0)
    c = ozgemm.matmul(dev(np.zeros((0, 5))), dev(np.zeros((5, 4))))
    assert tuple(c.shape) == (0, 4)


# --- numpy.matmul's semantics: views the C API cannot take (copied), stacks, vectors ------------------------
def synchronize(fw, mod):
    if fw == "torch":
        mod.cuda.synchronize()
    else:
        mod.cuda.Device().synchronize()


def new_stream(fw, mod):
    return mod.cuda.Stream() if fw == "torch" else mod.cuda.Stream(non_blocking=True)


def inexpressible_views(fw, dev, x):
    """x (numpy r x c) on the device as views without a BLAS layout (their values are what
    ozgemm.matmul must use): name -> view."""
    r, c = x.shape
    big = np.zeros((2 * r, 3 * c))
    big[::2, ::3] = x
    views = {"step": dev(big)[::2, ::3],                               # a[::2, ::3]
             "broadcast_rows": broadcast_to(fw, dev(x[:1]), (r, c)),    # x.expand(...): stride 0
             "broadcast_cols": broadcast_to(fw, dev(x[:, :1]), (r, c))}
    if fw == "cupy":
        views["reversed"] = dev(np.ascontiguousarray(x[::-1]))[::-1]     # negative stride
    return views


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_views_are_copied(fw):
    """Views the BLAS layout cannot express give the bits of their contiguous copies (FIXED mode) and
    the framework's matmul within the contract (FP64 mode)."""
    mod, dev, host = framework(fw)
    a, b = problem(20, m=37, n=23, k=29)
    va, vb = inexpressible_views(fw, dev, a), inexpressible_views(fw, dev, b)
    pairs = [(f"a {n}", A, "b C", dev(b)) for n, A in va.items()] + \
            [("a C", dev(a), f"b {n}", B) for n, B in vb.items()] + [("a step", va["step"], "b step", vb["step"])]
    for na, A, nb, B in pairs:
        c = ozgemm.matmul(A, B, slices=SLICES, variant=BITS_VARIANT)
        np.testing.assert_array_equal(host(c), reference.ozaki_matmul(host(A), host(B), slices=SLICES),
                                      err_msg=f"{na}, {nb}")
        c = ozgemm.matmul(A, B)
        assert_within_contract(host(c), host(mod.matmul(A, B)), host(A), host(B))
    # Both copied, of one size: a's copy must stay alive until the call (the allocator would hand
    # its block to b's copy).
    x, y = problem(27, m=64, n=64, k=64)
    c = ozgemm.matmul(inexpressible_views(fw, dev, x)["step"], inexpressible_views(fw, dev, y)["step"],
                      slices=SLICES, variant=BITS_VARIANT)
    np.testing.assert_array_equal(host(c), reference.ozaki_matmul(x, y, slices=SLICES))
    # on an explicit stream: the copy is made there
    s = new_stream(fw, mod)
    synchronize(fw, mod)
    c = ozgemm.matmul(va["step"], vb["broadcast_rows"], slices=SLICES, variant=BITS_VARIANT, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(host(c), reference.ozaki_matmul(a, host(vb["broadcast_rows"]), slices=SLICES))


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_out_without_blas_layout_through_a_temporary(fw):
    mod, dev, host = framework(fw)
    a, b = problem(21, m=37, n=23, k=29)
    c0 = np.random.default_rng(21).standard_normal((37, 23))
    expect = reference.ozaki_matmul(a, b, slices=SLICES, out=c0.copy(), alpha=1.5, beta=-0.5)
    big = dev(np.zeros((2 * 37, 3 * 23)))
    out = big[::2, ::3]
    out[...] = dev(c0)
    got = ozgemm.matmul(dev(a), dev(b), out=out, alpha=1.5, beta=-0.5, slices=SLICES, variant=BITS_VARIANT)
    assert got is out
    np.testing.assert_array_equal(host(out), expect)
    rest = host(big)
    rest[::2, ::3] = 0
    assert not rest.any()  # nothing written outside the view


STACK_CASES = [  # (a shape, b shape): numpy.matmul's rules
    ((3, 37, 29), (3, 29, 23)), ((2, 1, 37, 29), (3, 29, 23)), ((3, 37, 29), (29, 23)), ((37, 29), (2, 29, 23)),
    ((29,), (29, 23)), ((37, 29), (29,)), ((29,), (29,)), ((29,), (2, 29, 23)), ((2, 3, 37, 29), (29,)),
    ((0, 37, 29), (29, 23)), ((3, 37, 29), (1, 29, 23)),
]


@pytest.mark.parametrize("sa,sb", STACK_CASES)
@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_stacks_and_vectors(fw, sa, sb):
    mod, dev, host = framework(fw)
    rng = np.random.default_rng(22)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    A, B = dev(a), dev(b)
    c = ozgemm.matmul(A, B, slices=SLICES, variant=BITS_VARIANT)
    assert type(c) is type(A) and tuple(c.shape) == np.matmul(a, b).shape
    np.testing.assert_array_equal(host(c), reference_stack(a, b))
    c = ozgemm.matmul(A, B)
    assert_within_contract(host(c), host(mod.matmul(A, B)), a, b)


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_stack_views_and_out(fw):
    mod, dev, host = framework(fw)
    rng = np.random.default_rng(23)
    a, b = rng.standard_normal((3, 37, 29)), rng.standard_normal((29, 23))
    big = np.zeros((3, 2 * 37, 3 * 29))
    big[:, ::2, ::3] = a
    views = {"T": swap_last(fw, dev(np.ascontiguousarray(a.swapaxes(-1, -2)))),  # no copy
             "broadcast_batch": broadcast_to(fw, dev(a[:1]), a.shape),           # batch stride 0: no copy
             "step": dev(big)[:, ::2, ::3],                                        # copied
             "broadcast_rows": broadcast_to(fw, dev(a[:, :1]), a.shape)}           # copied
    B = broadcast_to(fw, dev(b), (3, 29, 23))                                      # batch stride 0
    for name, A in views.items():
        c = ozgemm.matmul(A, B, slices=SLICES, variant=BITS_VARIANT)
        np.testing.assert_array_equal(host(c), reference_stack(host(A), b), err_msg=name)
    # out= of the stack's shape: C order, transposed matrices (both in place), stepped (a temporary)
    c0 = rng.standard_normal((3, 37, 23))
    expect = reference_stack(a, b, out=c0, alpha=2.0, beta=-1.0)
    bigc = dev(np.zeros((3, 2 * 37, 3 * 23)))
    outs = {"C": dev(c0), "T": swap_last(fw, dev(np.ascontiguousarray(c0.swapaxes(-1, -2)))),
            "step": bigc[:, ::2, ::3]}
    outs["step"][...] = dev(c0)
    for name, out in outs.items():
        got = ozgemm.matmul(dev(a), B, out=out, alpha=2.0, beta=-1.0, slices=SLICES, variant=BITS_VARIANT)
        assert got is out
        np.testing.assert_array_equal(host(out), expect, err_msg=name)
    with pytest.raises(ValueError, match=r"out: expected shape \(3, 37, 23\)"):
        ozgemm.matmul(dev(a), B, out=dev(np.zeros((37, 23))))
    with pytest.raises(ValueError, match="write several results into one element"):
        ozgemm.matmul(dev(a), B, out=broadcast_to(fw, dev(c0[:1]), c0.shape))


# --- what ran --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_call_info_says_what_ran(fw):
    mod, dev, host = framework(fw)
    a, b = problem(24)
    A, B = dev(a), dev(b)
    ozgemm.matmul(A, B, variant="native")
    ci = ozgemm.last_call_info()
    assert (ci.scheme, ci.variant, ci.slices, ci.moduli) == ("native", "native", 0, 0), ci
    assert ozgemm.plan(A, B, variant="native").scheme == "native"
    ozgemm.matmul(A, B, slices=SLICES, variant=BITS_VARIANT)
    ci = ozgemm.last_call_info()
    assert (ci.scheme, ci.variant, ci.slices, ci.moduli) == ("ozaki1", BITS_VARIANT, SLICES, 0), ci
    ozgemm.matmul(A, B, scheme="ozaki2", moduli=12, variant="unfused")
    ci = ozgemm.last_call_info()
    assert (ci.scheme, ci.variant, ci.slices, ci.moduli) == ("ozaki2", "unfused", 0, 12), ci
    p = ozgemm.plan(A, B, scheme="ozaki2", moduli=12, variant="unfused")
    assert (p.scheme, p.moduli) == ("ozaki2", 12), p
    ozgemm.matmul(dev(np.ones((4, 4))), dev(np.ones((4, 4))))  # FP64 mode on a tiny shape: native DGEMM
    ci = ozgemm.last_call_info()
    assert (ci.scheme == "native") == (ci.variant == "native") and (ci.scheme != "native" or ci.fell_back), ci


# --- PyTorch autograd ----------------------------------------------------------------------------------------
GRAD_SHAPES = [((5, 7), (7, 3)), ((2, 4, 5), (5, 3)), ((2, 1, 4, 5), (3, 5, 2)), ((5,), (5, 3)), ((4, 5), (5,)),
               ((5,), (5,))]
GRAD_OPTIONS = {  # the forward's options, and the scheme that must run
    "fp64": (dict(), None),                                                    # tiny shapes: native DGEMM
    "ozaki1_8_slices": (dict(slices=8, variant=BITS_VARIANT), "ozaki1"),
    "ozaki2_16_moduli": (dict(scheme="ozaki2", moduli=16, variant="unfused"), "ozaki2"),
}


@pytest.mark.parametrize("sa,sb", GRAD_SHAPES)
@pytest.mark.parametrize("opt", list(GRAD_OPTIONS))
def test_autograd_gradcheck(sa, sb, opt):
    torch, dev, host = framework("torch")
    options, scheme = GRAD_OPTIONS[opt]
    g = torch.Generator(device="cuda").manual_seed(25)
    a = torch.randn(sa, dtype=torch.float64, device="cuda", generator=g, requires_grad=True)
    b = torch.randn(sb, dtype=torch.float64, device="cuda", generator=g, requires_grad=True)

    def f(x, y):
        return ozgemm.matmul(x, y, alpha=0.75, **options)

    c = f(a, b)
    assert c.grad_fn is not None and c.shape == torch.matmul(a, b).shape
    if scheme is not None:
        assert ozgemm.last_call_info().scheme == scheme
    # The products are accurate to about u |A||B|: the finite differences (eps 1e-6) are good to
    # about 1e-10 here, far inside these tolerances (torch's defaults: atol 1e-5, rtol 1e-3).
    assert torch.autograd.gradcheck(f, (a, b), atol=1e-7, rtol=1e-6)
    if opt == "ozaki1_8_slices" and len(sa) >= 2 and len(sb) == 2:
        # The backward runs with the forward's options (on autograd's thread): grad_a = 0.75 g b^T has
        # the host reference's bits at 8 slices (g: ones, from sum(); nothing summed over for a).
        f(a, b).sum().backward()
        g = np.ones(np.matmul(host(a), host(b)).shape)
        np.testing.assert_array_equal(host(a.grad), reference_stack(g, host(b).T, slices=8, alpha=0.75))


def test_autograd_second_order_and_modes():
    torch, dev, host = framework("torch")
    a = torch.randn(2, 4, 5, dtype=torch.float64, device="cuda", requires_grad=True)
    b = torch.randn(5, 3, dtype=torch.float64, device="cuda", requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda x, y: ozgemm.matmul(x, y), (a, b), atol=1e-7, rtol=1e-6)
    with torch.no_grad():  # grad mode off: the ordinary path, no graph
        c = ozgemm.matmul(a, b)
    assert c.grad_fn is None and not c.requires_grad
    np.testing.assert_allclose(host(c), np.matmul(host(a), host(b)), rtol=1e-12, atol=1e-12)
    c = ozgemm.matmul(a.detach(), b)  # only b requires grad
    c.sum().backward()
    assert a.grad is None and b.grad is not None
    np.testing.assert_allclose(host(b.grad), np.einsum("bik,bij->kj", host(a), np.ones((2, 4, 3))), rtol=1e-12)
    with pytest.raises(ValueError, match="does not support autograd"):
        ozgemm.matmul(a, b, out=torch.empty(2, 4, 3, dtype=torch.float64, device="cuda"))


# --- JAX -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sa,sb,view", [
    ((37, 29), (29, 23), "plain"), ((29, 37), (29, 23), "T"), ((74, 87), (29, 23), "step"),
    ((3, 37, 29), (29, 23), "plain"), ((2, 1, 37, 29), (3, 29, 23), "plain"), ((29,), (29, 23), "plain"),
    ((29,), (29,), "plain"),
])
def test_jax_arrays_follow_jnp_matmul(jax_gpu, sa, sb, view):
    jax, jnp, gpu_dev = jax_gpu
    rng = np.random.default_rng(26)
    A = jax.device_put(rng.standard_normal(sa), gpu_dev)
    B = jax.device_put(rng.standard_normal(sb), gpu_dev)
    A = {"plain": lambda x: x, "T": lambda x: x.T, "step": lambda x: x[::2, ::3]}[view](A)  # views of 2-D A only
    assert A.dtype == jnp.float64
    c = ozgemm.matmul(A, B)
    assert isinstance(c, jax.Array) and c.dtype == jnp.float64
    expect = jnp.matmul(A, B)
    assert c.shape == expect.shape
    k = A.shape[-1]
    absprod = jnp.matmul(jnp.abs(A), jnp.abs(B))
    bound = (min(4, k) + k) * U * absprod + np.finfo(np.float64).tiny  # ozgemm's contract + jnp.matmul's own error
    assert bool(jnp.all(jnp.abs(c - expect) <= bound))
    c = ozgemm.matmul(A, B, slices=SLICES, variant=BITS_VARIANT)
    np.testing.assert_array_equal(np.asarray(c), reference_stack(np.asarray(A), np.asarray(B)))


# --- complex128: ozgemmZgemm -------------------------------------------------------------------------------
CMODULI = ozgemm.DEFAULT_COMPLEX_MODULI
COMPLEX_VARIANTS = ["auto", "unfused"] + (["partially_fused"] if "partially_fused" in EMULATED else [])


def complex_problem(seed=0, m=300, n=200, k=500, phi=None):
    """complex128 a (m x k) and b (k x n): real and imaginary parts of the phi family (N(0,1) for None)."""
    (ar, br), (ai, bi) = problem(seed, m, n, k, phi), problem(seed + 1000, m, n, k, phi)
    return ar + 1j * ai, br + 1j * bi


def conj_views(fw, dev, x):
    """x (numpy complex, r x c) on the device as views whose values are x: name -> device array.
    PyTorch's conj() and mH are lazy (the conjugate bit: CUBLAS_OP_C or a resolved copy); CuPy's
    conj() is a new array, so its "mH" is a transposed view of one."""
    xc = np.ascontiguousarray(x.conj())
    if fw == "torch":
        return {"conj": dev(xc).conj(), "mH": dev(np.ascontiguousarray(xc.T)).mH,
                "T_view": dev(np.ascontiguousarray(x.T)).T, "conj_F": dev(xc).t().contiguous().t().conj()}
    return {"mH": dev(np.ascontiguousarray(xc.T)).conj().T, "T_view": dev(np.ascontiguousarray(x.T)).T}


@pytest.mark.parametrize("variant", COMPLEX_VARIANTS)
@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_complex_fixed_bits_equal_host_reference(fw, variant):
    mod, dev, host = framework(fw)
    a, b = complex_problem(40, m=131, n=67, k=257)
    for moduli in (None, 12):
        c = ozgemm.matmul(dev(a), dev(b), accuracy="fixed", moduli=moduli, variant=variant)
        np.testing.assert_array_equal(host(c), reference.ozaki2_matmul(a, b, moduli=moduli or CMODULI))
        ci = ozgemm.last_call_info()
        assert (ci.scheme, ci.moduli, ci.slices) == ("ozaki2", moduli or CMODULI, 0), ci
    c0 = complex_problem(41, m=131, n=67, k=1)[0] @ complex_problem(42, m=1, n=67, k=1)[1]
    out = dev(c0)
    alpha, beta = 0.5 - 2j, -1 + 0.25j
    assert ozgemm.matmul(dev(a), dev(b), out=out, alpha=alpha, beta=beta, moduli=12, variant=variant) is out
    np.testing.assert_array_equal(host(out), reference.ozaki2_matmul(a, b, moduli=12, out=c0.copy(), alpha=alpha,
                                                                   beta=beta))


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_complex_views_same_bits(fw):
    """Transposed and conjugate views (ops T and C, or a resolved copy): the reference's bits."""
    mod, dev, host = framework(fw)
    a, b = complex_problem(43, m=97, n=61, k=149)
    expect = reference.ozaki2_matmul(a, b)
    va, vb = conj_views(fw, dev, a), conj_views(fw, dev, b)
    for na, A in list(va.items()) + [("C", dev(a))]:
        for nb, B in list(vb.items()) + [("C", dev(b))]:
            for order in ("C", "F"):
                out = dev(np.zeros((97, 61), dtype=np.complex128, order=order))
                if fw == "torch" and order == "F":
                    out = out.t().contiguous().t()
                ozgemm.matmul(A, B, out=out, moduli=CMODULI, variant=BITS_VARIANT)
                np.testing.assert_array_equal(host(out), expect, err_msg=f"{na} @ {nb} into {order}")
    if fw == "torch":  # a @ b.mH into a C-order result: op C, no copy
        bt = dev(np.ascontiguousarray(b.conj().T))  # bt.mH holds the values b
        c = ozgemm.matmul(dev(a), bt.mH, moduli=CMODULI, variant=BITS_VARIANT)
        np.testing.assert_array_equal(host(c), expect)
        ca = dev(np.ascontiguousarray(a.T)).mH
        p = ozgemm._Prepared(ca, bt.mH, None, ozgemm._Options("fixed", None, "unfused", "auto", None), None, 1.0,
                             0.0, allocate=True)
        assert p.copies == () and p.calls[0].transa == "C" and p.calls[0].transb == "C", p.calls
        # a lazy negative view (float64) is resolved, not misread
        x = dev(a).conj().imag
        assert x.is_neg()
        c = ozgemm.matmul(x, dev(b.real.copy()), slices=SLICES, variant=BITS_VARIANT)
        np.testing.assert_array_equal(host(c), reference.ozaki_matmul(-a.imag, b.real.copy(), slices=SLICES))


@pytest.mark.parametrize("accuracy", ["fp64", "fixed"])
@pytest.mark.parametrize("phi", [None, 2.0])
@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_complex_within_contract_of_framework_matmul(fw, phi, accuracy):
    """|C - C_fw| <= (min(4, k) + k) u (|A||B|) + tiny entrywise (complex moduli)."""
    mod, dev, host = framework(fw)
    a, b = complex_problem(44, m=200, n=150, k=300, phi=phi)
    A, B = dev(a), dev(b)
    c = ozgemm.matmul(A, B, accuracy=accuracy)
    assert_within_contract(host(c), host(mod.matmul(A, B)), a, b)
    ci = ozgemm.last_call_info()
    if accuracy == "fp64":  # FP64 mode's complex decision is not built: native ZGEMM, and why
        assert (ci.scheme, ci.variant, ci.fell_back) == ("native", "native", True) and ci.reason, ci
    else:
        assert (ci.scheme, ci.moduli) == ("ozaki2", CMODULI), ci


COMPLEX_STACKS = [((3, 37, 29), (29, 23)), ((2, 1, 37, 29), (3, 29, 23)), ((29,), (3, 29, 23)), ((37, 29), (29,)),
                  ((29,), (29,))]


@pytest.mark.parametrize("sa,sb", COMPLEX_STACKS)
@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_complex_stacks_and_vectors(fw, sa, sb):
    mod, dev, host = framework(fw)
    rng = np.random.default_rng(45)
    a = rng.standard_normal(sa) + 1j * rng.standard_normal(sa)
    b = rng.standard_normal(sb) + 1j * rng.standard_normal(sb)
    c = ozgemm.matmul(dev(a), dev(b), moduli=CMODULI, variant=BITS_VARIANT)
    np.testing.assert_array_equal(host(c), reference_stack(a, b, moduli=CMODULI))
    c = ozgemm.matmul(dev(a), dev(b))
    assert_within_contract(host(c), host(mod.matmul(dev(a), dev(b))), a, b)


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_complex_mixed_with_real_promotes(fw):
    """numpy's promotion: a float64 operand of a complex128 product is converted (a copy)."""
    mod, dev, host = framework(fw)
    a, b = complex_problem(46, m=64, n=48, k=80)
    ar = a.real.copy()
    c = ozgemm.matmul(dev(ar), dev(b), moduli=CMODULI, variant=BITS_VARIANT)
    assert str(c.dtype).endswith("complex128")
    np.testing.assert_array_equal(host(c), reference.ozaki2_matmul(ar.astype(np.complex128), b))
    c = ozgemm.matmul(dev(a), dev(b.real.copy()), moduli=CMODULI, variant=BITS_VARIANT)
    np.testing.assert_array_equal(host(c), reference.ozaki2_matmul(a, b.real.astype(np.complex128)))
    with pytest.raises(TypeError, match="out: expected complex128"):
        ozgemm.matmul(dev(a), dev(b), out=dev(np.zeros((64, 48))))


def test_complex_cuda_array_interface_producer():
    cp, dev, host = framework("cupy")
    a, b = complex_problem(47, m=64, n=48, k=80)
    A, B = cp.asarray(a), cp.asarray(b)
    fa = FakeCudaArray(A.shape, A.strides, ptr=A.data.ptr, typestr="<c16")
    fb = FakeCudaArray(B.shape, B.strides, ptr=B.data.ptr, typestr="<c16")
    c = ozgemm.matmul(fa, fb, moduli=CMODULI, variant=BITS_VARIANT)  # ozgemm's complex128 DLPack buffer
    cp.cuda.Device().synchronize()
    np.testing.assert_array_equal(cp.asnumpy(cp.from_dlpack(c)), reference.ozaki2_matmul(a, b))


def test_complex_jax(jax_gpu):
    jax, jnp, gpu_dev = jax_gpu
    a, b = complex_problem(48, m=96, n=64, k=128)
    A, B = jax.device_put(a, gpu_dev), jax.device_put(b, gpu_dev)
    c = ozgemm.matmul(A, B, moduli=CMODULI, variant=BITS_VARIANT)
    assert isinstance(c, jax.Array) and c.dtype == jnp.complex128
    np.testing.assert_array_equal(np.asarray(c), reference.ozaki2_matmul(a, b))
    c = ozgemm.matmul(A.T.conj().T, B)  # JAX materialises conj(); FP64 mode: native ZGEMM
    assert_within_contract(np.asarray(c), np.asarray(jnp.matmul(A.conj(), B)), a.conj(), b)
    c = ozgemm.matmul(A, B[:, ::2])  # a step view, copied by JAX
    assert_within_contract(np.asarray(c), np.asarray(jnp.matmul(A, B[:, ::2])), a, b[:, ::2])


@pytest.mark.parametrize("sa,sb", [((5, 7), (7, 3)), ((2, 4, 5), (5, 3)), ((5,), (5, 3)), ((4, 5), (5,))])
@pytest.mark.parametrize("opt", ["fp64", "fixed"])
def test_complex_autograd_gradcheck(sa, sb, opt):
    """PyTorch's convention: grad_a = conj(alpha) g @ b^H, grad_b = conj(alpha) a^H @ g."""
    torch, dev, host = framework("torch")
    options = dict() if opt == "fp64" else dict(moduli=CMODULI, variant=BITS_VARIANT)
    g = torch.Generator(device="cuda").manual_seed(27)
    a = torch.randn(sa, dtype=torch.complex128, device="cuda", generator=g, requires_grad=True)
    b = torch.randn(sb, dtype=torch.complex128, device="cuda", generator=g, requires_grad=True)

    def f(x, y):
        return ozgemm.matmul(x, y, alpha=0.75 - 0.5j, **options)

    assert torch.autograd.gradcheck(f, (a, b), atol=1e-7, rtol=1e-6)
    assert torch.autograd.gradgradcheck(f, (a, b), atol=1e-7, rtol=1e-6)
    ar = torch.randn(sa, dtype=torch.float64, device="cuda", generator=g, requires_grad=True)
    assert torch.autograd.gradcheck(f, (ar, b), atol=1e-7, rtol=1e-6)  # promoted: a real gradient
