"""Maven POMs, CycloneDX XML and SPDX JSON SBOMs: real files from public projects
(fixtures/sources/SOURCES.md) and hostile ones (entity bombs, external entities, deep
nesting, binary, wrong types)."""

import json
from pathlib import Path

import pytest
from conftest import CATALOGS, REPO

from kgbuild.extract.manifests.cyclonedx import CycloneDxExtractor
from kgbuild.extract.manifests.cyclonedx_xml import CycloneDxXmlExtractor
from kgbuild.extract.manifests.maven import MavenPomExtractor
from kgbuild.extract.manifests.spdx import SpdxExtractor
from kgbuild.extract.records import Context, SourceFile
from kgbuild.schema.loader import load_schema

SOURCES = REPO / "fixtures" / "sources"
SCHEMA = load_schema()
POM, CDX, SPDX = MavenPomExtractor(), CycloneDxXmlExtractor(), SpdxExtractor()


def run(ex, path: Path, root: Path = SOURCES, doc_id: str | None = None):
    assert ex.claims(path, path.read_bytes()[:65536]), path
    return ex.extract(SourceFile(path, doc_id or path.relative_to(root).as_posix(), root),
                      Context(SCHEMA, [root]))


def test_spring_petclinic_pom():
    path = SOURCES / "maven" / "spring-petclinic" / "pom.xml"
    result = run(POM, path)
    assert result.problems == []
    [me] = result.nodes
    assert me.id == "pkg:maven/org.springframework.samples/spring-petclinic"
    assert (me.label, me.attributes["version"]) == ("petclinic", "4.0.0-SNAPSHOT")
    edges = {e.object: e for e in result.edges}
    parent = edges["pkg:maven/org.springframework.boot/spring-boot-starter-parent"]
    assert (parent.qualifiers, parent.line, parent.evidence) == (
        ("parent",), 7, "org.springframework.boot:spring-boot-starter-parent:4.0.3")
    assert edges["pkg:maven/com.h2database/h2"].qualifiers == ("scope:runtime",)
    assert edges["pkg:maven/org.springframework.boot/spring-boot-devtools"].qualifiers == ("optional",)
    assert edges["pkg:maven/org.webjars.npm/bootstrap"].evidence.endswith(":5.3.8")  # ${...}
    assert edges["pkg:maven/org.apache.maven.plugins/maven-enforcer-plugin"].qualifiers == ("plugin",)
    lines = path.read_text().split("\n")
    for e in result.edges:  # each at its <artifactId> line
        assert "<artifactId>" + e.object.rsplit("/", 1)[1] + "</artifactId>" in lines[e.line - 1]
    scopes = [q for e in result.edges for q in e.qualifiers if q.startswith("scope:")]
    assert scopes.count("scope:test") == 8 and scopes.count("scope:runtime") == 7


def test_multi_module_pom_and_inherited_coordinates(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "pom.xml").write_text(
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><groupId>org.acme</groupId>\n'
        '<artifactId>shop-parent</artifactId><version>1.0</version><packaging>pom</packaging>\n'
        '<modules>\n  <module>core</module>\n  <module>../../etc</module>\n</modules>\n'
        '<dependencyManagement><dependencies><dependency><groupId>org.acme</groupId>\n'
        '<artifactId>bom</artifactId><version>2</version><type>pom</type><scope>import</scope>\n'
        '</dependency></dependencies></dependencyManagement></project>\n')
    (tmp_path / "core" / "pom.xml").write_text(
        '<project><parent><groupId>org.acme</groupId><artifactId>shop-parent</artifactId>\n'
        '<version>1.0</version></parent><artifactId>core</artifactId>\n<dependencies>\n'
        '<dependency><groupId>${project.groupId}</groupId><artifactId>util</artifactId>\n'
        '<version>${project.version}</version><scope>test</scope></dependency>\n'
        '<dependency><groupId>${undefined}</groupId><artifactId>x</artifactId></dependency>\n'
        '</dependencies></project>\n')
    parent = run(POM, tmp_path / "pom.xml", tmp_path)
    assert {(e.subject, e.predicate, e.object, e.line) for e in parent.edges} == {
        ("pkg:maven/org.acme/core", "partOf", "pkg:maven/org.acme/shop-parent", 4),
        ("pkg:maven/org.acme/shop-parent", "dependsOn", "pkg:maven/org.acme/bom", 8)}
    assert [p.line for p in parent.problems] == [5]  # ../../etc leaves the project
    core = run(POM, tmp_path / "core" / "pom.xml", tmp_path)
    assert core.nodes[0].id == "pkg:maven/org.acme/core"
    util = [e for e in core.edges if e.object == "pkg:maven/org.acme/util"]
    assert [(e.qualifiers, e.evidence) for e in util] == [(("scope:test",), "org.acme:util:1.0")]
    assert [(p.code, p.line) for p in core.problems] == [("bad-pom", 6)]


@pytest.mark.corpus
def test_cyclonedx_xml_gives_the_json_forms_graph():
    xml = SOURCES / "cyclonedx-xml" / "laravel-7.12.0" / "bom.1.4.xml"
    same = CATALOGS / "cyclonedx" / "CycloneDX-bom-examples" / "SBOM" / "laravel-7.12.0" / "bom.1.4.json"
    from_xml = run(CDX, xml, doc_id="bom")
    from_json = CycloneDxExtractor().extract(SourceFile(same, "bom", same.parent),
                                             Context(SCHEMA, [same.parent]))
    assert from_xml.problems == [] and len(from_xml.edges) == 113
    assert {(n.id, n.type, n.label) for n in from_xml.nodes} == {
        (n.id, n.type, n.label) for n in from_json.nodes}
    assert {(e.subject, e.predicate, e.object) for e in from_xml.edges} == {
        (e.subject, e.predicate, e.object) for e in from_json.edges}
    lines = xml.read_text().split("\n")
    for e in from_xml.edges:
        assert e.pointer is None and e.evidence.split('"')[1] in lines[e.line - 1]


def test_spdx_23_example():
    path = SOURCES / "spdx" / "spdx-spec" / "SPDXJSONExample-v2.3.spdx.json"
    result = run(SPDX, path)
    assert result.problems == []
    doc = path.relative_to(SOURCES).as_posix()
    nodes = {n.label: n for n in result.nodes}
    assert nodes["glibc"].type == "Component"  # the document describes it
    assert nodes["Jena"].id == "pkg:maven/org.apache.jena/apache-jena@3.12.0"
    assert nodes["Saxon"].type == "Library"
    [edge] = result.edges  # the one relationship between two packages
    assert (edge.subject, edge.object, edge.qualifiers, edge.pointer) == (
        f"{doc}#SPDXRef-Package", f"{doc}#SPDXRef-Saxon", ("dynamic-link",), "/relationships/2")
    assert "DYNAMIC_LINK" in path.read_text().split("\n")[edge.line - 1]


def test_spdx_dependency_relationships(tmp_path):
    path = tmp_path / "app.spdx.json"
    path.write_text(json.dumps({
        "spdxVersion": "SPDX-2.3", "SPDXID": "SPDXRef-DOCUMENT", "name": "app",
        "packages": [
            {"SPDXID": "SPDXRef-app", "name": "app", "primaryPackagePurpose": "APPLICATION"},
            {"SPDXID": "SPDXRef-lib", "name": "lib", "versionInfo": "1.0", "externalRefs": [
                {"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                 "referenceLocator": "pkg:npm/lib@1.0"}]},
            {"SPDXID": "SPDXRef-pytest", "name": "pytest"}, {"name": "no id"}],
        "relationships": [
            {"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
             "relatedSpdxElement": "SPDXRef-app"},
            {"spdxElementId": "SPDXRef-app", "relationshipType": "DEPENDS_ON",
             "relatedSpdxElement": "SPDXRef-lib"},
            {"spdxElementId": "SPDXRef-pytest", "relationshipType": "DEV_DEPENDENCY_OF",
             "relatedSpdxElement": "SPDXRef-app"},
            {"spdxElementId": "SPDXRef-app", "relationshipType": "DEPENDS_ON",
             "relatedSpdxElement": "NOASSERTION"}, 7]}, indent=1))
    result = run(SPDX, path, tmp_path)
    assert {(e.subject, e.object, e.qualifiers) for e in result.edges} == {
        ("app.spdx.json#SPDXRef-app", "pkg:npm/lib@1.0", ()),
        ("app.spdx.json#SPDXRef-app", "app.spdx.json#SPDXRef-pytest", ("dev",))}
    assert sorted(p.message.split(":")[0] for p in result.problems) == [
        "/packages/3", "/relationships/4"]
    assert all(p.line for p in result.problems)


BOMB = ('<?xml version="1.0"?>\n<!DOCTYPE project [\n <!ENTITY a "aaaaaaaaaa">\n'
        + "".join(f' <!ENTITY {c} "{("&" + p + ";") * 10}">\n' for p, c in zip("abcdefgh", "bcdefghi"))
        + ']>\n<project><artifactId>&i;</artifactId></project>\n')


@pytest.mark.parametrize("name, text, code, line", [
    ("pom.xml", BOMB, "xml-entities", None),
    ("pom.xml", '<?xml version="1.0"?>\n<!DOCTYPE p [\n<!ENTITY x SYSTEM "file:///etc/passwd">\n]>\n'
     "<project><artifactId>&x;</artifactId></project>", "xml-entities", 3),
    ("pom.xml", "<project>\n<artifactId>a</artifactId>\n<dependencies>\n</project>\n", "bad-input", 4),
    ("pom.xml", "<project>" + "<a>" * 300 + "</a>" * 300 + "</project>", "bad-input", 1),
    ("pom.xml", "<settings><x/></settings>", "bad-pom", 1),
    ("bom.xml", "<notabom/>", "not-cyclonedx", 1),
    ("bom.xml", BOMB.replace("project", "bom"), "xml-entities", None),
    ("x.spdx.json", '{"spdxVersion": "SPDX-2.3", "packages": {"a": 1}}', "bad-spdx", 1),
    ("x.spdx.json", '{"spdxVersion": 3}', "bad-spdx", 1),
    ("x.spdx.json", "[" * 100_000, "bad-input", 1),
])
def test_hostile_files_are_reported(tmp_path, name, text, code, line):
    path = tmp_path / name
    path.write_text(text)
    ex = {"pom.xml": POM, "bom.xml": CDX, "x.spdx.json": SPDX}[name]
    result = ex.extract(SourceFile(path, name, tmp_path), Context(SCHEMA, [tmp_path]))
    assert (code, line) in {(p.code, p.line) for p in result.problems}, result.problems
    assert result.nodes == [] or code.startswith("bad-")


def test_binary_pom(tmp_path):
    path = tmp_path / "pom.xml"
    path.write_bytes(b"<project>\n\x00\x01</project>")
    assert {p.code for p in run(POM, path, tmp_path).problems} == {"bad-input"}
