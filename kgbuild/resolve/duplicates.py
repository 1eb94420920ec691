"""Existing entities that look like one: equal keys, keys the fuzzy rules would resolve to
each other, a version-suffixed name and its package. :class:`DuplicateSearch` is a part of
:class:`~kgbuild.resolve.resolver.Resolver`."""

from __future__ import annotations

from dataclasses import dataclass

from .blocking import DIGITS, typo_only
from .ecosystem import ecosystem, is_package_purl, may_be_same, split_version
from .normalize import fold


@dataclass(frozen=True)
class Duplicate:
    """Two existing entities of one type whose names look like one entity."""

    a: str
    b: str
    type: str
    score: float
    reason: str  # "normalized" (equal keys) or "fuzzy"

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "type": self.type, "score": round(self.score, 1),
                "reason": self.reason}


class DuplicateSearch:
    """:meth:`possible_duplicates` over the resolver's index (a mixin of ``Resolver``)."""

    def possible_duplicates(self, type: str | None = None) -> list[Duplicate]:
        """Pairs of existing entities of one type with equal keys, keys that would resolve to
        each other by the fuzzy rules, or a version-suffixed name and its package (reason
        ``version``); ``distinct`` pairs and pairs the package gate refuses are left out."""
        types = [self._type(type)] if type else sorted(self._index)
        out: dict[tuple[str, str], Duplicate] = {}
        for t in types:
            idx = self._index[t]
            for slot, key in enumerate(idx.keys):
                ids = {self._ids[n] for n in self._owners(t, slot)}
                equal = idx.exact(key, [key.replace(" ", "")])
                scored = {o: s for o, s in idx.scores(key, idx.block(key, self.thresholds),
                                                      self.thresholds.accept).items()
                          if DIGITS.findall(idx.keys[o]) == DIGITS.findall(key)
                          and typo_only(key, idx.keys[o], {})}
                found = {**scored, **dict.fromkeys(equal, 100.0)}
                for name in {x for a in ids for x in self._names[self._number[a]]}:
                    versioned = split_version(name)
                    other = idx.by_key.get(self.normalizer.key(versioned[0], t)) if versioned else None
                    if other is not None and other != slot:
                        found.setdefault(other, 100.0)
                for other, s in found.items():
                    reason = "normalized" if other in equal else "fuzzy" if other in scored else "version"
                    for a in ids:
                        pa = self.package_of(a)
                        for n in self._owners(t, other):
                            b = self._ids[n]
                            pb = self.package_of(b)
                            pair = (min(a, b), max(a, b))
                            dup = Duplicate(pair[0], pair[1], t, s, reason)
                            if a != b and not self.registry.is_distinct(a, b) and (
                                    pair not in out or (s, reason) > (out[pair].score, out[pair].reason)
                            ) and (reason != "version" or ecosystem(pa) or ecosystem(pb)) and (
                                    reason != "fuzzy" or not (is_package_purl(pa) or is_package_purl(pb))
                            ) and may_be_same(
                                    pa, self.label_of(a), pb, self.label_of(b), self._curated(a, b)):
                                out[pair] = dup
        return sorted(out.values(), key=lambda d: (-d.score, d.a, d.b))

    def _curated(self, a: str, b: str) -> bool:
        """Whether a curated alias or accepted decision gives one entity the other's label."""
        return any((t, x) in pairs for x, y in ((a, b), (b, a))
                   for pairs in [self._alias_folds.get(fold(self.label_of(y)), ())]
                   for t in [self.type_of(x)])
