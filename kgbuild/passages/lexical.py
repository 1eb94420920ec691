"""Lexical search: questions as SQLite FTS5 queries (BM25), stop words left out.

FTS5 was measured against bm25s and tantivy at 100k passages (``bench/passages_speed.py``):
it is in the standard library, transactional and incremental (a changed passage is one
delete and one insert, in the same transaction as the passage itself), so the index never
disagrees with the passages it was made from. The tokenizer is ``porter unicode61``
(Porter stems, diacritics folded); the query is every content word of the question, OR-ed.
"""

from __future__ import annotations

import re
import sqlite3

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


POSTINGS = 20_000  # documents a query's words may list together before common ones are left out
TOKENIZER = "porter unicode61 remove_diacritics 2"


def match_expression(text: str, db: sqlite3.Connection | None = None,
                     budget: int = POSTINGS, counts: dict | None = None) -> str | None:
    """An FTS5 query matching any content word of ``text`` (each quoted, so no word is read as
    an operator), or None when it has none. With ``db`` (an index with a ``temp.vocab``
    fts5vocab table), the commonest words are left out once the words' document counts add
    up to more than ``budget``: BM25 gives a word in a large share of the corpus little
    weight, and scoring it costs time in proportion to how many passages have it. The
    rarest word always stays. A small corpus is never affected. ``counts`` caches document
    counts by word (counting reads the word's whole posting list)."""
    words = terms(text)
    if db is not None and len(words) > 1:
        cache = {} if counts is None else counts
        for w in words:
            if w not in cache:
                if len(cache) > 100_000:
                    cache.clear()
                cache[w] = document_count(db, w)
        ranked = sorted((cache[w], i, w) for i, w in enumerate(words))
        kept, total = [], 0
        for df, i, w in ranked:
            if kept and total + df > budget:
                break
            kept.append((i, w))
            total += df
        words = [w for _, w in sorted(kept)]
    return " OR ".join(_quote(w) for w in words) if words else None


def _quote(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


_STEMMER: sqlite3.Connection | None = None


def stem(word: str) -> str:
    """``word`` as the index's tokenizer stores it (FTS5's own Porter stemmer)."""
    global _STEMMER
    if _STEMMER is None:
        _STEMMER = sqlite3.connect(":memory:", check_same_thread=False)
        _STEMMER.execute(f"CREATE VIRTUAL TABLE q USING fts5(x, tokenize='{TOKENIZER}')")
        _STEMMER.execute("CREATE VIRTUAL TABLE v USING fts5vocab(q, 'row')")
    _STEMMER.execute("INSERT INTO q(rowid, x) VALUES(1, ?)", (word,))
    rows = _STEMMER.execute("SELECT term FROM v").fetchall()
    _STEMMER.execute("DELETE FROM q")
    return rows[0][0] if rows else word.lower()


def document_count(db: sqlite3.Connection, word: str) -> int:
    """How many passages of the index ``db`` contain ``word``."""
    row = db.execute("SELECT doc FROM temp.vocab WHERE term = ?", (stem(word),)).fetchone()
    return row[0] if row else 0
