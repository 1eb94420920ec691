"""A resolver over a name table answers as the in-memory resolver over the same entities
(every stage, free-text mentions, registries), and a table changed entity by entity equals
the table made from scratch."""

from __future__ import annotations

import random

import pytest
import yaml
from conftest import FIXTURE_CATALOG, REPO

from kgbuild.project.pipeline import build_graph
from kgbuild.resolve.aliases import AliasRegistry
from kgbuild.resolve.nametable import name_table, table_changes, table_resolver
from kgbuild.resolve.resolver import Resolver
from kgbuild.schema.loader import load_schema

SCHEMA = load_schema()
ALIASES = REPO / "fixtures" / "aliases"


def _entities_of(kg) -> dict[str, tuple]:
    return {n.id: (n.type, n.label, sorted({*n.aliases, *n.attributes.get("title", ())}))
            for n in kg.nodes.values()}


def _catalog() -> dict[str, tuple]:
    rows = yaml.safe_load((ALIASES / "catalog.yaml").read_text())
    return {i: (t, label, []) for i, t, label in rows}


def _pair(entities: dict, registry=None):
    memory = Resolver(SCHEMA, registry)
    memory.add_entities((i, *e) for i, e in entities.items())
    table = name_table(((i, *e) for i, e in entities.items()), SCHEMA)
    return memory, table_resolver(SCHEMA, table, entities.get, registry)


def _mentions(entities: dict, rng: random.Random) -> list[tuple[str, str | None]]:
    names = [n for i, (t, label, more) in entities.items() for n in (i, label, *more)]
    out = []
    for name in rng.sample(names, min(len(names), 150)):
        typo = list(name)
        if len(typo) > 4:
            j = rng.randrange(1, len(typo) - 1)
            typo[j], typo[j + 1] = typo[j + 1], typo[j]
        for mention in (name, "".join(typo), name.upper(), name.replace("-", " "),
                        name + " service", name.split(" ")[0], f"{name}-2.3.1"):
            out.append((mention, rng.choice([None, None, *sorted(SCHEMA.node_types)])))
    return out + [("", None), ("CIS", "Service"), ("PyYaml", "Library"), ("api:payments", None)]


@pytest.fixture(scope="module")
def fixture_graph():
    return build_graph([FIXTURE_CATALOG], timestamp=0, validate=False).graph


@pytest.mark.parametrize("which", ["catalog", "aliases", "aliases-registry"])
def test_every_resolution_and_mention_is_the_in_memory_resolvers(which, fixture_graph):
    entities = _entities_of(fixture_graph) if which == "catalog" else _catalog()
    registry = AliasRegistry.load(ALIASES / "aliases.yaml") if which.endswith("registry") else None
    memory, table = _pair(entities, registry)
    for mention, type_name in _mentions(entities, random.Random(7)):
        assert table.resolve(mention, type_name).explain() == \
            memory.resolve(mention, type_name).explain(), (mention, type_name)
    mentions = _mentions(entities, random.Random(7))
    assert [x.explain() for x in table.resolve_many(mentions)] == \
        [x.explain() for x in memory.resolve_many(mentions)]
    for i in list(entities)[:40]:
        own = table.resolve(entities[i][1], entities[i][0], own_id=i)
        assert own.explain() == memory.resolve(entities[i][1], entities[i][0], own_id=i).explain()
    for question in ("Which service depends on the library maintained by the team that owns "
                     "Payments API?", "Who owns Pricing SDK and the CIS?", "paymnets gateway ops"):
        assert [m.to_dict() for m in table.find_mentions(question)] == \
            [m.to_dict() for m in memory.find_mentions(question)]


def test_a_table_changed_entity_by_entity_equals_one_made_from_scratch(fixture_graph):
    rng = random.Random(3)
    entities = {**_entities_of(fixture_graph), **_catalog()}
    table = name_table(((i, *e) for i, e in entities.items()), SCHEMA)
    ids = sorted(entities)
    for _ in range(12):
        before, after = {}, {}
        for i in rng.sample(ids, 4):
            before[i] = entities.get(i)
            t, label, more = entities.get(i) or ("Component", i, [])
            change = rng.choice(["rename", "drop", "alias", "retype"])
            after[i] = (None if change == "drop" else
                        (t, label + " v2", more) if change == "rename" else
                        (t, label, sorted({*more, label.split(" ")[0] + " x"})) if change == "alias"
                        else ("Library" if t != "Library" else "Service", label, more))
        fresh = f"component:default/new-{rng.randrange(10**6)}"
        before[fresh], after[fresh] = None, ("Service", "Payments Gateway Ops", ["pgo"])
        removed, added = table_changes(table, before, after, SCHEMA)
        table = sorted((set(table) - removed) | added)
        for i, e in after.items():
            if e is None:
                entities.pop(i, None)
            else:
                entities[i] = e
        assert table == name_table(((i, *e) for i, e in entities.items()), SCHEMA)
        ids = sorted(entities)
