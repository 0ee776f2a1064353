# bench/device_env.sh — the set-up the device_*.sh scripts share; sourced as
#   source "$(dirname "$0")/device_env.sh" <subfolder>
# OUT (default ./device-out) with <subfolder> created under it; NEW, the carried binaries
# (default .carry/new), on LD_LIBRARY_PATH; OZGEMM_COMMIT from $NEW/COMMIT for the JSON provenance.
set -u
OUT=${OUT:-./device-out}
NEW=${NEW:-.carry/new}
mkdir -p "$OUT/$1"
# Libraries may travel xz-compressed (the carry limit): unpack them where they lie, when the .xz is
# newer than what is there (through a temporary file, so a half-written one never stays).
for f in "$NEW"/*.xz ${OLD:+"$OLD"/*.xz}; do
  if [ -f "$f" ] && [ "$f" -nt "${f%.xz}" ]; then
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$f" "${f%.xz}.tmp" &&
      chmod 755 "${f%.xz}.tmp" && mv "${f%.xz}.tmp" "${f%.xz}"
  fi
done
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
# bench_summary JSON LABEL: one line from an `ozgemm bench --json` result: ozgemm against native DGEMM
# of the same run (time, TFLOPS, componentwise error, speed-up), the phases and FP64 mode's decision;
# the .err file's tail where the JSON is missing.
bench_summary() {
  local f=$1 label=$2
  python3 - "$f" "$label" <<'PY' || tail -3 "${f%.json}.err"
import json, sys
r = json.load(open(sys.argv[1])); o = r['ozgemm']; nt = r['native_dgemm']
ph = {k[:-3]: round(v, 2) for k, v in o.items() if k.endswith('_ms') and k != 'ms'}
print(f"{sys.argv[2]} {r['m']}x{r['n']}x{r['k']} {r.get('scheme')} N={r.get('moduli')}: {o['ms']:.2f} ms {o['tflops']:.1f} TF "
      f"err {o['componentwise']:.1e} | native {nt['ms']:.2f} ms {nt['tflops']:.1f} TF err {nt['componentwise']:.1e} | "
      f"x{nt['ms']/o['ms']:.3f} | {ph} | {r.get('decision')}")
PY
}
