"""Import order: ``import ozgemm`` before or after CuPy, PyTorch or JAX, each in a fresh process.

Each case runs ``python -c "import X; import Y; ..."`` in a subprocess (a crash there must not take
the test run with it) and asserts a clean exit; with a usable GPU the child also runs a float64
product through the framework and through ozgemm.matmul on the framework's arrays and compares them
within the FP64 contract, so both CUDA stacks are shown to work side by side in one process, and it
prints which cuBLAS files the process mapped. Without the framework the case skips, naming it;
without a GPU only the imports run.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import HAS_GPU

FRAMEWORKS = ["cupy", "torch", "jax"]

# The child's GPU check: C = A @ B through the framework and through ozgemm on the same arrays;
# |C_oz - C_fw| <= 2 * min(4, k) u |A||B| + tiny entrywise (both within the contract of the exact product).
_GPU_CHECK = {
    "cupy": """
        import cupy as cp
        a = cp.random.default_rng(1).standard_normal((512, 384)); b = cp.random.default_rng(2).standard_normal((384, 256))
        ref = a @ b; c = ozgemm.matmul(a, b, accuracy="fixed", scheme="ozaki2", moduli=16)
        bound = cp.abs(a) @ cp.abs(b) * (2 * 4 * 2.0**-53) + 1e-300
        assert bool(cp.all(cp.abs(c - ref) <= bound)), "ozgemm and cupy disagree"
    """,
    "torch": """
        import torch
        g = torch.Generator(device="cuda").manual_seed(1)
        a = torch.randn(512, 384, dtype=torch.float64, device="cuda", generator=g)
        b = torch.randn(384, 256, dtype=torch.float64, device="cuda", generator=g)
        ref = a @ b; c = ozgemm.matmul(a, b, accuracy="fixed", scheme="ozaki2", moduli=16)
        bound = a.abs() @ b.abs() * (2 * 4 * 2.0**-53) + 1e-300
        assert bool(((c - ref).abs() <= bound).all()), "ozgemm and torch disagree"
    """,
    "jax": """
        import jax, jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        ka, kb = jax.random.split(jax.random.PRNGKey(1))
        a = jax.random.normal(ka, (512, 384), dtype=jnp.float64); b = jax.random.normal(kb, (384, 256), dtype=jnp.float64)
        ref = a @ b; c = ozgemm.matmul(a, b, accuracy="fixed", scheme="ozaki2", moduli=16)
        bound = jnp.abs(a) @ jnp.abs(b) * (2 * 4 * 2.0**-53) + 1e-300
        assert bool(jnp.all(jnp.abs(c - ref) <= bound)), "ozgemm and jax disagree"
    """,
}

_MAPPED_CUBLAS = """
    maps = {l.split()[-1] for l in open("/proc/self/maps") if "libcublas" in l}
    print("mapped:", sorted(maps))
"""


@pytest.mark.parametrize("ozgemm_first", [True, False], ids=["ozgemm-first", "framework-first"])
@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_import_order(fw: str, ozgemm_first: bool) -> None:
    if importlib.util.find_spec(fw) is None:
        pytest.skip(f"{fw} is not installed")
    import ozgemm

    if ozgemm._ozgemm is None:
        pytest.skip(f"the extension is not loaded here: {ozgemm.info()['import_error']}")
    imports = f"import ozgemm\nimport {fw}\n" if ozgemm_first else f"import {fw}\nimport ozgemm\n"
    body = imports + "assert ozgemm.info()['extension_loaded'], ozgemm.info()['import_error']\n"
    if HAS_GPU:
        body += textwrap.dedent(_GPU_CHECK[fw])
    body += textwrap.dedent(_MAPPED_CUBLAS) + "print('ok')\n"
    env = dict(os.environ, PYTHONFAULTHANDLER="1", XLA_PYTHON_CLIENT_PREALLOCATE="false")
    r = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, timeout=600, env=env)
    print(r.stdout[-2000:])
    assert r.returncode == 0 and r.stdout.rstrip().endswith("ok"), (
        f"{'ozgemm then ' + fw if ozgemm_first else fw + ' then ozgemm'}: exit {r.returncode}\n"
        f"stdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-4000:]}")


def _needed(path: str) -> list:
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def test_extension_uses_the_shared_cxx_runtime() -> None:
    """The extension takes the process's libstdc++.so.6, never a static copy (cmake/cxx_runtime.cmake):
    a static one made every framework imported after ozgemm crash inside libstdc++.so.6."""
    import shutil

    import ozgemm

    if ozgemm._ozgemm is None:
        pytest.skip(f"the extension is not loaded: {ozgemm.info()['import_error']}")
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed")
    needed = _needed(ozgemm._ozgemm.__file__)
    assert any(n.startswith("libstdc++.so") for n in needed), f"{ozgemm._ozgemm.__file__} needs {needed}"


def test_wheel_cublas_dirs_and_preload(tmp_path, monkeypatch) -> None:
    """_cuda_libs finds the nvidia-cublas wheel's folders in the `nvidia` namespace package and loads
    nothing that is not a library (a broken file is passed over, never an import error)."""
    from ozgemm import _cuda_libs

    for sub in ("cu13/lib", "cublas/lib"):
        (tmp_path / "nvidia" / sub).mkdir(parents=True)
    (tmp_path / "nvidia" / "cu13" / "lib" / "libcublas.so.13").write_bytes(b"not an ELF file")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(_cuda_libs, "_CUDA_MAJOR", 13)
    for name in [m for m in sys.modules if m == "nvidia" or m.startswith("nvidia.")]:
        monkeypatch.delitem(sys.modules, name)
    importlib.invalidate_caches()
    dirs = _cuda_libs.wheel_cublas_dirs()
    assert str(tmp_path / "nvidia" / "cu13" / "lib") in dirs and str(tmp_path / "nvidia" / "cublas" / "lib") in dirs
    assert _cuda_libs.preload_cublas() is None or "nvidia" in _cuda_libs.preload_cublas()
