# SPDX-License-Identifier: MIT
"""The constexpr step catalogue of a lab, generated from its lab.json for the build.

    python3 coursemodel/step_header.py LAB_DIR OUT.hpp

writes OUT.hpp: `namespace <lab>::catalogue` (lab 05-transpose: `transpose::catalogue`) with one
`cl::CatalogueStep kStep<id>` per step (kStep4, kStep6b) and `kCatalogue`, every step in lab.json's
order. The lab's header builds its step tables from these constants and checks them against
kCatalogue with cl::lists_catalogue (common/step_catalogue.hpp), so that a step's name is edited in
lab.json alone. Meson runs this at build time (the top-level meson.build, one per lab).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script by the build: the course's root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coursemodel import labs  # noqa: E402


def namespace(lab_name: str) -> str:
    """The C++ namespace of a lab's interface: its name without the number, '-' as '_'."""
    return lab_name[3:].replace("-", "_")


def header(lab: labs.Lab) -> str:
    """The generated header's text."""
    if not lab.steps:
        raise labs.LabError(f"labs/{lab.name}/lab.json: 'steps' is missing: the build generates the step "
                            "header from it")
    ns = namespace(lab.name)
    lines = [
        "// SPDX-License-Identifier: MIT",
        f"// Generated from labs/{lab.name}/lab.json by coursemodel/step_header.py: edit lab.json, not this file.",
        "#pragma once",
        "",
        '#include "step_catalogue.hpp"',
        "",
        "#include <array>",
        "",
        f"namespace {ns}::catalogue {{",
        "",
        f'inline constexpr char kLab[] = "{lab.name}";',
    ]
    for step in lab.steps:
        lines.append(f'inline constexpr cl::CatalogueStep kStep{step.id}{{"{step.id}", "{step.name}", {step.section}, '
                     f'{"true" if step.open else "false"}}};')
    lines.append(f"inline constexpr std::array<cl::CatalogueStep, {len(lab.steps)}> kCatalogue{{{{"
                 + ", ".join(f"kStep{step.id}" for step in lab.steps) + "}};")
    lines += ["", f"}}  // namespace {ns}::catalogue", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    lab_dir, out = Path(argv[0]), Path(argv[1])
    try:
        text = header(labs.load(lab_dir))
    except labs.LabError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    out.write_text(text, encoding="utf-8")  # always: ninja judges the output by its time
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
