#!/usr/bin/env bash
# tests/dropin/make_dist.sh OUTDIR LIBOZGEMM HOOK BLAS — the folder tests/dropin/run_device.sh takes
# (the `dropin_dist` CMake target runs this): libozgemm.so.0 (the soname the drop-ins dlopen),
# libozgemm_hook.so, libozgemm_blas.so, and blastest/ with Debian's netlib testers (xblat3d,
# xdcblat3, xblat3z, xzcblat3, their inputs) and the libraries they need (the reference libblas.so.3, libgfortran,
# libquadmath), for a GPU machine without Debian's libblas-test. About 15 MB.
set -euo pipefail
out="$1" ozgemm="$2" hook="$3" blas="$4"
rm -rf "$out"
mkdir -p "$out/blastest"
cp -L "$ozgemm" "$out/libozgemm.so.0"
cp -L "$hook" "$blas" "$out/"
tdir=""
for d in /usr/lib/*/blas; do [ -x "$d/xblat3d" ] && tdir="$d" && break; done
if [ -n "$tdir" ]; then
  cp -L "$tdir/xblat3d" "$tdir/dblat3.in" "$tdir/xdcblat3" "$tdir/din3" "$out/blastest/"
  for f in xblat3z zblat3.in xzcblat3 zin3; do  # ZGEMM (older libblas-test packages may lack them)
    if [ -e "$tdir/$f" ]; then cp -L "$tdir/$f" "$out/blastest/"; else echo "make_dist: no $tdir/$f" >&2; fi
  done
  # The reference BLAS the testers were built against (not the alternative, which may be OpenBLAS).
  if [ -e "$tdir/libblas.so.3" ]; then cp -L "$tdir/libblas.so.3" "$out/blastest/libblas.so.3"; fi
  for l in libgfortran.so.5 libquadmath.so.0; do
    p=$(ldd "$tdir/xblat3d" | awk -v l="$l" '$1 == l {print $3}')
    [ -n "$p" ] && cp -L "$p" "$out/blastest/$l"
  done
else
  echo "make_dist: no netlib testers here (Debian libblas-test); blastest/ left empty" >&2
fi
du -sh "$out" | awk '{print "make_dist: " $2 " (" $1 ")"}'
ls -l "$out" "$out/blastest" | sed 's/^/  /'
