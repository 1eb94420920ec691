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
3. ``alias``: the curated alias table and accepted decisions of :mod:`kgbuild.resolve.aliases`;
4. ``normalized``: equal keys (:mod:`kgbuild.resolve.normalize`), the type suffix stripped per
   candidate type;
5. ``normalized`` again for a version-suffixed name (``requests-2.32.3``): its name part,
   among package entities only;
6. ``fuzzy`` (never for a registry package's own mention: its name is exact): candidates blocked by rare words, sorted neighbourhoods and acronyms, scored
   with rapidfuzz; resolved only above a threshold *and* a margin over the second-best entity.

A fuzzy match resolves only when the keys differ by word order and one misspelt word
(:func:`~kgbuild.resolve.blocking.typo_only`); otherwise, and for ties, near-threshold
scores, differing numbers, acronym-only matches and names that split into words differently
while spelling part of a longer name, the mention goes to ``review``. Fuzzy matches are never
indexed, so they cannot chain. Results do not depend on the order entities were added.

The parts: :mod:`~kgbuild.resolve.results` (what a resolution answers, the thresholds),
:mod:`~kgbuild.resolve.blocking` (each type's name index and the fuzzy stage's candidates),
this module (the stages), :mod:`~kgbuild.resolve.batch` (a batch on several cores),
:mod:`~kgbuild.resolve.mentions` (mentions in free text) and
:mod:`~kgbuild.resolve.duplicates` (existing entities that look like one).
"""

from __future__ import annotations

import os
from typing import Iterable

from rapidfuzz.distance import OSA

from ..errors import KgbuildError
from ..graph.ids import entity_id
from ..graph.model import KnowledgeGraph, Node
from ..io.collector import gc_paused
from ..schema.model import Schema
from .aliases import AliasRegistry
from .batch import resolve_forked
from .blocking import DIGITS, TypeIndex, get_multi, put_multi, typo_only
from .duplicates import DuplicateSearch
from .ecosystem import ecosystem, is_package_purl, may_be_same, split_version
from .mentions import MentionSearch
from .normalize import Normalizer, acronym, canonical_ref, fold
from .results import MAX_CANDIDATES, Resolution, Thresholds

BATCH = 16384  # mentions whose fuzzy stages resolve_many runs together (bounds the memory)
_NONE: frozenset = frozenset()  # no IDs (no banned ones, no ID hits)


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


class Resolver(MentionSearch, DuplicateSearch):
    """Resolves mentions to the IDs of known entities; see the module docstring. Also finds
    mentions in free text (:class:`~kgbuild.resolve.mentions.MentionSearch`) and existing
    entities that look like one (:class:`~kgbuild.resolve.duplicates.DuplicateSearch`)."""

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
        self._index: dict[str, TypeIndex] = {t: TypeIndex() for t in schema.node_types}
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
        self._add(((id, type, label, aliases),))

    def add_entities(self, entities: Iterable[tuple]) -> None:
        """:meth:`add_entity` for each ``(id, type, label)`` or ``(id, type, label, aliases)``,
        with the cyclic garbage collector paused (indexing creates no cycles)."""
        with gc_paused(promote=True):
            self._add(entities)

    def _add(self, entities: Iterable[tuple]) -> None:
        """Number and reference each entity, then index all their names at once
        (:meth:`_index_names`); an ID added again first has the names before it indexed."""
        names: list[tuple[int, str]] = []  # (entity number, name) to index, in order
        for id, type, label, *rest in entities:
            aliases = rest[0] if rest else ()
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
                    names.append((n, canon.rsplit("/", 1)[-1]))
            else:
                self._index_names(names)
                names = []
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
                names.append((n, name))
        self._index_names(names)

    def _index_names(self, names: list[tuple[int, str]]) -> None:
        """Index each ``(entity number, name)`` not indexed yet: its key under the entity's
        type, a type's keys added together (:meth:`~kgbuild.resolve.blocking.TypeIndex.add`)."""
        words_of, strip = self.normalizer.words, self.normalizer.strip_suffix
        own, types_of = self._names, self._types_of
        entries: dict[str, list[tuple[str, int, tuple[str, ...]]]] = {}
        last = None  # the entity, type and words of the name indexed last
        for n, name in names:
            if not name or name in own[n]:
                continue
            own[n] += (name,)
            type_name = types_of[n]
            words = words_of(name)
            if (n, type_name, words) == last:  # (an ID's name part and its label alike)
                continue
            last = (n, type_name, words)
            stripped = strip(words, type_name)
            if not stripped:
                continue
            if len(words) < 2:
                acronyms = ()
            elif stripped is words:
                acronyms = ("".join([w[0] for w in words]),)
            else:
                acronyms = ("".join([w[0] for w in words]), acronym(stripped))
            entries.setdefault(type_name, []).append((" ".join(stripped), n, acronyms))
        for type_name, found in entries.items():
            idx = self._index[type_name]
            if not idx.keys:
                self._live.clear()
            idx.add(found)

    def _reindex(self, n: int) -> None:
        """Index an entity whose type narrowed under its new type (lookups skip stale keys)."""
        names, self._names[n] = self._names[n], ()
        self._index_names([(n, name) for name in names])

    def _index_ref(self, ref: str, id: str) -> str | None:
        """Index ``id`` under ``ref`` and its canonical forms; returns the canonical form."""
        put_multi(self._refs, ref, id)
        canon = canonical_ref(ref)
        if canon:
            if canon != ref:
                put_multi(self._refs, canon, id)
            if not canon.startswith("pkg:"):
                put_multi(self._refs, "*:" + canon.split(":", 1)[1], id)
        return canon

    def _add_alias(self, type_name: str, cid: str, alias: str) -> None:
        folded = fold(alias)
        put_multi(self._aliases, (type_name, folded), cid)
        pairs = self._alias_folds.setdefault(folded, [])
        if (type_name, cid) not in pairs:
            pairs.append((type_name, cid))
        self._registry_types.setdefault(cid, type_name)

    def _owners(self, type_name: str, slot: int) -> list[int]:
        """Entities of ``type_name`` owning a slot of its index (not those narrowed since)."""
        return [n for n in get_multi(self._index[type_name].owners, slot)
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
        return self._start(mention, type, own_id, None)

    def _start(self, mention: str, type: str | None, own_id: str | None,
               deferred: list | None) -> Resolution:
        """:meth:`resolve`; with ``deferred`` a fuzzy stage is left for :meth:`_fuzzy_many`."""
        type_name = self._type(type) if type else None
        folded = fold(mention)
        rejected = self._rejected.get(folded)
        banned = set(rejected) if rejected else _NONE
        if own_id is not None:
            banned |= {i for pair in self.registry.distinct if own_id in pair for i in pair} - {own_id}
            if ecosystem(own_id):
                banned = _Excluded(banned, own_id, mention, self)
        res = self._resolve(mention, folded, type_name, self._gates[type_name], banned,
                            deferred=deferred)
        res.own_id = own_id
        return res

    def resolve_many(self, mentions: Iterable[str | tuple], *, workers: int = 1) -> list[Resolution]:
        """Resolve a batch: each item a mention, ``(mention, type)`` or ``(mention, type, own_id)``.

        The results equal ``[resolve(...) for ...]``, in order. The mentions go through the
        stages up to the fuzzy one each; the fuzzy stage then scores each type's keys at once
        (:meth:`~kgbuild.resolve.blocking.TypeIndex.scores_many`). With ``workers`` > 1 (and
        ``os.fork`` available) the batch is split round-robin over that many processes: this
        one and ``workers - 1`` forked children that share the index copy-on-write and send
        their results back pickled. Worth it from a few thousand mentions up.
        """
        items = [(m, None, None) if isinstance(m, str) else (tuple(m) + (None, None))[:3]
                 for m in mentions]
        workers = max(1, min(workers, len(items) // 500 or 1))
        if workers == 1 or not hasattr(os, "fork"):
            with gc_paused(promote=True):
                return self._resolve_batch(items)
        for idx in self._index.values():  # built once here, not in every child
            if idx.keys:
                idx.prepare()
        with gc_paused(promote=True):
            return resolve_forked(self._resolve_batch, items, workers)

    def _resolve_batch(self, items: list[tuple]) -> list[Resolution]:
        out: list[Resolution] = []
        for i in range(0, len(items), BATCH):
            deferred: list = []
            out += [self._start(m, t, o, deferred) for m, t, o in items[i:i + BATCH]]
            self._fuzzy_many(deferred)
        return out

    def _resolve(self, mention: str, folded: str, type_name: str | None, gate: tuple[str, ...],
                 banned: set[str], versions: bool = True, deferred: list | None = None
                 ) -> Resolution:
        res = Resolution(mention, type_name, "new", searched=gate)
        if not folded:
            res.reason = "empty mention"
            return res
        hits = self._id_hits(mention, gate, banned)
        if hits:
            return self._decide(res, "id", {i: mention for i in hits})
        found = self._alias_folds.get(folded)
        if found:
            if isinstance(banned, _Excluded):
                banned.curated = True
            hits = {i for t, i in found
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
            inner = self._resolve(name, fold(name), type_name, gate, banned, versions=False,
                                  deferred=[])  # (its fuzzy stage would go unread)
            hits = {i: key for i, _, _, _, key in inner.details
                    if inner.stage in ("id", "alias", "normalized") and ecosystem(i)}
            if hits:
                self._decide(res, "normalized", hits)
                res.reason = f"{name!r} at version {version}: {res.reason}"
                return res
        if isinstance(banned, _Excluded) and is_package_purl(banned.own):
            res.reason = "a registry package matches by exact names only, never a look-alike"
        else:
            keys = self._keys(words, gate, misspelt=True)
            if deferred is not None:
                deferred.append((res, keys, banned))
                return res
            self._fuzzy(res, keys, banned)
        return self._suggest(res)

    @staticmethod
    def _suggest(res: Resolution) -> Resolution:
        """A typed mention left new gets the ID it would have as a new entity."""
        if res.status == "new" and res.type:
            res.suggested_id = entity_id(res.type, res.mention)
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
        if found is None and ":" not in mention and "/" not in mention:
            return _NONE  # a plain name (most mentions)
        ids = set() if found is None else set(found) if type(found) is tuple else {found}
        canon = canonical_ref(mention) if not ids else None
        if not ids and not canon:
            return ids
        if canon:
            ids = set(get_multi(self._refs, canon))
            if not ids and not canon.startswith("pkg:"):
                kind, rest = canon.split(":", 1)
                if kind.capitalize() in self.schema.node_types or kind.upper() in self.schema.node_types:
                    compatible = self.schema.compatible_types(self._type(kind))
                    gate = tuple(t for t in gate if t in compatible)
                ids = set(get_multi(self._refs, "*:" + rest))
        return {i for i in ids if i not in banned and self.type_of(i) in gate}

    def _normalized_hits(self, keys: dict[str, str], folded: str, banned: set[str]) -> dict[str, str]:
        """IDs whose key equals the mention's, narrowed to exact name matches on one branch."""
        matched: dict[str, str] = {}
        ids, types_of, variants = self._ids, self._types_of, self.normalizer.compact_variants
        compact = last = None
        for t, key in keys.items():
            if not key:
                continue
            idx = self._index[t]
            if " " in key:  # (its one compact form holds the key's own slot too)
                if key is not last:
                    compact, last = key.replace(" ", ""), key
                found = idx.by_compact.get(compact, ())
            else:
                forms = variants(key, t)
                found = idx.by_compact.get(key, ()) if len(forms) == 1 else idx.exact(key, forms)
            for slot in found:
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

    def _fuzzy_many(self, deferred: list[tuple]) -> None:
        """The fuzzy stage of the ``(resolution, keys, banned)`` of a batch: each type's
        distinct keys scored at once."""
        th = self.thresholds
        asked: dict[str, dict[str, None]] = {}  # type -> its keys to score, once each
        for _, keys, _ in deferred:
            for t, key in keys.items():
                if self._index[t].keys and len(key) - key.count(" ") >= 3:
                    asked.setdefault(t, {})[key] = None
        scored = {t: dict(zip(ks, self._index[t].scores_many(list(ks), th, th.review)))
                  for t, ks in asked.items()}
        for res, keys, banned in deferred:
            self._fuzzy(res, keys, banned, scored)
            self._suggest(res)

    def _fuzzy(self, res: Resolution, keys: dict[str, str], banned: set[str],
               scored: dict[str, dict[str, dict[int, float]]] | None = None) -> None:
        """The fuzzy stage; ``scored``: each type's keys' scores, made for a batch."""
        th = self.thresholds
        best: dict[str, tuple[float, str]] = {}
        acronym_hits: dict[str, str] = {}
        ids, types_of = self._ids, self._types_of
        for t, key in keys.items():
            idx = self._index[t]
            if not idx.keys or len(key) - key.count(" ") < 3:
                continue
            found = scored[t][key] if scored is not None else \
                idx.scores(key, idx.block(key, th), th.review)
            for slot, s in found.items():
                skey = idx.keys[slot]
                for n in idx.owners[slot]:
                    if types_of[n] == t:
                        i = ids[n]
                        if i not in banned:
                            old = best.get(i)
                            if old is None or s > old[0] or (s == old[0] and skey < old[1]):
                                best[i] = (s, skey)
            if " " not in key and 2 <= len(key) <= 8:
                for slot in get_multi(idx.by_acronym, key):
                    skey = idx.keys[slot]
                    for n in self._owners(t, slot):
                        i = self._ids[n]  # (several keys with the acronym: the smallest)
                        if i not in banned and skey < acronym_hits.get(i, "\uffff"):
                            acronym_hits[i] = skey
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
        res.stage, res.score = "fuzzy", top_score
        self._fill_ranked(res, ranked[:MAX_CANDIDATES])
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
        elif DIGITS.findall(mention_key) != DIGITS.findall(top_key):
            self._set(res, "review", None, f"numbers differ: {mention_key!r} vs {top_key!r}")
        elif not typo_only(mention_key, top_key, self._index[top_type].by_word):
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
        if scores is None and len(matched) == 1:  # (most resolutions)
            ((i, key),) = matched.items()
            t = self.type_of(i) or ""
            res.score = 100.0
            res.candidates = [(i, t, 100.0)]
            res.details = [(i, t, self.label_of(i), 100.0, key)]
            return
        scores = scores or dict.fromkeys(matched, 100.0)
        if len(scores) == 1:
            ranked = list(scores.items())
        else:
            ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_CANDIDATES]
        res.score = ranked[0][1]
        self._fill_ranked(res, [(i, (s, matched[i])) for i, s in ranked])

    def _fill_ranked(self, res: Resolution, ranked: list[tuple[str, tuple[float, str]]]) -> None:
        """A resolution's candidates and details from ``(id, (score, matched key))``, best first."""
        type_of, label_of = self.type_of, self.label_of
        res.candidates = candidates = [(i, type_of(i) or "", s) for i, (s, _) in ranked]
        res.details = [(i, t, label_of(i), s, k)
                       for (i, t, s), (_, (_, k)) in zip(candidates, ranked)]

    @staticmethod
    def _set(res: Resolution, status: str, id: str | None, reason: str) -> Resolution:
        res.status, res.id, res.reason = status, id, reason
        return res

    def _types(self, ids: Iterable[str]) -> list[str]:
        return sorted({self.type_of(i) or "" for i in ids})

    def _compatible(self, ids: Iterable[str]) -> bool:
        if len(ids) == 1:  # (a dict or set of IDs)
            (i,) = ids
            t = self.type_of(i) or ""
            return t in self._gates.get(t, ())
        types = self._types(ids)
        if len(types) == 1:
            return types[0] in self._gates.get(types[0], ())
        return all(b in self._gates.get(a, ()) for a in types for b in types)
