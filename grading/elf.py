# SPDX-License-Identifier: MIT
"""A small reader of ELF files (objects and executables), for the integrity check.

Written for files a student's build made: every offset, size and count is checked against the
file before it is used, every table has a cap, and nothing is read past `limit` bytes; a file that
breaks a rule raises ElfError with the reason. No binutils: nothing here runs code on the file.
Only what the checks need: sections, symbols, relocations, the dynamic section, program headers.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

# Section types and flags (the ELF gABI).
SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_REL, SHT_DYNSYM = 2, 3, 4, 8, 9, 11
SHT_INIT_ARRAY, SHT_FINI_ARRAY, SHT_PREINIT_ARRAY = 14, 15, 16
SHT_DYNAMIC = 6
SHF_WRITE, SHF_EXECINSTR = 0x1, 0x4
SHN_UNDEF, SHN_LORESERVE, SHN_ABS, SHN_COMMON, SHN_XINDEX = 0, 0xFF00, 0xFFF1, 0xFFF2, 0xFFFF
STB_LOCAL, STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE = 0, 1, 2, 10
STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION, STT_FILE, STT_TLS, STT_GNU_IFUNC = 0, 1, 2, 3, 4, 6, 10
STV_DEFAULT, STV_HIDDEN = 0, 2
PT_LOAD, PT_DYNAMIC, PT_INTERP, PT_GNU_STACK = 1, 2, 3, 0x6474E551
PF_X, PF_W = 0x1, 0x2
DT_NEEDED, DT_INIT, DT_FINI, DT_INIT_ARRAYSZ, DT_FINI_ARRAYSZ, DT_PREINIT_ARRAYSZ = 1, 12, 13, 27, 28, 33
EM_X86_64, EM_AARCH64 = 62, 183
R_X86_64_IRELATIVE, R_AARCH64_IRELATIVE = 37, 1032
BIND_NAMES = {STB_LOCAL: "LOCAL", STB_GLOBAL: "GLOBAL", STB_WEAK: "WEAK", STB_GNU_UNIQUE: "UNIQUE"}

SECTIONS_MAX = 200_000
SYMBOLS_MAX = 500_000  # a harness has a few thousand; each costs the grader memory
TABLE_MAX = 128 << 20  # bytes of one symbol, string or relocation table
NAME_MAX = 16 << 10  # a symbol name longer than this is refused


class ElfError(ValueError):
    """Not a file this reader accepts (the message says why)."""


@dataclass
class Section:
    index: int
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int

    @property
    def executable(self) -> bool:
        return bool(self.flags & SHF_EXECINSTR)


@dataclass
class Symbol:
    name: str
    value: int
    size: int
    type: int
    bind: int
    visibility: int
    shndx: int

    @property
    def defined(self) -> bool:
        return self.shndx != SHN_UNDEF

    @property
    def bind_name(self) -> str:
        return BIND_NAMES.get(self.bind, str(self.bind))


@dataclass
class Relocation:
    offset: int
    type: int
    symbol: int  # index into the section's symbol table
    addend: int


@dataclass
class Segment:
    type: int
    flags: int
    vaddr: int
    memsz: int


class Elf:
    """One ELF64 little-endian file, read by descriptor with os.pread, never past `limit`."""

    def __init__(self, fd: int, limit: int):
        self.fd = fd
        self._contents: dict[int, bytes] = {}
        self.size = os.fstat(fd).st_size
        if self.size > limit:
            raise ElfError(f"{self.size} bytes, more than the {limit} bytes allowed")
        header = self.read(0, 64)
        if len(header) < 64 or header[:4] != b"\x7fELF":
            raise ElfError("not an ELF file")
        if header[4] != 2 or header[5] != 1:
            raise ElfError("not a 64-bit little-endian ELF file")
        (self.type, self.machine, _, self.entry, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum,
         shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", header, 16)
        if shoff == 0:
            shnum = 0
        elif shentsize != 64:
            raise ElfError("section headers of an unexpected size")
        first = None
        if shoff and (shnum == 0 or shstrndx == SHN_XINDEX):  # extended numbering: in section 0
            first = self._section_header(shoff, 0)
            shnum = shnum or first[5]
            shstrndx = first[7] if shstrndx == SHN_XINDEX else shstrndx
        if shnum > SECTIONS_MAX:
            raise ElfError(f"{shnum} sections, more than {SECTIONS_MAX}")
        raw = [self._section_header(shoff, i) for i in range(shnum)]
        names = b""
        if shnum and 0 < shstrndx < shnum:
            names = self._table(raw[shstrndx][4], raw[shstrndx][5], "section names")
        self.sections: list[Section] = []
        for index, (name, kind, flags, addr, offset, size, link, info, _align, entsize) in enumerate(raw):
            if kind != SHT_NOBITS and size and (offset > self.size or size > self.size - offset):
                raise ElfError(f"section {index} lies outside the file")
            self.sections.append(Section(index, _string(names, name), kind, flags, addr, offset, size, link, info,
                                         entsize))
        self.segments: list[Segment] = []
        if phoff and phnum:
            if phentsize != 56 or phnum > 10_000:
                raise ElfError("program headers of an unexpected size")
            table = self.read(phoff, 56 * phnum)
            if len(table) != 56 * phnum:
                raise ElfError("program headers lie outside the file")
            for i in range(phnum):
                kind, flags, _, vaddr, _, _, memsz, _ = struct.unpack_from("<IIQQQQQQ", table, 56 * i)
                self.segments.append(Segment(kind, flags, vaddr, memsz))

    # --- raw reading ------------------------------------------------------------------------------
    def read(self, offset: int, size: int) -> bytes:
        if offset < 0 or size < 0 or offset > self.size:
            return b""
        size = min(size, self.size - offset)
        chunks, done = [], 0
        while done < size:
            chunk = os.pread(self.fd, min(size - done, 1 << 24), offset + done)
            if not chunk:
                break
            chunks.append(chunk)
            done += len(chunk)
        return b"".join(chunks)

    def _section_header(self, shoff: int, index: int) -> tuple:
        data = self.read(shoff + 64 * index, 64)
        if len(data) != 64:
            raise ElfError("section headers lie outside the file")
        return struct.unpack("<IIQQQQIIQQ", data)

    def _table(self, offset: int, size: int, what: str) -> bytes:
        if size > TABLE_MAX:
            raise ElfError(f"its {what} take {size} bytes, more than {TABLE_MAX >> 20} MiB")
        data = self.read(offset, size)
        if len(data) != size:
            raise ElfError(f"its {what} lie outside the file")
        return data

    def contents(self, section: Section, cap: int | None = None) -> bytes:
        """The bytes of a section (b"" for NOBITS), read once; ElfError above `cap` bytes."""
        if section.type == SHT_NOBITS:
            return b""
        if cap is not None and section.size > cap:
            raise ElfError(f"section {section.name} holds {section.size} bytes, more than {cap}")
        if section.index not in self._contents:
            self._contents[section.index] = self.read(section.offset, section.size)
        return self._contents[section.index]

    # --- tables -----------------------------------------------------------------------------------
    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def symbols(self, kind: int = SHT_SYMTAB) -> list[Symbol]:
        """Every symbol of the first table of `kind` (SHT_SYMTAB or SHT_DYNSYM); [] without one."""
        table = next((s for s in self.sections if s.type == kind), None)
        return self.symbols_of(table) if table is not None else []

    def symbols_of(self, table: Section) -> list[Symbol]:
        if table.entsize not in (0, 24) or table.size % 24:
            raise ElfError(f"symbol table {table.name} has entries of an unexpected size")
        count = table.size // 24
        if count > SYMBOLS_MAX:
            raise ElfError(f"{count} symbols, more than {SYMBOLS_MAX}")
        data = self._table(table.offset, table.size, "symbols")
        if not 0 < table.link < len(self.sections):
            raise ElfError("a symbol table without its string table")
        strings_section = self.sections[table.link]
        strings = self._table(strings_section.offset, strings_section.size, "symbol names")
        xindex = next((s for s in self.sections if s.type == 18 and s.link == table.index), None)  # SHT_SYMTAB_SHNDX
        extended = self._table(xindex.offset, xindex.size, "section indexes") if xindex is not None else b""
        out = []
        for i in range(count):
            name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", data, 24 * i)
            if shndx == SHN_XINDEX and len(extended) >= 4 * (i + 1):
                shndx = struct.unpack_from("<I", extended, 4 * i)[0]
            out.append(Symbol(_string(strings, name), value, size, info & 0xF, info >> 4, other & 0x3, shndx))
        return out

    def relocations(self, target: Section) -> tuple[list[Relocation], list[Symbol]]:
        """The relocations that apply to `target` (RELA or REL sections whose sh_info names it),
        with the symbol table they index."""
        found, symbols = [], []
        for section in self.sections:
            if section.type not in (SHT_RELA, SHT_REL) or section.info != target.index:
                continue
            entry = 24 if section.type == SHT_RELA else 16
            if section.size % entry:
                raise ElfError(f"relocation section {section.name} has entries of an unexpected size")
            data = self._table(section.offset, section.size, "relocations")
            if 0 < section.link < len(self.sections):
                symbols = self.symbols_of(self.sections[section.link])
            for i in range(section.size // entry):
                if entry == 24:
                    offset, info, addend = struct.unpack_from("<QQq", data, 24 * i)
                else:
                    (offset, info), addend = struct.unpack_from("<QQ", data, 16 * i), 0
                found.append(Relocation(offset, info & 0xFFFFFFFF, info >> 32, addend))
        return found, symbols

    def all_relocation_types(self) -> list[int]:
        """The type of every relocation in the file (an executable's dynamic relocations)."""
        types = []
        for section in self.sections:
            if section.type == SHT_RELA and section.size % 24 == 0:
                data = self._table(section.offset, section.size, "relocations")
                types += [struct.unpack_from("<Q", data, 24 * i + 8)[0] & 0xFFFFFFFF for i in range(section.size // 24)]
        return types

    def dynamic(self) -> list[tuple[int, int]]:
        """(tag, value) of the dynamic section; [] without one."""
        section = next((s for s in self.sections if s.type == SHT_DYNAMIC), None)
        if section is None:
            return []
        data = self._table(section.offset, section.size, "dynamic entries")
        out = []
        for i in range(len(data) // 16):
            tag, value = struct.unpack_from("<qQ", data, 16 * i)
            if tag == 0:
                break
            out.append((tag, value))
        return out

    def needed(self) -> list[str]:
        """The shared libraries the file names (DT_NEEDED), from the dynamic string table."""
        section = next((s for s in self.sections if s.type == SHT_DYNAMIC), None)
        if section is None or not 0 < section.link < len(self.sections):
            return []
        strings_section = self.sections[section.link]
        strings = self._table(strings_section.offset, strings_section.size, "dynamic names")
        return [_string(strings, value) for tag, value in self.dynamic() if tag == DT_NEEDED]


def _string(table: bytes, offset: int) -> str:
    if offset >= len(table):
        return ""
    end = table.find(b"\0", offset, offset + NAME_MAX + 1)
    if end < 0:
        if len(table) - offset > NAME_MAX:
            raise ElfError(f"a name longer than {NAME_MAX} bytes")
        end = len(table)
    return table[offset:end].decode("utf-8", "replace")


def open_elf(path, limit: int, dir_fd: int | None = None) -> tuple[Elf, int]:
    """(Elf, its descriptor) of a regular file reached without following links; the caller closes
    the descriptor."""
    from .safeio import open_regular
    fd = open_regular(path, dir_fd)
    try:
        return Elf(fd, limit), fd
    except BaseException:
        os.close(fd)
        raise
