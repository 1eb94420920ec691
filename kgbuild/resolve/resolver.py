"""Entity resolution: which known entity, if any, a name or reference denotes.

A mention is tried against known entities in stages; the first stage with a hit decides:

1. **type gate**: only entities of the mention's type or a compatible one (itself, ancestors,
   descendants in the schema) are candidates; with no type every type is searched, and hits
   in incompatible types make the mention ``ambiguous``, never a cross-type pick;
   **package gate**: a mention with its own ID (``own_id``) is never matched to an entity of
   another ecosystem, nor (but through a curated alias) to another registry package of its own
   (:mod:`kgbuild.resolve.ecosystem`);
2. ``id``: an entity ID or reference (``component:default/payments``, ``API:payments``,
   purls with or without version, bom-refs) looked up directly;
3. ``alias``: the curated alias table and accepted decisions of :mod:`kgbuild.aliases`;
4. ``normalized``: equal keys (:mod:`kgbuild.normalize`), the type suffix stripped per
   candidate type;
5. ``normalized`` again for a version-suffixed name (``requests-2.32.3``): its name part,
   among package entities only;
6. ``fuzzy`` (never for a registry package's own mention: its name is exact): candidates blocked by rare words, sorted neighbourhoods and acronyms, scored
   with rapidfuzz; resolved only above a threshold *and* a margin over the second-best entity.

A fuzzy match resolves only when the keys differ by word order and one misspelt word
(:func:`_typo_only`); otherwise, and for ties, near-threshold scores, differing numbers,
acronym-only matches and names that split into words differently while spelling part of a
longer name, the mention goes to ``review``. Fuzzy matches are never indexed, so they cannot
chain. Results do not depend on the order entities were added.
"""

from __future__ import annotations

import gc
import os
import pickle
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Iterable

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

_extract, _ratio, _osa = process.extract, fuzz.ratio, OSA.distance

from ..errors import KgbuildError
from ..graph.ids import entity_id
from ..graph.model import KnowledgeGraph, Node
from ..io.collector import gc_paused
from ..schema.model import Schema
from .aliases import AliasRegistry
from .ecosystem import ecosystem, is_package_purl, may_be_same, split_version
from .normalize import EXTRA_SUFFIXES, Normalizer, acronym, canonical_ref, fold

STATUSES = ("resolved", "new", "review", "ambiguous")
MAX_CANDIDATES = 10  # candidates kept on a resolution, best first
_DIGITS = re.compile(r"\d+")
_TOKEN = re.compile(r"[^\W_](?:[\w.+#/:@'-]*[\w+#])?")
STOPWORDS = frozenset(
    "a an the and or of to in on for by with from at as is are was were be been does do did "
    "it its this that these those what which who whom whose where when why how me my our "
    "their your i we you all any each show list tell give find about own owns owned owner "
    "depend depends use uses used call calls provide provides consume consumes need needs "
    "maintain maintains belong belongs run runs".split())


@dataclass(frozen=True)
class Thresholds:
    """Fuzzy-stage limits (scores are 0-100)."""

    accept: float = 85.0  # a fuzzy match resolves at or above this score...
    margin: float = 5.0  # ...when it beats the second-best entity by this much
    review: float = 75.0  # below accept, down to this score, it is queued for review
    max_df: int = 16  # words in more names than this do not form blocks
    window: int = 2  # sorted-neighbourhood width on each side
    mention_ngram: int = 6  # longest word n-gram tried by find_mentions


@dataclass(slots=True)
class Resolution:
    """The outcome of resolving one mention; ``candidates`` are ``(id, type, score)``, best first."""

    mention: str
    type: str | None
    status: str
    id: str | None = None
    stage: str = "none"
    score: float = 0.0
    candidates: list[tuple[str, str, float]] = field(default_factory=list)
    reason: str = ""
    searched: tuple[str, ...] = ()
    suggested_id: str | None = None
    details: list[tuple[str, str, str, float, str]] = field(default_factory=list, repr=False)
    own_id: str | None = None  # the ID the mention's own record carries

    def to_dict(self) -> dict:
        return {"mention": self.mention, "type": self.type, "status": self.status,
                "id": self.id, "stage": self.stage, "score": round(self.score, 1),
                "candidates": [[i, t, round(s, 1)] for i, t, s in self.candidates],
                "suggested_id": self.suggested_id, "own_id": self.own_id}

    def explain(self) -> dict:
        """Why this outcome: stage, reason, types searched and every candidate's match."""
        return {**self.to_dict(), "reason": self.reason, "searched_types": list(self.searched),
                "candidates": [{"id": i, "type": t, "label": label, "score": round(s, 1),
                                "matched": matched} for i, t, label, s, matched in self.details]}


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


class _Excluded(set):
    """IDs a mention must not resolve to: a set, plus those the package gate refuses for the
    mention's own ID (``own_id``); ``curated`` lifts the gate's rule on registry packages."""

    __slots__ = ("own", "label", "resolver", "curated")

    def __init__(self, ids, own: str, label: str, resolver: "Resolver"):
        super().__init__(ids)
        self.own, self.label, self.resolver, self.curated = own, label, resolver, False

    def __contains__(self, i) -> bool:
        return set.__contains__(self, i) or (i != self.own and not may_be_same(
            self.own, self.label, self.resolver.package_of(i), self.resolver.label_of(i),
            self.curated))


def _pack(res: Resolution) -> tuple:
    """A resolution's fields but the mention, for sending between processes."""
    return (res.type, res.status, res.id, res.stage, res.score, res.candidates, res.reason,
            res.searched, res.suggested_id, res.details, res.own_id)


def _put(table: dict, key, value) -> None:
    """Add ``value`` under ``key`` in a multimap storing one value bare, several as a tuple."""
    old = table.get(key)
    if old is None:
        table[key] = value
    elif isinstance(old, tuple):
        if value not in old:
            table[key] = old + (value,)
    elif old != value:
        table[key] = (old, value)


def _get(table: dict, key) -> tuple:
    found = table.get(key)
    return () if found is None else found if isinstance(found, tuple) else (found,)


class _TypeIndex:
    """The name keys of one type's entities, with the blocking structures over them.

    A *slot* is one distinct key; several entities may share it.
    """

    def __init__(self) -> None:
        self.keys: list[str] = []  # slot -> key
        self.compacts: list[str] = []  # slot -> key without spaces
        self.sorted_keys: list[str] = []  # slot -> key with its words sorted
        self.owners: dict[int, tuple[int, ...]] = {}  # slot -> entity numbers
        self.by_key: dict[str, int] = {}
        self.by_compact: dict[str, tuple[int, ...]] = {}
        self.by_word: dict[str, list[int]] = {}
        self.by_acronym: dict[str, int | tuple] = {}
        self._views: tuple[list, ...] | None = None
        self._common: dict[str, set[int]] = {}  # word -> its postings as a set (cache)

    def add(self, key: str, ent: int, acronyms: Iterable[str] = ()) -> None:
        """Index ``ent`` under ``key``; ``acronyms`` (2+ letters) lead to it too."""
        slot = self.by_key.get(key)
        if slot is None:
            slot = self.by_key[key] = len(self.keys)
            self.keys.append(key)
            compact = key.replace(" ", "")
            self.compacts.append(compact)
            same = self.by_compact.get(compact)
            self.by_compact[compact] = (slot,) if same is None else same + (slot,)
            by_word, common = self.by_word, self._common
            split = key.split()
            self.sorted_keys.append(key if len(split) == 1 else " ".join(sorted(split)))
            for w in (split if len(split) == 1 else set(split)):
                postings = by_word.get(w)
                if postings is None:
                    by_word[w] = [slot]
                else:
                    postings.append(slot)
                    if common:
                        common.pop(w, None)
            self._views = None
            self.owners[slot] = (ent,)
        else:
            _put(self.owners, slot, ent)
        for acr in acronyms:
            if len(acr) >= 2:
                _put(self.by_acronym, acr, slot)

    def exact(self, key: str, compacts: Iterable[str] = ()) -> set[int]:
        """Slots whose key equals ``key`` or whose compact key is one of ``compacts``."""
        out: set[int] = set()
        get = self.by_compact.get
        for c in compacts:
            found = get(c)
            if found is not None:
                out.update(found)
        slot = self.by_key.get(key)
        if slot is not None:
            out.add(slot)
        return out

    def block(self, key: str, th: Thresholds) -> list[int]:
        """Candidate slots for a fuzzy comparison with ``key``.

        An unknown word of ``key`` stands for its vocabulary neighbours within two edits, and
        the key with one such correction is looked up as a whole. Then: names with a rare
        word; when all words are common, names sharing the two rarest; and the sorted
        neighbourhoods of the compact key, forwards and backwards.
        """
        compacts, rcompacts, vocab, rvocab, cslots, rcslots = self._views or self.views()
        by_word = self.by_word
        out: set[int] = set()
        ranked: list[tuple[int, str]] = []
        split = key.split()
        for w in (split if len(split) == 1 else set(split)):
            postings = by_word.get(w)
            if postings is not None:
                ranked.append((len(postings), w))
            elif len(w) >= 4:
                i = bisect_left(vocab, w)
                near = vocab[max(0, i - 2):i + 2]
                rw = w[::-1]
                i = bisect_left(rvocab, rw)
                near += [x[::-1] for x in rvocab[max(0, i - 2):i + 2]]
                for n in near:
                    if _osa(w, n, score_cutoff=2) <= 2:
                        ranked.append((len(by_word[n]), n))
                        slot = self.by_key.get(" ".join(n if x == w else x for x in split))
                        if slot is not None:
                            out.add(slot)
        max_df = th.max_df
        if len(ranked) > 1:
            ranked.sort()
        for df, w in ranked:
            if df > max_df:
                break
            out.update(by_word[w])
        if len(ranked) >= 2 and ranked[0][0] > max_df:  # (a rare first word is in already)
            out.update(self._common_set(ranked[0][1]) & self._common_set(ranked[1][1]))
        compact = key.replace(" ", "")
        width = th.window
        i = bisect_left(compacts, compact)
        for found in cslots[max(0, i - width):i + width]:
            out.update(found)
        i = bisect_left(rcompacts, compact[::-1])
        for found in rcslots[max(0, i - width):i + width]:
            out.update(found)
        return list(out)

    def _common_set(self, word: str) -> set[int]:
        """The postings of ``word`` as a set (cached; a new slot with the word drops it)."""
        found = self._common.get(word)
        if found is None:
            found = self._common[word] = set(self.by_word[word])
        return found

    def scores(self, key: str, slots: list[int], cutoff: float) -> dict[int, float]:
        """Similarity of ``key`` to each slot's key, where at least ``cutoff``.

        The better of the compact forms' ratio (separators do not matter) and the word-order
        free ratio of the keys.
        """
        out: dict[int, float] = {}
        for _, sc, i in _extract(key.replace(" ", ""), list(map(self.compacts.__getitem__, slots)),
                                 scorer=_ratio, limit=None, score_cutoff=cutoff):
            out[slots[i]] = sc
        if " " in key:  # token_sort_ratio, the slots' sorted keys made once
            get = out.get
            for _, sc, i in _extract(" ".join(sorted(key.split())),
                                     list(map(self.sorted_keys.__getitem__, slots)),
                                     scorer=_ratio, limit=None, score_cutoff=cutoff):
                slot = slots[i]
                old = get(slot)
                out[slot] = sc if old is None or sc > old else old
        return out

    def containing(self, key: str) -> list[int]:
        """Slots whose key holds all of ``key``'s words in a row, and more."""
        words = key.split()
        postings = sorted((self.by_word.get(w, ()) for w in set(words)), key=len)
        if not postings or not postings[0]:
            return []
        found = set(postings[0]).intersection(*postings[1:])
        padded = f" {key} "
        return sorted((s for s in found if self.keys[s] != key and padded in f" {self.keys[s]} "),
                      key=self.keys.__getitem__)

    def views(self) -> tuple[list, ...]:
        """Sorted compact keys, reversed compact keys, words and reversed words, and the slots
        of each sorted (reversed) compact key (cached)."""
        if self._views is None:
            by_compact = self.by_compact
            compacts = sorted(by_compact)
            by_reversed = {c[::-1]: slots for c, slots in by_compact.items()}
            rcompacts = sorted(by_reversed)
            self._views = (compacts, rcompacts, sorted(self.by_word),
                           sorted(w[::-1] for w in self.by_word),
                           list(map(by_compact.__getitem__, compacts)),
                           list(map(by_reversed.__getitem__, rcompacts)))
        return self._views


def _typo_only(mention_key: str, key: str, vocabulary: dict) -> bool:
    """Whether the keys differ only by word order and one misspelt word of the mention.

    Both words must have 5+ letters, share the first letter, be one edit apart (two from 9
    letters), and neither may start or end the other (``jsonc`` is no typo of ``json``). The
    misspelt word must not be a word of the type's vocabulary (``router`` is no typo of
    ``route``).
    """
    a, missing = mention_key.split(), key.split()
    if len(a) != len(missing):  # one extra and one missing word keep the count
        return False
    extra = []
    for w in a:  # the multiset differences, both ways
        if w in missing:
            missing.remove(w)
        else:
            extra.append(w)
    if not extra:
        return True
    if len(extra) != 1:
        return False
    word, target = extra[0], missing[0]
    short, long = sorted((word, target), key=len)
    return (len(short) >= 5 and word not in vocabulary
            and word[0] == target[0] and not long.startswith(short) and not long.endswith(short)
            and OSA.distance(word, target) <= (2 if len(target) >= 9 else 1))


class Resolver:
    """Resolves mentions to the IDs of known entities; see the module docstring."""

    def __init__(self, schema: Schema, registry: AliasRegistry | None = None,
                 normalizer: Normalizer | None = None, thresholds: Thresholds | None = None):
        self.schema = schema
        self.registry = registry or AliasRegistry()
        self.normalizer = normalizer or Normalizer.for_schema(schema)
        self.thresholds = thresholds or Thresholds()
        # Entity number -> ID, type, label and names as given (labels, aliases, the ID's name
        # part). Columns, not an object per entity: the garbage collector then has 50k fewer
        # objects to traverse (it stops tracking a tuple of strings).
        self._ids: list[str] = []
        self._types_of: list[str] = []
        self._labels: list[str] = []
        self._names: list[tuple[str, ...]] = []
        self._number: dict[str, int] = {}
        self._index: dict[str, _TypeIndex] = {t: _TypeIndex() for t in schema.node_types}
        self._gates = {t: tuple(sorted(schema.compatible_types(t))) for t in schema.node_types}
        self._gates[None] = tuple(sorted(schema.node_types))
        self._refs: dict[str, str | tuple] = {}  # ID or canonical reference -> IDs
        self._aliases: dict[tuple[str, str], str | tuple] = {}  # (type, folded alias) -> IDs
        self._registry_types: dict[str, str] = {}  # canonical ID -> type, from the registry
        self._package: dict[str, str] = {}  # entity -> its purl (version-less), when its ID is none
        self._rejected: dict[str, set[str]] = {}  # folded mention -> IDs it must not resolve to
        self._alias_folds: dict[str, list[tuple[str, str]]] = {}  # folded alias -> (type, ID)s
        self._type_names: dict[str, str] = {}  # type as given -> schema type name
        self._live: dict[tuple[str, ...], tuple[str, ...]] = {}  # gate -> its types with keys
        # Last words of any type suffix: a mention ending otherwise has one key for every type.
        self._suffix_last = frozenset(seq[-1] for seqs in self.normalizer.suffixes.values()
                                      for seq in seqs)
        self._near_suffix: dict[str, bool] = {}  # word -> one edit from a 5+ letter suffix word
        for mention, rid in self.registry.rejected():
            self._rejected.setdefault(mention, set()).add(rid)
        for type_name, ids in self.registry.aliases.items():
            t = self._type(type_name)
            for cid, names in ids.items():
                for name in names:
                    self._add_alias(t, cid, name)
        for d in self.registry.decisions:
            if d.decision == "accepted":
                self._add_alias(self._type(d.type), d.id, d.mention)

    @classmethod
    def from_graph(cls, kg: KnowledgeGraph, registry: AliasRegistry | None = None,
                   nodes: Iterable[Node] | None = None, **options) -> "Resolver":
        """A resolver knowing the nodes of ``kg`` (or just ``nodes``): label, aliases and
        ``title`` attributes."""
        r = cls(kg.schema, registry, **options)
        r.add_entities((node.id, node.type, node.label,
                        sorted({*node.aliases, *node.attributes.get("title", ())}))
                       for node in (kg.nodes.values() if nodes is None else nodes))
        return r

    # -- building -------------------------------------------------------------------
    def add_entity(self, id: str, type: str, label: str, aliases: Iterable[str] = ()) -> None:
        """Make an entity known; adding an ID again merges names and narrows its type."""
        type_name = self._type(type)
        n = self._number.get(id)
        if n is None:
            n = self._number[id] = len(self._ids)
            self._ids.append(id)
            self._types_of.append(type_name)
            self._labels.append(label or id)
            self._names.append(())
            canon = self._index_ref(id, id)
            if canon:  # the name part of a reference-shaped ID is a name too
                self._index_name(n, canon.rsplit("/", 1)[-1])
        else:
            self._labels[n] = min(self._labels[n], label or self._labels[n])
            old = self._types_of[n]
            merged = self.schema.more_specific(old, type_name)
            if merged is None:
                raise KgbuildError(f"entity {id!r} is typed both {old} and {type_name}")
            if merged != old:
                self._types_of[n] = merged
                self._reindex(n)
        for name in (label, *aliases):
            if name.startswith("pkg:"):
                canon = self._index_ref(name, id)
                if canon and canon.startswith("pkg:") and not is_package_purl(id):
                    self._package.setdefault(id, canon)
            self._index_name(n, name)

    def add_entities(self, entities: Iterable[tuple]) -> None:
        """:meth:`add_entity` for each ``(id, type, label)`` or ``(id, type, label, aliases)``,
        with the cyclic garbage collector paused (indexing creates no cycles)."""
        with gc_paused():
            for args in entities:
                self.add_entity(*args)

    def _index_name(self, n: int, name: str | None) -> None:
        if name and name not in self._names[n]:
            self._names[n] += (name,)
            type_name = self._types_of[n]
            words = self.normalizer.words(name)
            stripped = self.normalizer.strip_suffix(words, type_name)
            if stripped:
                idx = self._index[type_name]
                if not idx.keys:
                    self._live.clear()
                if len(words) < 2:
                    acronyms = ()
                elif stripped is words:
                    acronyms = ("".join([w[0] for w in words]),)
                else:
                    acronyms = ("".join([w[0] for w in words]), acronym(stripped))
                idx.add(" ".join(stripped), n, acronyms)

    def _reindex(self, n: int) -> None:
        """Index an entity whose type narrowed under its new type (lookups skip stale keys)."""
        names, self._names[n] = self._names[n], ()
        for name in names:
            self._index_name(n, name)

    def _index_ref(self, ref: str, id: str) -> str | None:
        """Index ``id`` under ``ref`` and its canonical forms; returns the canonical form."""
        _put(self._refs, ref, id)
        canon = canonical_ref(ref)
        if canon:
            _put(self._refs, canon, id)
            if not canon.startswith("pkg:"):
                _put(self._refs, "*:" + canon.split(":", 1)[1], id)
        return canon

    def _add_alias(self, type_name: str, cid: str, alias: str) -> None:
        folded = fold(alias)
        _put(self._aliases, (type_name, folded), cid)
        pairs = self._alias_folds.setdefault(folded, [])
        if (type_name, cid) not in pairs:
            pairs.append((type_name, cid))
        self._registry_types.setdefault(cid, type_name)

    def _owners(self, type_name: str, slot: int) -> list[int]:
        """Entities of ``type_name`` owning a slot of its index (not those narrowed since)."""
        return [n for n in _get(self._index[type_name].owners, slot)
                if self._types_of[n] == type_name]

    def _type(self, type_name: str) -> str:
        name = self._type_names.get(type_name)
        if name is None:
            name = self._type_names[type_name] = self.schema.node_type(type_name).name
        return name

    def type_of(self, id: str) -> str | None:
        """The type of a known entity or registry ID."""
        n = self._number.get(id)
        return self._types_of[n] if n is not None else self._registry_types.get(id)

    def package_of(self, id: str) -> str:
        """The package an entity is, for the package gate: its purl alias when its ID is no
        purl (a CycloneDX bom-ref), else its ID."""
        return self._package.get(id, id)

    def label_of(self, id: str) -> str:
        n = self._number.get(id)
        return self._labels[n] if n is not None else id

    def names_of(self, id: str) -> tuple[str, ...]:
        """Every name an entity goes by: its label and aliases as added, the registry's
        curated aliases and accepted decisions for it (empty for an unknown ID)."""
        n = self._number.get(id)
        names = set(self._names[n]) if n is not None else set()
        for ids in self.registry.aliases.values():
            names.update(ids.get(id, ()))
        names.update(d.mention for d in self.registry.decisions
                     if d.decision == "accepted" and d.id == id)
        return tuple(sorted(names))

    # -- resolving ------------------------------------------------------------------
    def resolve(self, mention: str, type: str | None = None, *, own_id: str | None = None) -> Resolution:
        """Resolve ``mention`` as a ``type`` (None: any type).

        ``own_id`` is the ID the mention's own record carries, if any: entities declared
        ``distinct`` from it are never candidates.
        """
        type_name = self._type(type) if type else None
        folded = fold(mention)
        rejected = self._rejected.get(folded)
        banned = set(rejected) if rejected else set()
        if own_id is not None:
            banned |= {i for pair in self.registry.distinct if own_id in pair for i in pair} - {own_id}
            if ecosystem(own_id):
                banned = _Excluded(banned, own_id, mention, self)
        res = self._resolve(mention, folded, type_name, self._gates[type_name], banned)
        res.own_id = own_id
        return res

    def resolve_many(self, mentions: Iterable[str | tuple], *, workers: int = 1) -> list[Resolution]:
        """Resolve a batch: each item a mention, ``(mention, type)`` or ``(mention, type, own_id)``.

        The results equal ``[resolve(...) for ...]``, in order. With ``workers`` > 1 (and
        ``os.fork`` available) the batch is split round-robin over that many processes: this
        one and ``workers - 1`` forked children that share the index copy-on-write and send
        their results back pickled. Worth it from a few thousand mentions up.
        """
        items = [(m, None, None) if isinstance(m, str) else (tuple(m) + (None, None))[:3]
                 for m in mentions]
        workers = max(1, min(workers, len(items) // 500 or 1))
        if workers == 1 or not hasattr(os, "fork"):
            with gc_paused():
                return [self.resolve(m, t, own_id=o) for m, t, o in items]
        for idx in self._index.values():  # built once here, not in every child
            idx.views()
        with gc_paused():
            return self._resolve_forked(items, workers)

    def _resolve_forked(self, items: list[tuple], workers: int) -> list[Resolution]:
        children = []
        frozen = gc.get_freeze_count() == 0
        if frozen:
            gc.freeze()  # keep the children's collector off the shared pages
        try:
            for k in range(1, workers):
                read, write = os.pipe()
                pid = os.fork()
                if pid == 0:  # child: resolve every workers-th item from k, send them back
                    code = 0
                    try:
                        os.close(read)
                        try:
                            out = (True, [_pack(self.resolve(m, t, own_id=o))
                                          for m, t, o in items[k::workers]])
                        except BaseException as exc:  # re-raised in the parent
                            out = (False, exc)
                        data = pickle.dumps(out, pickle.HIGHEST_PROTOCOL)
                        with os.fdopen(write, "wb") as fh:
                            fh.write(data)
                    except BaseException:
                        code = 1
                    finally:
                        os._exit(code)
                os.close(write)
                children.append((k, pid, read))
        finally:
            if frozen:
                gc.unfreeze()
        results: list = [None] * len(items)
        try:
            results[0::workers] = [self.resolve(m, t, own_id=o) for m, t, o in items[0::workers]]
        finally:
            packed = []
            for k, pid, read in children:
                with os.fdopen(read, "rb") as fh:
                    data = fh.read()
                os.waitpid(pid, 0)
                packed.append((k, data))
        for k, data in packed:
            try:
                ok, out = pickle.loads(data)
            except Exception:  # the child died: do its share here
                ok, out = True, [_pack(self.resolve(m, t, own_id=o)) for m, t, o in items[k::workers]]
            if not ok:
                raise out
            results[k::workers] = [Resolution(m, *rest) for (m, _, _), rest in zip(items[k::workers], out)]
        return results

    def _resolve(self, mention: str, folded: str, type_name: str | None, gate: tuple[str, ...],
                 banned: set[str], versions: bool = True) -> Resolution:
        res = Resolution(mention, type_name, "new", searched=gate)
        if not folded:
            res.reason = "empty mention"
            return res
        hits = self._id_hits(mention, gate, banned)
        if hits:
            return self._decide(res, "id", {i: mention for i in hits})
        found = self._alias_folds.get(folded)
        if found and isinstance(banned, _Excluded):
            banned.curated = True
        hits = found and {i for t, i in found
                          if t in gate and i not in banned and self.type_of(i) in gate}
        if isinstance(banned, _Excluded):
            banned.curated = False
        if hits:
            return self._decide(res, "alias", {i: mention for i in hits})
        words = self.normalizer.words(mention)
        live = self._live.get(gate)
        if live is None:  # types with no entities: no keys
            live = self._live[gate] = tuple(t for t in gate if self._index[t].keys)
        gate = live
        keys = self._keys(words, gate)
        matched = self._normalized_hits(keys, folded, banned)
        if len(matched) == 1:
            ((only, key),) = matched.items()
            t = self.type_of(only) or ""
            if key != keys[t]:  # equal only without spaces: the words are split differently
                inside = {self._ids[n]: self._index[t].keys[slot]
                          for slot in self._index[t].containing(keys[t])
                          for n in self._owners(t, slot)
                          if self._ids[n] not in banned and self._ids[n] != only}
                if inside:
                    self._fill(res, "normalized", {**matched, **inside},
                               {only: 100.0, **dict.fromkeys(inside, 90.0)})
                    return self._set(res, "review", None, f"{mention!r} spells {key!r} but also "
                                     f"the words of {len(inside)} longer name(s)")
        if matched:
            return self._decide(res, "normalized", matched)
        versioned = versions and split_version(mention)
        if versioned:
            name, version = versioned
            inner = self._resolve(name, fold(name), type_name, gate, banned, versions=False)
            hits = {i: key for i, _, _, _, key in inner.details
                    if inner.stage in ("id", "alias", "normalized") and ecosystem(i)}
            if hits:
                self._decide(res, "normalized", hits)
                res.reason = f"{name!r} at version {version}: {res.reason}"
                return res
        if isinstance(banned, _Excluded) and is_package_purl(banned.own):
            res.reason = "a registry package matches by exact names only, never a look-alike"
        else:
            self._fuzzy(res, self._keys(words, gate, misspelt=True), banned)
        if res.status == "new" and type_name:
            res.suggested_id = entity_id(type_name, mention)
        return res

    def _keys(self, words: list[str], gate: tuple[str, ...], misspelt: bool = False) -> dict[str, str]:
        """The mention's key per type of ``gate`` (its type suffix stripped)."""
        if not words or (words[-1] not in self._suffix_last
                         and not (misspelt and len(words) > 1 and self._misspelt_suffix(words[-1]))):
            return dict.fromkeys(gate, " ".join(words))  # no type strips a word
        strip = self.normalizer.strip_suffix
        return {t: " ".join(strip(words, t, misspelt)) for t in gate}

    def _misspelt_suffix(self, word: str) -> bool:
        """Whether ``word`` may be a misspelt one-word suffix of some type (cached)."""
        near = self._near_suffix.get(word)
        if near is None:
            near = self._near_suffix[word] = any(
                len(seq) == 1 and len(seq[0]) >= 5 and OSA.distance(word, seq[0]) == 1
                for seqs in self.normalizer.suffixes.values() for seq in seqs)
        return near

    def _id_hits(self, mention: str, gate: tuple[str, ...], banned: set[str]) -> set[str]:
        found = self._refs.get(mention.strip())
        ids = set() if found is None else set(found) if type(found) is tuple else {found}
        canon = canonical_ref(mention) if not ids else None
        if canon:
            ids = set(_get(self._refs, canon))
            if not ids and not canon.startswith("pkg:"):
                kind, rest = canon.split(":", 1)
                if kind.capitalize() in self.schema.node_types or kind.upper() in self.schema.node_types:
                    compatible = self.schema.compatible_types(self._type(kind))
                    gate = tuple(t for t in gate if t in compatible)
                ids = set(_get(self._refs, "*:" + rest))
        return {i for i in ids if i not in banned and self.type_of(i) in gate}

    def _normalized_hits(self, keys: dict[str, str], folded: str, banned: set[str]) -> dict[str, str]:
        """IDs whose key equals the mention's, narrowed to exact name matches on one branch."""
        matched: dict[str, str] = {}
        ids, types_of, variants = self._ids, self._types_of, self.normalizer.compact_variants
        for t, key in keys.items():
            if key:
                idx = self._index[t]
                for slot in idx.exact(key, variants(key, t)):
                    skey = idx.keys[slot]
                    for n in idx.owners[slot]:
                        if types_of[n] == t:
                            i = ids[n]
                            if i not in banned and skey < matched.get(i, "\uffff"):
                                matched[i] = skey
        if len(matched) > 1 and self._compatible(matched):
            exact = {i: k for i, k in matched.items()
                     if any(fold(x) == folded for x in self._names[self._number[i]])}
            if len(exact) == 1:
                return exact
        return matched

    def _fuzzy(self, res: Resolution, keys: dict[str, str], banned: set[str]) -> None:
        th = self.thresholds
        best: dict[str, tuple[float, str]] = {}
        acronym_hits: dict[str, str] = {}
        ids, types_of = self._ids, self._types_of
        for t, key in keys.items():
            idx = self._index[t]
            if not idx.keys or len(key) - key.count(" ") < 3:
                continue
            for slot, s in idx.scores(key, idx.block(key, th), th.review).items():
                skey = idx.keys[slot]
                for n in idx.owners[slot]:
                    if types_of[n] == t:
                        i = ids[n]
                        if i not in banned:
                            old = best.get(i)
                            if old is None or s > old[0] or (s == old[0] and skey < old[1]):
                                best[i] = (s, skey)
            if " " not in key and 2 <= len(key) <= 8:
                for slot in _get(idx.by_acronym, key):
                    for n in self._owners(t, slot):
                        if self._ids[n] not in banned:
                            acronym_hits[self._ids[n]] = idx.keys[slot]
        if not best:
            if acronym_hits:
                self._fill(res, "acronym", acronym_hits)
                self._set(res, "review", None, "matches only as an acronym")
            else:
                res.reason = "no candidate in the searched types"
            return
        ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))
        top, (top_score, top_key) = ranked[0]
        second = ranked[1][1][0] if len(ranked) > 1 else 0.0
        self._fill(res, "fuzzy", {i: k for i, (_, k) in best.items()}, {i: s for i, (s, _) in best.items()})
        top_type = self.type_of(top) or ""
        mention_key = keys[top_type]
        close = {i for i, (s, _) in ranked if top_score - s < th.margin}
        elsewhere = [t for t in keys if t not in self._gates[top_type]
                     and top_key in self._index[t].by_key]
        if not self._compatible(close):
            self._set(res, "ambiguous", None, f"fuzzy matches in incompatible types {self._types(close)}")
        elif elsewhere:
            self._set(res, "ambiguous", None, f"{top_key!r} also names a {' and a '.join(elsewhere)}")
        elif top_score < th.accept:
            self._set(res, "review", None, f"best score {top_score:.1f} is below {th.accept:g}")
        elif top_score - second < th.margin:
            self._set(res, "review", None, f"best {top_score:.1f} and second {second:.1f} "
                      f"are closer than the margin {th.margin:g}")
        elif _DIGITS.findall(mention_key) != _DIGITS.findall(top_key):
            self._set(res, "review", None, f"numbers differ: {mention_key!r} vs {top_key!r}")
        elif not _typo_only(mention_key, top_key, self._index[top_type].by_word):
            self._set(res, "review", None, f"{mention_key!r} differs from {top_key!r} by more "
                      f"than a typo in one word")
        else:
            self._set(res, "resolved", top, f"fuzzy score {top_score:.1f}, margin {top_score - second:.1f}")

    def _decide(self, res: Resolution, stage: str, matched: dict[str, str]) -> Resolution:
        self._fill(res, stage, matched)
        if not self._compatible(matched):
            return self._set(res, "ambiguous", None, f"{stage} matches in incompatible types "
                             f"{self._types(matched)}")
        if len(matched) > 1:
            return self._set(res, "review", None, f"{len(matched)} entities tie at the {stage} stage")
        (only,) = matched
        return self._set(res, "resolved", only, f"unique {stage} match")

    def _fill(self, res: Resolution, stage: str, matched: dict[str, str],
              scores: dict[str, float] | None = None) -> None:
        res.stage = stage
        scores = scores or dict.fromkeys(matched, 100.0)
        if len(scores) == 1:
            ranked = list(scores.items())
        else:
            ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_CANDIDATES]
        res.score = ranked[0][1]
        type_of, label_of = self.type_of, self.label_of
        res.candidates = candidates = [(i, type_of(i) or "", s) for i, s in ranked]
        res.details = [(i, t, label_of(i), s, matched[i]) for i, t, s in candidates]

    @staticmethod
    def _set(res: Resolution, status: str, id: str | None, reason: str) -> Resolution:
        res.status, res.id, res.reason = status, id, reason
        return res

    def _types(self, ids: Iterable[str]) -> list[str]:
        return sorted({self.type_of(i) or "" for i in ids})

    def _compatible(self, ids: Iterable[str]) -> bool:
        types = self._types(ids)
        if len(types) == 1:
            return types[0] in self._gates.get(types[0], ())
        return all(b in self._gates.get(a, ()) for a in types for b in types)

    # -- questions and duplicates ---------------------------------------------------
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
                          if _DIGITS.findall(idx.keys[o]) == _DIGITS.findall(key)
                          and _typo_only(key, idx.keys[o], {})}
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
