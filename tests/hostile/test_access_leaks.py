"""A public caller learns nothing about hidden entities, whatever route it asks through.

Random small graphs (entities with or without access labels, defined in hidden or public
documents or nowhere, assertions whose evidence and descriptions name random entities, a
registry with aliases and a review queue naming them), asked by a public principal through
every route: seeds by ID, by name, by a question's mentions, semantic seeds (the real
matcher on an in-process embeddings client that records what it is sent), the traversal
JSON and text, ``resolve explain`` and ``resolve review``. Two properties:

* no output names a hidden entity (each entity has a word of its own, so "names" is a
  plain substring test on the output, with the caller's own query taken out);
* non-interference: every answer equals the answer on a graph where the hidden entities
  and documents never existed, so a hidden entity and a nonexistent one look the same.

Plus the same through the CLI, on a store built from files with an ``access.yaml``.
"""

from __future__ import annotations

import json
import re
import zlib
from types import SimpleNamespace

import numpy as np
import pytest
from click.testing import CliRunner
from embeddings_server import EmbeddingsServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgbuild import Assertion, KnowledgeGraph, load_schema
from kgbuild.graph.model import SourceDocument
from kgbuild.cli.main import main
from kgbuild.graph.access import WITHHELD, Principal, visible_graph
from kgbuild.resolve.review import explain, render_explain, render_review, review, save_review_queue
from kgbuild.retrieve.embeddings import EmbeddingMatcher
from kgbuild.retrieve.traverse import TraversalSpec, Traverser

SCHEMA = load_schema()
WORDS = ["zephyr", "quokka", "marlin", "brisket", "pelican", "tundra", "saffron", "vortex",
         "gondola", "juniper", "lantern", "nimbus"]
GHOST = "wobbegong"  # no entity is ever called this: the nonexistent one
KINDS = {"component": ["Service", "Library"], "resource": ["Resource"], "group": ["Group"]}
EDGES = ["dependsOn", "ownedBy", "partOf"]
SECRET = frozenset({"secret"})
PUBLIC = Principal()


def ident(kind: str, word: str) -> str:
    return f"{kind}:default/{word}"


def forms(kind: str, word: str, label: str) -> list[str]:
    """Ways a source may name an entity."""
    return [ident(kind, word), f"{kind}:{word}", word, label, f"default/{word}"]


@st.composite
def worlds(draw):
    """``(kg, entities)``: a graph and ``{id: (kind, word, label)}`` of its entities."""
    n = draw(st.integers(2, 8))
    words = draw(st.permutations(WORDS))[:n]
    kg = KnowledgeGraph(SCHEMA)
    docs = [f"docs/d{i}.yaml" for i in range(draw(st.integers(1, 4)))]
    for d in docs:
        kg.add_document(SourceDocument(d, d, "0" * 64, draw(st.sampled_from([frozenset(), SECRET]))))
    kg.add_document(SourceDocument("docs/sealed.yaml", "docs/sealed.yaml", "1" * 64, SECRET))
    entities = {}
    for word in words:
        kind = draw(st.sampled_from(sorted(KINDS)))
        type_name = draw(st.sampled_from(KINDS[kind]))
        label = draw(st.sampled_from([word, f"{word.title()} Thing", f"the {word}"]))
        eid = ident(kind, word)
        entities[eid] = (kind, word, label)
        definer = draw(st.sampled_from([None] + docs))
        node = kg.add_node(eid, type_name, label, source=definer)
        if definer is not None:  # as a build does: a node carries its defining document's labels
            node.access.update(kg.documents[definer].access)
            if draw(st.booleans()):
                node.access.update(SECRET)  # kgbuild.dev/access on the entity itself
            if draw(st.booleans()):
                node.aliases.add(f"{word} alias")
    ids = sorted(entities)

    def mention() -> str:
        kind, word, label = entities[draw(st.sampled_from(ids))]
        return draw(st.sampled_from(forms(kind, word, label)))

    for eid in ids:  # descriptions that may name other entities
        node = kg.nodes[eid]
        if node.defined_in and draw(st.booleans()):
            node.attributes["description"] = {f"Talks to {mention()} and more."}
    for k in range(draw(st.integers(0, 14))):
        s, o = draw(st.sampled_from(ids)), draw(st.sampled_from(ids))
        source = draw(st.sampled_from(docs))
        quoted = ", ".join(mention() for _ in range(draw(st.integers(0, 2))))
        kg.add_assertion(Assertion(
            s, draw(st.sampled_from(EDGES)), o, source, "t", "2024-01-01T00:00:00Z", 1.0, k + 1,
            evidence=f"dependsOn: [{quoted}]" if quoted else None,
            access=kg.documents[source].access | draw(st.sampled_from([frozenset(), SECRET]))))
    return kg, entities


def expected_visible(kg: KnowledgeGraph) -> set[str]:
    """The visibility rule, written out independently of kgbuild.graph.access."""
    docs = {d for d, doc in kg.documents.items() if not doc.access}
    allowed = {i for i, n in kg.nodes.items() if not n.access}
    touched, mentioned = set(), set()
    for a in kg.assertions.values():
        touched |= {a.subject, a.object}
        if not a.access and a.source in docs and {a.subject, a.object} <= allowed:
            mentioned |= {a.subject, a.object}
    return {i for i in allowed
            if kg.nodes[i].defined_in & docs or i in mentioned
            or (not kg.nodes[i].defined_in and i not in touched)}


def stripped(kg: KnowledgeGraph, entities: dict) -> KnowledgeGraph:
    """The graph a public caller should be indistinguishable from: hidden entities, documents
    and assertions never existed; what would name them is already withheld."""
    seen = expected_visible(kg)
    gone = [entities[i][1] for i in entities if i not in seen]

    def names_gone(text: str | None) -> bool:
        return bool(text) and any(re.search(rf"\b{w}\b", text, re.I) for w in gone)

    out = KnowledgeGraph(SCHEMA)
    out.documents = {d: doc for d, doc in kg.documents.items() if not doc.access}
    out.add_document(kg.documents["docs/sealed.yaml"])  # still a labelled graph
    for i in seen:
        n = kg.nodes[i]
        node = out.add_node(i, n.type, n.label)
        node.defined_in = n.defined_in & out.documents.keys()
        if n.defined_in and not node.defined_in:  # seen through a mention only
            node.label = entities[i][1]
        else:
            node.aliases = set(n.aliases)
            kept = {d for d in n.attributes.get("description", ()) if not names_gone(d)}
            if kept:
                node.attributes["description"] = kept
    for key, a in kg.assertions.items():
        if not a.access and a.source in out.documents and {a.subject, a.object} <= seen:
            out.assertions[key] = Assertion(
                a.subject, a.predicate, a.object, a.source, a.extractor, a.generated_at,
                a.confidence, a.line, evidence=WITHHELD if names_gone(a.evidence) else a.evidence)
    return out


class FakeEmbeddings:
    """An in-process OpenAI-style client: bag-of-words vectors; records every text sent."""

    def __init__(self):
        self.sent: list[str] = []
        self.embeddings = self

    def create(self, model, input):
        self.sent.extend(input)
        return SimpleNamespace(data=[SimpleNamespace(index=i, embedding=_vector(t))
                                     for i, t in enumerate(input)])


def _vector(text: str) -> list[float]:
    vec = np.zeros(32)
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vec[zlib.crc32(word.encode()) % 32] += 1.0
    vec[31] += 0.01  # never the zero vector
    return vec.tolist()


def leaks(text: str, hidden_words: list[str], *asked: str) -> list[str]:
    """The hidden words ``text`` contains once the caller's own query (echoed) is taken out."""
    text = text.lower()
    for a in asked:
        text = text.replace(a.lower(), " ")
    return [w for w in hidden_words if w in text]


def run(kg, spec, matcher=None):
    result = Traverser(kg, PUBLIC, matcher=matcher).run(spec)
    return result.to_dict(), result.render()


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(world=worlds(), data=st.data())
def test_a_public_caller_learns_nothing_about_hidden_entities(world, data, tmp_path_factory):
    kg, entities = world
    view = visible_graph(kg, PUBLIC)
    seen = expected_visible(kg)
    assert set(view.nodes) == seen
    hidden = [entities[i][1] for i in entities if i not in seen]
    twin = stripped(kg, entities)

    # the routes, asked about a random entity (hidden or not) or the nonexistent one
    eid = data.draw(st.sampled_from(sorted(entities) + [ident("component", GHOST)]))
    kind, word, label = entities.get(eid, ("component", GHOST, GHOST))
    name = data.draw(st.sampled_from(forms(kind, word, label)))
    walk = data.draw(st.sampled_from([{"follow": ["dependsOn:both", "ownedBy:both"], "hops": 2},
                                      {"path": "dependsOn:out/ownedBy:out"},
                                      {"follow": [], "hops": 1, "cap": 1}]))
    question = f"What does {name} depend on?"
    specs = [TraversalSpec(seeds=[eid], **walk), TraversalSpec(names=[name], **walk),
             TraversalSpec(question=question, **walk)]
    for spec in specs:
        got, text = run(kg, spec)
        assert not leaks(json.dumps(got, ensure_ascii=False), hidden, eid, name)
        assert not leaks(text, hidden, eid, name)
        assert (got, text) == run(twin, spec)  # hidden == never existed
    # semantic seeds: only visible texts are sent, and they decide alike
    spec = TraversalSpec(question=question, semantic=3, semantic_min=0.1, **walk)
    client, twin_client = FakeEmbeddings(), FakeEmbeddings()
    got = run(kg, spec, EmbeddingMatcher(client, "toy"))
    assert got == run(twin, spec, EmbeddingMatcher(twin_client, "toy"))
    assert client.sent == twin_client.sent
    assert not leaks(" ".join(client.sent), hidden, name)
    assert not leaks(json.dumps(got[0], ensure_ascii=False), hidden, eid, name)

    # resolve explain / review with a registry and a queue naming random entities
    tmp = tmp_path_factory.mktemp("resolve")
    aliases = {}
    for i, (k, w, _) in enumerate(sorted(entities.values()) + [("component", GHOST, GHOST)]):
        aliases.setdefault(data.draw(st.sampled_from(["Service", "Resource", "Group"])), {})[
            ident(k, w)] = [f"nick{i}"]
    (tmp / "aliases.yaml").write_text(json.dumps({"aliases": aliases}))
    queue = []
    for mention_id in data.draw(st.lists(st.sampled_from(sorted(entities) + [eid]), max_size=4)):
        k, w, lab = entities.get(mention_id, ("component", GHOST, GHOST))
        cands = data.draw(st.lists(st.sampled_from(sorted(entities)), max_size=2, unique=True))
        queue.append({"mention": data.draw(st.sampled_from([lab, w])), "type": None,
                      "status": "review", "id": None, "stage": "fuzzy", "score": 90.0,
                      "reason": f"{mention_id} looks like {', '.join(cands) or 'nothing'}",
                      "candidates": [{"id": c, "type": kg.nodes[c].type,
                                      "label": kg.nodes[c].label, "score": 90.0,
                                      "matched": entities[c][1]} for c in cands],
                      "suggested_id": None, "searched_types": [], "count": 1})
    save_review_queue(tmp / "queue.json", queue)
    for mention in (name, f"nick{data.draw(st.integers(0, len(entities)))}"):
        got = explain(kg, mention, None, tmp / "aliases.yaml", PUBLIC)
        assert got == explain(twin, mention, None, tmp / "aliases.yaml", PUBLIC)
        assert not leaks(render_explain(got), hidden, mention)
    got = review(kg, tmp / "aliases.yaml", tmp / "queue.json", None, PUBLIC)
    assert got == review(twin, tmp / "aliases.yaml", tmp / "queue.json", None, PUBLIC)
    assert not leaks(json.dumps(got, ensure_ascii=False) + render_review(got), hidden)
    # and the trusted view still sees everything
    everyone = review(kg, tmp / "aliases.yaml", tmp / "queue.json", None, Principal.all_access())
    assert len(everyone["queue"]) == len(queue)


# -- the same through the CLI, on a store built from files ------------------------------------
CATALOG = """\
apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: public-app
  description: The shop front, backed by zephyr-vault.
spec:
  type: service
  lifecycle: production
  owner: team-a
  dependsOn: [component:public-lib, resource:zephyr-vault]
---
apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: public-lib
spec:
  type: library
  lifecycle: production
  owner: team-a
"""
SECRET_CATALOG = """\
apiVersion: backstage.io/v1alpha1
kind: Resource
metadata:
  name: zephyr-vault
  title: Zephyr Vault
  annotations:
    kgbuild.dev/access: secret
spec:
  type: database
  owner: team-a
  dependencyOf: [component:public-app]
  dependsOn: [resource:quokka-store]
"""


@pytest.fixture
def store(tmp_path):
    src = tmp_path / "src"
    (src / "pub").mkdir(parents=True)
    (src / "secret").mkdir()
    (src / "pub" / "catalog-info.yaml").write_text(CATALOG)
    (src / "secret" / "catalog-info.yaml").write_text(SECRET_CATALOG)
    (src / "secret" / "package.json").write_text(
        '{"name": "marlin-app", "dependencies": {"brisket-client": "^1.0.0"}}')
    (tmp_path / "access.yaml").write_text("rules:\n  - paths: secret/**\n    labels: [secret]\n")
    r = CliRunner().invoke(main, ["build", str(src), "--store", str(tmp_path / "s"), "--access",
                                  str(tmp_path / "access.yaml"), "--timestamp", "0"])
    assert r.exit_code == 0, r.output
    return str(tmp_path / "s")


HIDDEN = ["zephyr", "quokka", "marlin", "brisket"]  # every entity only secret files name


def cli(*args):
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code in (0, 1), r.output
    return r


@pytest.mark.slow
def test_cli_routes_show_a_hidden_entity_as_nonexistent(store, tmp_path):
    everyone = cli("traverse", "--store", store, "--name", "brisket-client", "--follow",
                   "dependsOn:both", "--all-access")
    assert everyone.exit_code == 0 and "brisket-client" in everyone.output  # it exists, with an edge
    for hidden, ghost in [("brisket-client", "wobbegong-client"), ("zephyr-vault", "wobbegong"),
                          ("Zephyr Vault", "Wobbegong"), ("quokka-store", "wobbegong-store")]:
        outs = []
        for name in (hidden, ghost):
            for route in (["--name", name], ["--seed", f"pkg:npm/{name}"],
                          ["--seed", f"resource:default/{name}"], ["-q", f"Who uses {name}?"]):
                r = cli("traverse", "--store", store, *route, "--follow", "dependsOn:both",
                        "--format", "json")
                outs.append(r.output.replace(name, "NAME"))
                assert not leaks(r.output, HIDDEN, name)
        assert outs[:4] == outs[4:], hidden
    for fmt in ("json", "text"):  # the description naming zephyr-vault is left out
        r = cli("traverse", "--store", store, "--seed", "component:default/public-app",
                "--follow", "dependsOn", "--format", fmt)
        assert not leaks(r.output, HIDDEN) and "public-lib" in r.output
    r = cli("traverse", "--store", store, "--seed", "component:default/public-app", "--follow",
            "dependsOn", "--principal", "secret")
    text = " ".join(r.output.split())  # (text output is wrapped at 100 columns)
    assert "backed by zephyr-vault" in text and WITHHELD not in r.output


@pytest.mark.slow
def test_cli_semantic_seeds_send_only_visible_labels(store):
    with EmbeddingsServer(_vector) as server:
        r = cli("traverse", "--store", store, "-q", "Which vault or store holds the data?",
                "--semantic", "5", "--semantic-min", "0", "--follow", "dependsOn:both",
                "--embeddings-url", server.url)
    assert server.inputs and not leaks(" ".join(server.inputs), HIDDEN, "vault or store")
    assert not leaks(r.output, HIDDEN, "vault or store")


@pytest.mark.slow
def test_cli_resolve_explain_and_review_take_a_principal(store, tmp_path):
    registry = tmp_path / "aliases.yaml"
    registry.write_text("aliases:\n  Resource:\n    resource:default/zephyr-vault: [zv]\n"
                        "    resource:default/wobbegong: [wb]\n")
    outs = {}
    for mention in ("zv", "wb", "zephyr-vault", "wobbegong", "Zephyr Vault"):
        r = cli("resolve", "explain", mention, "--store", store, "--registry", str(registry),
                "--format", "json")
        assert r.exit_code == 0 and not leaks(r.output, HIDDEN, mention)
        outs[mention] = json.loads(r.output)
        del outs[mention]["mention"], outs[mention]["suggested_id"]
    assert outs["zv"] == outs["wb"] and outs["zephyr-vault"] == outs["wobbegong"]
    r = cli("resolve", "explain", "zv", "--store", store, "--registry", str(registry),
            "--all-access")
    assert "resource:default/zephyr-vault" in r.output
    queue = tmp_path / "queue.json"
    save_review_queue(queue, [
        {"mention": "zephyr-vault", "type": "Resource", "status": "review", "id": None,
         "reason": "looks like resource:default/quokka-store", "candidates": [
             {"id": "resource:default/quokka-store", "score": 88.0}]},
        {"mention": "public-lib", "type": None, "status": "review", "id": None,
         "reason": "similar", "candidates": [{"id": "component:default/public-app", "score": 80}]}])
    r = cli("resolve", "review", "--queue", str(queue), "--store", store, "--registry",
            str(registry))
    assert not leaks(r.output, HIDDEN) and "public-lib" in r.output and "1 queued" in r.output
    r = cli("resolve", "review", "--queue", str(queue), "--store", store, "--as", "secret")
    assert "2 queued" in r.output and "zephyr-vault" in r.output
