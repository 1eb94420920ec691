"""The resolver's name index as one sorted table of strings, for a read model to keep on disk.

A resolver over the table (:func:`table_resolver`) gives what :meth:`Resolver.from_graph`
gives over the same entities, and reads only the entries a mention's lookups touch: each
lookup is a binary search for a prefix. Every entry is fields joined by NUL, a letter first:

======  =========================  ==================================================
letter  fields                     what the in-memory index holds the same way
======  =========================  ==================================================
``R``   ref, ID                    an entity under its ID, canonical forms, ``pkg:`` names
``K``   type, key, ID              the name keys of an entity (its index slot's owners)
``A``   type, acronym, key, ID     the acronyms of an entity's names
``W``   type, word, key            the words of a key (postings)
``C``   type, compact, key         a key without spaces
``V``   type, word                 a type's vocabulary, and (``U``) each word reversed
``D``   type, compact              a type's compact keys, and (``E``) each reversed
======  =========================  ==================================================

The entries of an entity follow from its ID, type, label and names alone
(:func:`entity_entries`); the rest from the keys that have an owner. So a change of a few
entities is a few entries removed and added (:func:`table_changes`), found with lookups in
the old table: nothing is read per entity of the whole graph. A change of the entries or of
the rules making them (normalisation, keys) bumps the read model's ``FORMAT``
(:mod:`kgbuild.store.readmodel`), so saved tables are made again.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence

from ..schema.model import Schema
from .aliases import AliasRegistry
from .blocking import TypeIndex
from .ecosystem import is_package_purl
from .normalize import Normalizer, acronym, canonical_ref
from .resolver import Resolver

Entity = tuple[str, str, Sequence[str]]  # type, label, names (aliases and titles)


def entity_names(node_id: str, label: str, names: Iterable[str]) -> tuple[str, ...]:
    """The names an entity is indexed under: the name part of a reference-shaped ID, its label
    and its other names, each once."""
    canon = canonical_ref(node_id)
    out: list[str] = [canon.rsplit("/", 1)[-1]] if canon else []
    for name in (label, *names):
        if name and name not in out:
            out.append(name)
    return tuple(out)


def package_of(node_id: str, label: str, names: Iterable[str]) -> str | None:
    """The purl an entity whose ID is none goes by (its first ``pkg:`` name's), else None."""
    if is_package_purl(node_id):
        return None
    for name in (label, *names):
        canon = canonical_ref(name) if name.startswith("pkg:") else None
        if canon and canon.startswith("pkg:"):
            return canon
    return None


def _refs(ref: str) -> list[str]:
    canon = canonical_ref(ref)
    if not canon:
        return [ref]
    return [ref, canon] + ([] if canon.startswith("pkg:") else ["*:" + canon.split(":", 1)[1]])


def entity_entries(norm: Normalizer, node_id: str, type_name: str, label: str,
                   names: Sequence[str]) -> set[str]:
    """The ``R``, ``K`` and ``A`` entries of one entity."""
    out = {f"R\0{r}\0{node_id}" for r in _refs(node_id)}
    for name in (label, *names):
        if name.startswith("pkg:"):
            out.update(f"R\0{r}\0{node_id}" for r in _refs(name))
    for name in entity_names(node_id, label, names):
        words = norm.words(name)
        stripped = norm.strip_suffix(words, type_name)
        if not stripped:
            continue
        key = " ".join(stripped)
        out.add(f"K\0{type_name}\0{key}\0{node_id}")
        if len(words) >= 2:
            acronyms = {"".join([w[0] for w in words])}
            if stripped is not words:
                acronyms.add(acronym(stripped))
            out.update(f"A\0{type_name}\0{a}\0{key}\0{node_id}" for a in acronyms if len(a) >= 2)
    return out


def key_entries(type_name: str, key: str) -> set[str]:
    """The ``W`` and ``C`` entries of a key that has an owner."""
    split = key.split()
    out = {f"W\0{type_name}\0{w}\0{key}" for w in (split if len(split) == 1 else set(split))}
    out.add(f"C\0{type_name}\0{key.replace(' ', '')}\0{key}")
    return out


def _word_entries(type_name: str, word: str) -> set[str]:
    return {f"V\0{type_name}\0{word}", f"U\0{type_name}\0{word[::-1]}"}


def _compact_entries(type_name: str, compact: str) -> set[str]:
    return {f"D\0{type_name}\0{compact}", f"E\0{type_name}\0{compact[::-1]}"}


def _derived(entry: str) -> tuple[str, Callable[[str, str], set[str]], str, str]:
    """What entries a ``K``, ``W`` or ``C`` entry stands for while some entry shares its
    prefix: (the prefix, the entries' maker and its arguments)."""
    letter, t, value, _ = entry.split("\0", 3)
    maker = {"K": key_entries, "W": _word_entries, "C": _compact_entries}[letter]
    return f"{letter}\0{t}\0{value}\0", maker, t, value


def name_table(entities: Iterable[tuple[str, str, str, Sequence[str]]], schema: Schema) -> list[str]:
    """The sorted table of ``(ID, type, label, names)`` entities."""
    norm = Normalizer.for_schema(schema)
    entries: set[str] = set()
    for entity in entities:
        entries |= entity_entries(norm, *entity)
    for level in ("K", "W", "C"):
        found = {_derived(e)[1:] for e in entries if e[0] == level}
        for maker, t, value in found:
            entries |= maker(t, value)
    return sorted(entries)


def table_changes(table: Sequence[str], before: dict[str, Entity | None],
                  after: dict[str, Entity | None], schema: Schema) -> tuple[set[str], set[str]]:
    """The entries to remove from and add to ``table`` (sorted, of the entities ``before``)
    when the entities ``before`` names (None: none) become those of ``after``."""
    norm = Normalizer.for_schema(schema)
    old: set[str] = set()
    new: set[str] = set()
    for node_id, entity in before.items():
        if entity is not None:
            old |= entity_entries(norm, node_id, *entity)
    for node_id, entity in after.items():
        if entity is not None:
            new |= entity_entries(norm, node_id, *entity)
    removed, added = old - new, new - old
    for level in ("K", "W", "C"):  # an entry stands while some owner of its prefix does
        touched = {_derived(e) for e in removed | added if e[0] == level}
        for prefix, maker, t, value in touched:
            lo, hi = prefix_range(table, prefix)
            had = hi > lo
            left = (hi - lo - sum(1 for e in removed if e.startswith(prefix))
                    + sum(1 for e in added if e.startswith(prefix)))
            if had and not left:
                removed |= maker(t, value)
            elif left and not had:
                added |= maker(t, value)
    return removed, added


def prefix_range(table: Sequence[str], prefix: str) -> tuple[int, int]:
    """Where the entries starting with ``prefix`` (which ends with NUL) are in ``table``."""
    return bisect_left(table, prefix), bisect_left(table, prefix[:-1] + "\1")


class _Range(Sequence):
    """The entries of ``table`` under ``prefix``, the prefix cut off (sorted, indexable)."""

    def __init__(self, table: Sequence[str], prefix: str):
        self.table, self.cut = table, len(prefix)
        self.lo, self.hi = prefix_range(table, prefix)

    def __len__(self) -> int:
        return self.hi - self.lo

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self.table[self.lo + i][self.cut:]

    def __iter__(self):
        return (self.table[j][self.cut:] for j in range(self.lo, self.hi))


def _values(table: Sequence[str], prefix: str) -> tuple[str, ...]:
    """The last fields of the entries under ``prefix`` (each once, in order)."""
    return tuple(dict.fromkeys(v.split("\0")[0] for v in _Range(table, prefix) if v))


class _Lookup:
    """A read-only mapping ``key -> value`` computed by ``find`` (None: absent)."""

    def __init__(self, find: Callable[[str], object]):
        self.find = find

    def get(self, key, default=None):
        found = self.find(key)
        return default if found is None else found

    def __getitem__(self, key):
        found = self.find(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key) -> bool:
        return self.find(key) is not None


class _Slots:
    """A type's keys as the in-memory index's slot sequences see them: a slot is its key."""

    def __init__(self, table: Sequence[str], prefix: str, of: Callable[[str], str] = str):
        self.table, self.prefix, self.of = table, prefix, of

    def __getitem__(self, slot: str) -> str:
        return self.of(slot)

    def __bool__(self) -> bool:
        lo, hi = prefix_range(self.table, self.prefix)
        return hi > lo

    def __iter__(self):
        raise TypeError("a name table's keys are looked up, not listed: use an in-memory "
                        "Resolver to list every key")


def _sorted_words(key: str) -> str:
    split = key.split()
    return key if len(split) == 1 else " ".join(sorted(split))


class TableTypeIndex(TypeIndex):
    """One type's :class:`~kgbuild.resolve.blocking.TypeIndex` read from a name table: the
    same lookups and blocking, each a binary search (read only)."""

    def __init__(self, table: Sequence[str], type_name: str):  # (no super(): nothing is held)
        t = type_name
        self.keys = _Slots(table, f"K\0{t}\0")
        self.compacts = _Slots(table, f"K\0{t}\0", lambda k: k.replace(" ", ""))
        self.sorted_keys = _Slots(table, f"K\0{t}\0", _sorted_words)
        self.owners = _Lookup(lambda k: _values(table, f"K\0{t}\0{k}\0") or None)
        self.by_key = _Lookup(lambda k: k if _values(table, f"K\0{t}\0{k}\0") else None)
        self.by_compact = _Lookup(lambda c: _values(table, f"C\0{t}\0{c}\0") or None)
        self.by_word = _Lookup(lambda w: _Range(table, f"W\0{t}\0{w}\0") or None)
        self.by_acronym = _Lookup(lambda a: _values(table, f"A\0{t}\0{a}\0") or None)
        compacts, rcompacts = _Range(table, f"D\0{t}\0"), _Range(table, f"E\0{t}\0")
        self._views = (compacts, rcompacts, _Range(table, f"V\0{t}\0"), _Range(table, f"U\0{t}\0"),
                       _Mapped(compacts, self.by_compact.__getitem__),
                       _Mapped(rcompacts, lambda rc: self.by_compact[rc[::-1]]))
        self._common = {}

    def scores_many(self, keys: list[str], th, cutoff: float) -> list[dict[str, float]]:
        """One key at a time: a table's lookups read only what each key touches."""
        return [self.scores(k, self.block(k, th), cutoff) for k in keys]

    def prepare(self) -> None:
        """Nothing to make: the table is read as it is."""


class _Mapped(Sequence):
    """``items`` with ``of`` applied to each one read."""

    def __init__(self, items: Sequence, of: Callable):
        self.items, self.of = items, of

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.of(x) for x in self.items[i]]
        return self.of(self.items[i])


def table_resolver(schema: Schema, table: Sequence[str],
                   entity: Callable[[str], Entity | None],
                   registry: AliasRegistry | None = None) -> Resolver:
    """A resolver over a name table (the entities' ``entity(ID)``: type, label, names; None
    for an ID that is no entity): what :meth:`Resolver.from_graph` of the same entities
    gives, read lookup by lookup. Read only: entities are not added to it."""
    r = Resolver(schema, registry)
    known: dict[str, Entity | None] = {}

    def get(node_id: str) -> Entity | None:
        if node_id not in known:
            known[node_id] = entity(node_id)
        return known[node_id]

    def column(of: Callable[[str, Entity], object]) -> _Lookup:
        return _Lookup(lambda i: None if get(i) is None else of(i, get(i)))

    r._ids = _Lookup(lambda i: i)  # an entity's number is its ID
    r._number = column(lambda i, e: i)
    r._types_of = column(lambda i, e: e[0])
    r._labels = column(lambda i, e: e[1] or i)
    r._names = column(lambda i, e: entity_names(i, e[1], e[2]))
    r._package = column(lambda i, e: package_of(i, e[1], e[2]))
    r._refs = _Lookup(lambda ref: tuple(v for v in _Range(table, f"R\0{ref}\0")
                                        if "\0" not in v) or None)
    r._index = {t: TableTypeIndex(table, t) for t in schema.node_types}
    return r
