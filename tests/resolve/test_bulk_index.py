"""The resolver's index built in bulk (``add_entities``) equals the one built an entity at a
time, lookups in between; the batch's fuzzy scoring equals the per-key one; the normaliser's
fast word split equals :func:`~kgbuild.graph.ids.split_words`. On real alias tables: GitHub
Linguist's languages and pipreqs' import names."""

from __future__ import annotations

import random
from collections import Counter

import pytest
import yaml
from conftest import SHARED

from kgbuild.graph.ids import split_words
from kgbuild.resolve.aliases import AliasRegistry
from kgbuild.resolve.nametable import name_table
from kgbuild.resolve.normalize import Normalizer
from kgbuild.resolve.resolver import Resolver
from kgbuild.schema.loader import load_schema

pytestmark = pytest.mark.corpus
SCHEMA = load_schema()
INDEX_FIELDS = ("keys", "compacts", "sorted_keys", "owners", "by_key", "by_compact", "by_word",
                "by_acronym")


def _languages() -> list[tuple]:
    """Linguist's languages as entities: ``(id, type, name, aliases)``; every fifth one added
    first as a Component, then again as a Library (its type narrows, its index moves)."""
    languages = yaml.safe_load((SHARED / "aliases" / "linguist_languages.yml").read_text())
    rows: list[tuple] = []
    for k, (name, spec) in enumerate(languages.items()):
        entity_id = f"component:default/{k}"
        if k % 5 == 0:
            rows.append((entity_id, "Component", name))
        rows.append((entity_id, "Library", name, spec.get("aliases") or []))
    return rows


def _imports() -> list[tuple]:
    """pipreqs' import names as Libraries, each with its distribution's name as an alias
    (several import names share one: their entities share the key)."""
    lines = (SHARED / "aliases" / "pipreqs_mapping.txt").read_text().splitlines()
    return [(f"component:default/py-{k}", "Library", name, [dist])
            for k, (name, _, dist) in enumerate(x.partition(":") for x in lines) if dist]


def _mentions(rows: list[tuple], rng: random.Random) -> list[tuple[str, str | None]]:
    """Names and aliases as they are, case-changed, with a letter dropped or doubled."""
    out: list[tuple[str, str | None]] = []
    for row in rows:
        for name in (row[2], *(row[3] if len(row) > 3 else ())):
            i = rng.randrange(len(name))
            typo = name[:i] + name[i + 1:] if rng.random() < 0.5 else name[:i] + name[i:]
            kind = rng.choice([None, "Library", "Component", "Service"])
            out += [(name, kind), (name.upper(), None), (typo, kind)]
    return out


def _index(r: Resolver) -> dict:
    return {t: {f: getattr(idx, f) for f in INDEX_FIELDS} for t, idx in r._index.items()}


def _owned_keys(r: Resolver) -> set[tuple[str, str, str]]:
    """(type, key, ID) of every entity under each key of its type."""
    return {(t, idx.keys[slot], r._ids[n]) for t, idx in r._index.items()
            for slot, owners in idx.owners.items() for n in owners if r._types_of[n] == t}


@pytest.mark.slow
def test_bulk_index_equals_the_entity_by_entity_one_on_linguist_and_pipreqs():
    rows = _languages() + _imports()
    mentions = _mentions(rows, random.Random(7))
    words = Counter(w for name, _ in mentions[::3] for w in set(Normalizer().words(name)))
    common = [w for w, _ in words.most_common(6)]  # (blocks of two common words: cached sets)
    probes = [(f"{a} {b}", "Library") for a in common for b in common if a < b]
    registry = AliasRegistry()
    bulk = Resolver(SCHEMA, registry)
    bulk.add_entities(rows)
    single = Resolver(SCHEMA, registry)
    for k, row in enumerate(rows):
        single.add_entity(*row)
        if k % 50 == 0:  # (lookups in between make the views and caches a later add resets)
            single.resolve_many(probes + mentions[k * 3:k * 3 + 150])
    assert _index(bulk) == _index(single)
    table = name_table(((single._ids[n], single._types_of[n], single._labels[n], names)
                        for n, names in enumerate(single._names)), SCHEMA)
    assert _owned_keys(single) == {tuple(e.split("\0")[1:]) for e in table if e[0] == "K"}
    for idx in single._index.values():  # (caches made between adds hold what is there now)
        assert all(idx._common[w] == set(idx.by_word[w]) for w in idx._common)
        cached, idx._views = idx._views, None
        assert cached in (None, idx.views())
    assert (bulk._ids, bulk._types_of, bulk._labels, bulk._names, bulk._refs) == (
        single._ids, single._types_of, single._labels, single._names, single._refs)
    assert [x.explain() for x in bulk.resolve_many(mentions)] == \
        [x.explain() for x in single.resolve_many(mentions)]


@pytest.mark.slow
def test_batch_scores_equal_per_key_scores_on_linguist_and_pipreqs():
    """scores_many (sorted neighbourhoods gathered as arrays, pairs too short or too long for
    the cutoff dropped unscored) gives what block and scores give key by key."""
    r = Resolver(SCHEMA, AliasRegistry())
    r.add_entities(_languages() + _imports())
    idx, th = r._index["Library"], r.thresholds
    rng = random.Random(3)
    keys = sorted({r.normalizer.key(m, "Library") for m, _ in _mentions(_languages(), rng)} - {""})
    assert len(keys) > 2000
    for cutoff in (th.review, 60.0, 90.5):
        batch = idx.scores_many(keys, th, cutoff)
        assert batch == [idx.scores(k, idx.block(k, th), cutoff) for k in keys]
    assert sum(map(len, batch)) > 1000


def test_the_fast_word_split_equals_split_words_on_real_names():
    languages = yaml.safe_load((SHARED / "aliases" / "linguist_languages.yml").read_text())
    names = [x for name, spec in languages.items() for x in (name, *(spec.get("aliases") or ()))]
    names += (SHARED / "aliases" / "pipreqs_mapping.txt").read_text().replace(":", "\n").split()
    names += [x.upper() for x in names] + [x.title() for x in names]
    plain = Normalizer(abbreviations={}, plurals={}, singularize=False)
    assert [plain.words(x) for x in names] == [split_words(x) for x in names]
