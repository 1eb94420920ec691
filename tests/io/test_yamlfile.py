"""io/yamlfile: the one YAML reader. Duplicate keys, bounds and located errors for every
YAML file the tool reads: catalog sources, schemas, access.yaml, aliases.yaml, eval cases."""

from __future__ import annotations

import pytest

from kgbuild.project.pipeline import build_graph
from kgbuild.errors import InputError, SchemaError
from kgbuild.evaluate.retrieval import load_cases
from kgbuild.graph.access import load_access
from kgbuild.io.yamlfile import (
    DuplicateKeyError,
    YamlError,
    YList,
    YMap,
    load_yaml,
    load_yaml_file,
    plain,
)
from kgbuild.resolve.aliases import AliasRegistry
from kgbuild.schema.loader import SCHEMA_DIR, load_schema

BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 9))


def test_duplicate_key_is_an_error_at_its_second_line():
    with pytest.raises(DuplicateKeyError) as info:
        load_yaml("a: 1\nb:\n  c: 1\n  d: 2\n  c: 3\n", "dup.yaml")
    assert (info.value.file, info.value.line) == ("dup.yaml", 5)
    assert "duplicate key 'c' (first at line 3)" in info.value.message
    with pytest.raises(DuplicateKeyError, match="first at line 1"):
        load_yaml("{x: 1, x: 2}\n", "flow.yaml")
    with pytest.raises(DuplicateKeyError):  # equal after YAML typing: 1 and 0x1 are one int
        load_yaml("1: a\n0x1: b\n", "int.yaml")


def test_merge_keys_may_be_overridden_but_not_repeated():
    [doc] = load_yaml("base: &b {x: 1, y: 1}\nthing:\n  <<: *b\n  y: 2\n", "m.yaml")
    assert doc.data["thing"] == {"x": 1, "y": 2}
    [doc] = load_yaml("base: &b {x: 1}\nthing:\n  y: 2\n  <<: *b\n  x: 3\n", "m.yaml")
    assert doc.data["thing"] == {"x": 3, "y": 2}
    with pytest.raises(DuplicateKeyError):
        load_yaml("base: &b {x: 1}\nthing:\n  <<: *b\n  y: 2\n  y: 3\n", "m.yaml")


def test_per_document_errors_keep_the_other_documents():
    text = "a: 1\n---\nb: 1\nb: 2\n---\n" + BOMB + "---\nc: 3\n"
    docs = load_yaml(text, "multi.yaml", per_document=True)
    assert [d.data for d in docs[:2]] == [{"a": 1}, None]
    assert isinstance(docs[1].error, DuplicateKeyError) and docs[1].error.line == 4
    assert docs[2].data is None and "alias bomb" in docs[2].error.message
    assert docs[3].data == {"c": 3} and docs[3].error is None
    with pytest.raises(DuplicateKeyError):
        load_yaml(text, "multi.yaml")
    with pytest.raises(YamlError, match="syntax"):  # a syntax error still ends the stream
        load_yaml("a: 1\n---\nb: [\n", "x.yaml", per_document=True)


def test_deep_nesting_is_an_error_not_a_crash():
    for depth in (1000, 5000, 200_000):
        with pytest.raises(YamlError, match="nest"):
            load_yaml("[" * depth + "]" * depth, "deep.yaml")
    [doc] = load_yaml("[" * 200 + "]" * 200, "ok.yaml")
    inner = doc.data
    for _ in range(199):
        inner = inner[0]
    assert inner == []


def test_load_yaml_file_data_lines_and_bounds(tmp_path):
    f = tmp_path / "f.yaml"
    f.write_text("top:\n  list:\n    - a\n    - {k: v}\nshared: &s [1]\nagain: *s\n")
    doc = load_yaml_file(f)
    assert doc.data == {"top": {"list": ["a", {"k": "v"}]}, "shared": [1], "again": [1]}
    assert type(doc.data) is dict and type(doc.data["top"]["list"]) is list
    assert isinstance(doc.tree, YMap) and isinstance(doc.tree["top"]["list"], YList)
    assert doc.line_of("top") == 1 and doc.line_of("top", "list", 1) == 4
    assert doc.line_of("top", "list", 1, "k") == 4 and doc.line_of("top", "nope") == 1
    data = doc.data
    assert data["shared"] is data["again"]  # an alias stays one value, as yaml.safe_load has it
    assert plain(3) == 3
    f.write_text("")
    assert load_yaml_file(f).data is None and load_yaml_file(f).line_of("x") is None
    f.write_text("a: 1\n---\nb: 2\n")
    with pytest.raises(YamlError, match="one YAML document, found 2") as info:
        load_yaml_file(f)
    assert info.value.line == 3
    f.write_text("x" * 2000)
    with pytest.raises(InputError, match="over the") as info:
        load_yaml_file(f, max_bytes=1000)
    assert not isinstance(info.value, YamlError)
    f.write_bytes(b"a: caf\xe9\n")
    with pytest.raises(InputError, match="not valid UTF-8") as info:
        load_yaml_file(f)
    assert info.value.line == 1
    with pytest.raises(InputError, match="cannot read"):
        load_yaml_file(tmp_path / "missing.yaml")
    f.write_text(BOMB)
    with pytest.raises(YamlError, match="alias bomb"):
        load_yaml_file(f)


def test_schema_with_duplicate_key_is_refused_at_its_line(tmp_path):
    text = (SCHEMA_DIR / "software.yaml").read_text()
    lines = text.splitlines()
    n = next(i for i, line in enumerate(lines) if line.startswith("namespace:"))
    lines.insert(n + 1, lines[n])  # the namespace key, twice
    bad = tmp_path / "dup.yaml"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(SchemaError, match="duplicate key 'namespace'") as info:
        load_schema(bad)
    assert (info.value.file, info.value.line) == (str(bad), n + 2)
    bad.write_text(BOMB)
    with pytest.raises(SchemaError, match="alias bomb") as info:
        load_schema(bad)
    assert info.value.line is not None
    assert load_schema(SCHEMA_DIR / "software.yaml").name == "software"


def test_access_file_with_duplicate_key_is_refused_at_its_line(tmp_path):
    f = tmp_path / "access.yaml"
    f.write_text("rules:\n  - paths: [a/**]\n    labels: [x]\n    labels: [y]\n")
    with pytest.raises(InputError, match="duplicate key 'labels'") as info:
        load_access(f)
    assert (info.value.file, info.value.line) == (str(f), 4)
    f.write_text("rules: []\n" + BOMB)
    with pytest.raises(InputError, match="not a readable YAML file: .*alias bomb") as info:
        load_access(f)
    assert info.value.line is not None


def test_alias_registry_with_duplicate_key_is_refused_at_its_line(tmp_path):
    f = tmp_path / "aliases.yaml"
    f.write_text("aliases:\n  Library:\n    pkg:pypi/pyyaml: [yaml]\n    pkg:pypi/pyyaml: [PyYAML]\n")
    with pytest.raises(InputError, match="duplicate key 'pkg:pypi/pyyaml'") as info:
        AliasRegistry.load(f)
    assert (info.value.file, info.value.line) == (str(f), 4)
    assert AliasRegistry.load(tmp_path / "none.yaml", missing_ok=True).to_dict()["distinct"] == []
    with pytest.raises(InputError, match="not found"):
        AliasRegistry.load(tmp_path / "none.yaml")
    with pytest.raises(InputError, match="cannot read alias registry"):
        AliasRegistry.load(tmp_path)  # a folder


def test_cases_file_with_duplicate_key_is_refused_at_its_line(tmp_path):
    f = tmp_path / "cases.yaml"
    f.write_text("cases:\n  - name: a\n    seeds: [x]\n    name: b\n")
    with pytest.raises(InputError, match="duplicate key 'name'") as info:
        load_cases(f)
    assert (info.value.file, info.value.line) == (str(f), 4)


def test_backstage_entity_with_duplicate_key_is_rejected_alone(tmp_path):
    (tmp_path / "catalog-info.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Group\nmetadata: {name: ok}\n"
        "spec: {type: team, children: []}\n---\n"
        "apiVersion: backstage.io/v1alpha1\nkind: Group\nmetadata:\n  name: twice\n  name: again\n"
        "spec: {type: team, children: []}\n")
    result = build_graph([tmp_path], store=None, validate=False, timestamp=0)
    assert "group:default/ok" in result.graph.nodes
    assert not any("twice" in i or "again" in i for i in result.graph.nodes)
    [p] = result.problems
    assert (p.severity, p.code, p.line) == ("error", "rejected-entity", 10)
    assert p.file.endswith("catalog-info.yaml") and "duplicate key 'name'" in p.message


def test_compose_file_with_duplicate_key_is_reported(tmp_path):
    (tmp_path / "compose.yaml").write_text("services:\n  web: {image: a}\n  web: {image: b}\n")
    result = build_graph([tmp_path], store=None, validate=False, timestamp=0)
    [p] = result.problems
    assert (p.severity, p.line) == ("error", 3) and "duplicate key 'web'" in p.message


@pytest.mark.parametrize("text", ["!!int ", "key: !!int\n", "!!float ''"])
def test_an_empty_explicitly_typed_scalar_is_a_located_error(text):
    # (found by the hostile-input fuzz: PyYAML's int constructor raised IndexError)
    with pytest.raises(YamlError, match="YAML value error") as err:
        load_yaml(text, "catalog-info.yaml")
    assert err.value.line == 1


@pytest.mark.parametrize("text, want", [
    ("1e-06", 1e-06), ("2E3", 2000.0), ("1.5e3", 1500.0), ("-.5e1", -5.0), ("+3e+2", 300.0),
    ("1.0e+5", 100000.0),  # YAML 1.1 reads this one too
    ('"1e-06"', "1e-06"), ("'2E3'", "2E3"), ("!!str 1e3", "1e3"),  # quoted or tagged: text
    ("e5", "e5"), ("1e", "1e"), ("1_0e3", "1_0e3"), ("0x1e3", 0x1e3),
])
def test_numbers_with_an_exponent_are_yaml_1_2_floats(text, want):
    # PyYAML (YAML 1.1) reads 1e-06 as the text "1e-06": a serve config's limit then failed
    # "must be a number"; Backstage and Compose (YAML 1.2) read a number
    [doc] = load_yaml(f"a: {text}\nb: [{text}]\n", "f.yaml")
    assert doc.data["a"] == want and type(doc.data["a"]) is type(want)
    assert doc.data["b"] == [want]


@pytest.mark.parametrize("text", ["2024-13-45", "9" * 5000])
def test_a_plain_scalar_python_cannot_hold_is_kept_as_its_text(text):
    # with libyaml a plain scalar's style is "" (PyYAML's own parser: None): the fallback
    # tested `is None` and raised "YAML value error" for these under libyaml
    [doc] = load_yaml(f"a: {text}\n", "f.yaml")
    assert doc.data["a"] == text
    with pytest.raises(YamlError, match="YAML value error") as err:
        load_yaml(f"a: !!timestamp {text}\n" if "-" in text else f"a: !!int {text}\n", "f.yaml")
    assert err.value.line == 1
