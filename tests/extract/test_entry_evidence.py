"""Evidence is the entry that states a relation (its line when that line states nothing else),
lines are counted at \\n only, and sources in UTF-16/32 are read."""

import json

from conftest import FIXTURE_CATALOG

from kgbuild.project.pipeline import build_graph
from kgbuild.extract.manifests.codeowners import parse_codeowners
from kgbuild.io.text import LineIndex, decode_text, one_line, split_lines
from kgbuild.io.yamlfile import load_yaml


def evidence(result, predicate):
    return {a.object: a.evidence for a in result.graph.assertions.values()
            if a.predicate == predicate}


def test_fixture_catalog_quotes_each_item_of_a_one_line_list():
    result = build_graph([FIXTURE_CATALOG], store=None, timestamp=0, validate=False,
                         root=FIXTURE_CATALOG.parent)
    payments = {a.object: a.evidence for a in result.graph.assertions.values()
                if a.subject == "component:default/payments-service" and a.predicate == "dependsOn"}
    assert payments == {"resource:default/payments-db": "resource:payments-db",
                        "component:default/pricing-sdk": "component:pricing-sdk"}
    children = {a.subject: a.evidence for a in result.graph.assertions.values()
                if a.predicate == "childOf" and a.source.endswith("teams.yaml") and a.line == 8}
    assert children == {"group:default/commerce-platform": "commerce-platform",
                        "group:default/storefront": "storefront"}
    member = [a for a in result.graph.assertions.values() if a.predicate == "memberOf"]
    assert all(a.evidence.startswith("memberOf: [") for a in member)  # alone on its line: kept


def test_yaml_source_evidence():
    text = ("a: 1\nlist: [x, 'y']\nblock:\n  - z  # note\nmap: {k: v, w: u}\n"
            "split:\n  value\n")
    [doc] = load_yaml(text, "t.yaml")
    src, data = doc.source, doc.data
    assert src.evidence(data, "a") == "a: 1"
    assert [src.evidence(data["list"], i) for i in range(2)] == ["x", "'y'"]
    assert src.evidence(data["block"], 0) == "- z  # note"
    assert src.evidence(data["map"], "k") == "k: v"
    assert src.evidence(data, "split") == "split: value"
    assert src.evidence(data, "missing") is None


def test_compose_flow_list_and_map_form(tmp_path):
    (tmp_path / "compose.yaml").write_text(
        "services:\n  web:\n    image: a\n    depends_on: [db, cache]\n"
        "  worker:\n    image: b\n    depends_on:\n      db:\n        condition: service_healthy\n"
        "  db:\n    image: c\n  cache:\n    image: d\n")
    result = build_graph([tmp_path], store=None, timestamp=0, validate=False, root=tmp_path.parent)
    quotes = {(a.subject.rsplit("/", 1)[1], a.object.rsplit("/", 1)[1]): a.evidence
              for a in result.graph.assertions.values() if a.predicate == "dependsOn"}
    assert quotes == {("web", "db"): "db", ("web", "cache"): "cache",
                      ("worker", "db"): "db: condition: service_healthy"}


def test_pyproject_one_line_array(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["attrs>=22", "click"]\n'
        '[build-system]\nrequires = [\n  "setuptools",  # build\n]\n')
    result = build_graph([tmp_path], store=None, timestamp=0, validate=False, root=tmp_path.parent)
    assert evidence(result, "dependsOn") == {
        "pkg:pypi/attrs": 'project.dependencies: "attrs>=22"',
        "pkg:pypi/click": 'project.dependencies: "click"',
        "pkg:pypi/setuptools": 'build-system.requires: "setuptools",  # build'}


def test_codeowners_rule_with_several_owners():
    co = parse_codeowners("/api/ @org/a @org/b\n*.py   @solo\n", "CODEOWNERS")
    multi, single = co.rules
    assert [multi.evidence(o) for o in multi.owners] == ["/api/ @org/a", "/api/ @org/b"]
    assert single.evidence(single.owners[0]) == "*.py   @solo"


def test_lines_and_text_helpers():
    text = "one\u2028still one\x0c\r\ntwo\x85\nthree"
    assert split_lines(text) == ["one\u2028still one\x0c", "two\x85", "three"]
    index = LineIndex(text)
    assert [index.line(text.index(w)) for w in ("still", "two", "three")] == [1, 2, 3]
    assert index.line_text(2) == "two\x85" and index.line_text(9) == ""
    assert one_line("a\n  b\tc") == "a b c"
    assert one_line("x" * 1000, 10) == "x" * 9 + "…"


def test_unicode_encodings_are_decoded():
    text = "name: ü\n"
    for codec in ("utf-16", "utf-32", "utf-8-sig", "utf-16-le", "utf-16-be"):
        assert decode_text(text.encode(codec), "t") == text


def test_package_json_in_utf16(tmp_path):
    (tmp_path / "package.json").write_bytes(json.dumps(
        {"name": "p", "dependencies": {"left-pad": "1"}}, indent=2).encode("utf-16"))
    result = build_graph([tmp_path], store=None, timestamp=0, validate=False, root=tmp_path.parent)
    [a] = result.graph.assertions.values()
    assert (a.object, a.line, a.evidence) == ("pkg:npm/left-pad", 4,
                                              'dependencies: "left-pad": "1"')
