#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What compute-sanitizer found in one run, in one line plus the first findings (for `./lab NN --sanitize`).

  sanitizer_report.py TOOL LOG EXIT_STATUS

Exit status: 0 nothing found, 1 something found, 2 the run could not be judged.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PREFIX = "========= "
SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?")
RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")
LOCATION = re.compile(r"^\s*at (.+?)(?:\+0x[0-9a-f]+)?(?: in (\S+))?$")
CODE_AT = re.compile(r"at (.+?)\+0x[0-9a-f]+ in (\S+)")
SANITIZER_ERROR_EXIT = 99  # --error-exitcode given by ./lab


def short_kernel(signature: str) -> str:
    """'void reduce<256, true>(const int *, long *)' -> 'reduce<256, true>': the parameters and the
    return type dropped (a kernel returns void)."""
    name = signature.strip()
    if name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i]
                break
    return name[5:] if name.startswith("void ") else name


def simplify(text: str) -> str:
    """'at void k<16>(float *)+0x1d0 in /a/b/lab.cu:50' -> 'at k<16> (lab.cu:50)'."""
    return CODE_AT.sub(lambda m: f"at {short_kernel(m.group(1))} ({Path(m.group(2)).name})", text)


def findings(lines: list[str]) -> list[str]:
    """The first distinct findings: the headline and where (kernel, file:line)."""
    found: list[str] = []
    for i, line in enumerate(lines):
        if not line.startswith(PREFIX) or line.startswith(PREFIX + " "):
            continue  # not sanitizer output, or a detail line of the finding above
        text = line[len(PREFIX):].strip()
        if not text or "SUMMARY" in text or text.startswith(("COMPUTE-SANITIZER", "Saved host backtrace")):
            continue
        details = [d[len(PREFIX):].strip() for d in lines[i + 1:i + 4] if d.startswith(PREFIX + " ")]
        if details and details[0].startswith("and "):
            text += " " + details[0]  # racecheck: "... Write access at X and Read access at Y"
        elif " in " not in text:
            for detail in details:
                match = LOCATION.match(detail)
                if match:
                    text += f" in {short_kernel(match.group(1))}"
                    text += f" ({Path(match.group(2)).name})" if match.group(2) else ""
                    break
        entry = simplify(text)
        if entry not in found:
            found.append(entry)
        if len(found) == 3:
            break
    return found


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    tool, log_path, exit_status = argv[0], Path(argv[1]), int(argv[2])
    lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
    text = "\n".join(lines)
    race = RACE_SUMMARY.search(text)
    summary = SUMMARY.search(text)
    if race:
        count = int(race.group(1))
        counted = f"{plural(count, 'hazard')} ({plural(int(race.group(2)), 'error')}, {plural(int(race.group(3)), 'warning')})"
    elif summary:
        count = int(summary.group(1))
        counted = plural(count, "error")
    else:
        tail = next((line for line in reversed(lines) if line.strip()), "no output")
        print(f"{tool:<10} could not judge (exit status {exit_status}): {tail.strip()}")
        return 2
    step_failed = exit_status not in (0, SANITIZER_ERROR_EXIT)
    if count == 0:
        note = f" (but the step itself failed: exit status {exit_status})" if step_failed else ""
        print(f"{tool:<10} clean{note}")
        return 0
    print(f"{tool:<10} {counted}")
    for entry in findings(lines):
        print(f"{'':<12}{entry}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
