"""CycloneDX SBOMs: every dependsOn pair an edge at its JSON pointer, IDs unique per BOM."""

import json
from pathlib import Path

import pytest
from conftest import REPO

from kgbuild.extract.manifests.cyclonedx import CycloneDxExtractor
from kgbuild.extract.records import Context, SourceFile
from kgbuild.schema.loader import load_schema

CATALOGS = REPO.parent / "shared" / "corpora" / "catalogs"
BOMS = sorted((CATALOGS / "cyclonedx").rglob("*.json"))
EX = CycloneDxExtractor()


def run(path: Path, root: Path = CATALOGS):
    return EX.extract(SourceFile(path, path.relative_to(root).as_posix(), root),
                      Context(load_schema(), [root]))


def resolve(doc, pointer: str):
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def expected_id(ref: str, doc_id: str) -> str:
    return ref if ref.startswith("pkg:") else f"{doc_id}#{ref}"


def entries(bom: dict) -> list[dict]:
    """metadata.component, then components and services at any depth."""
    out = [bom["metadata"]["component"]] if "component" in bom.get("metadata", {}) else []
    todo = [(bom, "components"), (bom, "services")]
    while todo:
        parent, key = todo.pop()
        for item in parent.get(key, []):
            out.append(item)
            todo.append((item, key))
    return out


@pytest.mark.corpus
def test_corpus_has_boms():
    assert len(BOMS) == 4


@pytest.mark.corpus
@pytest.mark.parametrize("path", BOMS, ids=lambda p: p.parent.name)
def test_every_dependency_pair_is_an_edge_at_its_pointer(path):
    bom = json.loads(path.read_text())
    doc_id = path.relative_to(CATALOGS).as_posix()
    pairs = [(d["ref"], t) for d in bom["dependencies"] for t in d.get("dependsOn", [])]
    result = run(path)
    edges = [e for e in result.edges if e.predicate == "dependsOn"]
    assert len(edges) == len(pairs)
    assert sorted((e.subject, e.object) for e in edges) == sorted(
        (expected_id(r, doc_id), expected_id(t, doc_id)) for r, t in pairs)
    lines = path.read_text().splitlines()
    for e in edges:
        target = resolve(bom, e.pointer)
        assert e.pointer.split("/")[-2] == "dependsOn"
        assert expected_id(target, doc_id) == e.object
        assert expected_id(resolve(bom, e.pointer.rsplit("/", 2)[0] + "/ref"), doc_id) == e.subject
        assert json.dumps(target) in lines[e.line - 1]
    assert result.problems == []


@pytest.mark.corpus
@pytest.mark.parametrize("path", BOMS, ids=lambda p: p.parent.name)
def test_components_and_services_become_unique_nodes(path):
    bom = json.loads(path.read_text())
    doc_id = path.relative_to(CATALOGS).as_posix()
    nodes = run(path).nodes
    ids = [n.id for n in nodes]
    assert len(ids) == len(set(ids)) == len(entries(bom))
    assert set(ids) == {expected_id(e["bom-ref"], doc_id) for e in entries(bom)}
    for n in nodes:
        item = resolve(bom, n.pointer)
        assert n.label == item["name"]
        if "purl" in item:
            assert n.attributes["purl"] == item["purl"]
            assert n.id == item["purl"] or item["purl"] in n.aliases


@pytest.mark.corpus
def test_types_follow_cyclonedx_types():
    saas = {n.label: n for n in run(CATALOGS / "cyclonedx/CycloneDX-bom-examples/SaaSBOM/"
                                    "apigateway-microservices-datastores/bom.json").nodes}
    assert saas["Acme Cloud Example"].type == "Component"
    assert all(saas[s].type == "Service" for s in ("API Gateway", "Microservice 1", "S3"))
    assert saas["API Gateway"].attributes["endpoint"] == ["https://example.com/",
                                                           "https://example.com/app"]
    cbom = {n.label: n for n in run(CATALOGS / "cyclonedx/CycloneDX-bom-examples/CBOM/"
                                    "Example-With-Dependencies/bom.json").nodes}
    assert cbom["AES"].type == "Component"
    assert cbom["AES"].attributes["specType"] == "cryptographic-asset"
    assert cbom["Crypto library"].type == "Library"
    drop = run(CATALOGS / "cyclonedx/CycloneDX-bom-examples/SBOM/dropwizard-1.3.15/bom.json")
    assert {n.type for n in drop.nodes} == {"Library"}


@pytest.mark.corpus
def test_nested_services_are_part_of_their_parent():
    path = CATALOGS / ("cyclonedx/CycloneDX-bom-examples/SaaSBOM/apigateway-microservices-"
                       "datastores/bom.json")
    doc_id = path.relative_to(CATALOGS).as_posix()
    part_of = [e for e in run(path).edges if e.predicate == "partOf"]
    nested = json.loads(path.read_text())["services"][0]["services"]
    assert {e.subject for e in part_of} == {f"{doc_id}#{s['bom-ref']}" for s in nested}
    assert {e.object for e in part_of} == {f"{doc_id}#api-gateway"}


@pytest.mark.corpus
def test_same_local_bom_ref_in_two_boms_does_not_merge():
    cbom = run(CATALOGS / "cyclonedx/CycloneDX-bom-examples/CBOM/Example-With-Dependencies/bom.json")
    saas = run(CATALOGS / "cyclonedx/CycloneDX-bom-examples/SaaSBOM/"
               "apigateway-microservices-datastores/bom.json")
    roots = [n for n in cbom.nodes + saas.nodes if n.id.endswith("#acme-application")]
    assert len(roots) == 2 and roots[0].id != roots[1].id


def write(tmp_path: Path, bom: dict) -> Path:
    path = tmp_path / "app.cdx.json"
    path.write_text(json.dumps({"bomFormat": "CycloneDX", "specVersion": "1.5", **bom}, indent=2))
    return path


def test_undeclared_refs_duplicates_and_missing_bom_refs(tmp_path):
    path = write(tmp_path, {
        "components": [
            {"type": "library", "bom-ref": "a", "name": "a"},
            {"type": "library", "bom-ref": "a", "name": "a again"},
            {"type": "library", "name": "b", "purl": "pkg:npm/b@1.0.0"},
            {"type": "library", "name": "c", "group": "org", "version": "2"},
            {"type": "library"},
        ],
        "dependencies": [{"ref": "a", "dependsOn": ["ghost", 7]}, {"ref": "a", "dependsOn": "x"}],
    })
    result = run(path, tmp_path)
    assert [n.id for n in result.nodes] == ["app.cdx.json#a", "pkg:npm/b@1.0.0",
                                            "app.cdx.json#org/c@2"]
    [edge] = result.edges
    assert (edge.subject, edge.object, edge.pointer) == (
        "app.cdx.json#a", "app.cdx.json#ghost", "/dependencies/0/dependsOn/0")
    messages = [(p.line, p.message) for p in result.problems]
    assert all(line is not None for line, _ in messages)
    assert any("duplicate bom-ref 'a'" in m for _, m in messages)
    assert any("without a name" in m for _, m in messages)
    assert any("'ghost' is not declared" in m for _, m in messages)
    assert any(m.startswith("/dependencies/0/dependsOn/1") for _, m in messages)
    assert any(m.startswith("/dependencies/1:") for _, m in messages)


def test_claims():
    assert EX.claims(Path("bom.json"), b"")
    assert EX.claims(Path("app.cdx.json"), b"")
    assert EX.claims(Path("bom.1.4.json"), b'{\n  "bomFormat": "CycloneDX",')
    assert not EX.claims(Path("package.json"), b'{"name": "x"}')
    assert not EX.claims(Path("bom.xml"), b'<bom xmlns="http://cyclonedx.org/schema/bom/1.5">')
