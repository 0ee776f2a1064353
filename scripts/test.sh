#!/usr/bin/env bash
# scripts/test.sh — set up, build and run the whole test suite (ctest), CPU tests first:
#   1. configure, build only the CPU test programs (no CUDA kernel compiles) and run `ctest -L cpu`;
#   2. build everything (library, kernels, CLI, GPU tests) and run the rest (`ctest -LE cpu`).
# Without a GPU the GPU tests are reported as skipped. The last line is the whole suite's count:
#   "N passed, N failed, N skipped".
# Environment: as scripts/build.sh (OZGEMM_BUILD_DIR, OZGEMM_CMAKE_ARGS, OZGEMM_JOBS).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${OZGEMM_BUILD_DIR:-build}"
JOBS="${OZGEMM_JOBS:-$(nproc)}"
cd "$ROOT"
OZGEMM_CONFIGURE_ONLY=1 "$ROOT/scripts/build.sh"
cd "$ROOT/$BUILD_DIR"
rm -f Testing/ozgemm-*.xml

status=0
echo "test: building and running the CPU tests (ctest -L cpu) before the CUDA kernels compile"
cmake --build . --target cpu_tests -j "$JOBS"
ctest -L cpu --output-on-failure -j "$JOBS" --output-junit Testing/ozgemm-cpu.xml || status=1

echo "test: building everything and running the other tests (ctest -LE cpu)"
cmake --build . -j "$JOBS"
ctest -LE cpu --output-on-failure -j "$JOBS" --output-junit Testing/ozgemm-rest.xml || status=1

python3 "$ROOT/scripts/test_summary.py" Testing/ozgemm-cpu.xml Testing/ozgemm-rest.xml || status=1
exit $status
