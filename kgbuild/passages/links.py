"""Deterministic entity links: which known names a passage mentions, and where.

Names come from the corpus itself (each passage's title names its subject: a wiki-like
corpus is its own catalog) and from the store's catalog (entity labels and aliases). They are
matched all at once by an Aho-Corasick automaton (``pyahocorasick``: one pass over a text,
whatever the number of names), case-insensitively, on word boundaries, whatever punctuation separates its words ("Young, New South Wales").
A mention of a title must be written with a capital or a digit (``Signs``, a film, is not
linked from "signs"); a name that is a lone stop word or shorter than 3 characters links
nothing.
A trailing parenthetical in a title qualifies it (``Lilu (mythology)``) and is not part of the
name.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from typing import Iterable, Iterator

import ahocorasick

from .lexical import STOPWORDS

_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")
_NONWORD = re.compile(r"[\W_]", re.UNICODE)
_SPACES = re.compile(r"\s+")
_RUNS = re.compile(r" {2,}")
MIN_NAME = 3


def fold(text: str) -> str:
    """``text`` lowercased with every non-word character a space, character for character
    (spans in the folded text are spans in ``text``)."""
    low = text.lower()
    if len(low) != len(text):  # a few characters lowercase to two (U+0130)
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    return _NONWORD.sub(" ", low)


def squeeze(folded: str) -> tuple[str, "Positions | None"]:
    """``folded`` with every run of spaces one space, and where its characters were (None
    when nothing changed): a name written "Young, New South Wales" is the words
    "young new south wales" whatever punctuation separates them."""
    if "  " not in folded:
        return folded, None
    starts, shifts, shift = [], [], 0
    for m in _RUNS.finditer(folded):
        starts.append(m.start() - shift + 1)  # squeezed index of the first shifted character
        shift += m.end() - m.start() - 1
        shifts.append(shift)
    return _RUNS.sub(" ", folded), Positions(starts, shifts)


class Positions:
    """Where a squeezed text's characters were in the folded text."""

    def __init__(self, starts: list[int], shifts: list[int]):
        self.starts, self.shifts = starts, shifts

    def __getitem__(self, i: int) -> int:
        j = bisect.bisect_right(self.starts, i)
        return i + (self.shifts[j - 1] if j else 0)


def name_key(name: str, qualifier: bool = True) -> str | None:
    """The key a name is matched by (folded, single spaces), or None when it is too short
    or a lone stop word to be worth a link. ``qualifier``: drop a trailing ``(...)``."""
    if qualifier:
        name = _QUALIFIER.sub("", name)
    key = _SPACES.sub(" ", fold(unicodedata.normalize("NFKC", name))).strip()
    if len(key) < MIN_NAME or key in STOPWORDS:
        return None
    return key


def is_proper(name: str) -> bool:
    """Whether a name is written with a capital letter or a digit (a proper name)."""
    return any(c.isupper() or c.isdigit() for c in name)


class Linker:
    """Finds the mentions of many names in texts: ``names`` maps key -> (name ID, proper)."""

    def __init__(self, names: dict[str, tuple[int, bool]]):
        self.size = len(names)
        self._auto = ahocorasick.Automaton()
        for key, (nid, proper) in names.items():
            self._auto.add_word(f" {key} ", (nid, proper, len(key)))
        if self.size:
            self._auto.make_automaton()

    def find(self, text: str) -> Iterator[tuple[int, int, int]]:
        """``(name ID, start, end)`` of every mention in ``text`` (spans in ``text``)."""
        if not self.size or not text:
            return
        squeezed, where = squeeze(fold(text))
        for end, (nid, proper, length) in self._auto.iter(f" {squeezed} "):
            start = end - length - 1  # ``end`` is the padded key's last space; minus the pad
            if where is not None:
                start, stop = where[start], where[start + length - 1] + 1
            else:
                stop = start + length
            if proper and not _written_as_name(text[start:stop]):
                continue
            yield nid, start, stop


def _written_as_name(mention: str) -> bool:
    """A proper name's mention has a capital or a digit ("Signs" names the film, "signs" is
    a common noun)."""
    return any(c.isupper() or c.isdigit() for c in mention)


def link_all(linker: Linker, texts: Iterable[tuple[int, str]]) -> Iterator[tuple[int, int, int, int]]:
    """``(row, name ID, start, end)`` for every mention in each ``(row, text)``, each
    (row, name) once at its first mention."""
    for row, text in texts:
        seen: set[int] = set()
        for nid, start, end in linker.find(text):
            if nid not in seen:
                seen.add(nid)
                yield row, nid, start, end


_TOKEN = re.compile(r"\S+")


def candidate_keys(text: str, longest: int) -> Iterator[tuple[str, int, int]]:
    """Every run of up to ``longest`` words of ``text`` that a name key could be, with its
    span: words (folded) joined by exactly one space, as the automaton of :class:`Linker`
    would see them. For a few texts, looking these up is cheaper than building the
    automaton of every name."""
    folded = fold(text)
    tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(folded)]
    for i, (start, _) in enumerate(tokens):
        words = []
        for j in range(i, min(i + longest, len(tokens))):
            words.append(folded[tokens[j][0]:tokens[j][1]])
            yield " ".join(words), start, tokens[j][1]


def find_by_lookup(text: str, lookup, longest: int) -> Iterator[tuple[int, int, int]]:
    """What :meth:`Linker.find` yields for ``text``, in the same order (by end), from
    ``lookup(keys) -> {key: (name ID, proper)}`` instead of an automaton."""
    spans = list(candidate_keys(text, longest))
    known = lookup({k for k, _, _ in spans})
    for key, start, end in sorted(spans, key=lambda x: (x[2], -len(x[0]))):
        if key in known:
            nid, proper = known[key]
            if proper and not _written_as_name(text[start:end]):
                continue
            yield nid, start, end
