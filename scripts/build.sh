#!/usr/bin/env bash
# scripts/build.sh [cmake --build options] — set up (scripts/setup.sh), configure build/ and build.
#
# Builds the GPU paths when nvcc is found (in PATH or at $CUDA_HOME/bin, default /usr/local/cuda),
# the CPU parts only otherwise. Environment:
#   OZGEMM_BUILD_DIR    build folder (default build)
#   OZGEMM_CMAKE_ARGS   extra configure arguments, e.g. "-DOZGEMM_ENABLE_CUDA=OFF"
#                       or "-DOZGEMM_CUDA_ARCHITECTURES=90a" (they come last, so they win)
#   OZGEMM_JOBS         parallel build jobs (default: nproc)
#   OZGEMM_CONFIGURE_ONLY=1   set up and configure, build nothing (scripts/test.sh builds in steps)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/setup.sh"

BUILD_DIR="${OZGEMM_BUILD_DIR:-build}"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
args=()
if command -v nvcc >/dev/null 2>&1; then
  args+=(-DOZGEMM_ENABLE_CUDA=ON)
elif [ -x "$CUDA_HOME/bin/nvcc" ]; then
  export CUDACXX="${CUDACXX:-$CUDA_HOME/bin/nvcc}"
  export PATH="$CUDA_HOME/bin:$PATH"
  args+=(-DOZGEMM_ENABLE_CUDA=ON)
else
  echo "build: no nvcc found; building the CPU parts only (-DOZGEMM_ENABLE_CUDA=OFF)"
  args+=(-DOZGEMM_ENABLE_CUDA=OFF)
fi
read -r -a extra <<< "${OZGEMM_CMAKE_ARGS:-}"

cmake -S . -B "$BUILD_DIR" "${args[@]}" "${extra[@]}"
[ "${OZGEMM_CONFIGURE_ONLY:-0}" = 1 ] && exit 0
cmake --build "$BUILD_DIR" -j "${OZGEMM_JOBS:-$(nproc)}" "$@"
