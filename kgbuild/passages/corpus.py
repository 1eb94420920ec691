"""Reading passage corpora: JSON Lines, one ``{"id", "title", "text", ...}`` object a line.

``id`` is kept verbatim; ``title`` is optional; every other key is kept as metadata (short
scalar values also go into the passage's context header, see :func:`header`). A bad line (not
JSON, not an object, no ``id`` or ``text``, a repeated ``id``, too long) is reported as a
:class:`~kgbuild.errors.Problem` naming ``file:line`` and skipped; the rest is read.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping, NamedTuple

from ..errors import InputError, Problem

MAX_LINE = 1 << 20  # bytes of one JSON line
MAX_TEXT = 64 * 1024  # characters of a passage's text (longer ones are cut, with a warning)
MAX_ID = 2048
MAX_META_VALUE = 80  # characters of a metadata value that goes into the header
MAX_PROBLEMS = 1000
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
ACCESS_KEY = "access"  # metadata key holding access labels (a list or comma-separated text)


@dataclass(frozen=True)
class Passage:
    """One passage as read: its ID (verbatim), title, text, metadata, where it was read and
    the digest of everything indexed about it."""

    id: str
    title: str
    text: str
    source: str
    line: int
    meta: dict = field(default_factory=dict, hash=False, compare=False)
    access: tuple[str, ...] = ()
    raw: str = ""  # the digest of its line as read (a line unchanged byte for byte is unchanged)

    @property
    def header(self) -> str:
        return header(self.title, self.meta)

    @property
    def digest(self) -> str:
        if self.raw:
            return self.raw
        body = json.dumps([self.id, self.title, self.text, self.meta, list(self.access)],
                          sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class Unchanged(NamedTuple):
    """A line whose digest the index already holds: its passage's ID, the line, the digest
    (the line is not parsed again)."""

    id: str
    line: int
    raw: str


def header(title: str, meta: dict) -> str:
    """The context header a passage is indexed with (never quoted as evidence): its title,
    then short metadata values (``section``, ``source``, a date: the document-level facts a
    question may name but the passage's own text does not repeat; an ISO date also in
    words). URLs, long values and nested values are left out."""
    parts = [title] if title else []
    for key in sorted(meta):
        value = meta[key]
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            continue
        text = str(value).strip()
        if text and len(text) <= MAX_META_VALUE and not _URL.match(text):
            parts.append(f"{key}: {text}{_date_in_words(text)}")
    return "\n".join(parts)


_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ][0-9:.+\-Z]*)?$")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")


def _date_in_words(text: str) -> str:
    """An ISO date as people write it (" (October 5, 2023)"), or "": metadata stores dates
    as 2023-10-05, questions say "October 5, 2023"."""
    m = _ISO_DATE.match(text)
    if not m or not 1 <= int(m.group(2)) <= 12 or not 1 <= int(m.group(3)) <= 31:
        return ""
    return f" ({MONTHS[int(m.group(2)) - 1]} {int(m.group(3))}, {m.group(1)})"


def read_corpus(path: str | Path, problems: list[Problem],
                known: Mapping[str, str] | None = None) -> Iterator[Passage | Unchanged]:
    """The passages of one JSONL file, in file order; bad lines are appended to ``problems``
    (at most :data:`MAX_PROBLEMS`, then one line counting the rest) and skipped. A line
    whose digest ``known`` maps to a passage ID is not parsed: it is :class:`Unchanged`."""
    name = str(path)
    seen: dict[str, int] = {}
    dropped = 0

    def report(line: int, message: str, code: str, severity: str = "error") -> None:
        nonlocal dropped
        if sum(p.file == name for p in problems) < MAX_PROBLEMS:
            problems.append(Problem(severity, code, message, name, line))
        else:
            dropped += 1

    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", name) from None
    with handle:
        for number, raw in enumerate(_lines(handle), 1):
            if raw is None:
                report(number, f"line longer than {MAX_LINE} bytes", "line-too-long")
                continue
            if not raw.strip():
                continue
            digest = hashlib.sha256(raw.rstrip(b"\r\n")).hexdigest()[:32]
            pid = known.get(digest) if known else None
            if pid is not None and pid not in seen:
                seen[pid] = number
                yield Unchanged(pid, number, digest)
                continue
            try:
                obj = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                report(number, f"not UTF-8: {exc.reason}", "encoding")
                continue
            except json.JSONDecodeError as exc:
                report(number, f"not JSON: {exc.msg} (column {exc.colno})", "json-syntax")
                continue
            passage = _passage(obj, name, number, report, digest)
            if passage is None:
                continue
            if passage.id in seen:
                report(number, f"passage id {passage.id!r} repeats line {seen[passage.id]}",
                       "duplicate-id")
                continue
            seen[passage.id] = number
            yield passage
    if dropped:
        problems.append(Problem("error", "too-many-problems", f"{dropped} more problem(s)", name))


def _lines(handle) -> Iterator[bytes | None]:
    """The file's lines split at ``\\n`` only (as JSON Lines does); None for a line over the
    size limit (its bytes are skipped, never held)."""
    while True:
        line = handle.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while (rest := handle.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                pass
            yield None
            continue
        yield line


def _passage(obj, name: str, line: int, report, digest: str = "") -> Passage | None:
    if not isinstance(obj, dict):
        report(line, f"a line must be a JSON object, not {type(obj).__name__}", "not-an-object")
        return None
    pid, text, title = obj.get("id"), obj.get("text"), obj.get("title", "")
    if isinstance(pid, int) and not isinstance(pid, bool):
        pid = str(pid)
    if not isinstance(pid, str) or not pid.strip():
        report(line, "no 'id' (a non-empty string)", "missing-id")
        return None
    if len(pid) > MAX_ID:
        report(line, f"id longer than {MAX_ID} characters", "id-too-long")
        return None
    if not isinstance(text, str):
        report(line, f"passage {pid!r}: no 'text' (a string)", "missing-text")
        return None
    if title is None:
        title = ""
    if not isinstance(title, str):
        report(line, f"passage {pid!r}: 'title' must be a string", "bad-title")
        return None
    if len(text) > MAX_TEXT:
        report(line, f"passage {pid!r}: text cut at {MAX_TEXT} characters", "text-too-long",
               "warning")
        text = text[:MAX_TEXT]
    meta = {k: v for k, v in obj.items() if k not in ("id", "text", "title")}
    access: tuple[str, ...] = ()
    if ACCESS_KEY in meta:
        labels = meta.pop(ACCESS_KEY)
        items = labels.split(",") if isinstance(labels, str) else labels
        if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
            report(line, f"passage {pid!r}: 'access' must be labels (a list or comma-separated "
                         f"text)", "bad-access")
            return None
        from ..graph.access import parse_labels

        try:
            access = tuple(sorted(parse_labels(items)))
        except ValueError as exc:
            report(line, f"passage {pid!r}: {exc}", "bad-access")
            return None
    return Passage(pid, title.strip(), text, name, line, meta, access, digest)
