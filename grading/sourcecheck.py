# SPDX-License-Identifier: MIT
"""The student's source, checked as the compiler sees it: preprocessed.

A check of the raw text misses what the preprocessor does: the `%:` digraph for `#`, a
backslash-newline inside a directive, `asm` or `namespace cl` hidden behind a macro. So the grader
asks nvcc how it preprocesses the file (`nvcc --dryrun`), runs exactly those host-pass and
device-pass preprocessor commands with `-dD` (which keeps every #define and #undef) in the
sandbox, and checks the lines that come from the student's files:

- no #define or #undef of a name that the given headers and launchers use, nor of a reserved
  name (`__x`, `_X`, `cuda...`): either would change the given code that follows;
- no `namespace cl` (the harness library);
- no inline assembly in host code (asm in __global__ and __device__ functions is fine);
- no #pragma beyond `unroll`, `nounroll`, `once`, `message` and the diagnostics ones;
- in a lab that needs no host code of the student's, no host function (host_functions);
- and, in the raw text, no #line or line-marker directive, which would make later lines look
  like they come from another file.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from .objcheck import Violation

RESERVED = re.compile(r"^(__\w*|_[A-Z]\w*|cuda\w*|CUDA\w*)$")
ASM_WORDS = {"asm", "__asm__", "__asm"}
ALLOWED_PRAGMA = re.compile(r"^(unroll|nounroll|once|message|nv_diag_\w+|nv_diagnostic|diag_suppress|diag_default|"
                            r"diag_warning|diag_error|GCC\s+diagnostic|clang\s+diagnostic|nv_exec_check_disable|"
                            r"hd_warning_disable)\b")
MARKER = re.compile(r'^#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"((?:\s+\d+)*)\s*$')
CUDA_ATTRIBUTE = re.compile(r"__attribute__\s*\(\(\s*(device|global|host)\s*\)\)")
DRYRUN_OUTPUT = "/dev/null/never-written.o"


# --- the commands -----------------------------------------------------------------------------------
def dryrun_argv(compile_argv: list[str]) -> list[str]:
    """The build's compile command of the student's file, as `nvcc --dryrun`: nvcc prints the
    commands it would run (its preprocessing among them) and runs none."""
    argv = list(compile_argv)
    if argv and os.path.basename(argv[0]) in ("ccache", "sccache"):
        argv = argv[1:]
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("-o", "-MF", "-MQ", "-MT"):
            skip = True
            continue
        if arg in ("-c", "-MD", "-MMD") or arg.startswith(("-MF", "-MQ", "-MT", "--output-file")):
            continue
        out.append(arg)
    return out[:1] + ["--dryrun"] + out[1:] + ["-c", "-o", DRYRUN_OUTPUT]


def preprocess_commands(dryrun_text: str) -> dict[str, list[str]]:
    """{"host": argv, "device": argv}: nvcc's own preprocessor commands for the host pass and the
    first device pass, each with -dD and its output (`-o`) left for the caller (the last two
    arguments, replaced)."""
    found: dict[str, list[str]] = {}
    for line in dryrun_text.splitlines():
        if not line.startswith("#$ "):
            continue
        try:
            argv = shlex.split(line[3:])
        except ValueError:
            continue
        if "-E" not in argv or "-o" not in argv or not argv or "=" in argv[0]:
            continue
        which = "device" if any(a.startswith("-D__CUDA_ARCH__=") for a in argv) else "host"
        if which in found:
            continue
        where = argv.index("-o")
        found[which] = argv[:where] + argv[where + 2:] + ["-dD", "-o", "OUTPUT"]
    return found


# --- the preprocessed text ----------------------------------------------------------------------------
@dataclass
class Line:
    text: str
    number: int  # in the student's file


def student_lines(preprocessed: str, student_paths: set[str]) -> tuple[list[Line], list[str]]:
    """The lines of the preprocessed text that come from the student's files (by the line markers),
    and problems with the markers."""
    real = {os.path.realpath(p) for p in student_paths}
    lines: list[Line] = []
    current, number = "", 0
    for text in preprocessed.split("\n"):
        marker = MARKER.match(text)
        if marker:
            name = marker.group(2).encode("utf-8", "surrogateescape").decode("unicode_escape", "replace")
            current, number = (os.path.realpath(name) if name and not name.startswith("<") else name), \
                int(marker.group(1))
            continue
        if current in real:
            lines.append(Line(text, number))
        number += 1
    return lines, []


def raw_line_directives(source: str) -> list[int]:
    """Line numbers of #line or line-marker directives in the raw source (digraphs and line splices
    undone): they rename the file that later lines seem to come from."""
    found = []
    joined, numbers = [], []
    number = 1
    for physical in strip_source(source).split("\n"):
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + physical
        else:
            joined.append(physical)
            numbers.append(number)
        number += 1
    for text, line in zip(joined, numbers):
        if re.match(r"^\s*(#|%:)\s*(line\b|\d)", text):
            found.append(line)
    return found


def check_preprocessed(passes: dict[str, str], student_paths: set[str], file_name: str, given: set[str],
                       raw_source: str = "") -> list[Violation]:
    """The violations in the student's lines of each preprocessed pass ("host", "device")."""
    found: list[Violation] = []
    seen = set()

    def add(key, text):
        if key not in seen:
            seen.add(key)
            found.append(Violation(text))

    for number in raw_line_directives(raw_source):
        add(("line", number), f"{file_name} line {number}: a #line or line-marker directive, which would make the "
                              "lines after it look like another file's")
    for which in ("host", "device"):
        lines, problems = student_lines(passes.get(which, ""), student_paths)
        for problem in problems:
            add(("marker", problem), f"{file_name}: {problem}")
        stripped = strip_source("\n".join(line.text for line in lines)).split("\n")
        for line, text in zip(lines, stripped):
            directive = re.match(r"^\s*#\s*(define|undef)\s+([A-Za-z_]\w*)", text)
            if directive:
                verb, name = directive.groups()
                if name in given:
                    add((verb, name), f"{file_name} line {line.number}: #{verb} `{name}`, a name the given headers and "
                                      "launchers use: it would change their code (use a constexpr instead)")
                elif RESERVED.match(name):
                    add((verb, name), f"{file_name} line {line.number}: #{verb} `{name}`, a name reserved for the "
                                      "compiler and the CUDA toolkit")
                continue
            pragma = re.match(r"^\s*#\s*pragma\s+(.*)$", text)
            if pragma:
                if not ALLOWED_PRAGMA.match(pragma.group(1).strip()):
                    said = line.text.split("pragma", 1)[-1].strip()[:60]  # the text with its strings
                    add(("pragma", line.number), f"{file_name} line {line.number}: #pragma {said}, which this lab "
                                                 "does not need")
                continue
        body = "\n".join(text for text in stripped if not re.match(r"^\s*#", text))
        if re.search(r"\bnamespace\s+cl\b|\bnamespace\s+::\s*cl\b", body):
            add("cl", f"{file_name} opens `namespace cl`, the course's harness library, which this lab does not need")
        if which == "host":
            for index in _host_asm_lines([CUDA_ATTRIBUTE.sub(r"__\1__", text) if not text.lstrip().startswith("#")
                                          else "" for text in stripped]):
                number = lines[index].number
                add(("asm", number), f"{file_name} line {number}: inline assembly in host code")
    return found


def _host_asm_lines(lines: list[str]) -> list[int]:
    """Indexes of lines with asm/__asm__ outside __global__/__device__ functions (the host pass has
    already left out what `#ifdef __CUDA_ARCH__` keeps for the device)."""
    found = []
    blocks: list[bool] = []  # per open brace: device code?
    header: list[str] = []
    for index, line in enumerate(lines):
        for token in re.findall(r"[A-Za-z_]\w*|[{};]", line):
            if token == "{":
                device = bool(blocks and blocks[-1]) or "__global__" in header or (
                    "__device__" in header and "__host__" not in header)
                blocks.append(device)
                header = []
            elif token == "}":
                if blocks:
                    blocks.pop()
                header = []
            elif token == ";":
                header = []
            else:
                header.append(token)
                if token in ASM_WORDS and not (blocks and blocks[-1]):
                    found.append(index)
    return sorted(set(found))


# --- the given names --------------------------------------------------------------------------------
def given_names(course_root: Path, lab_name: str, student_files: tuple[str, ...]) -> set[str]:
    """Every identifier of the headers and launchers a student file includes: the lab's own
    headers (*.hpp, *.cuh, *.h) and common/'s."""
    names: set[str] = set()
    folders = [course_root / "labs" / lab_name, course_root / "common"]
    for folder in folders:
        for path in sorted(folder.glob("*")):
            if path.suffix in (".hpp", ".cuh", ".h") and path.name not in student_files and path.is_file():
                names |= identifiers(path.read_text(encoding="utf-8", errors="replace"))
    return names


def strip_source(text: str, literals: bool = True) -> str:
    """The source with comments, and string and character literals unless `literals` is False,
    blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:end]))
            i = end
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delimiter = text[i + 2:open_paren] if open_paren >= 0 else ""
            end = text.find(")" + delimiter + '"', open_paren + 1) if open_paren >= 0 else -1
            end = n if end < 0 else end + len(delimiter) + 2
            out.append('""' + "".join(ch if ch == "\n" else " " for ch in text[i + 2:end]) if literals else text[i:end])
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else "") if literals else text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def identifiers(text: str) -> set[str]:
    return set(re.findall(r"\b[A-Za-z_]\w*\b", strip_source(text)))


# --- host code of the student's -------------------------------------------------------------------
HOST_TOKEN = re.compile(r"[A-Za-z_]\w*|::|->|&&|\d[\w.']*|\S")
CLASS_KEYS = {"struct", "class", "union", "enum"}
AFTER_PARAMETERS = {"const", "volatile", "noexcept", "override", "final", "mutable", "&", "&&", "throw"}


def host_functions(lines: list[Line]) -> list[tuple[int, str]]:
    """The host functions defined in `lines` (the student's lines of the host pass, or a raw
    source's): (line number, signature "name(parameter tokens)") for every function body opened
    outside a function that is not __global__ or __device__-only. A constructor, a member
    function, a lambda at namespace scope and a __host__ __device__ function are host code."""
    stripped = strip_source("\n".join(line.text for line in lines)).split("\n")
    found: list[tuple[int, str]] = []
    blocks: list[str] = []  # per open brace: "scope", "class", "function", "device"
    header: list[str] = []
    for line, text in zip(lines, stripped):
        if text.lstrip().startswith("#"):
            continue
        for token in HOST_TOKEN.findall(CUDA_ATTRIBUTE.sub(r"__\1__", text)):
            inside = bool(blocks) and blocks[-1] in ("function", "device")
            if token == "{":
                kind = blocks[-1] if inside else _block_kind(header)
                if kind == "function" and not inside:
                    found.append((line.number, _signature(header)))
                blocks.append(kind)
                header = []
            elif token == "}":
                if blocks:
                    blocks.pop()
                header = []
            elif inside:
                continue
            elif token == ";":
                header = []
            else:
                header.append(token)
    return found


def _block_kind(header: list[str]) -> str:
    tokens = _without_templates(header)
    if not tokens or "namespace" in tokens or (tokens[0] == "extern" and set(tokens[1:]) <= {'"'}):
        return "scope"  # a namespace, `extern "C" {`
    if CLASS_KEYS & set(tokens[:_first(tokens, "(")]) or (tokens[0] == "typedef" and CLASS_KEYS & set(tokens)):
        return "class"
    close = _parameters_close(tokens)
    if close is None:
        return "scope"  # an initializer, an enum's or an array's braces
    rest = tokens[close + 1:]
    if rest and rest[0] not in AFTER_PARAMETERS and rest[0] not in ("->", ":") and not (rest[0] == "__attribute__"):
        return "scope"  # `decltype(x) y = {`: an initializer
    if "__global__" in tokens or ("__device__" in tokens and "__host__" not in tokens) or "consteval" in tokens:
        return "device"  # device code, or code that never runs (consteval: at compile time only)
    return "function"


def _first(tokens: list[str], wanted: str) -> int:
    return tokens.index(wanted) if wanted in tokens else len(tokens)


def _without_templates(tokens: list[str]) -> list[str]:
    """The tokens without `template <...>` heads."""
    out, i = [], 0
    while i < len(tokens):
        if tokens[i] == "template" and i + 1 < len(tokens) and tokens[i + 1] == "<":
            depth, i = 0, i + 1
            while i < len(tokens):
                depth += {"<": 1, ">": -1}.get(tokens[i], 0)
                i += 1
                if depth == 0:
                    break
            continue
        out.append(tokens[i])
        i += 1
    return out


def _parameters_close(tokens: list[str]) -> int | None:
    """The index of the `)` that closes a function's parameters: the last one at parenthesis depth
    0, or the one a constructor's member initializers (`) : p(q)`) follow."""
    depth, last = 0, None
    for i, token in enumerate(tokens):
        if token == "(":
            depth += 1
        elif token == ")":
            depth -= 1
            if depth == 0:
                if i + 1 < len(tokens) and tokens[i + 1] == ":":
                    return i
                last = i
    return last


def _signature(header: list[str]) -> str:
    tokens = _without_templates(header)
    close = _parameters_close(tokens) or 0
    depth, open_at = 0, 0
    for i in range(close, -1, -1):
        depth += {")": 1, "(": -1}.get(tokens[i], 0)
        if depth == 0:
            open_at = i
            break
    name = tokens[open_at - 1] if open_at > 0 else "?"
    if name == "]":  # a lambda
        name = "lambda"
    elif name == ")" and open_at >= 3 and tokens[open_at - 3] == "operator":
        name = "operator()"
    return f"{name}({' '.join(tokens[open_at + 1:close])})"


def host_function_violations(passes: dict[str, str], student_paths: set[str], file_name: str,
                             given: set[str]) -> list[Violation]:
    """For a lab that needs no host code of the student's: every host function the student's lines
    of the host pass define beyond `given` (the starter's own, by signature: the given launchers
    where the starter's file holds them)."""
    lines, _ = student_lines(passes.get("host", ""), student_paths)
    found, seen = [], set()
    for number, signature in host_functions(lines):
        if signature in given or signature in seen:
            continue
        seen.add(signature)
        found.append(Violation(f"{file_name} line {number}: defines the host function `{signature.split('(')[0]}` "
                               "(a constructor, a helper or a lambda outside a kernel is host code), which this lab "
                               "does not need: write kernels, __device__ functions, constexpr values and consteval "
                               "helpers"))
    return found
