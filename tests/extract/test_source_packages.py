"""Shared helpers: JSON pointers and their lines, document-scoped IDs, guarded JSON parsing."""

import json

import pytest

from kgbuild.errors import InputError
from kgbuild.extract.manifests.packages import (
    json_lines,
    json_pointer,
    parse_json,
    python_dir_id,
    scoped_id,
)


def test_json_pointer_escapes():
    assert json_pointer("devDependencies", "@backstage/cli") == "/devDependencies/@backstage~1cli"
    assert json_pointer("a~b", 0) == "/a~0b/0"
    assert json_pointer() == ""


def test_json_lines_follow_the_text():
    text = ('{\n  "a": 1,\n  "b": [\n    "x",\n    {"c": null, "d/e": [ ]},\n    []\n  ],\n'
            '  "f": {},\n  "g~": "q\\"]},[{",\n  "h": [1,\n  2]\n}')
    json.loads(text)
    assert json_lines(text) == {"": 1, "/a": 2, "/b": 3, "/b/0": 4, "/b/1": 5, "/b/1/c": 5,
                                "/b/1/d~1e": 5, "/b/2": 6, "/f": 8, "/g~0": 9, "/h": 10,
                                "/h/0": 10, "/h/1": 11}
    assert json_lines('"x"') == {"": 1}
    assert json_lines("\n\n[true]") == {"": 3, "/0": 3}


def test_parse_json_locates_errors():
    with pytest.raises(InputError) as err:
        parse_json('{\n  "a": 1,\n  "b": \n}', "f.json")
    assert (err.value.file, err.value.line) == ("f.json", 4)
    with pytest.raises(InputError) as err:
        parse_json("[" * 100_000 + "]" * 100_000, "deep.json")
    assert "nested too deeply" in err.value.message and err.value.line == 1


def test_scoped_ids():
    assert scoped_id("repo/bom.json", "acme-app") == "repo/bom.json#acme-app"
    assert python_dir_id("repo/svc/requirements.txt") == "repo/svc#python"
    assert python_dir_id("requirements.txt") == ".#python"
