# bench/device_env.sh — the set-up the device_*.sh scripts share; sourced as
#   source "$(dirname "$0")/device_env.sh" <subfolder>
# OUT (default ./device-out) with <subfolder> created under it; NEW, the carried binaries
# (default .carry/new), on LD_LIBRARY_PATH; OZGEMM_COMMIT from $NEW/COMMIT for the JSON provenance.
set -u
OUT=${OUT:-./device-out}
NEW=${NEW:-.carry/new}
mkdir -p "$OUT/$1"
export LD_LIBRARY_PATH="$NEW${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OZGEMM_COMMIT=${OZGEMM_COMMIT:-$(cat "$NEW/COMMIT" 2>/dev/null || echo unknown)}

# gpu_suite LOG_DIR TEST [gtest args...]: runs $NEW/TEST (brief output) into LOG_DIR/TEST.log and
# prints one line: its exit status and gtest's summary.
gpu_suite() {
  local dir=$1 t=$2; shift 2
  "$NEW/$t" --gtest_brief=1 "$@" > "$dir/$t.log" 2>&1
  echo "$t exit $?: $(grep -E 'tests? from .* ran|PASSED|FAILED' "$dir/$t.log" | tr '\n' ' ')"
}
# sanitize LOG_DIR TOOL TEST FILTER [TIMEOUT_S]: compute-sanitizer TOOL on $NEW/TEST's FILTER into
# LOG_DIR/sanitizer_TOOL.log, one summary line.
sanitize() {
  local dir=$1 tool=$2 t=$3 filter=$4 limit=${5:-200}
  timeout "$limit" compute-sanitizer --tool "$tool" "$NEW/$t" --gtest_brief=1 --gtest_filter="$filter" \
    > "$dir/sanitizer_$tool.log" 2>&1
  echo "compute-sanitizer $tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|tests? from .* ran|PASSED|FAILED' "$dir/sanitizer_$tool.log" | tr '\n' ' ')"
}
