#!/usr/bin/env python3
"""Adds up CTest's JUnit reports into one closing line: 'suite: N passed, N failed, N skipped'.
A failed test is named with its report and the end of what it printed, so a
CI log that keeps only its last lines still says why. A step that failed
before it could write a report (a preset that did not build) is named with
--failed-step and ends the line, so the count of passed tests never reads as
a green run.
Exits non-zero when a test or a step failed, or no test ran."""
import argparse
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


parser = argparse.ArgumentParser()
parser.add_argument("reports", nargs="*")
parser.add_argument("--failed-step", action="append", default=[], help="a step that failed without a report")
args = parser.parse_args()

passed = failed = skipped = 0
for path in args.reports:
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

line = f"suite: {passed} passed, {failed} failed, {skipped} skipped"
if args.failed_step:
    line += "; failed steps: " + ", ".join(args.failed_step)
print(line)
sys.exit(1 if failed or args.failed_step or passed == 0 else 0)
