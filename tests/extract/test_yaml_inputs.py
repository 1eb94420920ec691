"""Hostile and broken YAML: reported with file and line, skipped, the build goes on."""

from pathlib import Path

import pytest

from kgbuild.project.pipeline import build_graph
from kgbuild.errors import InputError
from kgbuild.io.text import decode_text
from kgbuild.io.yamlfile import load_yaml

GROUP = ("apiVersion: backstage.io/v1alpha1\nkind: Group\nmetadata: {name: ok}\n"
         "spec: {type: team, children: []}\n")


def build_with(tmp_path: Path, name: str, data: bytes):
    (tmp_path / "good.yaml").write_text(GROUP)
    (tmp_path / name).write_bytes(data)
    result = build_graph([tmp_path], validate=False, timestamp=0)
    assert "group:default/ok" in result.graph.nodes  # the rest of the build completed
    return [p for p in result.problems if p.file.endswith(name)]


def test_syntax_error(tmp_path):
    [p] = build_with(tmp_path, "bad.yaml",
                     b"apiVersion: backstage.io/v1alpha1\nkind: Group\nmetadata:\n  name: [x\n")
    assert p.severity == "error" and "YAML syntax error" in p.message and p.line == 5


def test_non_utf8(tmp_path):
    [p] = build_with(tmp_path, "latin1.yaml",
                     b"apiVersion: backstage.io/v1alpha1\nkind: Group\nmetadata:\n  name: caf\xe9\n")
    assert "not valid UTF-8" in p.message and p.line == 4


def test_alias_bomb(tmp_path):
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        levels.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    text = "apiVersion: backstage.io/v1alpha1\nkind: Group\n" + "\n".join(levels) + "\n"
    [p] = build_with(tmp_path, "bomb.yaml", text.encode())
    assert "alias bomb" in p.message and p.line is not None


def test_fifty_megabyte_file(tmp_path):
    filler = b"# " + b"x" * 98 + b"\n"
    data = b"apiVersion: backstage.io/v1alpha1\nkind: Group\n" + filler * (50 * 1024 * 1024 // 100)
    [p] = build_with(tmp_path, "huge.yaml", data)
    assert "over the 20 MiB limit" in p.message


def test_binary_file_with_catalog_name(tmp_path):
    [p] = build_with(tmp_path, "catalog-info.yaml", b"apiVersion: backstage.io/\x00\x01kind\x02")
    assert "binary" in p.message and p.line == 1


def test_document_that_is_not_a_mapping(tmp_path):
    [p] = build_with(tmp_path, "list.yaml", b"- backstage.io/v1alpha1\n- kind\n")
    assert p.code == "rejected-entity" and p.line == 1


def test_recursive_alias_is_refused():
    with pytest.raises(InputError, match="recursive"):
        load_yaml("a: &a [*a]\n", "rec.yaml")


def test_merge_keys_and_lines():
    [doc] = load_yaml("base: &b {x: 1}\nthing:\n  <<: *b\n  y: 2\n", "m.yaml")
    assert doc.data["thing"] == {"x": 1, "y": 2}
    assert doc.data["thing"].line_of("y") == 4


def test_utf8_bom_is_accepted():
    assert decode_text(b"\xef\xbb\xbfname: x\n", "f") == "name: x\n"
