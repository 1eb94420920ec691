"""Finding quotes and names in source text, tolerantly, with their character spans.

* :func:`find_quote`: a verbatim quote, tolerant to case, runs of whitespace, typographic
  quotes and dashes, and an ellipsis standing for omitted text;
* :func:`find_name`: an entity name or literal value, tolerant to case, accents,
  punctuation, underscores versus spaces, camelCase, a parenthetical disambiguator
  (``Arion (comicsCharacter)``), digit grouping (``1,000`` / ``1000``, ``12.0`` / ``12``)
  and dates written differently (``1980-05-02`` / ``2 May 1980`` / ``May 2nd, 1980``).
  Names match whole words only: ``Arion`` is not found in ``Marion``.
* :func:`literal` checks and normalises a literal value for a schema datatype.

Everything is pure and works on plain strings; spans are offsets into the given text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["Match", "find_quote", "find_name", "literal", "parse_date", "name_variants"]


@dataclass(frozen=True)
class Match:
    """Where something was found: ``text[start:end]``; ``exact`` when found as given."""

    start: int
    end: int
    exact: bool
    how: str  # "exact", "case", "whitespace", "words", "parenthetical", "number", "date", ...


_SUBST = {"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
          "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"', "\u00ab": '"',
          "\u00bb": '"', "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-",
          "\u2014": "-", "\u2212": "-", "\u00a0": " ", "\u2009": " ", "\u202f": " "}


def _fold_char(ch: str) -> str:
    ch = _SUBST.get(ch, ch)
    if ch.isascii():
        return ch.lower()
    out = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
    return out.casefold()


def _folded(text: str) -> tuple[str, list[int]]:
    """``text`` case-folded, accents dropped, whitespace runs as one space; and for each
    character of the result the offset of the character it came from."""
    out: list[str] = []
    where: list[int] = []
    space = False
    for i, ch in enumerate(text):
        if ch.isspace() or ch in "\u00a0\u2009\u202f":
            if not space and out:
                out.append(" ")
                where.append(i)
            space = True
            continue
        space = False
        for c in _fold_char(ch):
            out.append(c)
            where.append(i)
    while out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


def find_quote(quote: str, text: str) -> Match | None:
    """The span of ``quote`` in ``text``: exactly, else tolerant to case and whitespace
    (and typographic quotes, dashes, accents); an ellipsis (``...``/``…``) in the quote
    matches any text between its parts, in order, within the same span. Surrounding quote
    marks of the quote itself are ignored."""
    quote = quote.strip()
    if not quote:
        return None
    i = text.find(quote)
    if i >= 0:
        return Match(i, i + len(quote), True, "exact")
    stripped = quote.strip("\"'`\u201c\u201d\u2018\u2019 ")
    if stripped and stripped != quote:
        i = text.find(stripped)
        if i >= 0:
            return Match(i, i + len(stripped), True, "exact")
    ftext, where = _folded(text)
    parts = [p for p in (_folded(p)[0].strip(" \"'`.,;:") for p in re.split(r"\.\.\.+|\u2026", stripped or quote)) if p]
    if not parts:
        return None
    if len(parts) == 1:
        q = parts[0]
        j = ftext.find(q)
        if j < 0:
            # trailing sentence punctuation the model added or dropped
            q2 = q.rstrip(".!?;:, ")
            j = ftext.find(q2) if q2 else -1
            if j < 0:
                return None
            q = q2
        return Match(where[j], where[j + len(q) - 1] + 1, False, "case-whitespace")
    pos, first, last = 0, None, None
    for p in parts:
        j = ftext.find(p, pos)
        if j < 0:
            return None
        first = j if first is None else first
        last = j + len(p)
        pos = last
    # the parts must be close together: one passage, not words scattered over the chunk
    if last - first > 4 * sum(len(p) for p in parts) + 200:
        return None
    return Match(where[first], where[last - 1] + 1, False, "ellipsis")


# -- names ------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_PAREN = re.compile(r"\s*[\(\[][^()\[\]]*[\)\]]\s*")
_NUMBER = re.compile(r"^[+-]?(?:\d{1,3}(?:[,\u00a0 ]\d{3})+|\d+)(?:\.\d+)?$")


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """Folded word tokens of ``text`` with their spans (letters and digits; everything else,
    underscores included, separates)."""
    out = []
    for m in _WORD.finditer(text):
        word = "".join(_fold_char(c) for c in m.group())
        out.append((word, m.start(), m.end()))
    return out


def _compact(name: str) -> str:
    return "".join(w for w, _, _ in _tokens(name))


def _number_forms(name: str) -> list[str]:
    """Spellings of a number without grouping and trailing zero decimals."""
    s = name.strip()
    if not _NUMBER.match(s):
        return []
    s = re.sub(r"[,\u00a0 ]", "", s)
    forms = [s]
    if "." in s:
        whole, frac = s.split(".", 1)
        if set(frac) <= {"0"}:
            forms.append(whole)
        else:
            forms.append(f"{whole}.{frac.rstrip('0')}")
    return forms


def name_variants(name: str) -> list[tuple[str, str]]:
    """The forms of ``name`` tried in text, most specific first, with how each was made:
    the name itself, without a parenthetical disambiguator, without a trailing qualifier
    after a comma (``Austin, Texas`` -> ``Austin``) is NOT tried (it would ground a different
    entity), number spellings."""
    name = name.strip().strip("\"'`\u201c\u201d\u2018\u2019").strip()
    out = [(name, "words")]
    bare = _PAREN.sub(" ", name).strip()
    if bare and bare != name:
        out.append((bare, "parenthetical"))
    for form in _number_forms(bare or name):
        if form != name:
            out.append((form, "number"))
    return out


def _find_compact(key: str, toks: list[tuple[str, int, int]], text: str,
                  numeric: bool = False) -> tuple[int, int] | None:
    """Consecutive tokens whose concatenation is ``key`` (word boundaries at both ends)."""
    if not key:
        return None
    n = len(toks)
    for i in range(n):
        w = toks[i][0]
        if not key.startswith(w):
            continue
        acc = w
        j = i
        while len(acc) < len(key) and j + 1 < n:
            j += 1
            acc += toks[j][0]
            if not key.startswith(acc):
                break
        if acc == key:
            start, end = toks[i][1], toks[j][2]
            if numeric and j > i and not re.fullmatch(r"[\d.,\u00a0 ]+", text[start:end]):
                continue
            return start, end
    return None


def find_name(name: str, text: str, aliases: tuple[str, ...] = ()) -> Match | None:
    """Where ``name`` (or one of ``aliases``) is mentioned in ``text``; see the module
    docstring for the tolerances. None when it is not."""
    name = name.strip()
    if not name:
        return None
    i = _whole_word_find(name, text)
    if i >= 0:
        return Match(i, i + len(name), True, "exact")
    toks = _tokens(text)
    for variant, how in name_variants(name):
        key = _compact(variant)
        numeric = how == "number" or bool(_NUMBER.match(variant))
        found = _find_compact(key, toks, text, numeric)
        if found:
            return Match(found[0], found[1], False, how)
    date = parse_date(name)
    if date:
        for m_start, m_end, value in _dates_in(text):
            if value == date or (len(date) < len(value) and value.startswith(date)):
                return Match(m_start, m_end, False, "date")
    for alias in aliases:
        if alias and alias != name:
            found_alias = find_name(alias, text)
            if found_alias:
                return Match(found_alias.start, found_alias.end, False, "alias")
    return None


def _whole_word_find(name: str, text: str) -> int:
    start = 0
    while True:
        i = text.find(name, start)
        if i < 0:
            return -1
        before = text[i - 1] if i else " "
        after = text[i + len(name)] if i + len(name) < len(text) else " "
        if not (before.isalnum() and name[0].isalnum()) and not (after.isalnum() and name[-1].isalnum()):
            return i
        start = i + 1


# -- dates --------------------------------------------------------------------------------

_MONTHS = {m: i for i, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
     ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
     ("october", "oct"), ("november", "nov"), ("december", "dec")], start=1) for m in names}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{3,4})"
_DATE_PATTERNS = [
    re.compile(r"\b" + _YEAR + r"-(?P<mnum>\d{1,2})-(?P<day>\d{1,2})\b"),
    re.compile(r"\b" + _DAY + r"(?:\s+of)?\s+" + _MONTH + r",?\s+" + _YEAR + r"\b", re.I),
    re.compile(r"\b" + _MONTH + r"\s+" + _DAY + r",?\s+" + _YEAR + r"\b", re.I),
    re.compile(r"\b" + _MONTH + r",?\s+" + _YEAR + r"\b", re.I),
    re.compile(r"\b" + _YEAR + r"-(?P<mnum>\d{1,2})\b"),
]


def _date_value(m: re.Match) -> str | None:
    g = m.groupdict()
    year = int(g["year"])
    month = int(g["mnum"]) if g.get("mnum") else _MONTHS.get((g.get("month") or "").lower().rstrip("."))
    if not month or not 1 <= month <= 12:
        return None
    if g.get("day"):
        day = int(g["day"])
        if not 1 <= day <= 31:
            return None
        return f"{year:04d}-{month:02d}-{day:02d}"
    return f"{year:04d}-{month:02d}"


def parse_date(value: str) -> str | None:
    """``value`` as an ISO date (``YYYY-MM-DD``, or ``YYYY-MM`` / ``YYYY`` when that is all
    it says), or None when it is not a date."""
    s = value.strip().strip("\"'").strip()
    s = re.sub(r"\^\^.*$", "", s).strip("\"'")
    if re.fullmatch(r"\d{4}", s):
        return s
    for pat in _DATE_PATTERNS:
        m = pat.fullmatch(s)
        if m:
            return _date_value(m)
    m = re.fullmatch(r"(\d{4}-\d{2}-\d{2})[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?", s)
    if m:
        return m.group(1)
    return None


def _dates_in(text: str) -> list[tuple[int, int, str]]:
    found = []
    taken: list[tuple[int, int]] = []
    for pat in _DATE_PATTERNS:
        for m in pat.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            value = _date_value(m)
            if value:
                found.append((m.start(), m.end(), value))
                taken.append((m.start(), m.end()))
    return found


# -- literals ---------------------------------------------------------------------------------

def literal(value: str, datatype: str) -> str | None:
    """``value`` as a valid literal of the schema ``datatype`` (normalised: ``1,000`` ->
    ``1000``, ``2 May 1980`` -> ``1980-05-02``), or None when it is not one."""
    s = value.strip().strip("\"'").strip()
    s = re.sub(r"\^\^\S*$", "", s).strip("\"'").strip()
    if not s:
        return None
    if datatype == "string":
        return s
    if datatype in ("integer", "decimal"):
        m = re.match(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?", s.replace("\u00a0", ""))
        if not m:
            return None
        number = m.group().replace(",", "")
        rest = s[m.end():].strip()
        if rest and not re.fullmatch(r"\(?[A-Za-z%°.²³/ \-]+\)?", rest):
            return None  # "12 or 13", "1990-2000": not one number
        if datatype == "integer":
            whole, _, frac = number.partition(".")
            return whole if not frac or set(frac) <= {"0"} else None
        return number
    if datatype == "boolean":
        low = s.lower()
        return {"true": "true", "yes": "true", "1": "true", "false": "false", "no": "false",
                "0": "false"}.get(low)
    if datatype == "date":
        return parse_date(s)
    if datatype == "dateTime":
        m = re.fullmatch(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?", s)
        return s.replace(" ", "T", 1) if m else parse_date(s)
    if datatype == "anyURI":
        return s if re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s]+", s) else None
    return s
