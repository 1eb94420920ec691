"""The entity check every XML-based RDF file passes before a parser sees it.

XML parsers expand entities: a 677-byte RDF/XML file whose entities nest ten deep ("billion
laughs") makes gigabytes of text. RDF/XML files written by ontology editors do declare
entities, as abbreviations of namespaces (``<!ENTITY owl "http://www.w3.org/2002/07/owl#">``,
used as ``rdf:about="&owl;Thing"``), so declaring them is allowed; what they may cost is
bounded. The document type declaration is read here, before any parser runs:

- internal general entities are allowed; each one's expanded size is computed (nested
  references included, a cycle refused), every reference in the document is counted, and the
  file is refused when expansion would add more than :func:`budget` bytes: the larger of
  16 MiB and the file's own size;
- parameter entities, external entities (``SYSTEM``/``PUBLIC``: kgbuild never fetches) and
  entity references in attribute defaults are refused;
- an ``<!ENTITY`` anywhere outside the document type declaration is refused.

A refusal is an :class:`~kgbuild.errors.InputError` with the code ``xml-entities``, naming
the file and the line of the declaration. The check reads the file once more, in chunks
(memory stays at a chunk plus the declarations), and only when it declares entities.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from typing import BinaryIO

from ..errors import InputError
from .text import detect_encoding

MIN_BUDGET = 16 << 20  # bytes entity expansion may add, at least
CHUNK = 1 << 20
_NAME = rb"[^\s&;<>\"'%=/\[\]]{1,256}"
_REF = re.compile(rb"&(" + _NAME + rb");")
_CHARREF = re.compile(rb"&#(x[0-9a-fA-F]{1,8}|[0-9]{1,10});")
_SPACE = b" \t\r\n"


def budget(file_size: int) -> int:
    """The bytes entity expansion may add to a file of ``file_size`` bytes."""
    return max(MIN_BUDGET, file_size)


def check_entities(fh: BinaryIO, name: str) -> None:
    """Refuse the XML file open as ``fh`` (rewound afterwards) when its entities are not
    allowed or would expand beyond :func:`budget` (see the module doc)."""
    start = fh.tell()
    size = os.fstat(fh.fileno()).st_size - start
    codec, bom = detect_encoding(fh.read(4))
    if codec != "utf-8":  # a parser decodes UTF-16/32 first: so does the check
        fh.seek(start)
        data = fh.read().decode(codec, errors="replace").encode("utf-8")
        _check(_Buffer(data), name, len(data))
    else:
        _check(_Stream(fh, start + bom), name, size)
    fh.seek(start)


class _Buffer:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def chunks(self):
        yield self.data[self.pos:]


class _Stream:
    """The file from ``offset`` in chunks; ``data`` holds what the declaration parser read."""

    def __init__(self, fh: BinaryIO, offset: int):
        fh.seek(offset)
        self.fh, self.data, self.pos = fh, fh.read(CHUNK), 0

    def chunks(self):
        yield self.data[self.pos:]
        while chunk := self.fh.read(CHUNK):
            yield chunk


def _check(src, name: str, size: int) -> None:
    decls = _Declarations(src.data, name)
    values = decls.read()
    src.pos = decls.pos
    refs, stray_line = _scan(src.chunks(), set(values))
    if stray_line is not None:
        line = src.data[:decls.pos].count(b"\n") + stray_line
        raise InputError("an entity declaration outside the document type declaration; "
                         "not read", name, line, code="xml-entities")
    if not values:
        return
    sizes = _sizes(values, decls, name)
    extra = sum(n * max(0, sizes[e] - len(e) - 2) for e, n in refs.items())
    if extra > budget(size):
        raise InputError(f"entity expansion would add {extra:,} bytes to a {size:,}-byte file "
                         f"(at most {budget(size):,}); not read", name, code="xml-entities")


def _scan(chunks, names: set[bytes]) -> tuple[Counter, int | None]:
    """References to declared entities in the document body, and the line (counted from the
    body's start) of a stray ``<!ENTITY``, if any."""
    refs: Counter = Counter()
    carry, lines = b"", 1
    for chunk in chunks:
        text = carry + chunk
        cut = max(0, len(text) - 300)
        amp = text.rfind(b"&", cut)
        lt = text.rfind(b"<", cut)
        keep = min(i for i in (amp, lt, len(text)) if i >= 0)
        body, carry = text[:keep], text[keep:]
        stray = body.find(b"<!ENTITY")
        if stray >= 0:
            return refs, lines + body.count(b"\n", 0, stray)
        lines += body.count(b"\n")
        if names:
            refs.update(m for m in _REF.findall(body) if m in names)
    if carry.find(b"<!ENTITY") >= 0:
        return refs, lines + carry.count(b"\n", 0, carry.find(b"<!ENTITY"))
    refs.update(m for m in _REF.findall(carry) if m in names)
    return refs, None


def _sizes(values: dict[bytes, tuple[bytes, int]], decls: "_Declarations", name: str
           ) -> dict[bytes, int]:
    """Each entity's expanded size in bytes; a reference cycle or an undeclared entity in a
    value is refused."""
    sizes: dict[bytes, int] = {}
    for root in values:
        stack = [(root, False)]
        visiting: set[bytes] = set()
        while stack:
            ent, done = stack.pop()
            if ent in sizes:
                continue
            text, line = values[ent]
            inner = [r for r in _REF.findall(text) if r in values]
            if done:
                visiting.discard(ent)
                sizes[ent] = len(_REF.sub(b"", text)) + sum(sizes[r] for r in inner) + sum(
                    len(r) + 2 for r in _REF.findall(text) if r not in values)
                continue
            if ent in visiting:
                raise InputError(f"the entity {ent.decode(errors='replace')!r} refers to "
                                 f"itself; not read", name, line, code="xml-entities")
            visiting.add(ent)
            stack.append((ent, True))
            for r in inner:
                if r in visiting:
                    raise InputError(f"the entity {r.decode(errors='replace')!r} refers to "
                                     f"itself; not read", name, line, code="xml-entities")
                stack.append((r, False))
    return sizes


class _Declarations:
    """A reader of the prolog: the XML declaration, comments and processing instructions, then
    the document type declaration and its internal subset (``read`` returns the internal
    general entities: name -> (value, line))."""

    def __init__(self, data: bytes, name: str):
        self.data, self.name, self.pos = data, name, 0

    def fail(self, message: str):
        line = self.data[:self.pos].count(b"\n") + 1
        raise InputError(f"{message}; not read", self.name, line, code="xml-entities")

    def skip_space(self) -> None:
        while self.pos < len(self.data) and self.data[self.pos] in _SPACE:
            self.pos += 1

    def skip_past(self, end: bytes, what: str) -> None:
        at = self.data.find(end, self.pos)
        if at < 0:
            self.fail(f"an unterminated {what} in the prolog (or one over {CHUNK:,} bytes)")
        self.pos = at + len(end)

    def quoted(self) -> bytes:
        quote = self.data[self.pos:self.pos + 1]
        if quote not in (b'"', b"'"):
            self.fail("a declaration the check cannot read")
        end = self.data.find(quote, self.pos + 1)
        if end < 0:
            self.fail("an unterminated quoted value in the document type declaration")
        value = self.data[self.pos + 1:end]
        self.pos = end + 1
        return value

    def read(self) -> dict[bytes, tuple[bytes, int]]:
        while True:
            self.skip_space()
            if self.data.startswith(b"<?", self.pos):
                self.skip_past(b"?>", "processing instruction")
            elif self.data.startswith(b"<!--", self.pos):
                self.skip_past(b"-->", "comment")
            elif self.data.startswith(b"<!DOCTYPE", self.pos):
                return self.doctype()
            else:
                return {}

    def doctype(self) -> dict[bytes, tuple[bytes, int]]:
        self.pos += len(b"<!DOCTYPE")
        while self.pos < len(self.data) and self.data[self.pos:self.pos + 1] not in (b"[", b">"):
            if self.data[self.pos:self.pos + 1] in (b'"', b"'"):
                self.quoted()  # an external ID's literals: never fetched
            else:
                self.pos += 1
        if self.data.startswith(b">", self.pos):
            self.pos += 1
            return {}
        if self.pos >= len(self.data):
            self.fail("an unterminated document type declaration (or one over "
                      f"{CHUNK:,} bytes)")
        self.pos += 1
        entities: dict[bytes, tuple[bytes, int]] = {}
        while True:
            self.skip_space()
            rest = self.data[self.pos:self.pos + 10]
            if rest.startswith(b"]"):
                self.pos += 1
                self.skip_space()
                if not self.data.startswith(b">", self.pos):
                    self.fail("a malformed document type declaration")
                self.pos += 1
                return entities
            if rest.startswith(b"<!--"):
                self.skip_past(b"-->", "comment")
            elif rest.startswith(b"<?"):
                self.skip_past(b"?>", "processing instruction")
            elif rest.startswith(b"%"):
                self.fail("a parameter entity reference (not allowed)")
            elif rest.startswith(b"<!ENTITY"):
                name, value, line = self.entity()
                entities.setdefault(name, (value, line))  # XML: the first declaration binds
            elif rest.startswith((b"<!ELEMENT", b"<!ATTLIST", b"<!NOTATION")):
                self.markup(attlist=rest.startswith(b"<!ATTLIST"))
            else:
                self.fail("a declaration the check cannot read")

    def entity(self) -> tuple[bytes, bytes, int]:
        line = self.data[:self.pos].count(b"\n") + 1
        self.pos += len(b"<!ENTITY")
        self.skip_space()
        if self.data.startswith(b"%", self.pos):
            self.fail("a parameter entity declaration (not allowed)")
        m = re.compile(_NAME).match(self.data, self.pos)
        if not m:
            self.fail("an entity declaration without a name")
        self.pos = m.end()
        self.skip_space()
        if self.data.startswith((b"SYSTEM", b"PUBLIC"), self.pos):
            self.fail(f"the external entity {m.group().decode(errors='replace')!r} "
                      "(kgbuild never fetches)")
        value = _CHARREF.sub(self.character, self.quoted())  # then parsed again when used
        if b"%" in value:
            self.fail("a parameter entity reference in an entity value (not allowed)")
        self.skip_space()
        if not self.data.startswith(b">", self.pos):
            self.fail("a malformed entity declaration")
        self.pos += 1
        return m.group(), value, line

    def character(self, m: re.Match) -> bytes:
        digits = m.group(1)
        try:
            return chr(int(digits[1:], 16) if digits[:1] == b"x" else int(digits)).encode()
        except (ValueError, OverflowError):
            self.fail("a character reference that names no character")

    def markup(self, attlist: bool) -> None:
        while self.pos < len(self.data) and self.data[self.pos:self.pos + 1] != b">":
            if self.data[self.pos:self.pos + 1] in (b'"', b"'"):
                value = self.quoted()
                if attlist and _REF.search(value):
                    self.fail("an entity reference in an attribute default (not allowed)")
            else:
                self.pos += 1
        if self.pos >= len(self.data):
            self.fail("an unterminated declaration in the document type declaration")
        self.pos += 1
