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
