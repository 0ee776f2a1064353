#!/usr/bin/env bash
# bench/gemmul8/build.sh — builds bench/gemmul8/side_by_side.cu against a GEMMul8 checkout the user
# points to (GEMMUL8_DIR: the repository root, holding GEMMul8/src/gemmul8.cu; fetched by the user
# outside this repository, never vendored or committed) and an installed ozgemm (OZGEMM_PREFIX).
#   GEMMUL8_DIR=/path/to/GEMMul8 OZGEMM_PREFIX=/path/to/prefix [ARCH=90] [OUTDIR=.carry/gemmul8] \
#     bash bench/gemmul8/build.sh
# Compiles GEMMul8's library source with the flags of its own Makefile (C++20, -O3) for sm_$ARCH only.
set -eu
: "${GEMMUL8_DIR:?point GEMMUL8_DIR at a GEMMul8 checkout}"
: "${OZGEMM_PREFIX:?point OZGEMM_PREFIX at an ozgemm install prefix}"
ARCH=${ARCH:-90}
OUTDIR=${OUTDIR:-.carry/gemmul8}
HERE="$(cd "$(dirname "$0")" && pwd)"
SRC="$GEMMUL8_DIR/GEMMul8"
[ -f "$SRC/src/gemmul8.cu" ] || { echo "no $SRC/src/gemmul8.cu" >&2; exit 2; }
mkdir -p "$OUTDIR"
NVCC=${NVCC:-nvcc}
GEN="-gencode arch=compute_$ARCH,code=sm_$ARCH"
echo "GEMMul8 commit: $(git -C "$GEMMUL8_DIR" rev-parse HEAD 2>/dev/null || cat "$GEMMUL8_DIR/COMMIT" 2>/dev/null || echo unknown)" |
  tee "$OUTDIR/GEMMUL8_COMMIT"
"$NVCC" -std=c++20 -O3 -diag-suppress 177 $GEN -c "$SRC/src/gemmul8.cu" -o "$OUTDIR/gemmul8.o"
"$NVCC" -std=c++20 -O3 $GEN -I"$SRC/include" -I"$OZGEMM_PREFIX/include" "$HERE/side_by_side.cu" "$OUTDIR/gemmul8.o" \
  -o "$OUTDIR/side_by_side" -L"$OZGEMM_PREFIX/lib" -lozgemm -lcublas -lcublasLt
echo "built $OUTDIR/side_by_side"
