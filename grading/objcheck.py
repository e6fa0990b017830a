# SPDX-License-Identifier: MIT
"""What a student's compiled file may do, checked before anything of it runs.

The student's file is linked into the harness process, so a text scan cannot keep it from
forging results. Instead the grader reads the host object that nvcc made of it (binutils'
readelf and objdump) and compares it with the object of the untouched starter, built the same way:

- every symbol it needs from elsewhere (undefined) is one the starter needs, one of the CUDA
  runtime's entry points that kernels and launches use, host-side math, the C++ runtime bits
  nvcc and g++ emit, printf-style output, or one of lab.json's `student_host_calls`: so it
  cannot open, write, map or execute anything, read the environment, or load code;
- it adds no static initializer or finalizer (.init_array, .ctors, .fini_array ...) beyond the
  starter's (nvcc's registration of the kernels), and no ifunc (a resolver runs at load time);
- it defines no new strong global symbol outside the lab's namespace (extern "C" `fwrite` would
  replace the C library's for the whole process), none that another object of the harness
  defines, and turns no weak (inline, template) definition into a strong one;
- its host code holds no system-call instruction (syscall, sysenter, int 0x80);
- its source holds no inline assembly outside device code, opens no `namespace cl`, and
  #defines or #undefs no name that the given headers and launchers use (nor reserved names).

docs/grading.md, "What a hostile submission can still do", says what this leaves open.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

TOOL_TIMEOUT = 120

# Entry points that kernels, launches and nvcc's registration code need, whatever the lab.
RUNTIME_ALWAYS = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel", "cudaGetLastError",
    "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetErrorName", "cudaFuncGetAttributes", "cudaFuncSetAttribute",
    "cudaFuncSetCacheConfig", "cudaFuncSetSharedMemConfig", "cudaGetDevice", "cudaDeviceGetAttribute",
    "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaMemcpyToSymbolAsync", "cudaMemcpyFromSymbolAsync",
    "cudaGetSymbolAddress", "cudaGetSymbolSize", "cudaGetFuncBySymbol", "cudaGetKernel",
}
RUNTIME_PATTERNS = (
    r"__cuda(Register|Unregister|PushCallConfiguration|PopCallConfiguration|LaunchKernel|GetKernel|InitModule)\w*",
    r"cudaOccupancy\w*",
)
# What g++ emits for C++ (exceptions, guards, operator new/delete, static destructors) and what
# nvcc's host stubs call (exit for a __device__ function called from the host, atexit).
CXX_RUNTIME = {
    "__cxa_atexit", "__dso_handle", "atexit", "exit", "__cxa_guard_acquire", "__cxa_guard_release",
    "__cxa_guard_abort", "__gxx_personality_v0", "_Unwind_Resume", "__stack_chk_fail", "__cxa_pure_virtual",
    "__cxa_deleted_virtual", "__cxa_begin_catch", "__cxa_end_catch", "__cxa_rethrow", "__cxa_allocate_exception",
    "__cxa_free_exception", "__cxa_throw", "__cxa_bad_cast", "__cxa_bad_typeid", "__cxa_throw_bad_array_new_length",
    "_ZSt9terminatev", "__assert_fail", "memcpy", "memmove", "memset", "memcmp", "strlen", "strcmp",
    "_GLOBAL_OFFSET_TABLE_", "__tls_get_addr",
    # printf-style output: it goes to the harness's log, which the grader never trusts.
    "printf", "puts", "putchar", "fputs", "fputc", "fprintf", "fwrite", "fflush", "vprintf", "vfprintf", "stdout",
    "stderr", "__printf_chk", "__fprintf_chk", "__vfprintf_chk", "__vprintf_chk",
}
CXX_PATTERNS = (
    r"_Zn[wa]m(St11align_val_t)?(RKSt9nothrow_t)?",  # operator new
    r"_Zd[la]Pv(m)?(St11align_val_t)?(RKSt9nothrow_t)?",  # operator delete
    r"_ZSt\d+__throw_\w+",  # std::__throw_length_error ...
    r"_ZT[IVS]St\d+\w+",  # typeinfo and vtables of std exceptions
    r"_ZTVN10__cxxabiv1\d+__\w+_type_infoE",  # vtables of typeinfo: any polymorphic class
    r"_ZN?K?St\d+(logic_error|runtime_error|invalid_argument|out_of_range|length_error|domain_error|range_error|"
    r"overflow_error|underflow_error|bad_alloc|bad_array_new_length|exception)\w*",
    r"_ZN?K?St7__cxx1112basic_string\w*",  # std::string's out-of-line members
)
MATH = (r"(sqrt|cbrt|rsqrt|exp|exp2|exp10|expm1|log|log2|log10|log1p|pow|sin|cos|tan|sincos|sinpi|cospi|asin|acos|"
        r"atan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|fabs|floor|ceil|round|trunc|fmod|fma|fmin|fmax|fdim|hypot|"
        r"erf|erfc|lgamma|tgamma|ldexp|frexp|modf|copysign|nearbyint|rint|lrint|llrint|lround|llround|remainder|"
        r"remquo|scalbn|scalbln|ilogb|logb|nextafter|isnan|isinf|finite)[fl]?")
# The harness library's error checks that CUDA_CHECK and friends expand to: they only throw.
ALLOWED_QUALIFIED = {"cl::check_cuda", "cl::check_launch", "cl::check_sync", "cl::context_is_broken"}
ALLOWED_PATTERN = re.compile("^(?:" + "|".join(RUNTIME_PATTERNS + CXX_PATTERNS + (MATH,)) + ")$")
RUNTIME_SUFFIX = re.compile(r"^(\w+?)(?:_v\d+)?(?:_ptsz|_ptds)?$")  # cudaGetDeviceProperties_v2, ..._ptsz
INIT_SECTION = re.compile(r"^\.(init_array|fini_array|preinit_array|ctors|dtors|init|fini)(?:\.\w+)?$")
SYSCALL = re.compile(r"\b(syscall|sysenter|sysexit|sysret[lq]?|int\s+\$0x80)\b")
ANON = re.compile(r"(\d+)_GLOBAL__N_")
RESERVED = re.compile(r"^(__\w*|_[A-Z]\w*|cuda\w*|CUDA\w*)$")
ASM_WORDS = {"asm", "__asm__", "__asm"}


class ObjectCheckError(RuntimeError):
    """The object could not be read (binutils missing, not an ELF object): a fault of the grading machine."""


@dataclass
class Symbol:
    name: str
    kind: str  # FUNC, OBJECT, NOTYPE, IFUNC, TLS, COMMON ...
    bind: str  # LOCAL, GLOBAL, WEAK, UNIQUE
    section: str  # "UND", "ABS", "COM" or a section index
    value: int


@dataclass
class ObjectFacts:
    undefined: set[str] = field(default_factory=set)
    defined: dict[str, str] = field(default_factory=dict)  # normalised name -> binding, non-local only
    raw_defined: dict[str, str] = field(default_factory=dict)  # normalised name -> name as in the object
    ifuncs: list[str] = field(default_factory=list)
    init: dict[str, list[str]] = field(default_factory=dict)  # init-like section kind -> entry targets
    syscalls: list[str] = field(default_factory=list)  # "instruction in function"
    namespaces: set[str] = field(default_factory=set)  # top namespaces of defined global functions


@dataclass
class Violation:
    what: str  # one line, naming the symbol or construct


def normalise(name: str) -> str:
    """A symbol's name with nvcc's per-file anonymous-namespace names (which hash the source path)
    replaced by one placeholder, so that starter and student objects compare."""
    out, i = [], 0
    for match in ANON.finditer(name):
        start, length = match.start(), int(match.group(1))
        if start < i:
            continue
        out.append(name[i:start] + "11_GLOBAL__N_")
        i = match.start() + len(match.group(1)) + length
    out.append(name[i:])
    return "".join(out)


def is_anonymous(name: str) -> bool:
    """Names unique to one source file: nvcc's anonymous namespaces, and its wrappers of the
    file's device code for separate compilation (-rdc: __fatbinwrap_<hash>_<file>_<hash>)."""
    return "_GLOBAL__N_" in name or name.startswith("__fatbinwrap_")


def top_namespace(name: str) -> str | None:
    """'matadd' for _ZN6matadd...; None for names outside any namespace, std (St) and C names."""
    name = name[len("__device_stub_"):] if name.startswith("__device_stub_") else name
    match = re.match(r"^_ZN[KVrRO]*(\d+)", name)
    if not match:
        return None
    length = int(match.group(1))
    return name[match.end():match.end() + length]


def _run(argv: list[str]) -> str:
    try:
        result = subprocess.run(argv, capture_output=True, timeout=TOOL_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ObjectCheckError(f"{argv[0]} failed: {error}") from error
    if result.returncode != 0:
        raise ObjectCheckError(f"{' '.join(argv[:2])} failed: {result.stderr.decode('utf-8', 'replace')[-300:]}")
    return result.stdout.decode("utf-8", "replace")


def read_symbols(path: Path) -> tuple[list[Symbol], dict[str, str]]:
    """(symbols, section index -> section name) of an ELF object."""
    sections = {}
    for line in _run(["readelf", "-W", "-S", str(path)]).splitlines():
        match = re.match(r"^\s*\[\s*(\d+)\]\s+(\S*)", line)
        if match:
            sections[match.group(1)] = match.group(2)
    symbols = []
    for line in _run(["readelf", "-W", "-s", str(path)]).splitlines():
        parts = line.split()
        if len(parts) < 8 or not parts[0].rstrip(":").isdigit():
            continue
        value = int(parts[1], 16) if re.fullmatch(r"[0-9a-fA-F]+", parts[1]) else 0
        symbols.append(Symbol(parts[7], parts[3], parts[4], parts[6], value))
    return symbols, sections


def analyse(path: Path) -> ObjectFacts:
    """The facts of one host object (as nvcc leaves it: an ELF relocatable)."""
    facts = ObjectFacts()
    symbols, sections = read_symbols(path)
    by_place = {}
    for sym in symbols:
        if sym.kind in ("FUNC", "IFUNC") and sym.section.isdigit():
            by_place.setdefault((sections.get(sym.section, ""), sym.value), sym.name)
        if sym.section == "UND":
            if sym.name:
                facts.undefined.add(sym.name)
            continue
        if sym.kind == "IFUNC":
            facts.ifuncs.append(sym.name)
        if sym.bind == "LOCAL" or sym.kind in ("SECTION", "FILE") or not sym.name:
            continue
        key = normalise(sym.name)
        facts.defined[key] = sym.bind
        facts.raw_defined[key] = sym.name
        if sym.kind == "FUNC" and sym.bind == "GLOBAL":
            namespace = top_namespace(sym.name)
            if namespace and not is_anonymous(namespace):
                facts.namespaces.add(namespace)
    # Static initializers and finalizers: the entries of the init-like sections.
    current = None
    for line in _run(["readelf", "-W", "-r", str(path)]).splitlines():
        header = re.match(r"^Relocation section '\.rela?(\S+)'", line)
        if header:
            kind = INIT_SECTION.match(header.group(1))
            current = kind.group(1) if kind else None
            continue
        if current is None:
            continue
        entry = re.match(r"^[0-9a-f]+\s+[0-9a-f]+\s+\S+\s+[0-9a-f]+\s+(\S+)(?:\s*([+-])\s*([0-9a-f]+))?", line)
        if entry:
            target, sign, addend = entry.group(1), entry.group(2), entry.group(3)
            offset = int(addend, 16) if addend and sign == "+" else 0
            facts.init.setdefault(current, []).append(by_place.get((target, offset), target))
    for index, name in sections.items():
        kind = INIT_SECTION.match(name)
        if kind and kind.group(1) in ("init", "fini"):  # code placed in .init / .fini itself
            facts.init.setdefault(kind.group(1), []).append(name)
    # System-call instructions anywhere in the host code.
    function = "?"
    for line in _run(["objdump", "-d", "-w", "--no-show-raw-insn", str(path)]).splitlines():
        head = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if head:
            function = head.group(1)
            continue
        found = SYSCALL.search(line.split("#")[0]) if "\t" in line else None
        if found:
            facts.syscalls.append(f"{found.group(1)} in {function}")
    return facts


def demangle(names: list[str]) -> dict[str, str]:
    if not names:
        return {}
    try:
        result = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True,
                                timeout=TOOL_TIMEOUT)
        lines = result.stdout.splitlines()
        if result.returncode == 0 and len(lines) == len(names):
            return dict(zip(names, lines))
    except (OSError, subprocess.TimeoutExpired):
        pass
    return {n: n for n in names}


def qualified_name(demangled: str) -> str:
    """'cl::Timeline::begin(int, cl::Stage)' -> 'cl::Timeline::begin' (lab.json may name C++ functions so)."""
    depth = 0
    for i, c in enumerate(demangled):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0 and i > 0:
            return demangled[:i]
    return demangled


def allowed_call(name: str, starter_needs: set[str], host_calls: set[str]) -> bool:
    if name in starter_needs or name in RUNTIME_ALWAYS or name in CXX_RUNTIME or ALLOWED_PATTERN.match(name):
        return True
    base = RUNTIME_SUFFIX.match(name)
    return bool(base and (base.group(1) in host_calls or base.group(1) in RUNTIME_ALWAYS))


def defined_names(path: Path) -> set[str]:
    """The normalised names an object defines (any binding but local)."""
    symbols, _ = read_symbols(path)
    return {normalise(s.name) for s in symbols
            if s.section != "UND" and s.bind != "LOCAL" and s.kind not in ("SECTION", "FILE") and s.name}


def compare(student: ObjectFacts, starter: ObjectFacts, others_defined: dict[str, str], file_name: str,
            host_calls: set[str]) -> list[Violation]:
    """The violations of a student's object, each naming the symbol. others_defined: the
    (normalised) names that the harness's other objects define -> the source file of each."""
    found: list[Violation] = []
    names = demangle(sorted(student.undefined | set(student.raw_defined.values()) | set(student.ifuncs)
                            | {t for targets in student.init.values() for t in targets}
                            | {s.split(" in ", 1)[1] for s in student.syscalls}))

    def show(name: str) -> str:
        return names.get(name, name)

    for name in sorted(student.undefined):
        qualified = qualified_name(show(name))
        if not allowed_call(name, starter.undefined, host_calls) and qualified not in ALLOWED_QUALIFIED \
                and qualified not in host_calls:
            found.append(Violation(f"{file_name} calls `{show(name)}`, which this lab does not need"))
    for kind, targets in sorted(student.init.items()):
        extra = len(targets) - len(starter.init.get(kind, []))
        if extra > 0:
            known = {normalise(t) for t in starter.init.get(kind, [])}
            new = [show(t) for t in targets if normalise(t) not in known] or targets
            what = "static initializer" if kind in ("init_array", "preinit_array", "ctors", "init") else \
                "static finalizer"
            found.append(Violation(f"{file_name} adds a {what} (code that runs before or after the harness, "
                                   f".{kind}: `{new[0]}`), which this lab does not need; global objects need "
                                   "constant initialization"))
    for name in student.ifuncs:
        found.append(Violation(f"{file_name} defines `{show(name)}` as an indirect function (ifunc), whose resolver "
                               "runs while the program loads"))
    lab_namespaces = starter.namespaces
    for key, bind in sorted(student.defined.items()):
        raw = student.raw_defined[key]
        if key in starter.defined:
            if starter.defined[key] in ("WEAK", "UNIQUE") and bind == "GLOBAL":
                found.append(Violation(f"{file_name} turns the inline or template definition of `{show(raw)}` into "
                                       "a strong one (an explicit specialization?), which would replace the "
                                       "harness's copy"))
            continue
        if bind != "GLOBAL" or is_anonymous(key):
            continue  # weak copies of inline code, and names unique to this file
        namespace = top_namespace(raw)
        if namespace not in lab_namespaces:
            found.append(Violation(f"{file_name} defines `{show(raw)}`, a global symbol outside namespace "
                                   f"{' or '.join(sorted(lab_namespaces)) or '(the lab)'}: it could replace a "
                                   "function of the harness or of a library (put helpers in the anonymous "
                                   "namespace)"))
        elif key in others_defined:
            found.append(Violation(f"{file_name} defines `{show(raw)}`, which {others_defined[key]} (given) defines "
                                   "too: it would replace the course's code"))
    for where in student.syscalls:
        instruction, function = where.split(" in ", 1)
        found.append(Violation(f"{file_name} holds a system-call instruction (`{instruction}`) in host function "
                               f"`{show(function)}`"))
    return found


# --- the build: which object is whose -----------------------------------------------------------
@dataclass
class CompileEntry:
    source: str  # absolute, normalised
    output: str  # relative to the build folder
    argv: list[str]
    directory: str


def compile_entries(text: str) -> list[CompileEntry]:
    """meson's compile_commands.json, parsed."""
    entries = []
    for item in json.loads(text):
        if not isinstance(item, dict) or not isinstance(item.get("file"), str) or not isinstance(item.get("output"), str):
            continue
        directory = str(item.get("directory", ""))
        argv = item["arguments"] if isinstance(item.get("arguments"), list) else shlex.split(str(item.get("command", "")))
        entries.append(CompileEntry(os.path.normpath(os.path.join(directory, item["file"])), item["output"],
                                    [str(a) for a in argv], directory))
    return entries


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


# --- the source ---------------------------------------------------------------------------------
def strip_source(text: str) -> str:
    """The source with comments, string and character literals blanked (newlines kept)."""
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
            out.append('""' + "".join(ch if ch == "\n" else " " for ch in text[i + 2:end]))
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def identifiers(text: str) -> set[str]:
    return set(re.findall(r"\b[A-Za-z_]\w*\b", strip_source(text)))


def check_source(source: str, file_name: str, given_names: set[str]) -> list[Violation]:
    """Text checks of the student's file: macros over given names, host inline assembly, namespace cl."""
    found: list[Violation] = []
    text = strip_source(source)
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        match = re.match(r"^\s*#\s*(define|undef)\s+([A-Za-z_]\w*)", line)
        if match:
            verb, name = match.groups()
            if name in given_names:
                found.append(Violation(f"{file_name} line {number}: #{verb} `{name}`, a name the given headers and "
                                       "launchers use: it would change their code (use a constexpr instead)"))
            elif RESERVED.match(name):
                found.append(Violation(f"{file_name} line {number}: #{verb} `{name}`, a name reserved for the "
                                       "compiler and the CUDA toolkit"))
    if re.search(r"\bnamespace\s+cl\b", text):
        found.append(Violation(f"{file_name} opens `namespace cl`, the course's harness library, which this lab "
                               "does not need"))
    for number in _host_asm_lines(lines):
        found.append(Violation(f"{file_name} line {number}: inline assembly in host code"))
    return found


def _host_asm_lines(lines: list[str]) -> list[int]:
    """Lines with asm/__asm__ outside __global__/__device__ functions and outside
    `#if(def) __CUDA_ARCH__` regions."""
    found = []
    blocks: list[bool] = []  # per open brace: device code?
    header: list[str] = []
    regions: list[bool] = []  # per open #if: device-only?
    for number, line in enumerate(lines, 1):
        directive = re.match(r"^\s*#\s*(\w+)(.*)$", line)
        if directive:
            word, rest = directive.groups()
            if word in ("if", "ifdef", "ifndef"):
                device = "__CUDA_ARCH__" in rest and word != "ifndef" and not re.search(r"!\s*defined", rest)
                regions.append(device)
            elif word in ("else", "elif") and regions:
                regions[-1] = False
            elif word == "endif" and regions:
                regions.pop()
            continue
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
                if token in ASM_WORDS and not (blocks and blocks[-1]) and not any(regions):
                    found.append(number)
    return found
