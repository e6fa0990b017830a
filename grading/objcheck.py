# SPDX-License-Identifier: MIT
"""Link-level integrity: what the compiled student file and the executable it was linked into may
hold, compared with the untouched starter built the same way, before anything of it runs.

The student's file is linked into the harness's process, so no list of forbidden words can keep it
from forging results. The grader instead reads (grading/elf.py, no binutils) the object nvcc made
of the student's file, and the harness executable linked with it, and compares both with the
starter's:

The object (`analyse`, `compare`):
- every symbol it needs from elsewhere is one the starter needs, a CUDA runtime entry point that
  kernels and launches use, host-side math, what g++ and nvcc emit, printf-style output, or one of
  lab.json's `student_host_calls`;
- no more static initializers or finalizers than the starter's (sections found by type, and by
  every name the linker maps into the init and fini arrays: any suffix of .init_array, .ctors ...;
  code in .init or .fini), and no ifunc;
- it defines nothing non-local (global, weak or unique, hidden or not) that the starter's object
  does not, except its own new functions in the lab's namespace and weak instantiations of the
  standard library's templates that no other object of the build defines; a weak or unique
  definition that another object of the build also has (the linker keeps one copy) must be
  byte-for-byte that object's code; a strong one must not exist elsewhere;
- executable sections are .text or .text.*, and every executable byte outside a function symbol
  is alignment padding (no data in code);
- no system-call instruction at any byte offset of its code (inside another instruction too); the
  only bytes accepted are a direct branch's displacement, which the compiler's layout fills;
- at most `code_max` bytes of code.

The executable (`analyse_executable`, `compare_executables`):
- the dynamic symbols it imports are the starter executable's (or calls the object may make), it
  exports no more, and no symbol the starter executable imports is defined inside it (no
  interposition of the C or C++ library, weak or not);
- the same shared libraries, executable sections, .init/.fini code, init, fini and preinit arrays
  (by section type; an extra entry only from code the student did not write, such as the device
  runtime's registration), no writable and executable segment, no executable stack, no ifunc.

docs/grading.md, "What a hostile submission can still do", says what this leaves open.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from . import elf
from .elf import Elf, ElfError

OBJECT_MAX = 64 << 20  # a student object: kernels for a few GPUs and their host code
EXECUTABLE_MAX = 512 << 20
CODE_MAX = 8 << 20  # bytes of host code in the student's object (a lab needs a few KiB)

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
# Every section name the linker maps into the init, fini and preinit arrays (any suffix), and the
# sections whose code becomes _init and _fini.
INIT_NAME = re.compile(r"^\.(init_array|fini_array|preinit_array|ctors|dtors)(?:\..*)?$")
INIT_CODE = re.compile(r"^\.(init|fini)$")
INIT_TYPES = {elf.SHT_INIT_ARRAY: "init_array", elf.SHT_FINI_ARRAY: "fini_array",
              elf.SHT_PREINIT_ARRAY: "preinit_array"}
STARTUP_KINDS = ("init_array", "preinit_array", "ctors", "init")
# System-call instructions of x86-64 (syscall, sysenter, int 0x80, and the kernel's returns).
X86_SYSCALLS = {b"\x0f\x05": "syscall", b"\x0f\x34": "sysenter", b"\xcd\x80": "int 0x80", b"\x0f\x07": "sysret",
                b"\x0f\x35": "sysexit"}
ANON = re.compile(r"(\d+)_GLOBAL__N_")
# Weak template instantiations of the standard library (any program that uses std::vector makes them).
STD_TEMPLATE = re.compile(r"^_Z(?:N[KVrRO]*|T[ISV])?(?:St|9__gnu_cxx)")
# Alignment padding that assemblers put between functions (single and multi-byte NOPs, int3, zeros).
NOPS = sorted((bytes.fromhex(h) for h in (
    "90", "6690", "0f1f00", "0f1f4000", "0f1f440000", "660f1f440000", "0f1f8000000000", "0f1f840000000000",
    "660f1f840000000000", "662e0f1f840000000000", "cc", "00")), key=len, reverse=True)


class ObjectCheckError(RuntimeError):
    """An object or executable of the course (the starter's, the reference's) could not be read:
    a fault of the grading machine or the course, never of a student."""


@dataclass
class Definition:
    name: str  # as in the object
    bind: str  # GLOBAL, WEAK, UNIQUE
    kind: int  # STT_*
    hidden: bool


@dataclass
class SyscallHit:
    section: str
    offset: int  # in the section
    instruction: str  # "syscall"
    function: str  # the function symbol it lies in ("" outside every function)
    function_start: int = 0


@dataclass
class ObjectFacts:
    machine: int = elf.EM_X86_64
    undefined: set[str] = field(default_factory=set)
    defined: dict[str, Definition] = field(default_factory=dict)  # normalised name -> definition (non-local)
    fingerprints: dict[str, tuple] = field(default_factory=dict)  # normalised name -> code of a weak/unique one
    ifuncs: list[str] = field(default_factory=list)
    init: dict[str, list[str]] = field(default_factory=dict)  # init-like kind -> entry targets
    odd_code: list[str] = field(default_factory=list)  # executable sections or bytes that are not functions
    syscalls: list[SyscallHit] = field(default_factory=list)
    code_bytes: int = 0
    namespaces: set[str] = field(default_factory=set)  # top namespaces of its global functions


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


def allowed_call(name: str, starter_needs: set[str], host_calls: set[str]) -> bool:
    if name in starter_needs or name in RUNTIME_ALWAYS or name in CXX_RUNTIME or ALLOWED_PATTERN.match(name):
        return True
    base = RUNTIME_SUFFIX.match(name)
    return bool(base and (base.group(1) in host_calls or base.group(1) in RUNTIME_ALWAYS))


# --- reading an object ----------------------------------------------------------------------------
def _open(path: Path, limit: int, dir_fd: int | None = None) -> tuple[Elf, int]:
    try:
        return elf.open_elf(path, limit, dir_fd)
    except (ElfError, OSError) as error:
        raise ElfError(f"{Path(path).name}: {error}") from error


def _init_kind(section: elf.Section) -> str | None:
    if section.type in INIT_TYPES:
        return INIT_TYPES[section.type]
    match = INIT_NAME.match(section.name)
    return match.group(1) if match else None


def _relocated_width(machine: int, kind: int) -> int:
    if machine == elf.EM_X86_64:
        return 8 if kind in (1, 24, 26) else 4  # R_X86_64_64, PC64, GOTPC64
    return 4  # aarch64: the instruction word


def _target_name(symbol: elf.Symbol | None, sections: list[elf.Section]) -> tuple[str, bool]:
    """(how a relocation's target reads in a fingerprint, whether its addend matters)."""
    if symbol is None:
        return "?", False
    if symbol.type == elf.STT_SECTION:
        where = sections[symbol.shndx].name if symbol.shndx < len(sections) else "?"
        return "section " + re.sub(r"^(\.\w+)\..*$", r"\1", where), False
    if symbol.bind == elf.STB_LOCAL and symbol.name.startswith(".L"):
        return "local label", False
    return normalise(symbol.name), True


def _fingerprint(obj: Elf, symbol: elf.Symbol, relocations: dict[int, tuple], machine: int) -> tuple:
    """A weak definition's code or data as the linker would keep it: its bytes with relocated
    fields zeroed, and what each relocation refers to."""
    section = obj.sections[symbol.shndx]
    if section.type == elf.SHT_NOBITS:
        return ("nobits", symbol.size)
    data = bytearray(obj.contents(section)[symbol.value:symbol.value + symbol.size])
    relocs, symbols = relocations.get(section.index, ([], []))
    where = []
    for reloc in relocs:
        if not symbol.value <= reloc.offset < symbol.value + symbol.size:
            continue
        at = reloc.offset - symbol.value
        for k in range(_relocated_width(machine, reloc.type)):
            if at + k < len(data):
                data[at + k] = 0
        target = symbols[reloc.symbol] if reloc.symbol < len(symbols) else None
        name, addend_matters = _target_name(target, obj.sections)
        where.append((at, reloc.type, name, reloc.addend if addend_matters else 0))
    return (bytes(data), tuple(sorted(where)))


def _uncovered(data: bytes, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The (start, end) byte ranges of `data` outside every range."""
    gaps, position = [], 0
    for start, end in sorted(ranges):
        if start > position:
            gaps.append((position, min(start, len(data))))
        position = max(position, end)
    if position < len(data):
        gaps.append((position, len(data)))
    return [(a, b) for a, b in gaps if b > a]


def is_padding(chunk: bytes) -> bool:
    """Whether `chunk` is a run of the NOPs, int3s and zeros that align functions."""
    i = 0
    while i < len(chunk):
        for nop in NOPS:
            if chunk.startswith(nop, i):
                i += len(nop)
                break
        else:
            # 66 prefixes in front of the long NOP (66 66 2e 0f 1f 84 ...)
            if chunk[i] == 0x66:
                i += 1
                continue
            return False
    return True


def analyse(path: Path, dir_fd: int | None = None, limit: int = OBJECT_MAX, code_max: int = CODE_MAX,
            want_fingerprints: bool = True) -> ObjectFacts:
    """The facts of one host object (as nvcc leaves it: an ELF relocatable). ElfError for a file
    this reader refuses (too large, malformed)."""
    obj, fd = _open(path, limit, dir_fd)
    try:
        return _analyse(obj, code_max, want_fingerprints)
    finally:
        os.close(fd)


def _analyse(obj: Elf, code_max: int, want_fingerprints: bool) -> ObjectFacts:
    if obj.machine not in (elf.EM_X86_64, elf.EM_AARCH64):
        raise ElfError(f"an object for machine {obj.machine}, which this check does not know")
    facts = ObjectFacts(machine=obj.machine)
    symbols = obj.symbols()
    sections = obj.sections
    relocations = {}
    for section in sections:
        if section.type not in (elf.SHT_RELA, elf.SHT_REL, elf.SHT_NOBITS, elf.SHT_SYMTAB, elf.SHT_STRTAB):
            found = obj.relocations(section)
            if found[0]:
                relocations[section.index] = found
    functions_at: dict[tuple[int, int], str] = {}
    function_ranges: dict[int, list[tuple[int, int, str]]] = {}
    for sym in symbols:
        if sym.type in (elf.STT_FUNC, elf.STT_GNU_IFUNC) and 0 < sym.shndx < len(sections):
            functions_at.setdefault((sym.shndx, sym.value), sym.name)
            function_ranges.setdefault(sym.shndx, []).append((sym.value, sym.value + sym.size, sym.name))
        if sym.shndx == elf.SHN_UNDEF:
            if sym.name:
                facts.undefined.add(sym.name)
            continue
        if sym.type == elf.STT_GNU_IFUNC:
            facts.ifuncs.append(sym.name)
        if sym.bind == elf.STB_LOCAL or sym.type in (elf.STT_SECTION, elf.STT_FILE) or not sym.name:
            in_code = 0 < sym.shndx < len(sections) and sections[sym.shndx].executable
            if sym.type in (elf.STT_OBJECT, elf.STT_NOTYPE, elf.STT_TLS) and sym.name and in_code \
                    and not sym.name.startswith(".L"):
                facts.odd_code.append(f"`{sym.name}`, data in the executable section {sections[sym.shndx].name}")
            continue
        key = normalise(sym.name)
        facts.defined[key] = Definition(sym.name, elf.BIND_NAMES.get(sym.bind, str(sym.bind)), sym.type,
                                        sym.visibility == elf.STV_HIDDEN)
        if 0 < sym.shndx < len(sections) and sections[sym.shndx].executable and sym.type not in (
                elf.STT_FUNC, elf.STT_GNU_IFUNC):
            facts.odd_code.append(f"`{sym.name}`, data in the executable section {sections[sym.shndx].name}")
        if want_fingerprints and sym.bind in (elf.STB_WEAK, elf.STB_GNU_UNIQUE) and 0 < sym.shndx < len(sections):
            facts.fingerprints[key] = _fingerprint(obj, sym, relocations, obj.machine)
        if sym.type == elf.STT_FUNC and sym.bind == elf.STB_GLOBAL:
            namespace = top_namespace(sym.name)
            if namespace and not is_anonymous(namespace):
                facts.namespaces.add(namespace)

    # Static initializers and finalizers: every section the linker runs at load or exit.
    for section in sections:
        kind = _init_kind(section)
        if kind is not None:
            relocs, table = relocations.get(section.index, ([], []))
            targets = []
            for reloc in relocs:
                target = table[reloc.symbol] if reloc.symbol < len(table) else None
                name = target.name if target is not None else "?"
                if target is not None and target.type == elf.STT_SECTION:
                    name = functions_at.get((target.shndx, reloc.addend), sections[target.shndx].name
                                            if target.shndx < len(sections) else "?")
                targets.append(name)
            entries = max(len(targets), section.size // 8)
            facts.init.setdefault(kind, []).extend(targets + ["?"] * (entries - len(targets)))
        elif INIT_CODE.match(section.name):
            facts.init.setdefault(section.name[1:], []).append(section.name)

    # The code: where it lives, what lies between functions, and system-call bytes at every offset.
    for section in sections:
        if not section.executable or section.type == elf.SHT_NOBITS:
            continue
        facts.code_bytes += section.size
        if facts.code_bytes > code_max:
            raise ElfError(f"it holds more than {code_max >> 20} MiB of host code")
        if section.name != ".text" and not section.name.startswith(".text.") and not INIT_CODE.match(section.name):
            facts.odd_code.append(f"an executable section named {section.name}")
        data = obj.contents(section)
        ranges = function_ranges.get(section.index, [])
        for start, end in _uncovered(data, [(a, b) for a, b, _ in ranges]):
            if not is_padding(data[start:end]):
                facts.odd_code.append(f"{end - start} bytes of code outside every function in {section.name} "
                                      f"at offset {start:#x}")
        facts.syscalls += _syscall_hits(obj.machine, section.name, data, ranges)
    return facts


def _syscall_hits(machine: int, name: str, data: bytes, ranges: list[tuple[int, int, str]]) -> list[SyscallHit]:
    hits = []
    if machine == elf.EM_X86_64:
        for pattern, instruction in X86_SYSCALLS.items():
            start = data.find(pattern)
            while start >= 0:
                hits.append(SyscallHit(name, start, instruction, ""))
                start = data.find(pattern, start + 1)
    else:  # aarch64: svc #imm, at every (4-byte aligned) instruction
        for offset in range(0, len(data) - 3, 4):
            word = struct.unpack_from("<I", data, offset)[0]
            if word & 0xFFE0001F == 0xD4000001:
                hits.append(SyscallHit(name, offset, "svc", ""))
    for hit in hits:
        for start, end, function in ranges:
            if start <= hit.offset < end:
                hit.function, hit.function_start = function, start
                break
    return sorted(hits, key=lambda h: h.offset)


def branch_displacement(disassembly: str, offset: int, width: int = 2) -> bool:
    """Whether bytes offset .. offset+width-1 lie inside the displacement of a direct relative
    branch (call, jmp, jcc) of `disassembly` (objdump -d -w output of the function holding them):
    a distance the compiler's layout chose, not a value of the source."""
    for line in disassembly.splitlines():
        match = re.match(r"^\s*([0-9a-f]+):\s+((?:[0-9a-f]{2} )+)\s*(\S+)\s*(.*)$", line)
        if not match:
            continue
        start, raw, mnemonic, operand = int(match.group(1), 16), match.group(2).split(), match.group(3), match.group(4)
        end = start + len(raw)
        if not start <= offset < end:
            continue
        if offset + width > end:
            return False
        direct = re.match(r"^(call|jmp|j[a-z]{1,3})$", mnemonic) and not operand.startswith("*")
        if not direct:
            return False
        size = 4 if len(raw) >= 5 else 1  # rel32 or rel8: always the instruction's last bytes
        return offset >= end - size
    return False


# --- the object against the starter's ---------------------------------------------------------------
@dataclass
class Build:
    """What the other objects of the build (the harness, common/, the lab's given files) define and
    need: the (normalised) names, the file of each, and the code of their weak definitions."""
    defined: dict[str, str] = field(default_factory=dict)  # name -> source file
    raw: dict[str, str] = field(default_factory=dict)  # the names as in the objects (not normalised) -> source file
    strong: set[str] = field(default_factory=set)
    undefined: set[str] = field(default_factory=set)
    fingerprints: dict[str, set[tuple]] = field(default_factory=dict)

    def add(self, facts: ObjectFacts, source: str) -> None:
        for key, definition in facts.defined.items():
            self.raw.setdefault(definition.name, source)
            if is_anonymous(key):
                continue  # one file's own names: another file's (normalised) name may read the same
            self.defined.setdefault(key, source)
            if definition.bind == "GLOBAL":
                self.strong.add(key)
        for key, fingerprint in facts.fingerprints.items():
            self.fingerprints.setdefault(key, set()).add(fingerprint)
        self.undefined |= {normalise(n) for n in facts.undefined}


def compare(student: ObjectFacts, starter: ObjectFacts, build: Build, file_name: str, host_calls: set[str],
            imports: set[str] = frozenset(), show=lambda name: name) -> list[Violation]:
    """The violations of a student's object, each naming the symbol. build: the other objects of
    the starter's build; imports: the dynamic symbols the starter's executable imports."""
    found: list[Violation] = []
    for name in sorted(student.undefined):
        qualified = qualified_name(show(name))
        if not allowed_call(name, starter.undefined, host_calls) and qualified not in ALLOWED_QUALIFIED \
                and qualified not in host_calls:
            found.append(Violation(f"{file_name} calls `{show(name)}`, which this lab does not need"))
    for kind, targets in sorted(student.init.items()):
        if len(targets) > len(starter.init.get(kind, [])):
            known = Counter(normalise(t) for t in starter.init.get(kind, []))
            new = [t for t in targets if not known.get(normalise(t))] or targets
            what = "static initializer" if kind in STARTUP_KINDS else "static finalizer"
            found.append(Violation(f"{file_name} adds a {what} (code that runs before or after the harness, "
                                   f".{kind}: `{show(new[0])}`), which this lab does not need; global objects need "
                                   "constant initialization"))
    for name in student.ifuncs:
        found.append(Violation(f"{file_name} defines `{show(name)}` as an indirect function (ifunc), whose resolver "
                               "runs while the program loads"))
    lab_namespaces = starter.namespaces
    for key, definition in sorted(student.defined.items()):
        why = _definition_problem(key, definition, student, starter, build, imports, lab_namespaces)
        if why:
            found.append(Violation(f"{file_name} defines `{show(definition.name)}`{why}"))
    for odd in student.odd_code:
        found.append(Violation(f"{file_name} holds {odd}: executable bytes must belong to functions"))
    return found


def _definition_problem(key: str, definition: Definition, student: ObjectFacts, starter: ObjectFacts, build: Build,
                        imports: set[str], lab_namespaces: set[str]) -> str:
    """Why a non-local definition of the student's object is refused, or ''."""
    raw = definition.name
    if raw in build.raw and is_anonymous(key):
        return f", a name of {build.raw[raw]}'s own anonymous namespace (given): it would replace the course's code"
    if raw in imports or key in imports:
        return ", which the harness takes from a shared library: it would replace the library's for the whole process"
    if key in build.defined:
        if definition.bind == "GLOBAL" or key in build.strong:
            return f", which {build.defined[key]} (given) defines too: it would replace the course's code"
        copies = build.fingerprints.get(key, set())
        per_file = key in starter.fingerprints and starter.fingerprints[key] not in copies  # nvcc's own, per file
        if student.fingerprints.get(key) not in copies and not per_file:
            return (f", which {build.defined[key]} (given) defines too, with other code: the linker keeps one copy, "
                    "possibly this one (an explicit specialization?)")
        return ""
    if key in starter.defined:
        if starter.defined[key].bind in ("WEAK", "UNIQUE") and definition.bind == "GLOBAL":
            return (" as a strong symbol where the starter's is an inline or template definition (an explicit "
                    "specialization?): it would replace the harness's copy")
        return ""
    if key in build.undefined:
        return ", which the harness's code needs and the starter does not define: it would run in the harness's place"
    if is_anonymous(key):
        return ""
    if top_namespace(raw) in lab_namespaces:
        return ""
    if definition.bind in ("WEAK", "UNIQUE") and STD_TEMPLATE.match(raw):
        return ""  # a standard template instantiated for the student's own use: no other copy exists
    kind = "weak " if definition.bind == "WEAK" else "unique " if definition.bind == "UNIQUE" else ""
    return (f", a {kind}global symbol outside namespace {' or '.join(sorted(lab_namespaces)) or '(the lab)'}: it "
            "could replace a function of the harness or of a library (put helpers in the anonymous namespace, or "
            "make them static)")


SYSCALL_HITS_MAX = 50  # byte patterns placed by objdump, one call each; more is refused outright


def syscall_violations(hits: list[SyscallHit], file_name: str, disassemble, show=lambda name: name) -> list[Violation]:
    """The hits that are not a branch's displacement. disassemble(section, start, stop) -> objdump
    text of that range (None: could not)."""
    if len(hits) > SYSCALL_HITS_MAX:
        return [Violation(f"{file_name} holds the bytes of system-call instructions at {len(hits)} places (the first "
                          f"in {hits[0].section} + {hits[0].offset:#x}), more than any lab's code spells by chance")]
    found = []
    for hit in hits:
        if hit.function:
            text = disassemble(hit.section, hit.function_start, hit.offset + 16)
            if text is not None and branch_displacement(text, hit.offset):
                continue
            where = f"in host function `{show(hit.function)}`"
        else:
            where = "outside every function"
        found.append(Violation(f"{file_name} holds the bytes of a system-call instruction (`{hit.instruction}`) "
                               f"{where} ({hit.section} + {hit.offset:#x})"))
    return found


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


def names_to_show(student: ObjectFacts) -> list[str]:
    """The names a report of this object may quote (for demangling)."""
    return sorted(student.undefined | {d.name for d in student.defined.values()} | set(student.ifuncs)
                  | {t for targets in student.init.values() for t in targets} | {h.function for h in student.syscalls})


# --- the executable -------------------------------------------------------------------------------
@dataclass
class ExecutableFacts:
    imports: set[str] = field(default_factory=set)  # dynamic symbols it needs
    exports: set[str] = field(default_factory=set)  # dynamic symbols it defines
    defined: set[str] = field(default_factory=set)  # non-local names of its symbol table
    needed: list[str] = field(default_factory=list)
    executable_sections: set[str] = field(default_factory=set)
    array_sections: set[tuple[str, int]] = field(default_factory=set)  # (name, type) of init/fini/preinit arrays
    code_sections: dict[str, int] = field(default_factory=dict)  # .init/.fini -> size
    entries: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # array kind -> (file, function)
    writable_code: bool = False
    executable_stack: bool = False
    irelative: int = 0


def _file_group(name: str) -> str:
    """A source file as nvcc names its intermediate (tmpxft_..._matadd.cudafe1.cpp -> matadd.cudafe1.cpp)."""
    return re.sub(r"^tmpxft_[0-9a-f]+_[0-9a-f]+-\d+_", "", name)


def analyse_executable(path: Path, dir_fd: int | None = None, limit: int = EXECUTABLE_MAX) -> ExecutableFacts:
    exe, fd = _open(path, limit, dir_fd)
    try:
        return _analyse_executable(exe)
    finally:
        os.close(fd)


def _analyse_executable(exe: Elf) -> ExecutableFacts:
    facts = ExecutableFacts()
    for sym in exe.symbols(elf.SHT_DYNSYM):
        if not sym.name:
            continue
        name = sym.name.split("@", 1)[0]
        (facts.exports if sym.defined else facts.imports).add(name)
    functions: dict[int, tuple[str, str]] = {}
    group = ""
    for sym in exe.symbols():
        if sym.type == elf.STT_FILE:
            group = _file_group(sym.name)
            continue
        if sym.defined and sym.bind != elf.STB_LOCAL and sym.name:
            facts.defined.add(sym.name)
        if sym.type in (elf.STT_FUNC, elf.STT_GNU_IFUNC) and sym.defined:
            where = group if sym.bind == elf.STB_LOCAL else "(global)"
            functions.setdefault(sym.value, (where, sym.name))
    facts.needed = sorted(exe.needed())
    relative = {}
    for section in exe.sections:
        if section.type == elf.SHT_RELA and section.flags & 0x2 and section.size % 24 == 0:  # SHF_ALLOC: dynamic
            data = exe.read(section.offset, section.size)
            for i in range(section.size // 24):
                offset, info, addend = struct.unpack_from("<QQq", data, 24 * i)
                relative[offset] = addend
                if info & 0xFFFFFFFF in (elf.R_X86_64_IRELATIVE, elf.R_AARCH64_IRELATIVE):
                    facts.irelative += 1
    for section in exe.sections:
        if section.executable:
            facts.executable_sections.add(section.name)
        if INIT_CODE.match(section.name):
            facts.code_sections[section.name] = section.size
        kind = INIT_TYPES.get(section.type) or (INIT_NAME.match(section.name).group(1)
                                                if INIT_NAME.match(section.name) else None)
        if kind is None:
            continue
        facts.array_sections.add((section.name, section.type))
        data = exe.contents(section, 1 << 20)
        for i in range(len(data) // 8):
            value = relative.get(section.addr + 8 * i, struct.unpack_from("<Q", data, 8 * i)[0])
            facts.entries.setdefault(kind, []).append(functions.get(value, ("(unknown)", f"{value:#x}")))
    for segment in exe.segments:
        if segment.type == elf.PT_LOAD and segment.flags & elf.PF_X and segment.flags & elf.PF_W:
            facts.writable_code = True
        if segment.type == elf.PT_GNU_STACK and segment.flags & elf.PF_X:
            facts.executable_stack = True
    return facts


def compare_executables(student: ExecutableFacts, starter: ExecutableFacts, student_groups: set[str],
                        allowed_import, name: str) -> list[Violation]:
    """The violations of the executable linked with the student's object. student_groups: how the
    student files' code is named in the symbol table (matadd.cudafe1.cpp); allowed_import(symbol):
    whether the student's object may call it."""
    found = []
    for symbol in sorted(student.imports - starter.imports):
        if not allowed_import(symbol):
            found.append(Violation(f"{name} imports `{symbol}`, which the starter's does not and this lab does not "
                                   "need"))
    for symbol in sorted(student.exports - starter.exports):
        found.append(Violation(f"{name} exports `{symbol}`, which the starter's does not: shared libraries would call "
                               "it instead of their own"))
    for symbol in sorted((starter.imports & student.defined) - starter.defined):
        found.append(Violation(f"{name} defines `{symbol}` itself, which the harness takes from a shared library in "
                               "the starter's: the harness would call the student's code instead"))
    if student.needed != starter.needed:
        found.append(Violation(f"{name} needs the shared libraries {', '.join(student.needed)}, not the starter's "
                               f"{', '.join(starter.needed)}"))
    for section in sorted(student.executable_sections - starter.executable_sections):
        found.append(Violation(f"{name} has the executable section {section}, which the starter's has not"))
    for section in sorted(student.array_sections - starter.array_sections):
        found.append(Violation(f"{name} has the section {section[0]} of type {section[1]}, which the starter's has "
                               "not: code that runs at load or exit"))
    for section, size in sorted(student.code_sections.items()):
        if size != starter.code_sections.get(section, 0):
            found.append(Violation(f"{name} has {size} bytes of {section} code (the starter's "
                                   f"{starter.code_sections.get(section, 0)}): code that runs at load or exit"))
    for kind, entries in sorted(student.entries.items()):
        extra = Counter(entries) - Counter(starter.entries.get(kind, []))
        for (group, function), count in sorted(extra.items()):
            if group in student_groups or group in ("(global)", "(unknown)"):
                found.append(Violation(f"{name} runs `{function}` from its .{kind} ({group}), which the starter's "
                                       "does not: code that runs at load or exit"))
    if student.writable_code and not starter.writable_code:
        found.append(Violation(f"{name} has a segment both writable and executable"))
    if student.executable_stack and not starter.executable_stack:
        found.append(Violation(f"{name} asks for an executable stack"))
    if student.irelative > starter.irelative:
        found.append(Violation(f"{name} has indirect functions (ifunc) resolved while it loads"))
    return found


def student_groups(student_files) -> set[str]:
    """How the symbol table names the code of the student's files (nvcc's intermediates)."""
    groups = set()
    for name in student_files:
        base = os.path.basename(name)
        stem, suffix = os.path.splitext(base)
        groups |= {base, f"{stem}.cudafe1.cpp"} if suffix == ".cu" else {base}
    return groups


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
