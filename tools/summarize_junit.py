#!/usr/bin/env python3
"""Adds up CTest's JUnit reports into one closing line: 'suite: N passed, N failed, N skipped'.
A failed test is named with its report and the end of what it printed, so a
CI log that keeps only its last lines still says why.
Exits non-zero when a test failed or no test ran."""
import os
import sys
import xml.etree.ElementTree as ET

OUTPUT_LINES = 25  # of a failed test's output, from its end


def failure_output(case):
    """The last lines a failed test printed (CTest keeps them in system-out)."""
    text = ""
    for tag in ("system-out", "failure", "error"):
        node = case.find(tag)
        if node is not None:
            text += (node.text or "") + "\n" + (node.get("message") or "") + "\n"
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-OUTPUT_LINES:]


passed = failed = skipped = 0
for path in sys.argv[1:]:
    report = os.path.splitext(os.path.basename(path))[0]
    try:
        suite = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"cannot read {path}: {e}")
        failed += 1
        continue
    for case in suite.iter("testcase"):
        status = case.get("status", "")
        if case.find("failure") is not None or case.find("error") is not None or status == "fail":
            failed += 1
            print(f"FAILED ({report}): {case.get('name')}")
            for line in failure_output(case):
                print(f"    {line}")
        elif case.find("skipped") is not None or status in ("notrun", "disabled"):
            skipped += 1
        else:
            passed += 1

print(f"suite: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
