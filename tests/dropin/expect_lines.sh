#!/usr/bin/env bash
# tests/dropin/expect_lines.sh PATTERN... -- COMMAND [ARG...] — runs COMMAND (its output is shown),
# and fails when it fails or when its output (stdout and stderr) lacks a line matching any one of the
# extended regular expressions PATTERN (e.g. the drop-ins' log lines and exit summary).
set -uo pipefail
patterns=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do patterns+=("$1"); shift; done
[ "${1:-}" = "--" ] || { echo "usage: $0 PATTERN... -- COMMAND [ARG...]" >&2; exit 2; }
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" > "$out" 2>&1
rc=$?
cat "$out"
status=0
[ $rc -eq 0 ] || { echo "FAIL: $1 exited with $rc"; status=1; }
for p in "${patterns[@]}"; do
  grep -Eq -- "$p" "$out" || { echo "FAIL: no output line matches: $p"; status=1; }
done
[ $status -eq 0 ] && echo "OK: exit 0 and ${#patterns[@]} expected line(s) found"
exit $status
