#!/usr/bin/env bash
# scripts/test_package.sh BUILD_DIR — what a user of the library does, against an installed tree
# (scripts/test.sh runs it after the ctest suite; BUILD_DIR must be built):
#   1. cmake --install BUILD_DIR --prefix BUILD_DIR/install; check the installed layout (SONAME,
#      exported symbols, headers, CMake package, ozgemm.pc) and run the installed CLI;
#   2. examples/ built against the installed tree with find_package (C, C on the static library,
#      C++) and run with ctest; examples/c/main.c and examples/cpp/main.cpp built with
#      `gcc/g++ main.c $(pkg-config --cflags --libs ozgemm)` and run (exit 77 = skipped: no GPU);
#      tests/cli/installed_api.cpp (every installed header, every function they declare) built the
#      same way on libozgemm.so and run, after checking that it includes every installed header;
#   3. examples/subproject: ozgemm as add_subdirectory of a C-only project (configure, link, run);
#   4. the Python package: a venv (BUILD_DIR/pyvenv), `pip install .` (kernels for
#      $OZGEMM_PY_CUDA_ARCHITECTURES, default 80: one architecture keeps the CI build short), then
#      `python -c "import ozgemm"` and pytest python/tests.
# Results go to JUnit files in BUILD_DIR/Testing (ozgemm-package.xml for the steps above,
# ozgemm-examples.xml from ctest, ozgemm-python.xml from pytest) for scripts/test_summary.py.
# Without CUDA in the build the library steps are reported as skipped.
# Environment: OZGEMM_JOBS, OZGEMM_PY_CUDA_ARCHITECTURES, OZGEMM_SKIP_PYTHON=1, OZGEMM_SKIP_SUBPROJECT=1,
# PYTHON (default python3).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:?usage: scripts/test_package.sh BUILD_DIR}" && pwd)"
JOBS="${OZGEMM_JOBS:-$(nproc)}"
PY="${PYTHON:-python3}"
PREFIX="$BUILD/install"
LOGS="$BUILD/Testing/package"
XML="$BUILD/Testing/ozgemm-package.xml"
mkdir -p "$LOGS"
rm -f "$XML" "$BUILD/Testing/ozgemm-examples.xml" "$BUILD/Testing/ozgemm-python.xml"
cd "$ROOT"

CASES=()
status=0
xml_escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g'; }
case_xml() {  # case_xml NAME pass|fail|skip [MESSAGE]
  local name="$1" result="$2" msg
  msg="$(printf '%s' "${3:-}" | xml_escape | tr '\n' ' ' | cut -c1-400)"
  case "$result" in
    pass) CASES+=("  <testcase classname=\"package\" name=\"$name\"/>") ;;
    skip) CASES+=("  <testcase classname=\"package\" name=\"$name\"><skipped message=\"$msg\"/></testcase>") ;;
    *) CASES+=("  <testcase classname=\"package\" name=\"$name\"><failure message=\"$msg\"/></testcase>"); status=1 ;;
  esac
  printf 'package: %-34s %s%s\n' "$name" "$result" "${3:+  ($3)}"
}
# run NAME LOGFILE COMMAND... : pass/fail by exit status; the log's tail on failure
run() {
  local name="$1" log="$LOGS/$2.log"
  shift 2
  if "$@" > "$log" 2>&1; then case_xml "$name" pass; return 0; fi
  tail -20 "$log"
  case_xml "$name" fail "see $log"
  return 1
}
# run_example NAME LOGFILE COMMAND... : exit 0 pass, 77 skipped (no GPU), else fail
run_example() {
  local name="$1" log="$LOGS/$2.log" rc
  shift 2
  "$@" > "$log" 2>&1
  rc=$?
  case $rc in
    0) case_xml "$name" pass ;;
    77) case_xml "$name" skip "$(tail -1 "$log")" ;;
    *) tail -20 "$log"; case_xml "$name" fail "exit $rc, see $log" ;;
  esac
}
write_xml() {
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo "<testsuite name=\"package\" tests=\"${#CASES[@]}\">"
    printf '%s\n' "${CASES[@]}"
    echo '</testsuite>'
  } > "$XML"
}
trap write_xml EXIT

have_cuda=0
[ -e "$BUILD/libozgemm.so" ] && have_cuda=1  # the library is built only with CUDA
NOCUDA="built without CUDA (no library to install or link)"

# --- 1. install -----------------------------------------------------------------------------------
echo "package: cmake --install $BUILD --prefix $PREFIX"
rm -rf "$PREFIX"
run install install cmake --install "$BUILD" --prefix "$PREFIX"
check_layout() {
  local f
  for f in include/ozgemm/ozgemm.h include/ozgemm/ozgemm.hpp include/ozgemm/config.h include/ozgemm/numerics/ozaki1.hpp \
           bin/ozgemm lib/libozgemm.so.0 lib/libozgemm.so lib/libozgemm.a lib/pkgconfig/ozgemm.pc \
           lib/cmake/ozgemm/ozgemmConfig.cmake lib/cmake/ozgemm/ozgemmConfigVersion.cmake lib/cmake/ozgemm/ozgemmTargets.cmake; do
    [ -e "$PREFIX/$f" ] || { echo "missing: $f"; return 1; }
  done
  [ ! -e "$PREFIX/include/api" ] && [ ! -e "$PREFIX/include/kernels" ] || { echo "private headers installed"; return 1; }
  # the host references and the model are in-tree CPU libraries, not in libozgemm: not installed
  [ ! -e "$PREFIX/include/ozgemm/reference" ] && [ ! -e "$PREFIX/include/ozgemm/model" ] ||
    { echo "headers of functions libozgemm does not export installed (reference/, model/)"; return 1; }
  readelf -d "$PREFIX/lib/libozgemm.so.0" | grep -q 'SONAME.*\[libozgemm\.so\.0\]' || { echo "SONAME is not libozgemm.so.0"; return 1; }
  local other
  other="$(nm -D --defined-only "$PREFIX/lib/libozgemm.so.0" | awk '{print $3}' | c++filt | grep -v '^ozgemm' || true)"
  [ -z "$other" ] || { echo "exported beyond the public API:"; echo "$other" | head; return 1; }
  nm -D --defined-only "$PREFIX/lib/libozgemm.so.0" | grep -q ' T ozgemmDgemm$' || { echo "ozgemmDgemm not exported"; return 1; }
  PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" pkg-config --exists --print-errors "ozgemm >= 0.2" || return 1
  echo "layout OK"
}
if [ $have_cuda = 1 ]; then
  run install_layout install_layout check_layout
  run installed_cli installed_cli "$PREFIX/bin/ozgemm" help
else
  case_xml install_layout skip "$NOCUDA"
  [ -x "$PREFIX/bin/ozgemm" ] && run installed_cli installed_cli "$PREFIX/bin/ozgemm" help
fi

# --- 2. examples against the installed tree ----------------------------------------------------------
EX="$BUILD/examples"
if [ $have_cuda = 1 ]; then
  rm -rf "$EX"
  if run examples_find_package_build examples_build \
       bash -c "cmake -S '$ROOT/examples' -B '$EX' -DCMAKE_PREFIX_PATH='$PREFIX' && cmake --build '$EX' -j '$JOBS'"; then
    # each example is one ctest: 0 passed, 77 skipped (no GPU), anything else failed
    ctest --test-dir "$EX" --output-on-failure --output-junit "$BUILD/Testing/ozgemm-examples.xml" \
      > "$LOGS/examples_ctest.log" 2>&1 || { tail -20 "$LOGS/examples_ctest.log"; status=1; }
    grep -E "Test +#|tests passed" "$LOGS/examples_ctest.log" | sed 's/^/package: /'
  fi
  PCFLAGS=()
  if read -r -a PCFLAGS < <(PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" pkg-config --cflags --libs ozgemm); then
    if run example_c_pkgconfig_build example_c_pkgconfig_build \
         gcc -std=c99 -Wall -Wextra -Werror "$ROOT/examples/c/main.c" "${PCFLAGS[@]}" -o "$EX/example_c_pkgconfig"; then
      run_example example_c_pkgconfig_run example_c_pkgconfig_run \
        env LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$EX/example_c_pkgconfig"
    fi
    if run example_cpp_pkgconfig_build example_cpp_pkgconfig_build \
         g++ -std=c++17 -Wall -Wextra -Werror "$ROOT/examples/cpp/main.cpp" "${PCFLAGS[@]}" -o "$EX/example_cpp_pkgconfig"; then
      run_example example_cpp_pkgconfig_run example_cpp_pkgconfig_run \
        env LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$EX/example_cpp_pkgconfig"
    fi
    # Every installed header is public API: the program that includes all of them (checked here)
    # and uses each function they declare links against libozgemm.so and runs without a GPU.
    check_installed_headers() {
      local h missing=0
      while IFS= read -r h; do
        grep -q "#include <ozgemm/${h#"$PREFIX/include/ozgemm/"}>" "$ROOT/tests/cli/installed_api.cpp" ||
          { echo "tests/cli/installed_api.cpp does not include installed header $h"; missing=1; }
      done < <(find "$PREFIX/include/ozgemm" -type f -name '*.h*')
      [ $missing = 0 ] || return 1
      mkdir -p "$EX" && g++ -std=c++17 -Wall -Wextra -Werror "$ROOT/tests/cli/installed_api.cpp" "${PCFLAGS[@]}" \
        -o "$EX/installed_api" || return 1
      env LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$EX/installed_api"
    }
    run installed_headers_link installed_headers_link check_installed_headers
  else
    case_xml example_pkgconfig fail "pkg-config --cflags --libs ozgemm failed"
  fi
else
  for n in examples_find_package_build example_c_pkgconfig_build example_cpp_pkgconfig_build installed_headers_link; do
    case_xml $n skip "$NOCUDA"
  done
fi

# --- 3. ozgemm as a subproject of a C-only project ------------------------------------------------------
# One architecture and no CUTLASS: this checks configuring, linking and the cache, not the kernels.
if [ $have_cuda = 1 ] && [ "${OZGEMM_SKIP_SUBPROJECT:-0}" != 1 ]; then
  SUB="$BUILD/subproject"
  check_subproject() {
    cmake -S "$ROOT/examples/subproject" -B "$SUB" -DOZGEMM_CUDA_ARCHITECTURES=80 \
      -DOZGEMM_CUTLASS_DIR="$SUB/no-cutlass" || return 1
    # ozgemm must leave the parent's cache alone
    if grep -E '^CMAKE_CUDA_ARCHITECTURES:|^CMAKE_BUILD_TYPE:[A-Z]+=.+' "$SUB/CMakeCache.txt"; then
      echo "ozgemm set a cache variable of the parent project"; return 1
    fi
    cmake --build "$SUB" -j "$JOBS"
  }
  if run subproject_c_only_build subproject_build check_subproject; then
    run_example subproject_c_only_run subproject_run "$SUB/example_c"
  fi
else
  [ $have_cuda = 1 ] && why="OZGEMM_SKIP_SUBPROJECT=1" || why="$NOCUDA"
  case_xml subproject_c_only_build skip "$why"
fi

# --- 4. the Python package -------------------------------------------------------------------------------
if [ $have_cuda = 1 ] && [ "${OZGEMM_SKIP_PYTHON:-0}" != 1 ]; then
  VENV="$BUILD/pyvenv"
  make_venv() {
    [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV" || return 1
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q pytest numpy
  }
  if run python_venv python_venv make_venv; then
    ARCH="${OZGEMM_PY_CUDA_ARCHITECTURES:-80}"
    echo "package: pip install . (kernels for $ARCH; the wheel build compiles them, a few minutes)"
    t0=$(date +%s)
    if run pip_install pip_install env OZGEMM_CUDA_ARCHITECTURES="$ARCH" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" \
         "$VENV/bin/python" -m pip install --disable-pip-version-check -C build-dir="$BUILD/py" "$ROOT"; then
      echo "package: pip install took $(( $(date +%s) - t0 )) s"
      run python_import python_import bash -c "cd '$BUILD' && '$VENV/bin/python' -c 'import ozgemm, json; print(ozgemm.__version__, json.dumps(ozgemm.info()))'"
      echo "package: pytest python/tests"
      "$VENV/bin/python" -m pytest "$ROOT/python/tests" -q -rs -p no:cacheprovider \
        --junitxml="$BUILD/Testing/ozgemm-python.xml" > "$LOGS/pytest.log" 2>&1 || { tail -30 "$LOGS/pytest.log"; status=1; }
      tail -1 "$LOGS/pytest.log" | sed 's/^/package: pytest: /'
    fi
  fi
else
  [ $have_cuda = 1 ] && why="OZGEMM_SKIP_PYTHON=1" || why="$NOCUDA (the Python package needs it)"
  case_xml pip_install skip "$why"
fi
exit $status
