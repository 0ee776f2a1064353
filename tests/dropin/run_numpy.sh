#!/usr/bin/env bash
# tests/dropin/run_numpy.sh LIB — numpy from Debian (/usr/bin/python3 with python3-numpy, which
# links the system libblas.so.3) through the preloaded LIB (libozgemm_blas.so), on the forwarding
# path: default threshold (calls below it) and threshold 0 with the GPU hidden. Exit 77 when no such
# numpy is installed (a pip wheel bundles its own OpenBLAS under other symbol names: not reachable).
set -uo pipefail
lib="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${OZGEMM_NUMPY_PYTHON:-/usr/bin/python3}"
if [ ! -x "$py" ] || ! "$py" -c "import numpy" 2>/dev/null; then
  echo "SKIP: no numpy for $py (Debian package python3-numpy)"; exit 77
fi
umath=$("$py" -c "import numpy, glob, os; d = os.path.dirname(numpy.__file__); \
print((glob.glob(d + '/core/_multiarray_umath*.so') + glob.glob(d + '/_core/_multiarray_umath*.so'))[0])")
if ! ldd "$umath" | grep 'libblas\.so\.3' > /dev/null; then
  echo "SKIP: $py's numpy does not link the system libblas.so.3 ($(ldd "$umath" | grep -i blas | head -n1))"; exit 77
fi
echo "numpy $("$py" -c 'import numpy; print(numpy.__version__)') ($umath -> $(ldd "$umath" | awk '/libblas/ {print $3}'))"
status=0
echo "default threshold, n=256:"
LD_PRELOAD="$lib" "$py" "$here/numpy_check.py" --lib "$lib" --n 256 --mode forward || status=1
echo "OZGEMM_BLAS_MIN_SIZE=0, GPU hidden, n=200:"
LD_PRELOAD="$lib" OZGEMM_BLAS_MIN_SIZE=0 CUDA_VISIBLE_DEVICES= "$py" "$here/numpy_check.py" --lib "$lib" --n 200 \
  --mode forward || status=1
[ $status -eq 0 ] && echo "OK: numpy through $(basename "$lib") gives the system BLAS's bits"
exit $status
