"""Lexical search: questions as SQLite FTS5 queries (BM25), stop words left out.

FTS5 was measured against bm25s and tantivy at 100k passages (``bench/passages_speed.py``):
it is in the standard library, transactional and incremental (a changed passage is one
delete and one insert, in the same transaction as the passage itself), so the index never
disagrees with the passages it was made from. The tokenizer is ``porter unicode61``
(Porter stems, diacritics folded); the query is every content word of the question, OR-ed.
"""

from __future__ import annotations

import re

# English function words: they carry no topic, and FTS5 has no stop list of its own.
STOPWORDS = frozenset("""
a about above after again against all also am an and any are aren't as at be because been
before being below between both but by can could did do does doing down during each few for
from further had has have having he her here hers herself him himself his how i if in into is
it its itself just me more most my myself no nor not now of off on once only or other our
ours ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom whose why will with would you your yours yourself
yourselves one ones many much either neither whether another
""".split())

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_TERMS = 64  # content words of one question that reach the query


def terms(text: str) -> list[str]:
    """The content words of ``text``, lowercased, in order, each once."""
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        if word not in STOPWORDS and word not in out and word.strip("_"):
            out.append(word)
    return out[:MAX_TERMS]


def match_expression(text: str) -> str | None:
    """An FTS5 query matching any content word of ``text`` (each quoted, so no word is read as
    an operator), or None when it has none."""
    words = terms(text)
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words) if words else None
