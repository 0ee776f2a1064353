#!/usr/bin/env bash
# scripts/test.sh — set up, build everything in build/ and run the whole test suite (ctest).
# Without a GPU the GPU tests are reported as "Skipped" in ctest's summary.
# Environment: as scripts/build.sh (OZGEMM_BUILD_DIR, OZGEMM_CMAKE_ARGS, OZGEMM_JOBS).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/build.sh"
cd "$ROOT/${OZGEMM_BUILD_DIR:-build}"
ctest --output-on-failure -j "${OZGEMM_JOBS:-$(nproc)}"
