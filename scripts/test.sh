#!/usr/bin/env bash
# scripts/test.sh — set up, build and run the whole test suite (ctest), CPU tests first:
#   1. configure, build only the CPU test programs (no CUDA kernel compiles) and run `ctest -L cpu`;
#   2. build everything (library, kernels, CLI, GPU tests) and run the rest (`ctest -LE cpu`);
#   3. scripts/test_package.sh: `cmake --install` to build/install, the examples built against it
#      (find_package and pkg-config) and run, ozgemm as a C-only project's subdirectory, and
#      `pip install .` into a venv (kernels for OZGEMM_PY_CUDA_ARCHITECTURES, default 80: the wheel
#      build compiles them again, a few minutes) with its pytest suite (python/tests).
# Without a GPU the GPU tests and the example runs are reported as skipped. The last line is the
# whole suite's count (ctest, the packaging steps, pytest): "N passed, N failed, N skipped".
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

echo "test: install, examples against the installed tree, the Python package (scripts/test_package.sh)"
"$ROOT/scripts/test_package.sh" . || status=1

reports=(Testing/ozgemm-cpu.xml Testing/ozgemm-rest.xml Testing/ozgemm-package.xml)
for r in Testing/ozgemm-examples.xml Testing/ozgemm-python.xml; do [ -f "$r" ] && reports+=("$r"); done
python3 "$ROOT/scripts/test_summary.py" "${reports[@]}" || status=1
exit $status
