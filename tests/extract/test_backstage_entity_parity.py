"""One entity, two ways in: written into a catalog file, or served as JSON by the catalog
API (``extract_entity``), it yields the same nodes, relations and rejections, whatever the
entity (generated, many of them ones Backstage would refuse); from the API, every relation
carries the JSON pointer of its entry, which holds the ref it names."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgbuild.extract.manifests.backstage import BackstageExtractor, extract_entity
from kgbuild.extract.records import Context, SourceFile
from kgbuild.schema.loader import load_schema

SCHEMA = load_schema("software")
def pick(*options):
    return st.sampled_from(options)


refs = pick("team-a", "group:team-b", "component:web", "resource:default/db", "system:shop",
            "api:pets", "user:u", "default/x", "shop/y", "a:b:c", "", "Bad Name", "domain:d",
            "component:other/Web")
scalars = st.none() | st.booleans() | st.integers(-5, 5) | pick("", "x", "production")
fields = pick("owner", "type", "lifecycle", "system", "dependsOn", "dependencyOf",
              "providesApis", "consumesApis", "memberOf", "children", "parent", "members",
              "definition", "subcomponentOf", "domain", "subdomainOf", "profile", "steps")
entities = st.builds(
    lambda api, kind, name, spec, meta: {"apiVersion": api, "kind": kind,
                                         "metadata": {"name": name, **meta}, "spec": spec},
    pick("backstage.io/v1alpha1", "backstage.io/v1beta1", "scaffolder.backstage.io/v1beta3",
         "v1", 3),
    pick("Component", "API", "Group", "User", "Resource", "System", "Domain", "Location",
         "Template", "AiResource", 5),
    pick("svc", "web", "a" * 64, "", "x y"),
    st.dictionaries(fields, refs | st.lists(refs, max_size=4) | scalars, max_size=7),
    st.dictionaries(pick("namespace", "title", "description", "tags", "labels"),
                    pick("default", "shop", "", "Bad NS") | st.lists(pick("ok", "Bad"), max_size=2)
                    | st.dictionaries(pick("a", "kgbuild.dev/access"), pick("pci", "x y")),
                    max_size=3))


def _records(extraction):
    nodes = sorted((n.id, n.type, n.label) for n in extraction.nodes)
    edges = sorted((e.subject, e.predicate, e.object) for e in extraction.edges)
    # (a mapping's repr in a message: a YAML mapping's keys as written, a dict's sorted)
    refused = sorted(re.sub(r"\{.*\}", "{...}", p.message) for p in extraction.problems
                     if p.code == "rejected-entity")
    return nodes, edges, refused


@pytest.mark.slow  # about 4 s
@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(entity=entities)
def test_a_file_and_the_api_read_an_entity_alike(tmp_path, entity):
    path = tmp_path / "catalog-info.yaml"
    path.write_text(json.dumps(entity))  # JSON is YAML: the same values either way
    ctx = Context(SCHEMA, [tmp_path])
    from_file = BackstageExtractor().extract(SourceFile(path, "catalog-info.yaml", tmp_path), ctx)
    from_api = extract_entity(json.loads(json.dumps(entity)), "http://b/x", ctx)
    assert _records(from_api) == _records(from_file)
    for edge in from_api.edges:
        assert edge.line is None and edge.pointer.startswith("/spec/")
        stated = entity
        for step in edge.pointer.strip("/").split("/"):
            stated = stated[int(step) if isinstance(stated, list) else step]
        assert edge.evidence.endswith(f": {stated}")
    assert all(p.line is None and p.file == "http://b/x" for p in from_api.problems)


def test_an_item_that_is_no_mapping_is_refused():
    ctx = Context(SCHEMA, [])
    for item in (None, [], "component:x", 3):
        out = extract_entity(item, "http://b/x", ctx)
        assert [p.code for p in out.problems] == ["rejected-entity"] and not out.nodes
