#!/usr/bin/env python3
"""scripts/test_summary.py FILE... — one line for JUnit reports (ctest, scripts/test_package.sh, pytest):
"N passed, N failed, N skipped".

Exits 1 when a test failed or a report is missing; skipped tests (GPU tests without a GPU) are
counted and named, never hidden in a "100% passed" line."""
import sys
import xml.etree.ElementTree as ET

passed = failed = skipped = 0
skipped_names = []
missing = False
for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"test_summary: cannot read {path}: {e}", file=sys.stderr)
        missing = True
        continue
    for case in root.iter("testcase"):
        status = case.get("status", "")
        if case.find("failure") is not None or case.find("error") is not None or status == "fail":
            failed += 1
        elif case.find("skipped") is not None or status in ("notrun", "disabled"):
            skipped += 1
            skipped_names.append(case.get("name", "?").split("  # GetParam()")[0])  # gtest appends the parameter bytes
        else:
            passed += 1
if skipped_names:
    shown = ", ".join(skipped_names[:8]) + (f", ... ({len(skipped_names) - 8} more)" if len(skipped_names) > 8 else "")
    print(f"skipped (GPU tests and example runs without a GPU, or a kernel this build lacks): {shown}")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or missing else 0)
