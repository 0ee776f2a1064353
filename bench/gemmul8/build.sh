#!/usr/bin/env bash
# bench/gemmul8/build.sh — builds the GEMMul8 side-by-side benchmarks, bench/gemmul8/side_by_side.cu (real
# DGEMM) and bench/gemmul8/zgemm_side_by_side.cu (complex ZGEMM), against a GEMMul8 checkout the user
# points to (GEMMUL8_DIR: the repository root, holding GEMMul8/src/gemmul8.cu; fetched by the user
# outside this repository, never vendored or committed) and an installed ozgemm (OZGEMM_PREFIX).
#   GEMMUL8_DIR=/path/to/GEMMul8 OZGEMM_PREFIX=/path/to/prefix [ARCH=90] [OUTDIR=.carry/gemmul8] \
#     bash bench/gemmul8/build.sh
# Compiles GEMMul8's library source with the flags of its own Makefile (C++20, -O3) for sm_$ARCH only, into
# $OUTDIR/gemmul8.o, linked statically into both binaries ($OUTDIR/side_by_side, $OUTDIR/zgemm_side_by_side;
# libozgemm.so.0 is found at run time on LD_LIBRARY_PATH). The object is kept and reused while it is newer
# than every GEMMul8 source and was built from the same commit and ARCH (GEMMul8's compile takes minutes).
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
STAMP="GEMMul8 commit: $(git -C "$GEMMUL8_DIR" rev-parse HEAD 2>/dev/null || cat "$GEMMUL8_DIR/COMMIT" 2>/dev/null || echo unknown), sm_$ARCH"
OBJ="$OUTDIR/gemmul8.o"
if [ -f "$OBJ" ] && [ "$(cat "$OUTDIR/GEMMUL8_COMMIT" 2>/dev/null)" = "$STAMP" ] &&
   [ -z "$(find "$SRC/src" "$SRC/include" -newer "$OBJ" -print -quit)" ]; then
  echo "$STAMP (object up to date, reused)"
else
  echo "$STAMP"
  rm -f "$OUTDIR/GEMMUL8_COMMIT"
  "$NVCC" -std=c++20 -O3 -diag-suppress 177 $GEN -c "$SRC/src/gemmul8.cu" -o "$OBJ"
  echo "$STAMP" > "$OUTDIR/GEMMUL8_COMMIT"
fi
for bench in side_by_side zgemm_side_by_side; do
  "$NVCC" -std=c++20 -O3 $GEN -I"$SRC/include" -I"$OZGEMM_PREFIX/include" "$HERE/$bench.cu" "$OBJ" \
    -o "$OUTDIR/$bench" -L"$OZGEMM_PREFIX/lib" -lozgemm -lcublas -lcublasLt
  echo "built $OUTDIR/$bench"
done
