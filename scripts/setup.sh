#!/usr/bin/env bash
# scripts/setup.sh — installs what a fresh Debian 12 machine lacks to build and test ozgemm.
#
#   1. apt packages: cmake (>= 3.25), g++, make, GoogleTest, python3 + pip, unzip; for the packaging
#      tests gcc, pkg-config, python3-venv, python3-dev
#      (apt-get runs only when something is missing, so a prepared machine needs no network);
#   2. checks the CUDA toolkit (nvcc, cuBLAS, cuBLASLt) at $CUDA_HOME (default /usr/local/cuda);
#   3. fetches the CUTLASS/CuTe headers (PyPI wheel nvidia-cutlass, pinned version and hash)
#      into the git-ignored third_party/cutlass/{include,tools/util/include}. Nothing is
#      installed into Python; the wheel is only downloaded and unzipped.
#
# Idempotent. Environment: CUDA_HOME, OZGEMM_SKIP_APT=1 (never call apt-get),
# OZGEMM_CMAKE_ARGS (containing -DOZGEMM_ENABLE_CUDA=OFF: a failed CUTLASS download is not fatal).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
CUTLASS_WHEEL_VERSION="4.2.0.0"
CUTLASS_WHEEL_SHA256="f9599ada45c7bcb6bf53f7d3f0a7d154183e53451c01bfa59eecd37dd4a693f6"
CUTLASS_DIR="$ROOT/third_party/cutlass"
CUTLASS_STAMP="nvidia-cutlass==$CUTLASS_WHEEL_VERSION"

log() { echo "setup: $*"; }
die() { echo "setup: error: $*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

# --- 1. system packages ------------------------------------------------------------------------
cmake_ok() {
  have cmake || return 1
  local v
  v="$(cmake --version | head -n1 | sed -E 's/[^0-9]*([0-9]+)\.([0-9]+).*/\1 \2/')"
  # shellcheck disable=SC2086
  set -- $v
  [ "${1:-0}" -gt 3 ] || { [ "${1:-0}" -eq 3 ] && [ "${2:-0}" -ge 25 ]; }
}
gtest_ok() {
  [ -f /usr/include/gtest/gtest.h ] || [ -f /usr/local/include/gtest/gtest.h ] || return 1
  compgen -G "/usr/lib/*/libgtest.*" >/dev/null || compgen -G "/usr/lib/libgtest.*" >/dev/null ||
    compgen -G "/usr/local/lib/libgtest.*" >/dev/null
}

missing=()
cmake_ok || missing+=(cmake)
have g++ || missing+=(g++)
have make || missing+=(make)
gtest_ok || missing+=(libgtest-dev googletest)
have python3 || missing+=(python3)
if ! have python3 || ! python3 -m pip --version >/dev/null 2>&1; then missing+=(python3-pip); fi
have unzip || missing+=(unzip)
have sha256sum || missing+=(coreutils)
[ -f /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
# Packaging tests (scripts/test_package.sh): the C example (gcc), pkg-config, a venv with pip
# (Debian's python3-venv), the Python headers for the extension (python3-dev).
have gcc || missing+=(gcc)
have pkg-config || missing+=(pkg-config)
if have python3; then
  python3 -c "import ensurepip, venv" >/dev/null 2>&1 || missing+=(python3-venv)
  python3 -c "import os, sysconfig; exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))" \
    >/dev/null 2>&1 || missing+=(python3-dev)
else
  missing+=(python3-venv python3-dev)
fi
# Drop-in tests (ctest -L dropin, docs/dropin.md): the system BLAS to link and forward to, Debian's
# netlib BLAS testers (xblat3d, xdcblat3), numpy linked to the system BLAS, nm/readelf.
compgen -G "/usr/lib/*/libblas.so" >/dev/null || missing+=(libblas-dev)
compgen -G "/usr/lib/*/blas/xblat3d" >/dev/null || missing+=(libblas-test)
{ [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import numpy" 2>/dev/null; } || missing+=(python3-numpy)
have nm && have readelf || missing+=(binutils)

if [ "${#missing[@]}" -gt 0 ]; then
  log "missing: ${missing[*]}"
  [ "${OZGEMM_SKIP_APT:-0}" = 1 ] && die "OZGEMM_SKIP_APT=1 is set; install these yourself: ${missing[*]}"
  have apt-get || die "no apt-get on this machine; install these yourself: ${missing[*]}"
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    if have sudo && sudo -n true 2>/dev/null; then
      SUDO=(sudo -n)
    elif have sudo && [ -t 0 ]; then
      SUDO=(sudo)
    else
      die "installing packages needs root (or sudo); install these yourself: ${missing[*]}"
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -q
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
  cmake_ok || die "cmake >= 3.25 is needed (found: $(cmake --version 2>/dev/null | head -n1))"
else
  log "system packages: all present (cmake, g++, make, GoogleTest, python3 + pip + venv + headers, unzip, pkg-config)"
fi

# --- 2. CUDA toolkit ----------------------------------------------------------------------------
cuda_missing=()
[ -x "$CUDA_HOME/bin/nvcc" ] || cuda_missing+=("nvcc")
for lib in cublas cublasLt cudart; do
  compgen -G "$CUDA_HOME/lib64/lib$lib.so*" >/dev/null ||
    compgen -G "$CUDA_HOME/targets/*/lib/lib$lib.so*" >/dev/null || cuda_missing+=("lib$lib")
done
[ -f "$CUDA_HOME/include/cublasLt.h" ] || compgen -G "$CUDA_HOME/targets/*/include/cublasLt.h" >/dev/null ||
  cuda_missing+=("cublasLt.h")
if [ "${#cuda_missing[@]}" -eq 0 ]; then
  log "CUDA toolkit: $("$CUDA_HOME/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') at $CUDA_HOME" \
      "(nvcc, cuBLAS, cuBLASLt)"
  CUDA_FOUND=1
else
  log "CUDA toolkit: NOT usable at $CUDA_HOME (missing: ${cuda_missing[*]})."
  log "  Only the CPU parts (host reference, CLI, CPU tests) can be built: configure with"
  log "  -DOZGEMM_ENABLE_CUDA=OFF (scripts/test.sh and scripts/quickstart.sh do this by themselves)."
  CUDA_FOUND=0
fi

# --- 3. CUTLASS / CuTe headers -----------------------------------------------------------------
if [ -f "$CUTLASS_DIR/VERSION" ] && [ "$(cat "$CUTLASS_DIR/VERSION")" = "$CUTLASS_STAMP" ] &&
   [ -f "$CUTLASS_DIR/include/cutlass/cutlass.h" ] && [ -f "$CUTLASS_DIR/include/cute/tensor.hpp" ] &&
   [ -d "$CUTLASS_DIR/tools/util/include/cutlass/util" ]; then
  log "CUTLASS headers: $CUTLASS_STAMP already in third_party/cutlass"
else
  # Every step checks its own status: `set -e` does not apply inside an `if` condition.
  fetch_cutlass() {
    local tmp="$1" wheel wheels
    log "CUTLASS headers: downloading $CUTLASS_STAMP (PyPI wheel, headers only)"
    PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip download --quiet --no-deps --no-input \
      "$CUTLASS_STAMP" -d "$tmp/wheel" </dev/null || return 1
    wheels=("$tmp"/wheel/nvidia_cutlass-"$CUTLASS_WHEEL_VERSION"-*.whl)
    wheel="${wheels[0]}"
    [ -f "$wheel" ] || { echo "setup: no wheel file after pip download" >&2; return 1; }
    echo "$CUTLASS_WHEEL_SHA256  $wheel" | sha256sum -c --quiet - ||
      { echo "setup: sha256 of $(basename "$wheel") does not match the pinned hash" >&2; return 1; }
    unzip -q "$wheel" 'cutlass_library/source/include/*' 'cutlass_library/source/tools/util/include/*' \
      'nvidia_cutlass-*.dist-info/licenses/LICENSE.txt' -d "$tmp/x" || return 1
    if [ ! -f "$tmp/x/cutlass_library/source/include/cutlass/cutlass.h" ] ||
       [ ! -d "$tmp/x/cutlass_library/source/tools/util/include/cutlass/util" ]; then
      echo "setup: the wheel does not have the expected header layout" >&2
      return 1
    fi
    rm -rf "$CUTLASS_DIR" && mkdir -p "$CUTLASS_DIR/tools/util" || return 1
    mv "$tmp/x/cutlass_library/source/include" "$CUTLASS_DIR/include" || return 1
    mv "$tmp/x/cutlass_library/source/tools/util/include" "$CUTLASS_DIR/tools/util/include" || return 1
    cp "$tmp"/x/nvidia_cutlass-*.dist-info/licenses/LICENSE.txt "$CUTLASS_DIR/LICENSE.txt" || return 1
    echo "$CUTLASS_STAMP" > "$CUTLASS_DIR/VERSION"  # written last: marks a complete copy
  }
  CUTLASS_TMP="$(mktemp -d)"
  trap 'rm -rf "$CUTLASS_TMP"' EXIT
  if fetch_cutlass "$CUTLASS_TMP"; then
    log "CUTLASS headers: $CUTLASS_STAMP in third_party/cutlass (include/, tools/util/include/)"
  elif [ "$CUDA_FOUND" = 1 ] && [[ "${OZGEMM_CMAKE_ARGS:-}" != *OZGEMM_ENABLE_CUDA=OFF* ]]; then
    die "could not fetch the CUTLASS headers ($CUTLASS_STAMP from PyPI); the GPU build needs them." \
        "Fix the network/pip access, or build the CPU parts only with -DOZGEMM_ENABLE_CUDA=OFF."
  else
    log "warning: could not fetch the CUTLASS headers; not needed without CUDA, continuing"
  fi
fi

log "done"
