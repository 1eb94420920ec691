"""Entity-reference parsing, with Backstage's grammar and defaults."""

import pytest

from kgbuild.graph.refs import (
    EntityRef,
    RefError,
    is_valid_kind,
    is_valid_name,
    is_valid_namespace,
    parse_ref,
    split_ref,
)


@pytest.mark.parametrize("ref, expected", [
    ("artist-web", (None, None, "artist-web")),
    ("component:artist-web", ("component", None, "artist-web")),
    ("default/artist-web", (None, "default", "artist-web")),
    ("component:default/artist-web", ("component", "default", "artist-web")),
    ("Component:Default/Artist-Web", ("Component", "Default", "Artist-Web")),
    # a '/' before the first ':' means the colon belongs to the name
    ("ns/name:with-colon", (None, "ns", "name:with-colon")),
    ("a:b:c", ("a", None, "b:c")),
    ("kind:ns/a/b", ("kind", "ns", "a/b")),
    ("grpc@example.com", (None, None, "grpc@example.com")),
])
def test_split_ref(ref, expected):
    assert split_ref(ref) == expected


@pytest.mark.parametrize("ref", [":name", "kind:/name", "/name", "kind:", "ns/", "", "kind:ns/"])
def test_empty_parts_are_errors(ref):
    with pytest.raises(RefError):
        split_ref(ref)


def test_non_string_ref():
    with pytest.raises(RefError, match="must be a string"):
        split_ref(42)


def test_defaults_kind_and_namespace_from_the_field_and_referrer():
    assert parse_ref("team-a", "Group", "alternative") == EntityRef("Group", "alternative", "team-a")
    assert parse_ref("default/team-a", "Group", "alternative") == EntityRef("Group", "default", "team-a")
    assert parse_ref("user:guest", "Group", "ns1") == EntityRef("user", "ns1", "guest")


def test_missing_kind_without_default_is_an_error():
    with pytest.raises(RefError, match="no kind"):
        parse_ref("pgdb", None)
    assert str(parse_ref("resource:pgdb", None)) == "resource:default/pgdb"


def test_stable_form_is_lowercase():
    assert str(parse_ref("Component:Default/Artist-Web")) == "component:default/artist-web"
    assert str(parse_ref("API:petstore")) == "api:default/petstore"


def test_compound_refs():
    assert str(parse_ref({"kind": "Group", "name": "Ops"}, None, "x")) == "group:x/ops"
    with pytest.raises(RefError):
        parse_ref({"kind": "Group"})


@pytest.mark.parametrize("name, ok", [
    ("a", True), ("artist-web", True), ("a.b_c-d", True), ("A1", True), ("x" * 63, True),
    ("x" * 64, False), ("", False), ("-a", False), ("a-", False), ("invalid component", False),
    ("a..b", True), (None, False), (3, False),
])
def test_names(name, ok):
    assert is_valid_name(name) is ok


@pytest.mark.parametrize("ns, ok", [("default", True), ("team-1", True), ("Default", False),
                                    ("a_b", False), ("-a", False), ("", False)])
def test_namespaces(ns, ok):
    assert is_valid_namespace(ns) is ok


@pytest.mark.parametrize("kind, ok", [("Component", True), ("API", True), ("AiResource", True),
                                      ("1Kind", False), ("my-kind", False), ("", False)])
def test_kinds(kind, ok):
    assert is_valid_kind(kind) is ok
