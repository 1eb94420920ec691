"""Incremental validation equals the full run on the nodes a change touched, and nothing else
changes: full-after == (full-before minus the touched nodes) plus the incremental results."""

import json
import shutil

import pytest
from conftest import FIXTURE_CATALOG

from kgbuild.build.pipeline import build_graph
from kgbuild.build.validation import LAST_CHANGE, validate_target
from kgbuild.errors import InputError
from kgbuild.graph.model import node_iri, source_iri
from kgbuild.schema.namespaces import KG
from kgbuild.store.graphstore import GraphStore
from kgbuild.validate.incremental import focus_nodes, touched_terms
from kgbuild.validate.validator import validate_store


def keys(report):
    return {(str(r.focus), str(r.path), str(r.component), str(r.value), str(r.message))
            for r in report.results}


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, root)
    return root, tmp_path / "store"


def damage(store, schema):
    """Violations a build cannot make: a bare edge in web-shop.yaml's graph (gone once that
    file is rebuilt) and an assertion without confidence in payments.yaml's (kept)."""
    web, pay = source_iri("catalog/components/web-shop.yaml"), source_iri("catalog/components/payments.yaml")
    edge = f"<{node_iri('component:default/web-shop')}> <{schema.edge_types['dependsOn'].iri}> " \
           f"<{node_iri('component:default/pricing-sdk')}>"
    with GraphStore(store, schema) as gs:
        gs._db.update(f"INSERT DATA {{ GRAPH <{web}> {{ {edge} }} }}")
        [row] = list(gs._db.query(f"SELECT ?a WHERE {{ GRAPH <{pay}> {{ ?a <{KG.confidence}> ?c }} }} "
                                  f"ORDER BY ?a LIMIT 1"))
        gs._db.update(f"DELETE WHERE {{ GRAPH <{pay}> {{ {row['a']} <{KG.confidence}> ?c }} }}")


def edit(root):
    """web-shop.yaml changes (its description); teams.yaml is deleted."""
    web = root / "components" / "web-shop.yaml"
    web.write_text(web.read_text().replace("description:", "description: Changed.", 1))
    (root / "org" / "teams.yaml").unlink()


def test_incremental_equals_full_on_touched_nodes(project, schema):
    root, store = project
    first = build_graph([root], store=store, timestamp=0)
    assert first.validation is not None and first.validation.scope is None  # new store: full
    first.store.close()
    damage(store, schema)
    with GraphStore(store, schema, write=False) as gs:
        before = validate_store(gs)
    assert {v.rule for v in before.violations} == {"EdgeCoverage", "sh:MinCountConstraintComponent"}
    edit(root)
    result = build_graph([root], store=store, timestamp=0)
    inc = result.validation
    changed = [d for k in ("changed", "deleted") for d in result.changes[k]]
    assert sorted(changed) == ["catalog/components/web-shop.yaml", "catalog/org/teams.yaml"]
    assert inc.scope and inc.scope.startswith("validated ")
    focus = focus_nodes(result.store, touched_terms(result.store, changed) | result.touched)
    assert result.touched  # the deleted document's nodes, read before the change
    # the schema's classes and properties are no touched nodes: every node points at them, so
    # with them the focus was nearly the whole store (90,526 of 90,528 nodes at 1M triples)
    own = set(schema.type_by_iri) | set(schema.edge_by_iri)
    assert not own & (touched_terms(result.store, changed) | result.touched)
    subjects = {r["s"].value for r in result.store.sparql(
        "SELECT DISTINCT ?s WHERE { ?s ?p ?o FILTER(isIRI(?s)) }", union=True)}
    assert len(focus) < len(subjects) / 2
    after = validate_store(result.store)
    in_focus = {k for k in keys(after) if k[0] in focus}
    assert keys(inc) == in_focus
    assert keys(after) == {k for k in keys(before) if k[0] not in focus} | keys(inc)
    assert {v.rule for v in after.violations} == {"sh:MinCountConstraintComponent"}  # bare edge gone
    assert all(v.where.startswith("catalog/components/payments.yaml:") for v in after.violations)
    result.store.close()
    recorded = json.loads((store / LAST_CHANGE).read_text())
    assert recorded["documents"] == sorted(changed)
    again = validate_target(schema, store=store, changed=True, hygiene=None)
    assert keys(again) == keys(inc)


def test_no_change_validates_nothing(project):
    root, store = project
    build_graph([root], store=store, timestamp=0).store.close()
    result = build_graph([root], store=store, timestamp=0)
    assert result.validation is None and "no document changed" in result.validation_note
    result.store.close()


def test_changed_needs_a_recorded_change(project, schema):
    root, store = project
    build_graph([root], store=store, timestamp=0).store.close()
    (store / LAST_CHANGE).unlink()
    with pytest.raises(InputError, match="no recorded build change"):
        validate_target(schema, store=store, changed=True)
