#!/usr/bin/env python3
"""swift-format in check mode over Sources, Tests and Package.swift, with the top-level
.swift-format. Its rule findings (lowerCamelCase names, `private` rather than `fileprivate` at
file scope, `///` doc comments, no block comments, shorthand type names, no parentheses around
conditions, no access level on an extension, ...) fail the run. Its layout findings
(indentation, line breaks, spacing, trailing commas: the pretty-printer's) are counted and
not enforced: the code was written before swift-format was adopted, and reformatting every
file would collide with the Hub and runtime refactor (issue 24); once that has landed,
`swift-format format -i -r Sources Tests` and dropping LAYOUT below make them enforced.
Rules the code does not follow (several statements on a line, `var a = 0, b = 0`, import
order, several enum cases on a line) are switched off in .swift-format."""
import collections
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The pretty-printer's finding categories (swift-format's PrettyPrintFindingCategory and
# WhitespaceFindingCategory).
LAYOUT = {"AddLines", "EndOfLineComment", "Indentation", "LineLength", "RemoveLine", "Spacing",
          "SpacingCharacter", "TrailingComma", "TrailingWhitespace"}
FINDING = re.compile(r"^(?P<where>.+?:\d+:\d+): (?:warning|error): \[(?P<rule>\w+)\] (?P<message>.*)$")


def main() -> int:
    tool = shutil.which("swift-format") or "/opt/swift/usr/bin/swift-format"
    run = subprocess.run([tool, "lint", "--configuration", str(ROOT / ".swift-format"), "--recursive",
                          "--parallel", "Sources", "Tests", "Package.swift"],
                         cwd=ROOT, capture_output=True, text=True)
    layout = collections.Counter()
    failures = []
    for line in (run.stdout + run.stderr).splitlines():
        m = FINDING.match(line)
        if not m:
            if line.strip():
                failures.append(line)  # not a finding: a file swift-format could not parse, say
            continue
        if m["rule"] in LAYOUT:
            layout[m["rule"]] += 1
        else:
            failures.append(line.replace(str(ROOT) + "/", ""))
    if layout:
        counts = ", ".join(f"{n} {rule}" for rule, n in layout.most_common())
        print(f"swift-format: layout findings not enforced yet: {counts}")
    for line in failures:
        print(line)
    if failures:
        print(f"swift-format: {len(failures)} rule findings (config: .swift-format)", file=sys.stderr)
        return 1
    print("swift-format: no rule findings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
