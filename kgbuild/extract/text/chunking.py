"""Cutting a text document into chunks at natural boundaries, with overlap.

A document is read as *blocks*: Markdown ATX headings (``## Title``), setext and
reStructuredText headings (a line underlined with ``===``, ``---``, ``~~~``, ...; levels in
the order the underline characters first appear), fenced code blocks (kept whole), and
paragraphs (lines up to a blank line). A block longer than the chunk size is cut at sentence
ends, a sentence longer than that at white space, a word longer than that anywhere.

Chunks are packed greedily from whole blocks up to ``size`` characters; a chunk never ends
on a heading (the heading moves to the next chunk and stays with the text after it, even
when that makes the chunk a little longer than ``size``). Each chunk after the first begins with
the end of the previous one, at most ``overlap`` characters, starting at a block or sentence
boundary. A chunk is a span of the document: ``text == document[start:end]`` (spans of
evidence found in it are ``start`` + offset), with a stable ID ``<doc_id>#c<n>`` (n from 1),
the document's title (its first top-level heading, else its first heading, else the file
name), the section path in effect where the chunk's new text begins, and ``marks``: where
each heading inside the chunk starts and the section path from there on, so that the
context header of any offset in the chunk is known (:func:`section_at`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...errors import InvalidValue

DEFAULT_SIZE = 4000  # characters
DEFAULT_OVERLAP = 400


@dataclass(frozen=True)
class Chunk:
    """One piece of a document (see the module docstring)."""

    doc_id: str
    index: int  # 1-based
    start: int
    end: int
    text: str
    title: str
    section: tuple[str, ...] = ()
    marks: tuple[tuple[int, tuple[str, ...]], ...] = ()  # (offset in text, section path)

    @property
    def id(self) -> str:
        return f"{self.doc_id}#c{self.index}"


@dataclass(frozen=True)
class _Block:
    start: int
    end: int
    heading: int = 0  # level, 0 for anything that is not a heading
    title: str = ""
    section: tuple[str, ...] = ()


_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_UNDERLINE = re.compile(r"^([=\-~^\"'`:#*+_.])\1{2,}[ \t]*$")
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+|\n")


def _lines(text: str) -> list[tuple[int, int, str]]:
    """(start, end without the line break, content) of every line."""
    out = []
    for m in re.finditer(r"[^\n]*\n?", text):
        if not m.group(0):
            break
        line = m.group(0).rstrip("\n").rstrip("\r")
        out.append((m.start(), m.start() + len(line), line))
    return out


def blocks(text: str) -> list[_Block]:
    """The blocks of a document, each with the heading path in effect (its own included)."""
    lines = _lines(text)
    found: list[_Block] = []
    stack: list[tuple[int, str]] = []
    levels: dict[str, int] = {}

    def push(level: int, title: str) -> tuple[str, ...]:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        return tuple(t for _, t in stack)

    i = 0
    while i < len(lines):
        start, end, line = lines[i]
        if not line.strip():
            i += 1
            continue
        section = tuple(t for _, t in stack)
        fence = _FENCE.match(line)
        if fence:
            mark = fence.group(1)
            j = i + 1
            while j < len(lines) and not lines[j][2].lstrip().startswith(mark):
                j += 1
            last = min(j, len(lines) - 1)
            found.append(_Block(start, lines[last][1], section=section))
            i = last + 1
            continue
        atx = _ATX.match(line)
        if atx:
            title = atx.group(2).strip()
            found.append(_Block(start, end, len(atx.group(1)), title, push(len(atx.group(1)), title)))
            i += 1
            continue
        if _UNDERLINE.match(line) and i + 1 < len(lines) and lines[i + 1][2].strip() \
                and i + 2 < len(lines) and _UNDERLINE.match(lines[i + 2][2]):  # rst overline
            title = lines[i + 1][2].strip()
            level = levels.setdefault("over" + line.strip()[0], len(levels) + 1)
            found.append(_Block(start, lines[i + 2][1], level, title, push(level, title)))
            i += 3
            continue
        if i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1][2]) and not _UNDERLINE.match(line):
            title = line.strip()  # a setext (Markdown) or reStructuredText heading
            level = levels.setdefault(lines[i + 1][2].strip()[0], len(levels) + 1)
            found.append(_Block(start, lines[i + 1][1], level, title, push(level, title)))
            i += 2
            continue
        j = i
        while j + 1 < len(lines) and lines[j + 1][2].strip() and not _ATX.match(lines[j + 1][2]) \
                and not _FENCE.match(lines[j + 1][2]):
            j += 1
        found.append(_Block(start, lines[j][1], section=section))
        i = j + 1
    return found


def section_marks(text: str, start: int = 0, end: int | None = None
                  ) -> tuple[tuple[int, tuple[str, ...]], ...]:
    """Where each heading of ``text[start:end]`` starts (relative to ``start``) and the
    section path in effect from there on, its own title included (the whole document's
    headings are read, so a path keeps the parents of a chunk's first heading)."""
    end = len(text) if end is None else end
    return tuple((b.start - start, b.section) for b in blocks(text)
                 if b.heading and start <= b.start < end)


def section_at(offset: int, section: tuple[str, ...],
               marks: tuple[tuple[int, tuple[str, ...]], ...]) -> tuple[str, ...]:
    """The section path in effect at ``offset`` of a chunk whose text starts in ``section``
    and holds the headings ``marks``."""
    for at, path in marks:
        if at > offset:
            break
        section = path
    return section


def document_title(text: str, fallback: str) -> str:
    """The first top-level heading, else the first heading, else ``fallback``."""
    heads = [b for b in blocks(text) if b.heading]
    if not heads:
        return fallback
    top = min(b.heading for b in heads)
    return next(b.title for b in heads if b.heading == top) or fallback


def _split_long(text: str, block: _Block, size: int) -> list[_Block]:
    """A block cut into pieces of at most ``size`` characters at sentence ends (then white
    space, then anywhere)."""
    pieces: list[_Block] = []
    start = block.start
    while block.end - start > size:
        limit = start + size
        cut = None
        for m in _SENTENCE_END.finditer(text, start + 1, limit):
            cut = m.end()
        if cut is None or cut <= start:
            space = text.rfind(" ", start + 1, limit)
            cut = space + 1 if space > start else limit
        end = cut
        while end > start + 1 and text[end - 1].isspace():  # a piece ends at its sentence end
            end -= 1
        pieces.append(_Block(start, end, section=block.section))
        start = cut
        while start < block.end and text[start].isspace():
            start += 1
    if start < block.end:
        pieces.append(_Block(start, block.end, block.heading, block.title, block.section))
    return pieces


def _overlap_start(text: str, units: list[_Block], first: int, last: int, overlap: int) -> int | None:
    """Where the next chunk starts so that it repeats at most ``overlap`` characters of the
    chunk ``units[first..last]``: a unit start or a sentence start, or None for no overlap."""
    if overlap <= 0:
        return None
    end = units[last].end
    earliest = end - overlap
    candidates = [u.start for u in units[first + 1:last + 1] if u.start >= earliest]
    unit = units[last]
    for m in _SENTENCE_END.finditer(text, max(unit.start, earliest), unit.end):
        if m.end() < unit.end:
            candidates.append(m.end())
    candidates = [c for c in candidates if units[first].start < c < end]
    return min(candidates) if candidates else None


def chunk_text(text: str, doc_id: str, *, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP,
               mode: str = "chunk", title: str | None = None) -> list[Chunk]:
    """The chunks of a document (``mode="document"``: the whole text as one chunk)."""
    if size < 1:
        raise InvalidValue("chunk size must be at least 1 character", code="usage")
    overlap = max(0, min(overlap, size // 2))
    title = title or document_title(text, doc_id.rsplit("/", 1)[-1])
    if mode == "document":
        start = len(text) - len(text.lstrip())
        end = len(text.rstrip())
        return ([Chunk(doc_id, 1, start, end, text[start:end], title, (),
                       section_marks(text, start, end))] if end > start else [])
    if mode != "chunk":
        raise InvalidValue(f"mode must be chunk or document, not {mode!r}", code="usage")
    units = [p for b in blocks(text) for p in (_split_long(text, b, size) if b.end - b.start > size
                                               else [b])]
    chunks: list[Chunk] = []
    i = 0
    begin: int | None = None  # where the current chunk starts (overlap from the previous one)
    while i < len(units):
        start = begin if begin is not None else units[i].start
        j = i
        while j + 1 < len(units) and units[j + 1].end - start <= size:
            j += 1
        while j > i and units[j].heading:  # never end a chunk on a heading
            j -= 1
        while units[j].heading and j + 1 < len(units):  # a heading stays with its text
            j += 1
        end = units[j].end
        section = units[i].section
        marks = tuple((u.start - start, u.section) for u in units[i:j + 1]
                      if u.heading and u.start >= start)
        chunks.append(Chunk(doc_id, len(chunks) + 1, start, end, text[start:end], title, section,
                            marks))
        begin = _overlap_start(text, units, i, j, overlap) if j + 1 < len(units) else None
        if begin is not None:
            k = next((k for k in range(j + 1, len(units)) if not units[k].heading), j + 1)
            if k >= len(units) or units[k].end - begin > size:
                begin = None  # the overlap would push the next chunk's first text over the size
        i = j + 1
    return chunks
