"""Incremental validation equals the full run on the nodes a change touched, and nothing else
changes: full-after == (full-before minus the touched nodes) plus the incremental results."""

import json
import random
import shutil

import pytest
from conftest import BACKSTAGE, FIXTURE_CATALOG
from rdflib.namespace import RDF, SH

from kgbuild.project.pipeline import build_graph
from kgbuild.project.validation import validate_target
from kgbuild.validate.incremental import LAST_CHANGE
from kgbuild.errors import InputError
from kgbuild.graph.model import id_from_iri, node_iri, source_iri
from kgbuild.schema.namespaces import KG, NODES_GRAPH
from kgbuild.schema.shapes import all_shapes
from kgbuild.store.graphstore import GraphStore
from kgbuild.validate.hygiene import HygieneOptions
from kgbuild.validate.incremental import changed_focus, touched_terms, validate_changed
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
    focus = changed_focus(result.store, changed, result.touched)
    assert result.touched  # the deleted document's nodes, read before the change
    # the schema's classes and properties are no touched nodes: every node points at them, so
    # with them the focus was nearly the whole store (90,526 of 90,528 nodes at 1M triples)
    own = set(schema.type_by_iri) | set(schema.edge_by_iri)
    assert not own & (set(touched_terms(result.store, changed)) | set(result.touched))
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


KINDS = ["Component", "Resource", "System", "Group", "User", "API", "Domain"]


def random_edit(folder, rng) -> str:
    """One random edit of a catalog's YAML files, some of which change a node's type (what
    makes the nodes pointing at it change too) or point an edge somewhere new."""
    files = sorted(p for p in folder.rglob("*.yaml") if p.is_file())
    path = rng.choice(files)
    text = path.read_text()
    op = rng.choice(["retype", "retype", "owner", "depends", "delete", "copy", "describe"])
    if op == "retype" and "kind: " in text:
        kind = text.split("kind: ", 1)[1].split("\n", 1)[0]
        path.write_text(text.replace(f"kind: {kind}", f"kind: {rng.choice([k for k in KINDS if k != kind])}", 1))
    elif op == "owner" and "owner: " in text:
        names = [p.read_text().split("  name: ", 1)[1].split("\n", 1)[0] for p in files
                 if "  name: " in p.read_text()]
        head, rest = text.split("owner: ", 1)
        path.write_text(head + "owner: " + rng.choice(names) + "\n" + rest.split("\n", 1)[1])
    elif op == "depends" and "spec:\n" in text:
        path.write_text(text.replace("spec:\n", f"spec:\n  dependsOn: [component:nowhere-{rng.randrange(3)}]\n", 1)
                        if "dependsOn" not in text else text.replace("dependsOn:", "dependsOn: []\n  x:", 1))
    elif op == "delete" and len(files) > 3:
        path.unlink()
    elif op == "copy" and "  name: " in text:
        (path.parent / f"copy-{rng.randrange(10**6)}-{path.name}").write_text(
            text.replace("  name: ", "  name: copy-", 1))
    else:
        path.write_text(text.replace("metadata:\n", "metadata:\n  description: edited\n", 1))
        op = "describe"
    return f"{op} {path.name}"


def random_damage(store, schema, rng) -> None:
    """Violations no build makes, in random documents' graphs: a bare edge, an assertion
    without confidence, an assertion moved to another object, a second type."""
    with GraphStore(store, schema) as gs:
        rows = list(gs._db.query("SELECT ?g ?a ?s ?o WHERE { GRAPH ?g { ?a <http://www.w3.org/1999/"
                                 "02/22-rdf-syntax-ns#subject> ?s ; <http://www.w3.org/1999/02/"
                                 "22-rdf-syntax-ns#object> ?o } } ORDER BY ?a"))
        for _ in range(4):
            g, a, s, o = (rows[rng.randrange(len(rows))][k] for k in ("g", "a", "s", "o"))
            other = rows[rng.randrange(len(rows))]["o"]
            op = rng.choice(["bare", "confidence", "move", "type", "hide-type"])
            if op == "bare":
                edge = rng.choice(sorted(e.iri for e in schema.edge_types.values()))
                gs._db.update(f"INSERT DATA {{ GRAPH {g} {{ {s} <{edge}> {other} }} }}")
            elif op == "confidence":
                gs._db.update(f"DELETE WHERE {{ GRAPH {g} {{ {a} <{KG.confidence}> ?c }} }}")
            elif op == "move":
                gs._db.update(f"DELETE WHERE {{ GRAPH {g} {{ {a} <http://www.w3.org/1999/02/22-rdf-"
                              f"syntax-ns#object> ?x }} }}; INSERT DATA {{ GRAPH {g} {{ {a} "
                              f"<http://www.w3.org/1999/02/22-rdf-syntax-ns#object> {other} }} }}")
            elif op == "type":
                t = rng.choice(sorted(t.iri for t in schema.node_types.values()))
                gs._db.update(f"INSERT DATA {{ GRAPH {g} {{ {o} a <{t}> }} }}")
            else:
                hide_type(gs, o, g)


def hide_type(gs, node, graph) -> None:
    """Move ``node``'s resolved type into ``graph`` (a document that does not define it):
    rebuilding that document leaves it without a type."""
    gs._db.update(f"DELETE {{ GRAPH <{NODES_GRAPH}> {{ {node} a ?t }} }} INSERT {{ GRAPH {graph} "
                  f"{{ {node} a ?t }} }} WHERE {{ GRAPH <{NODES_GRAPH}> {{ {node} a ?t }} }}")


HYGIENE = HygieneOptions(checks=("undefined", "hubs", "weak"), hub_degree=3, min_confidence=0.95)


def findings(report):
    return {(f.check, f.node, f.message) for f in report.hygiene}


def follow_edits(folder, store, schema, seed, steps: int) -> int:
    """After each random edit, a build's incremental report equals the full run on its focus
    nodes, and the full run off them is what it was before the build (hygiene findings too);
    how many results and findings the incremental reports found."""
    rng = random.Random(seed)
    build_graph([folder], store=store, timestamp=0, validate=False).store.close()
    random_damage(store, schema, rng)
    found = 0
    for _ in range(steps):
        with GraphStore(store, schema, write=False) as gs:
            before = keys(validate_store(gs))
        did = random_edit(folder, rng)
        result = build_graph([folder], store=store, timestamp=0)
        inc = result.validation
        changed = [d for k in ("changed", "added", "deleted") for d in result.changes[k]]
        if inc is None or inc.scope is None:  # nothing changed, or validated whole
            result.store.close()
            continue
        focus = changed_focus(result.store, changed, result.touched)
        full = validate_store(result.store, hygiene=HYGIENE)
        again = validate_changed(result.store, changed, before=result.touched, hygiene=HYGIENE)
        result.store.close()
        after = keys(full)
        assert keys(inc) == keys(again) == {k for k in after if k[0] in focus}, did
        assert after == {k for k in before if k[0] not in focus} | keys(inc), did
        ids = {id_from_iri(f) for f in focus}
        assert findings(again) == {f for f in findings(full) if f[1] is None or f[1] in ids}, did
        found += len(inc.results) + len(again.hygiene)
    return found


@pytest.mark.slow
def test_incremental_equals_full_after_random_edits(tmp_path, schema):
    folder = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, folder)
    assert follow_edits(folder, tmp_path / "store", schema, 3, 12) > 0


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.parametrize("name", ["backstage-demo", "janus-idp-backstage-showcase"])
def test_incremental_equals_full_after_random_edits_of_real_catalogs(tmp_path, schema, name):
    folder = tmp_path / name
    shutil.copytree(BACKSTAGE / name, folder)
    follow_edits(folder, tmp_path / "store", schema, name, 8)


def test_a_node_losing_its_type_rechecks_the_nodes_pointing_at_it(project, schema):
    """The edges into a node whose types a change alters are checked again when a shape
    reads a value's type through a property (``sh:class`` on ``ownedBy``: a user shape;
    kgbuild's own range shapes target the value itself), though their documents did not
    change."""
    root, store = project
    build_graph([root], store=store, timestamp=0).store.close()
    team = f"<{node_iri('group:default/commerce-platform')}>"  # web-shop.yaml names it nowhere
    shapes = all_shapes(schema)
    shapes.parse(data=f"""@prefix sh: <http://www.w3.org/ns/shacl#> .
        <urn:test#Owner> sh:targetClass <{schema.node_types['Component'].iri}> ; sh:property [
          sh:path <{schema.edge_types['ownedBy'].iri}> ; sh:class <{schema.node_types['Group'].iri}> ;
          sh:message "owned by a group" ] .""", format="turtle")
    with GraphStore(store, schema) as gs:
        hide_type(gs, team, f"<{source_iri('catalog/components/web-shop.yaml')}>")
        assert validate_store(gs, shapes=shapes).conforms
    web = root / "components" / "web-shop.yaml"
    web.write_text(web.read_text().replace("description:", "description: Changed.", 1))
    result = build_graph([root], store=store, timestamp=0, validate=False)
    changed = result.changes["changed"]
    assert changed == ["catalog/components/web-shop.yaml"]
    inc = validate_changed(result.store, changed, before=result.touched, shapes=shapes)
    focus = changed_focus(result.store, changed, result.touched)
    full = validate_store(result.store, shapes=shapes)
    result.store.close()
    assert keys(inc) == {k for k in keys(full) if k[0] in focus}
    owned = {v.focus for v in inc.violations if v.message == "owned by a group"}
    assert owned == {"component:default/payments-service", "component:default/pricing-sdk"}


def test_an_assertion_elsewhere_about_a_removed_edge_is_checked_again(project, schema):
    """An assertion kept in another document's graph (a hand-edited store) that describes an
    edge a change removes now describes nothing: it is re-checked, though its document did
    not change."""
    root, store = project
    build_graph([root], store=store, timestamp=0).store.close()
    web, pay = source_iri("catalog/components/web-shop.yaml"), source_iri("catalog/components/payments.yaml")
    depends = schema.edge_types["dependsOn"].iri
    with GraphStore(store, schema) as gs:
        gs._db.update(
            f"INSERT {{ GRAPH <{pay}> {{ <urn:copy> ?p ?o }} }} WHERE {{ GRAPH <{web}> {{ ?a "
            f"<{RDF.predicate}> <{depends}> ; ?p ?o }} }}")
        before = keys(validate_store(gs))
    path = root / "components" / "web-shop.yaml"
    path.write_text(path.read_text().replace("  dependsOn: [component:checkout-service]\n", ""))
    result = build_graph([root], store=store, timestamp=0)
    inc = result.validation
    focus = changed_focus(result.store, result.changes["changed"], result.touched)
    after = keys(validate_store(result.store))
    result.store.close()
    assert "urn:copy" in focus
    assert ("urn:copy", "None", str(SH.SPARQLConstraintComponent), "urn:copy") in \
        {k[:4] for k in keys(inc)}
    assert after == {k for k in before if k[0] not in focus} | keys(inc)
