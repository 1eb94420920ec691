"""One ID rule: a name gets the same ID from text extraction, ``kgbuild verify`` (with or
without a resolver) and a Backstage catalog that names it the kebab-case way; once the catalog
is in the store, text and verify land on the catalog's ID."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from kgbuild.project.pipeline import build_graph
from kgbuild.project.verifyfile import verify_file
from kgbuild.extract.records import Context, SourceFile
from kgbuild.extract.text.extractor import TextExtractor
from kgbuild.extract.text.verify import TextChunk, verify_relations
from kgbuild.graph.ids import entity_id, slug
from kgbuild.graph.refs import is_valid_name
from kgbuild.llm.client import Completion
from kgbuild.resolve.resolver import Resolver
from kgbuild.schema.loader import load_schema
from kgbuild.store.graphstore import GraphStore

NAMES = [  # (name, the ID's name part)
    ("HTTPServer", "http-server"),
    ("OAuth2Client", "o-auth-2-client"),
    ("XMLHttpRequest", "xml-http-request"),
    ("getHTTPResponse", "get-http-response"),
    ("Adams70", "adams-70"),
    ("log4j", "log4j"),
    ("k8s-operator", "k8s-operator"),
    ("Café Crème", "cafe-creme"),
    ("Straße", "strasse"),
    ("AT&T Billing", "at-and-t-billing"),
    ("Orders DB (v2)!", "orders-db-v2"),
    ("payments_gateway.v3", "payments-gateway-v3"),
    ("ＬｅｄｇｅｒＡＰＩ", "ledger-api"),
    ("東京", "東京"),
    ("Москва", "москва"),
]
SCHEMA = load_schema("software")


def _rel(name: str) -> dict:
    return {"subject": name, "subject_type": "Component", "predicate": "dependsOn",
            "object": "Zebra Queue", "object_type": "Component",
            "evidence": f"{name} depends on Zebra Queue."}


def _text(name: str) -> str:
    return f"# Notes\n\n{_rel(name)['evidence']}\n"


class _Model:
    """An LLM client that answers every chunk with one relation."""

    settings = SimpleNamespace(model="fake")

    def __init__(self, relation: dict):
        self.answer = json.dumps({"relations": [relation]})

    def run(self, requests, check, progress=None):
        return [Completion(self.answer) for _ in requests]

    def cached(self, request):
        return False


def text_id(name: str, tmp: Path, resolver: Resolver) -> str:
    doc = tmp / "doc.md"
    doc.write_text(_text(name), encoding="utf-8")
    out = TextExtractor(SCHEMA, _Model(_rel(name)), resolver=resolver).extract(
        SourceFile(doc, "doc.md", tmp), Context(SCHEMA, [tmp]))
    assert len(out.edges) == 1, out.problems
    return out.edges[0].subject


def verify_id(name: str, tmp: Path, store: Path | None = None) -> str:
    (tmp / "docs").mkdir(exist_ok=True)
    (tmp / "docs" / "doc.md").write_text(_text(name), encoding="utf-8")
    (tmp / "edges.jsonl").write_text(json.dumps({**_rel(name), "source": "doc.md"}) + "\n",
                                     encoding="utf-8")
    result = verify_file(tmp / "edges.jsonl", tmp / "docs", SCHEMA, store=store, timestamp=0)
    [edge] = result.accepted["doc.md"]
    return edge.subject_id


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    """A store built from a catalog naming every entity the Backstage way: the kebab-case
    name (or ``eN`` where the name part is no Backstage name), the name as the title."""
    root = tmp_path_factory.mktemp("catalog")
    docs, ids = [], {}
    for i, (name, part) in enumerate(NAMES):
        meta = part if is_valid_name(part) else f"e{i}"
        ids[name] = f"component:default/{meta}"
        docs.append(f"apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n"
                    f"  name: {meta}\n  title: {json.dumps(name)}\nspec:\n  type: other\n"
                    f"  lifecycle: production\n  owner: group:default/team\n")
    (root / "src").mkdir()
    (root / "src" / "catalog-info.yaml").write_text("---\n".join(docs), encoding="utf-8")
    build_graph([root / "src"], SCHEMA, store=root / "store", timestamp=0, root=root,
                resolve=False, validate=False).store.close()
    with GraphStore(root / "store", SCHEMA, write=False) as gs:
        graph = gs.knowledge_graph()
    assert set(ids.values()) <= {n.id for n in graph.nodes.values()}
    return root / "store", graph, ids


@pytest.mark.parametrize("name, part", NAMES)
def test_a_new_name_gets_one_id_from_text_verify_and_a_kebab_case_catalog(name, part, tmp_path,
                                                                        catalog):
    expected = f"component:default/{part}"
    assert entity_id("Component", name) == expected and slug(name) == part
    assert text_id(name, tmp_path, Resolver(SCHEMA)) == expected
    assert verify_id(name, tmp_path) == expected
    chunk = TextChunk(_text(name), "doc.md", "doc.md#c1")
    [edge] = verify_relations([_rel(name)], chunk, SCHEMA).accepted  # no resolver at all
    assert edge.subject_id == expected
    if is_valid_name(part):  # the catalog's ID for the entity it calls `part`, titled `name`
        assert catalog[2][name] == expected


@pytest.mark.parametrize("name", [n for n, _ in NAMES])
def test_a_name_the_catalog_holds_gets_the_catalogs_id_from_text_and_verify(name, tmp_path,
                                                                            catalog):
    store, graph, ids = catalog
    assert text_id(name, tmp_path, Resolver.from_graph(graph)) == ids[name]
    assert verify_id(name, tmp_path, store) == ids[name]


def test_a_name_without_letters_or_digits_still_gets_an_id():
    assert slug("+++") == "entity" and entity_id("API", "") == "api:default/entity"
