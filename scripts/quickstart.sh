#!/usr/bin/env bash
# scripts/quickstart.sh [ozgemm run options] — set up, build the `ozgemm` tool and run the
# main job, `ozgemm run` (on the GPU when there is one, else through the host reference).
# Environment: as scripts/build.sh (OZGEMM_BUILD_DIR, OZGEMM_CMAKE_ARGS, OZGEMM_JOBS).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/build.sh" --target ozgemm_cli
exec "$ROOT/${OZGEMM_BUILD_DIR:-build}/ozgemm" run "$@"
