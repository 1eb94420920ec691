"""XML sources (Maven ``pom.xml``, CycloneDX XML) read into a small tree with line numbers.

Every file passes :func:`~kgbuild.io.xmlguard.check_entities` first (the one entity check
kgbuild has: declared entities bounded, external and parameter entities refused), then
expat builds the tree with each element's line; it never fetches anything (no external
entity handler is set). Namespaces are dropped from tag names (a POM or BOM of any schema
version reads alike). The tree is bounded: at most :data:`MAX_DEPTH` levels and
:data:`MAX_ELEMENTS` elements, text of at most :data:`MAX_TEXT` characters an element.
"""

from __future__ import annotations

import xml.parsers.expat as expat
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InputError
from ...io.text import open_regular, read_bytes
from ...io.xmlguard import check_entities

MAX_DEPTH = 256
MAX_ELEMENTS = 2_000_000
MAX_TEXT = 64 * 1024


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    line: int
    children: list["Element"] = field(default_factory=list)
    text: str = ""

    def child(self, tag: str) -> "Element | None":
        return next((c for c in self.children if c.tag == tag), None)

    def all(self, tag: str) -> list["Element"]:
        return [c for c in self.children if c.tag == tag]

    def value(self, tag: str) -> str | None:
        """The trimmed text of the first child ``tag`` (None when absent or empty)."""
        c = self.child(tag)
        return c.text.strip() or None if c is not None else None


class _TooBig(Exception):
    pass


def parse_xml(path: Path, max_bytes: int, name: str) -> Element:
    """The root element of the XML file ``path``; :class:`InputError` (with the line) for a
    file that cannot be read, declares entities it may not, or is not well-formed XML."""
    data = read_bytes(path, max_bytes, name)
    try:
        with open_regular(path) as fh:
            check_entities(fh, name)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", name, code="unreadable") from None
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    stack: list[Element] = []
    root: list[Element] = []
    count = 0
    texts: list[list[str]] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal count
        count += 1
        if count > MAX_ELEMENTS or len(stack) >= MAX_DEPTH:
            raise _TooBig("more than {:,} elements".format(MAX_ELEMENTS) if count > MAX_ELEMENTS
                          else f"nested deeper than {MAX_DEPTH} levels")
        el = Element(tag.rsplit(" ", 1)[-1], {k.rsplit(" ", 1)[-1]: v for k, v in attrs.items()},
                     parser.CurrentLineNumber)
        (stack[-1].children if stack else root).append(el)
        stack.append(el)
        texts.append([])

    def end(tag: str) -> None:
        el = stack.pop()
        el.text = "".join(texts.pop())[:MAX_TEXT]

    def chars(data: str) -> None:
        if texts and sum(map(len, texts[-1])) < MAX_TEXT:
            texts[-1].append(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise InputError(f"XML syntax error: {expat.ErrorString(exc.code)}", name,
                         exc.lineno) from None
    except _TooBig as exc:
        raise InputError(f"XML {exc}; not read", name, parser.CurrentLineNumber) from None
    except RecursionError:  # pragma: no cover - the tree is built without recursion
        raise InputError("XML nested too deeply to read", name) from None
    if not root:
        raise InputError("no XML element", name, 1)
    return root[0]


def iter_elements(root: Element):
    """Every element below ``root`` (itself first), without recursion."""
    stack = [root]
    while stack:
        el = stack.pop()
        yield el
        stack.extend(reversed(el.children))

