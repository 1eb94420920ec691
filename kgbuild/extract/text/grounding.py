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
from functools import lru_cache

__all__ = ["Match", "find_quote", "find_name", "literal", "parse_date", "stated_date",
           "name_variants", "Quantity", "quantity", "stated_quantity", "UNITS"]


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


@lru_cache(maxsize=16)  # a chunk is searched once per relation: fold and tokenize it once
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

_WORD = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_PAREN = re.compile(r"\s*[\(\[][^()\[\]]*[\)\]]\s*")
_NUMBER = re.compile(r"^[+-]?(?:\d{1,3}(?:[,\u00a0 ]\d{3})+|\d+)(?:\.\d+)?$")


@lru_cache(maxsize=64)
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


# Generic lowercase words DBpedia-style names append to what the text calls by its bare name:
# "English language" is "English", "Rock music" is "Rock", "Tudor Revival architecture".
CATEGORY_WORDS = frozenset({"language", "languages", "music", "architecture", "people", "cuisine",
                            "genre", "style", "dialect"})
_INITIAL = re.compile(r"(?<!\S)[A-Z]\.(?=\s)|(?<=\s)[A-Z](?=\s)")


def name_variants(name: str) -> list[tuple[str, str]]:
    """The forms of ``name`` tried in text, most specific first, with how each was made: the
    name itself; without a parenthetical disambiguator; without middle initials
    (``Abraham A. Ribicoff``); without a trailing lowercase category word (``English
    language``); number spellings. A qualifier after a comma is not dropped (``Austin,
    Texas`` needs both parts: see :func:`find_name`)."""
    name = name.strip().strip("\"'`\u201c\u201d\u2018\u2019").strip()
    out = [(name, "words")]
    bare = _PAREN.sub(" ", name).strip()
    if bare and bare != name:
        out.append((bare, "parenthetical"))
    base = bare or name
    no_initials = re.sub(r"\s+", " ", _INITIAL.sub(" ", f" {base} ")).strip()
    if no_initials != base and len(no_initials.split()) >= 2:
        out.append((no_initials, "initials"))
    words = base.split()
    if len(words) >= 2 and words[-1] in CATEGORY_WORDS:
        out.append((" ".join(words[:-1]), "category"))
    for form in _number_forms(base):
        if form != name:
            out.append((form, "number"))
    return out


Span = tuple[int, int]


class _Index:
    """A text's tokens and where each token occurs (built once per text: a chunk is searched
    for every name of every relation)."""

    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.at: dict[str, list[int]] = {}
        # the tokens run together, and which token starts / ends at each of its offsets: a
        # name's compact key is found with one str.find, in linear time
        parts: list[str] = []
        self.starts: dict[int, int] = {}
        self.ends: dict[int, int] = {}
        pos = 0
        for i, (w, _, _) in enumerate(self.toks):
            self.at.setdefault(w, []).append(i)
            self.starts[pos] = i
            parts.append(w)
            pos += len(w)
            self.ends[pos] = i
        self.compact = "".join(parts)


@lru_cache(maxsize=16)
def _index(text: str) -> _Index:
    return _Index(text)


def _clear(span: Span, skip: tuple[Span, ...]) -> bool:
    return not any(a < span[1] and span[0] < b for a, b in skip)


def _find_compact(key: str, idx: _Index, text: str, numeric: bool = False,
                  skip: tuple[Span, ...] = ()) -> Span | None:
    """The first run of consecutive tokens whose concatenation is ``key`` (word boundaries at
    both ends), outside the ``skip`` spans."""
    if not key:
        return None
    toks, n = idx.toks, len(idx.toks)
    pos = idx.compact.find(key)
    while pos >= 0:
        i, j = idx.starts.get(pos), idx.ends.get(pos + len(key))
        if i is not None and j is not None and not (i and _glued(toks[i - 1][2], toks[i][1])) \
                and not (j + 1 < n and _glued(toks[j][2], toks[j + 1][1])
                         and not (toks[j][0].isdigit() and not toks[j + 1][0].isdigit())):
            # (not inside a word at either end: "4000ft" splits, "ft" alone is no match, but
            # a number may carry its unit)
            span = (toks[i][1], toks[j][2])
            if not (numeric and j > i and not re.fullmatch(r"[\d.,\u00a0 ]+", text[span[0]:span[1]])) \
                    and _clear(span, skip):
                return span
        pos = idx.compact.find(key, pos + 1)
    return None


def _glued(end: int, start: int) -> bool:
    """Whether two tokens are parts of one word: letters and digits touching ("A919")."""
    return end == start


def _find_permuted(key_words: list[str], idx: _Index, skip: tuple[Span, ...]) -> Span | None:
    k = len(key_words)
    if not 2 <= k <= 4 or any(w not in idx.at for w in key_words):
        return None
    want = sorted(key_words)
    rare = min(key_words, key=lambda w: len(idx.at[w]))
    toks = idx.toks
    for p in idx.at[rare]:
        for i in range(max(0, p - k + 1), min(p, len(toks) - k) + 1):
            window = toks[i:i + k]
            if sorted(w for w, _, _ in window) == want:
                span = (window[0][1], window[-1][2])
                if _clear(span, skip):
                    return span
    return None


@lru_cache(maxsize=16)
def _scaled_in(text: str) -> list[tuple[int, int, float]]:
    out = []
    for m in _SCALED.finditer(text):
        value = _number_value(m.group(1))
        if value is not None:
            out.append((m.start(), m.end(), value * _SCALES[m.group(2).lower()]))
    return out


def _find_forms(name: str, text: str, idx: _Index, skip: tuple[Span, ...] = ()) -> Match | None:
    for variant, how in name_variants(name):
        key = _compact(variant)
        numeric = how == "number" or bool(_NUMBER.match(variant))
        found = _find_compact(key, idx, text, numeric, skip)
        if found:
            return Match(found[0], found[1], False, how)
    date = parse_date(name)
    if date:
        for m_start, m_end, values in _dates_in(text):
            if (date in values or (len(date) < 10 and any(v.startswith(date + "-") for v in values))) \
                    and _clear((m_start, m_end), skip):
                return Match(m_start, m_end, False, "date")
        # the text states less than the name claims ("a 1949 serial" for 01 January 1949):
        # found at the precision stated, which is all the value may keep (see stated_date)
        for m_start, m_end, values in _dates_in(text):
            if any(len(v) < len(date) and date.startswith(v + "-") for v in values) \
                    and _clear((m_start, m_end), skip):
                return Match(m_start, m_end, False, "date-stated")
        if len(date) > 4:
            for m in re.finditer(rf"(?<![\w.,]){date[:4]}(?![\w]|[.,]\d)", text):
                if _clear((m.start(), m.end()), skip) and not any(
                        a <= m.start() < b for a, b, _ in _dates_in(text)):
                    return Match(m.start(), m.end(), False, "date-stated")
    value = _number_value(name)
    if value is not None:
        for m_start, m_end, scaled in _scaled_in(text):
            if abs(scaled - value) < 1e-6 * max(1.0, value) and _clear((m_start, m_end), skip):
                return Match(m_start, m_end, False, "number")
    words = [w for w, _, _ in _tokens(_PAREN.sub(" ", name))]
    found = _find_permuted(words, idx, skip)
    if found:
        return Match(found[0], found[1], False, "word-order")
    return None


_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_SCALED = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)\s*(thousand|million|billion|trillion)\b", re.I)


def _number_value(text: str) -> float | None:
    s = text.strip().replace(",", "")
    try:
        return float(s) if re.fullmatch(r"[+-]?\d+(?:\.\d+)?", s) else None
    except ValueError:
        return None


def find_name(name: str, text: str, aliases: tuple[str, ...] = (),
              skip: tuple[Span, ...] = ()) -> Match | None:
    """Where ``name`` (or one of ``aliases``, or a common alias: see :data:`COMMON_ALIASES`)
    is mentioned in ``text``, outside the ``skip`` spans; see the module docstring for the
    tolerances. A name with comma-separated parts (``DeKalb County, Georgia``) is also found
    when both parts are mentioned next to each other (``DeKalb County in Georgia``).

    A name is mentioned as a whole name, not as the start of a longer one: ``Athens`` is
    not mentioned in "Athens International Airport" (a later "the city of Athens" is).
    None when it is not mentioned."""
    name = name.strip()
    if not name:
        return None
    skip = tuple(skip)
    for _ in range(8):
        m = _find_once(name, text, aliases, skip)
        if m is None or not _continues(name, text, m):
            return m
        skip += ((m.start, m.end),)
    return None


_CONTINUATION = re.compile(r" (?:[A-Z][\w'\u2019-]*|\d+[A-Za-z]*\b)")


def _continues(name: str, text: str, m: Match) -> bool:
    """Whether the mention ``m`` is only the start of a longer proper name: the next word
    is capitalised (or a number) and is no part of ``name`` itself."""
    if not name[:1].isalpha() or m.how in ("date", "number"):
        return False
    return _CONTINUATION.match(text, m.end) is not None


def _find_once(name: str, text: str, aliases: tuple[str, ...], skip: tuple[Span, ...]) -> Match | None:
    i = _whole_word_find(name, text, skip)
    if i >= 0:
        return Match(i, i + len(name), True, "exact")
    idx = _index(text)
    m = _find_forms(name, text, idx, skip)
    if m is not None:
        return m
    m = _find_alias(name, text, idx, aliases, skip)
    if m is not None:
        return m
    parts = [p.strip() for p in re.split(r",\s+|\s+in\s+(?:the\s+)?", _PAREN.sub(" ", name)) if p.strip()]
    if len(parts) == 2:
        # "DeKalb County, Georgia" written "DeKalb County in Georgia": both parts, next to
        # each other (joined by a comma or "in")
        head = _find_forms(parts[0], text, idx, skip)
        if head is not None:
            joint = re.compile(r"\s*,\s*|\s+in\s+").match(text, head.end)
            if joint:
                tail_text = text[joint.end():joint.end() + 3 * len(parts[1]) + 40]
                tail_idx = _Index(tail_text)
                tail = _find_forms(parts[1], tail_text, tail_idx) or \
                    _find_alias(parts[1], tail_text, tail_idx, (), ())
                if tail is not None and tail.start == 0:
                    span = (head.start, joint.end() + tail.end)
                    if _clear(span, skip):
                        return Match(span[0], span[1], False, "parts")
    return None


def _find_alias(name: str, text: str, idx: _Index, aliases: tuple[str, ...],
                skip: tuple[Span, ...]) -> Match | None:
    for alias in aliases:
        if alias and alias != name:
            found = _whole_word_find(alias, text, skip)
            if found >= 0:
                return Match(found, found + len(alias), False, "alias")
            m = _find_forms(alias, text, idx, skip)
            if m is not None:
                return Match(m.start, m.end, False, "alias")
    for pattern in _common_aliases(name):
        for m in pattern.finditer(text):
            if _clear((m.start(), m.end()), skip):
                return Match(m.start(), m.end(), False, "alias")
    return None


# Names everybody writes several ways: countries, their abbreviations and demonyms (the
# adjective, not the plural: "Americans" is also inside "African Americans"). Upper-case
# abbreviations match case-sensitively with or without dots ("US" is not "us").
COMMON_ALIASES: tuple[tuple[str, ...], ...] = (
    ("United States", "United States of America", "USA", "US", "America", "American"),
    ("United Kingdom", "UK", "Britain", "British"),
    ("Great Britain", "Britain", "British"),
    ("Soviet Union", "USSR", "Soviet"),
    ("Washington, D.C.", "Washington DC", "DC"),
    ("Germany", "German"), ("France", "French"), ("Italy", "Italian"), ("Spain", "Spanish"),
    ("Japan", "Japanese"), ("China", "Chinese"), ("India", "Indian"), ("Canada", "Canadian"),
    ("Mexico", "Mexican"), ("Brazil", "Brazilian"), ("Netherlands", "Dutch"),
    ("Poland", "Polish"), ("Russia", "Russian"), ("Australia", "Australian"),
    ("Greece", "Greek"), ("Turkey", "Turkish"), ("Sweden", "Swedish"), ("Norway", "Norwegian"),
    ("Denmark", "Danish"), ("Finland", "Finnish"), ("Ireland", "Irish"),
    ("Scotland", "Scottish"), ("Wales", "Welsh"), ("Argentina", "Argentine", "Argentinian"),
    ("Belgium", "Belgian"), ("Portugal", "Portuguese"), ("Austria", "Austrian"),
    ("Switzerland", "Swiss"), ("Philippines", "Filipino", "Philippine"),
    ("Indonesia", "Indonesian"), ("Pakistan", "Pakistani"), ("Iran", "Iranian"),
    ("Iraq", "Iraqi"), ("Israel", "Israeli"), ("Egypt", "Egyptian"), ("Nigeria", "Nigerian"),
    ("South Africa", "South African"), ("New Zealand", "New Zealander"),
    ("South Korea", "Korean"), ("Ukraine", "Ukrainian"), ("Hungary", "Hungarian"),
    ("Czech Republic", "Czech"), ("Romania", "Romanian"), ("Bulgaria", "Bulgarian"),
    ("Serbia", "Serbian"), ("Croatia", "Croatian"), ("Colombia", "Colombian"),
    ("Venezuela", "Venezuelan"), ("Chile", "Chilean"), ("Peru", "Peruvian"),
    ("Cuba", "Cuban"), ("Thailand", "Thai"), ("Vietnam", "Vietnamese"),
    ("Malaysia", "Malaysian"), ("Sri Lanka", "Sri Lankan"), ("Azerbaijan", "Azerbaijani"),
    ("Uruguay", "Uruguayan"), ("Paraguay", "Paraguayan"), ("Lebanon", "Lebanese"),
)


def _alias_pattern(alias: str) -> re.Pattern:
    if re.fullmatch(r"[A-Z]{2,5}", alias):  # an abbreviation: "US", "U.S.", "U.S.A."
        dotted = "".join(rf"{c}\." for c in alias)
        return re.compile(rf"(?<![\w.])(?:{dotted}|{alias})(?!\w)")
    words = r"\s+".join(re.escape(w) for w in alias.split())
    return re.compile(rf"(?<!\w){words}(?!\w)", re.I)


_ALIAS_TABLE: dict[str, list[re.Pattern]] = {}
for _group in COMMON_ALIASES:
    for _name in _group:
        _ALIAS_TABLE.setdefault(_compact(_name), []).extend(
            _alias_pattern(a) for a in _group if a != _name)


def _common_aliases(name: str) -> list[re.Pattern]:
    return _ALIAS_TABLE.get(_compact(_PAREN.sub(" ", name)), [])


def _whole_word_find(name: str, text: str, skip: tuple[Span, ...] = ()) -> int:
    start = 0
    while True:
        i = text.find(name, start)
        if i < 0:
            return -1
        before = text[i - 1] if i else " "
        after = text[i + len(name)] if i + len(name) < len(text) else " "
        if not (before.isalnum() and name[0].isalnum()) and not (after.isalnum() and name[-1].isalnum()) \
                and _clear((i, i + len(name)), skip):
            return i
        start = i + 1


# -- dates --------------------------------------------------------------------------------

_MONTHS = {m: i for i, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
     ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
     ("october", "oct"), ("november", "nov"), ("december", "dec")], start=1) for m in names}
_ORDINALS = {w: i for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth "
    "twentieth".split(), start=1)} | {"thirtieth": 30}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = (r"(?:the\s+)?(?P<day>\d{1,2}(?:st|nd|rd|th)?|"
        + "|".join(sorted(_ORDINALS, key=len, reverse=True)) + r")")
_YEAR = r"(?P<year>\d{3,4})"
_SEP = r"(?:\s*[,.]\s*|\s+)"
_DATE_PATTERNS = [
    re.compile(r"\b" + _YEAR + r"-(?P<mnum>\d{1,2})-(?P<dnum>\d{1,2})\b"),
    re.compile(r"\b" + _DAY + r"(?:\s*,)?\s+(?:of\s+)?" + _MONTH + _SEP + r"(?:of\s+)?" + _YEAR + r"\b", re.I),
    re.compile(r"\b" + _MONTH + r"\s+" + _DAY + _SEP + r"(?:of\s+)?" + _YEAR + r"\b", re.I),
    re.compile(r"\b(?P<a>\d{1,2})[-/.](?P<b>\d{1,2})[-/.]" + _YEAR + r"\b"),
    re.compile(r"\b" + _MONTH + r"(?:\s*,)?\s+(?:of\s+)?" + _YEAR + r"\b", re.I),
    re.compile(r"\b" + _YEAR + r"-(?P<mnum>\d{1,2})\b"),
]


def _day(text: str | None) -> int | None:
    if not text:
        return None
    low = text.lower()
    if low.startswith("the"):
        low = low[3:].strip()
    if low in _ORDINALS:
        return _ORDINALS[low]
    digits = re.match(r"\d+", low)
    return int(digits.group()) if digits else None


def _ymd(year: int, month: int | None, day: int | None) -> str | None:
    if not month or not 1 <= month <= 12:
        return None
    if day is None:
        return f"{year:04d}-{month:02d}"
    if not 1 <= day <= 31:
        return None
    return f"{year:04d}-{month:02d}-{day:02d}"


def _date_values(m: re.Match) -> set[str]:
    g = m.groupdict()
    year = int(g["year"])
    if g.get("a"):  # 9/27/2003 or 27/9/2003: either reading that is a date
        a, b = int(g["a"]), int(g["b"])
        return {v for v in (_ymd(year, a, b), _ymd(year, b, a)) if v}
    month = int(g["mnum"]) if g.get("mnum") else _MONTHS.get((g.get("month") or "").lower().rstrip("."))
    day = int(g["dnum"]) if g.get("dnum") else _day(g.get("day"))
    value = _ymd(year, month, day)
    return {value} if value else set()


def stated_date(text: str) -> str | None:
    """The date ``text`` (a mention found with ``how == "date-stated"``) states, at its own
    precision: ``1949``, ``1949-05``."""
    text = text.strip()
    if re.fullmatch(r"\d{4}", text):
        return text
    values = {v for _, _, vs in _dates_in(text) for v in vs}
    return next(iter(values)) if len(values) == 1 else None


def parse_date(value: str) -> str | None:
    """``value`` as an ISO date (``YYYY-MM-DD``, or ``YYYY-MM`` / ``YYYY`` when that is all
    it says), or None when it is not a date (or only ambiguously one, like ``01-02-2003``)."""
    s = value.strip().strip("\"'").strip()
    s = re.sub(r"\^\^.*$", "", s).strip("\"'")
    if re.fullmatch(r"\d{4}", s):
        return s
    m = re.fullmatch(r"(\d{4}-\d{2}-\d{2})[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?", s)
    if m:
        return m.group(1)
    for pat in _DATE_PATTERNS:
        m = pat.fullmatch(s)
        if m:
            values = _date_values(m)
            return next(iter(values)) if len(values) == 1 else None
    return None


@lru_cache(maxsize=16)
def _dates_in(text: str) -> list[tuple[int, int, set[str]]]:
    found = []
    taken: list[tuple[int, int]] = []
    for pat in _DATE_PATTERNS:
        for m in pat.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            values = _date_values(m)
            if values:
                found.append((m.start(), m.end(), values))
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
        if re.fullmatch(r"\d{4}-\d{3}[\dX]|\d{1,5}(?:-\d{1,7}){2,4}(?:-[\dX])?", s):
            return s  # an identifier ontologies call a number: ISSN 1046-8188, ISBN 0-374-26131-8
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


# -- quantities -----------------------------------------------------------------------------------

# Units as English writes them, each with its other spellings (symbol, singular, plural,
# British and American): a value's unit is compared by this key, never converted.
UNITS: dict[str, tuple[str, ...]] = {
    "km": ("km", "kilometre", "kilometres", "kilometer", "kilometers"),
    "m": ("m", "metre", "metres", "meter", "meters"),
    "cm": ("cm", "centimetre", "centimetres", "centimeter", "centimeters"),
    "mm": ("mm", "millimetre", "millimetres", "millimeter", "millimeters"),
    "mi": ("mi", "mile", "miles"), "ft": ("ft", "foot", "feet"), "in": ("in", "inch", "inches"),
    "km2": ("km2", "km²", "square kilometre", "square kilometres", "square kilometer",
            "square kilometers", "sq km"),
    "ha": ("ha", "hectare", "hectares"), "acre": ("acre", "acres"),
    "kg": ("kg", "kilogram", "kilograms", "kilogramme", "kilogrammes"),
    "g": ("g", "gram", "grams"), "t": ("t", "tonne", "tonnes", "ton", "tons"),
    "lb": ("lb", "lbs", "pound", "pounds"), "l": ("l", "litre", "litres", "liter", "liters"),
    "s": ("s", "sec", "second", "seconds"), "min": ("min", "mins", "minute", "minutes"),
    "h": ("h", "hr", "hrs", "hour", "hours"), "day": ("day", "days"),
    "year": ("year", "years"), "%": ("%", "percent", "per cent"),
    "K": ("K", "kelvin", "kelvins"), "°C": ("°C", "degrees Celsius", "celsius"),
    "°F": ("°F", "degrees Fahrenheit", "fahrenheit"),
    "km/h": ("km/h", "kph", "kilometres per hour", "kilometers per hour"),
    "mph": ("mph", "miles per hour"),
}
_UNIT_KEY = {form.casefold(): key for key, forms in UNITS.items() for form in forms}
_CURRENCIES = {"$": "$", "us$": "$", "usd": "$", "€": "€", "eur": "€", "£": "£", "gbp": "£",
               "¥": "¥", "jpy": "¥"}
_UNIT_WORDS = sorted((f for forms in UNITS.values() for f in forms), key=len, reverse=True)
_UNIT_RE = "|".join(re.escape(f) for f in _UNIT_WORDS)
# after a space a unit is a word of its own: one letter is too often something else ("in
# 1950 in Paris", "3 s"), except the metre and the kelvin
_SPACED_RE = "|".join(re.escape(f) for f in _UNIT_WORDS
                      if (len(f) > 1 and f != "in") or f in ("m", "K"))
_CUR_RE = r"US\$|\$|€|£|¥|USD|EUR|GBP|JPY"
_SCALE_RE = r"thousand|million|billion|trillion|bn"
_QUANTITY = re.compile(
    rf"(?<![\w.])(?P<cur>{_CUR_RE})?\s?(?P<num>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    rf"(?:\s?(?P<scale>{_SCALE_RE})\b)?(?:\s?(?P<after>{_CUR_RE})(?![\w]))?"
    rf"(?:(?P<glued>{_UNIT_RE})(?![\w²/])|\s(?:\(\s*(?P<braced>{_UNIT_RE})\s*\)|(?P<unit>{_SPACED_RE})(?![\w²/])))?",
    re.I)


@dataclass(frozen=True)
class Quantity:
    """A number as a text states it: the number (grouping dropped, trailing zero decimals
    dropped), its scale word, unit key (:data:`UNITS`) and currency, and the words as written."""

    number: str
    scale: str
    unit: str
    currency: str
    written: str

    @property
    def bare(self) -> bool:
        """A number with no scale word, unit or currency."""
        return not (self.scale or self.unit or self.currency)


def _plain_number(text: str) -> str:
    s = text.replace(",", "")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def _quantity(m: re.Match) -> Quantity:
    unit = m.group("glued") or m.group("braced") or m.group("unit") or ""
    key = _UNIT_KEY.get(unit.casefold(), "") if unit else ""
    if key == "K" and unit != "K":
        key = ""  # "k" is no kelvin
    cur = (m.group("cur") or m.group("after") or "").casefold()
    scale = (m.group("scale") or "").casefold()
    return Quantity(_plain_number(m.group("num")), "billion" if scale == "bn" else scale, key,
                    _CURRENCIES.get(cur, ""), " ".join(m.group().split()))


def quantity(value: str) -> Quantity | None:
    """``value`` read as a quantity (``120 km``, ``3.5 million``, ``$4 billion``, ``45
    minutes``, ``1850.0 (tonnes)``), or None when it is not one number with at most a
    currency, a scale word and a unit."""
    s = value.strip()
    m = _QUANTITY.fullmatch(s)
    return _quantity(m) if m else None


def stated_quantity(value: Quantity, text: str) -> tuple[Match, Quantity] | None:
    """Where ``text`` states ``value``'s number (as written: never a conversion, nor the
    same number at another scale), with what the text writes beside it: the first mention
    whose scale, unit and currency agree with those ``value`` gives (the ones it leaves out
    are taken from the text)."""
    for m in _QUANTITY.finditer(text):
        q = _quantity(m)
        if q.number != value.number:
            continue
        if value.scale != q.scale and value.scale:
            continue
        if (value.unit and q.unit != value.unit) \
                or (value.currency and q.currency != value.currency):
            continue
        if q.scale and not value.scale and not value.bare:
            continue  # "3.5 km" is not "3.5 million km"
        return Match(m.start(), m.end(), False, "quantity"), q
    return None
