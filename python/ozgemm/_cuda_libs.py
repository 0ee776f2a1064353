"""Which cuBLAS the extension binds to: one copy per process, the one the frameworks use.

The extension needs ``libcublas.so.<major>`` and ``libcublasLt.so.<major>`` (the CUDA runtime is
linked statically). PyTorch, CuPy and JAX load cuBLAS from the ``nvidia-cublas`` pip wheel
(``site-packages/nvidia/cu<major>/lib`` or ``nvidia/cublas/lib``). The dynamic loader keeps one
library per soname: whichever copy is loaded first is the one every later user gets. If the
extension loaded the CUDA toolkit's copy first (its RUNPATH's last entry, used when ozgemm is
installed outside the frameworks' site-packages, e.g. ``pip install --target``), a framework
imported after it would run on that copy instead of the one it was built and tested with.

:func:`preload_cublas` therefore loads the wheel's cuBLAS, when one is installed for this CUDA major
version, before the extension is imported; the extension's own dependency then resolves to it by
soname, whatever the import order. ``info()["cuda_libraries"]`` reports the files the process mapped.
"""
from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
from typing import List, Optional

#: The CUDA major version the extension was built against (libcublas.so.<major>); the package's
#: build writes it into _build.py. None: not known (a source checkout): nothing is preloaded.
try:
    from ._build import CUDA_MAJOR as _CUDA_MAJOR  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - source checkout without a build
    _CUDA_MAJOR: Optional[int] = None


def wheel_cublas_dirs() -> List[str]:
    """Folders of the nvidia-cublas pip wheel (this CUDA major version) in this environment's ``nvidia``
    namespace package."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    dirs = []
    for base in spec.submodule_search_locations:
        dirs += [os.path.join(base, f"cu{_CUDA_MAJOR}", "lib"), os.path.join(base, "cublas", "lib")]
    return [d for d in dirs if os.path.isdir(d)]


def preload_cublas() -> Optional[str]:
    """Loads the pip wheel's libcublasLt and libcublas (this CUDA major version) if present; returns
    the libcublas path, or None when there is none (the extension's RUNPATH decides then)."""
    if not _CUDA_MAJOR:  # a source checkout: which soname the extension needs is not known here
        return None
    pattern = f"libcublas.so.{_CUDA_MAJOR}"
    for d in wheel_cublas_dirs():
        for blas in sorted(glob.glob(os.path.join(d, pattern))):
            lt = os.path.join(d, os.path.basename(blas).replace("libcublas.", "libcublasLt."))
            try:
                if os.path.exists(lt):
                    ctypes.CDLL(lt)
                ctypes.CDLL(blas)
            except OSError:
                continue
            return blas
    return None


def mapped_cuda_libraries() -> List[str]:
    """The cuBLAS and CUDA runtime files mapped into this process (Linux /proc/self/maps)."""
    try:
        with open("/proc/self/maps") as f:
            return sorted({line.split()[-1] for line in f if "/libcublas" in line or "/libcudart" in line})
    except OSError:  # pragma: no cover - not Linux
        return []
