"""What an endpoint of an extracted relation may be, and where it may be found.

* **Referring expressions are not entities.** A pronoun (``it``, ``she``) or a noun phrase
  made of a determiner and common nouns with no proper name (``the film``, ``the short``,
  ``the seven and a half minute film``, ``this company``) points back to something named
  elsewhere; stored as a node, it would become one node every film-shaped sentence merges
  into. :func:`referring` recognises them: English capitalises proper names, so a phrase
  whose words after its determiner are all lower case names no particular thing.
* **The quote states the relation between these two ends.** An end is looked for in the
  quote's own sentence (:func:`sentence_span`: a quote cut mid-sentence stands for its
  sentence), never merely somewhere else in the chunk: a quote about other entities is no
  evidence about these.
* **Resolution.** A referring expression in the quote's sentence may stand for a name:
  the nearest proper name before it in the chunk, within the two sentences before
  (:func:`antecedent`: recency, the simplest and most reliable cue of what a pronoun refers
  to), or the chunk's **context header** (the document's title and section path, see
  :mod:`.chunking`), which names what a whole page or section is about.
"""

from __future__ import annotations

import re
from typing import Iterator

__all__ = ["referring", "sentence_span", "sentence_break", "referring_in", "antecedent", "PRONOUNS",
           "DETERMINERS", "proper_names"]

PRONOUNS = frozenset("""it its itself he him his himself she her hers herself they them their
theirs themselves this that these those which who whom whose one ones we us our i me my
you your there here""".split())
# articles, demonstratives and possessives that open a noun phrase pointing back
DETERMINERS = frozenset("""the a an this that these those its his her their our your my
such said same both either another each every some any""".split())
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)


def referring(name: str) -> str | None:
    """``"pronoun"`` or the head noun when ``name`` is a referring expression rather than a
    name (see the module docstring), else None: ``it`` -> pronoun, ``the film`` -> film,
    ``The seven and a half minute film`` -> film; ``The 3Arena``, ``The Beatles``, ``The
    Man Who Knew Too Much`` -> None (a capitalised word or a digit is a proper name)."""
    words = _WORD.findall(name.strip().strip("\"'“”‘’`"))
    if not words:
        return None
    if len(words) == 1 and words[0].casefold() in PRONOUNS and not (
            len(words[0]) > 1 and words[0].isupper()):  # "US" is a country, "us" a pronoun
        return "pronoun"
    if words[0].casefold() not in DETERMINERS or len(words) < 2:
        return None
    rest = words[1:]
    if any(not w.isalpha() or not w.islower() for w in rest):
        return None  # a proper name ("The Beatles"), a number, a title in capitals
    return rest[-1]


_ABBREVIATION = re.compile(r"(?:\b[A-Z]|\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Inc|Corp|Co|Ltd|No|Vol|"
                           r"Mt|Ft|vs|etc|approx|ca|cf|e\.g|i\.e|U\.S|U\.K))\.$")
_BOUNDARY = re.compile(r"[.!?…]+[\"'”’)\]]*\s+(?=[\"'“‘(\[]*[A-Z0-9])|\n[ \t]*\n|\n(?=[ \t]*(?:[-*+#>]|\d+[.)]\s))")


def _starts_from(text: str, pos: int) -> Iterator[int]:
    """Offsets after ``pos`` where a sentence (or a paragraph, list item, heading) starts,
    in order."""
    for m in _BOUNDARY.finditer(text, pos):
        head = text[max(0, m.start() - 12):m.start() + 1]
        if text[m.start()] == "." and _ABBREVIATION.search(head):
            continue  # "Dr. Prabhu", "U.S. Army": no sentence end
        yield m.end()


def _boundaries(text: str) -> list[int]:
    """Offsets where a sentence (or a paragraph, list item, heading) starts."""
    return [0, *_starts_from(text, 0)]


def sentence_break(text: str, start: int, end: int) -> bool:
    """Whether a sentence starts after ``start`` and at or before ``end`` (the two offsets
    lie in different sentences); reads only the text between them."""
    return next(_starts_from(text, start), end + 1) <= end


def sentence_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of the sentence(s) of ``text`` that ``text[start:end]`` lies in."""
    bounds = _boundaries(text)
    a = max(b for b in bounds if b <= start)
    later = [b for b in bounds if b >= end]
    b = min(later) if later else len(text)
    return a, b


def sentence_starts(text: str) -> list[int]:
    return _boundaries(text)


_REFERRING = re.compile(
    r"\b(?:(?:[Tt]he|[Tt]his|[Tt]hat|[Tt]hese|[Tt]hose|[Ii]ts|[Hh]is|[Hh]er|[Tt]heir)"
    r"((?:\s+[a-z][a-z'’-]*){1,6})|([Ii]t|[Hh]e|[Ss]he|[Tt]hey|[Ii]ts|[Hh]is|[Hh]er|[Tt]heir))\b")


# words that end a noun phrase: auxiliaries, prepositions, relative words ("the film was")
_PHRASE_END = frozenset("""is are was were be been being am has have had will would can could
may might must shall should do does did of in on at to for from by with as into onto about
after before over under through during which who whom whose that where when than""".split())


def referring_in(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """The referring expressions in ``text[start:end]``: (start, end, head noun or
    ``pronoun``). A determiner's phrase runs over lower-case words up to a verb or
    preposition ("the film was nominated": *film*); its head is its last word."""
    out = []
    for m in _REFERRING.finditer(text, start, end):
        if m.group(2):
            out.append((m.start(), m.end(), "pronoun"))
            continue
        words = []
        for w in re.finditer(r"\S+", m.group(1)):
            if w.group().casefold() in _PHRASE_END:
                break
            words.append(w)
        if words:
            out.append((m.start(), m.start(1) + words[-1].end(), words[-1].group()))
    return out


# a run of capitalised words (with the lower-case particles names carry) or a number-led name
_NAME = re.compile(r"(?:[A-Z][\w'’.&-]*|\d+[A-Za-z][\w-]*)"
                   r"(?:\s+(?:(?:of|de|da|do|del|della|di|du|la|le|von|van|der|den|y|the|and|&|"
                   r"for|on|upon)\s+)*(?:[A-Z][\w'’.&-]*|\d+))*")
_FUNCTION = frozenset(w.capitalize() for w in PRONOUNS | DETERMINERS) | {
    "In", "On", "At", "For", "From", "By", "With", "As", "After", "Before", "During", "When",
    "While", "Although", "Since", "Because", "If", "But", "And", "Or", "So", "Then", "There",
    "Here", "Also", "However", "Moreover", "Status", "Authors"}


def proper_names(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of proper names in ``text[start:end]`` (capitalised runs; a capitalised function
    word opening a sentence is no name)."""
    out = []
    for m in _NAME.finditer(text, start, end):
        a, b = m.start(), m.end()
        words = text[a:b].split()
        while words and words[0].rstrip(".,") in _FUNCTION:
            a = text.index(words[0], a) + len(words[0])
            a += len(text[a:]) - len(text[a:].lstrip())
            words = words[1:]
        if words:
            out.append((a, b))
    return out


def antecedent(text: str, position: int, limit: int, skip: tuple[tuple[int, int], ...] = ()
               ) -> tuple[int, int] | None:
    """The nearest proper name before ``position`` and after ``limit``, outside ``skip``."""
    found = [s for s in proper_names(text, limit, position)
             if s[1] <= position and not any(a < s[1] and s[0] < b for a, b in skip)]
    return found[-1] if found else None
