#!/usr/bin/env bash
# python/tests/run_device.sh — the Python package and the examples on a GPU machine (offline: pip
# uses the build requirements already installed there, scikit-build-core and nanobind).
#
#   1. pip install --no-build-isolation --no-deps --target $WORK/site .   (the wheel's CMake build)
#      or, with OZGEMM_WHEEL=path/to/ozgemm-*.whl, that prebuilt wheel (no compile on the device);
#   2. the C library built and installed to a prefix (or OZGEMM_PREFIX, an installed tree carried
#      here), then examples/ built against it with find_package (ctest) and examples/c/main.c with
#      `gcc main.c $(pkg-config --cflags --libs ozgemm)`; run, each must print OK (77 = skipped);
#   3. pytest python/tests (CPU and GPU tests; OZGEMM_LIBRARY is set to the installed
#      libozgemm.so.0 so the results are compared with the C API's bits through ctypes);
#   4. python/tests/bench_matmul.py: N^2 (default 4096) float64 ozgemm.matmul beside cupy.matmul and
#      torch.matmul: median time (CUDA events) and errors against a double-double reference.
#
# Output under $OUT (default ./device-out): device.txt, pip_install.log, info.json, examples.log,
# examples.xml, pytest.log, pytest.xml, bench.txt, python_matmul_<N>.json, summary.txt.
# Environment: OZGEMM_CUDA_ARCHITECTURES (default 90a: H100/H200), OZGEMM_WHEEL, OZGEMM_PREFIX,
# PYTHON (default python3), BENCH_N (4096), SKIP_EXAMPLES=1, SKIP_BENCH=1, OZGEMM_JOBS (nproc),
# OZGEMM_DEVICE_BUILD (build folder, default build-device). Exit status 1 if any step failed.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
OUT=${OUT:-$ROOT/device-out}
PY=${PYTHON:-python3}
ARCHS=${OZGEMM_CUDA_ARCHITECTURES:-90a}
WORK=${OZGEMM_DEVICE_BUILD:-$ROOT/build-device}
JOBS=${OZGEMM_JOBS:-$(nproc)}
N=${BENCH_N:-4096}
mkdir -p "$OUT" "$WORK"
OUT="$(cd "$OUT" && pwd)"
SUMMARY=()
status=0
step() { echo; echo "== $*"; }
result() {  # result NAME ok|skipped|FAILED [detail]
  SUMMARY+=("$1: $2${3:+ ($3)}")
  [ "$2" = FAILED ] && status=1
  return 0
}
secs() { local t0=$1; echo $(( $(date +%s) - t0 ))s; }

if ! command -v nvcc >/dev/null 2>&1 && [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
  export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
fi
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  echo "nvcc: $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
  echo "python: $($PY --version 2>&1); $($PY -c 'import scikit_build_core, nanobind; print("scikit-build-core", scikit_build_core.__version__, "nanobind", nanobind.__version__)' 2>&1)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (+ local changes)')"
} | tee "$OUT/device.txt"

# --- 1. the Python package -------------------------------------------------------------------------
SITE="$WORK/site"
step "pip install into $SITE"
t0=$(date +%s)
if [ -n "${OZGEMM_WHEEL:-}" ]; then
  $PY -m pip install --no-deps --no-index --upgrade --target "$SITE" "$OZGEMM_WHEEL" > "$OUT/pip_install.log" 2>&1
else
  OZGEMM_CUDA_ARCHITECTURES="$ARCHS" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" \
    $PY -m pip install --no-build-isolation --no-deps --upgrade --target "$SITE" -C build-dir="$WORK/py" . \
    > "$OUT/pip_install.log" 2>&1
fi
if [ $? -eq 0 ]; then result "pip install" ok "$(secs $t0), archs $ARCHS"; else
  tail -30 "$OUT/pip_install.log"; result "pip install" FAILED "$OUT/pip_install.log"; fi
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
if ! $PY -c "import ozgemm._ozgemm" 2>/dev/null; then
  # A wheel built elsewhere may not find libcublas by its RUNPATH: add the pip nvidia wheels' folders.
  NV="$($PY -c "import glob, os, site; print(':'.join(d for p in site.getsitepackages() + [site.getusersitepackages()] for d in glob.glob(os.path.join(p, 'nvidia', 'cu*', 'lib')) + glob.glob(os.path.join(p, 'nvidia', 'cublas', 'lib'))))")"
  [ -n "$NV" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$NV"
  $PY -c "import ozgemm._ozgemm" || echo "the extension does not load (see above); LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
fi
$PY -c "import json, ozgemm; print(json.dumps(ozgemm.info(), indent=1))" 2>&1 | tee "$OUT/info.json"

# --- 2. the C library and the examples -------------------------------------------------------------
if [ "${SKIP_EXAMPLES:-0}" != 1 ]; then
  PREFIX="${OZGEMM_PREFIX:-}"
  {
    if [ -z "$PREFIX" ]; then
      step "C library: configure, build, install to $WORK/install (archs $ARCHS)"
      t0=$(date +%s)
      cmake -S . -B "$WORK/lib" -DOZGEMM_CUDA_ARCHITECTURES="$ARCHS" -DOZGEMM_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release &&
        cmake --build "$WORK/lib" -j "$JOBS" &&
        cmake --install "$WORK/lib" --prefix "$WORK/install" && PREFIX="$WORK/install"
      echo "library: $(secs $t0)"
    fi
    if [ -n "$PREFIX" ]; then
      step "examples with find_package(ozgemm) from $PREFIX"
      cmake -S examples -B "$WORK/examples" -DCMAKE_PREFIX_PATH="$PREFIX" &&
        cmake --build "$WORK/examples" -j "$JOBS" &&
        ctest --test-dir "$WORK/examples" --output-on-failure -V --output-junit "$OUT/examples.xml"
      echo "find_package examples exit $?" > "$WORK/examples.rc"
      step "examples/c/main.c with pkg-config"
      command -v pkg-config >/dev/null || echo "no pkg-config on this machine"
      # ozgemm.pc names the CUDA folders of the machine that built the library; a prefix carried
      # from another machine gets this machine's (where libcudart.so is), as a user would pass them.
      PCDEF=()
      if [ -n "${OZGEMM_PREFIX:-}" ]; then
        for d in "${CUDA_HOME:-/usr/local/cuda}"/lib64 "${CUDA_HOME:-/usr/local/cuda}"/lib "${CUDA_HOME:-/usr/local/cuda}"/targets/*/lib \
                 $(python3 -c "import nvidia, os; print(' '.join(os.path.join(p, 'cu13', 'lib') for p in nvidia.__path__))" 2>/dev/null); do
          if [ -e "$d/libcudart.so" ]; then PCDEF=(--define-variable=cudalibdir="$d"); break; fi
        done
        echo "libcudart.so here: ${PCDEF[*]:-not found}; ls of the CUDA folders:"
        ls -d "${CUDA_HOME:-/usr/local/cuda}"/lib* "${CUDA_HOME:-/usr/local/cuda}"/targets/*/lib 2>&1
        ls "${CUDA_HOME:-/usr/local/cuda}"/lib*/libcudart* "${CUDA_HOME:-/usr/local/cuda}"/targets/*/lib/libcudart* 2>&1 | head
      fi
      PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" pkg-config "${PCDEF[@]}" --cflags --libs ozgemm &&
        gcc -std=c99 -Wall examples/c/main.c $(PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" pkg-config "${PCDEF[@]}" --cflags --libs ozgemm) \
          -o "$WORK/example_c_pkgconfig" &&
        LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$WORK/example_c_pkgconfig"
      echo "pkg-config example exit $?" >> "$WORK/examples.rc"
    fi
  } > "$OUT/examples.log" 2>&1
  tail -25 "$OUT/examples.log"
  if [ -z "$PREFIX" ]; then
    result "examples" FAILED "library build failed: $OUT/examples.log"
  else
    grep -q "find_package examples exit 0" "$WORK/examples.rc" && result "examples (find_package, ctest)" ok ||
      result "examples (find_package, ctest)" FAILED "$OUT/examples.log"
    if ! command -v pkg-config >/dev/null; then result "example_c (pkg-config)" skipped "no pkg-config here"
    elif grep -q "pkg-config example exit 0" "$WORK/examples.rc"; then result "example_c (pkg-config)" ok
    elif grep -q "pkg-config example exit 77" "$WORK/examples.rc"; then result "example_c (pkg-config)" skipped "no GPU"
    else result "example_c (pkg-config)" FAILED "$OUT/examples.log"; fi
    [ -e "$PREFIX/lib/libozgemm.so.0" ] && export OZGEMM_LIBRARY="$PREFIX/lib/libozgemm.so.0"
  fi
fi

# --- 3. pytest -------------------------------------------------------------------------------------------
step "pytest python/tests${OZGEMM_LIBRARY:+ (C API through ctypes: $OZGEMM_LIBRARY)}"
$PY -m pytest python/tests -v -rs -p no:cacheprovider --junitxml="$OUT/pytest.xml" > "$OUT/pytest.log" 2>&1
rc=$?
tail -40 "$OUT/pytest.log"
if [ $rc -eq 0 ]; then result "pytest" ok "$(tail -1 "$OUT/pytest.log" | tr -d '=')"; else
  result "pytest" FAILED "$(tail -1 "$OUT/pytest.log" | tr -d '=')"; fi

# --- 4. the benchmark ------------------------------------------------------------------------------------
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  step "bench: ${N}^2 float64, ozgemm.matmul beside cupy.matmul / torch.matmul"
  $PY python/tests/bench_matmul.py --n "$N" --out "$OUT" 2>&1 | tee "$OUT/bench.txt"
  case "${PIPESTATUS[0]}" in
    0) result "bench" ok "$OUT/bench.txt" ;;
    77) result "bench" skipped "no usable GPU" ;;
    *) result "bench" FAILED "$OUT/bench.txt" ;;
  esac
fi

step "summary"
printf '%s\n' "${SUMMARY[@]}" | tee "$OUT/summary.txt"
exit $status
