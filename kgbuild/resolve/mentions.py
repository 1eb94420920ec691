"""Entity mentions in free text (a question): the longest word n-grams the resolver resolves,
not overlapping, noise left out. :class:`MentionSearch` is a part of
:class:`~kgbuild.resolve.resolver.Resolver`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .normalize import EXTRA_SUFFIXES, fold
from .results import STATUSES

_TOKEN = re.compile(r"[^\W_](?:[\w.+#/:@'-]*[\w+#])?")
STOPWORDS = frozenset(
    "a an the and or of to in on for by with from at as is are was were be been does do did "
    "it its this that these those what which who whom whose where when why how me my our "
    "their your i we you all any each show list tell give find about own owns owned owner "
    "depend depends use uses used call calls provide provides consume consumes need needs "
    "maintain maintains belong belongs run runs".split())


@dataclass(frozen=True)
class Mention:
    """An entity mention found in free text (``text == question[start:end]``)."""

    text: str
    start: int
    end: int
    id: str | None
    type: str | None
    score: float
    status: str
    stage: str
    candidates: tuple[tuple[str, str, float], ...] = ()

    def to_dict(self) -> dict:
        return {"text": self.text, "start": self.start, "end": self.end, "id": self.id,
                "type": self.type, "score": round(self.score, 1), "status": self.status,
                "stage": self.stage, "candidates": [list(c) for c in self.candidates]}


class MentionSearch:
    """:meth:`find_mentions`, over the resolver's stages (a mixin of ``Resolver``)."""

    def find_mentions(self, text: str) -> list[Mention]:
        """Entity mentions in free text: longest resolvable word n-grams, not overlapping.

        Queued outcomes count only when they are not noise: fuzzy ones from the accept score
        up, acronym ones only for upper-case text (``CIS``); a lone type word (``API``,
        ``teams``) names a kind of thing, not an entity.
        """
        tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
        gate = self._gates[None]
        generic = {w for t in self.schema.node_types for w in (t.lower(), t.lower() + "s")}
        generic |= {w for words in EXTRA_SUFFIXES.values() for x in words for w in (x, x + "s")}
        found = []
        for i in range(len(tokens)):
            for j in range(i, min(len(tokens), i + self.thresholds.mention_ngram)):
                first, last = text[slice(*tokens[i])], text[slice(*tokens[j])]
                if first.lower() in STOPWORDS or last.lower() in STOPWORDS:
                    continue
                if i == j and first.lower() in generic:  # "API", "team": a kind, not a name
                    continue
                span = text[tokens[i][0]:tokens[j][1]]
                res = self._resolve(span, fold(span), None, gate, set())
                if res.status != "new" and (res.stage not in ("fuzzy", "acronym") or (
                        res.score >= self.thresholds.accept if res.stage == "fuzzy" else span.isupper())):
                    rank = (STATUSES.index(res.status) if res.status != "resolved" else -1,
                            -(j - i), -res.score, i)
                    found.append((rank, tokens[i][0], tokens[j][1], res))
        taken: list[Mention] = []
        for _, start, end, res in sorted(found, key=lambda f: f[0]):
            if all(end <= m.start or start >= m.end for m in taken):
                taken.append(Mention(res.mention, start, end, res.id,
                                     self.type_of(res.id) if res.id else None, res.score,
                                     res.status, res.stage, tuple(res.candidates[:5])))
        return sorted(taken, key=lambda m: m.start)
