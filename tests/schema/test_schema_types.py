"""The schema loader checks the type of every field and the form of every IRI, so that what
``schema check`` accepts every command can use."""

import pytest

from kgbuild.errors import SchemaError
from kgbuild.schema.loader import is_iri, parse_schema


def base(**changes):
    doc = {"name": "s", "namespace": "https://e.org/s#",
           "node_types": {"A": {}, "B": {"parent": "A"}},
           "edge_types": {"e": {"domain": "A", "range": ["A", "B"], "inverse": "f"}},
           "attributes": {"size": {"datatype": "integer"}}}
    for path, value in changes.items():
        *parents, last = path.split("__")
        node = doc
        for p in parents:
            node = node[p]
        node[last] = value
    return doc


def test_the_base_schema_loads():
    s = parse_schema(base())
    assert s.prefix == "s" and s.node_types["B"].parent == "A"


@pytest.mark.parametrize("changes, words", [
    ({"name": 5}, "name must be a one-line text"),
    ({"name": "a\nb"}, "name must be a one-line text"),
    ({"prefix": True}, "prefix True is not a valid name"),
    ({"prefix": "xsd"}, "prefix 'xsd' is one kgbuild binds itself"),
    ({"name": "my schema"}, "is no Turtle prefix"),
    ({"version": True}, "version must be an integer"),
    ({"version": 2**40}, "version must be an integer"),
    ({"description": ["x"]}, "schema 's': description must be text"),
    ({"node_types__B__parent": ["A"]}, "parent must be a type name, got a list"),
    ({"node_types__B__description": {"x": 1}}, "description must be text, got a mapping"),
    ({"edge_types__e__domain": [["A"]]}, "unknown type ['A'] in domain"),
    ({"edge_types__e__inverse": ["f"]}, "inverse must be a name, got a list"),
    ({"edge_types__e__transitive": "yes"}, "transitive must be true or false"),
    ({"attributes__size__datatype": ["integer"]}, "unknown datatype ['integer']"),
    ({"attributes__size__multiple": "no"}, "multiple must be true or false"),
    ({"namespace": 5}, "namespace must be an absolute IRI"),
    ({"namespace": "https://e.org/s>#"}, "namespace must be an absolute IRI"),
    ({"namespace": "https://e.org/a\u0001#"}, "namespace must be an absolute IRI"),
    ({"namespace": "https://e.org/a#b/"}, "namespace must be an absolute IRI"),
    ({"node_types__A__iri": "https://e.org/x\u0001y"}, "iri must be an absolute IRI"),
    ({"node_types__A__iri": "https://e.org/%zz"}, "iri must be an absolute IRI"),
])
def test_a_field_of_the_wrong_type_or_form_is_refused(changes, words):
    with pytest.raises(SchemaError) as info:
        parse_schema(base(**changes))
    assert words in str(info.value)


@pytest.mark.parametrize("where", ["top", "node_types", "edge_types", "edge", "attributes"])
@pytest.mark.parametrize("key", [1, None, True, 1.5])
def test_a_key_that_is_not_a_name_is_refused_with_what_it_is(where, key):
    doc = base()
    target = {"top": doc, "node_types": doc["node_types"], "edge_types": doc["edge_types"],
              "edge": doc["edge_types"]["e"], "attributes": doc["attributes"]}[where]
    target[key] = {}
    with pytest.raises(SchemaError) as info:
        parse_schema(doc)
    assert "must be a name" in str(info.value) or "name" in str(info.value)


@pytest.mark.parametrize("iri, ok", [
    ("https://e.org/x", True), ("urn:isbn:123", True), ("http://e.org/é", True),
    ("https://e.org/a%20b", True), ("https://e.org/a b", False), ("https://e.org/<x>", False),
    ('https://e.org/"x', False), ("https://e.org/{x}", False), ("https://e.org/a|b", False),
    ("https://e.org/a^b", False), ("https://e.org/a`b", False), ("https://e.org/a\\b", False),
    ("https://e.org/a#b#c", False), ("https://e.org/%zz", False), ("relative/x", False),
    ("https://e.org/\ufffe", False), (5, False)])
def test_is_iri_is_strict(iri, ok):
    assert is_iri(iri) is ok
