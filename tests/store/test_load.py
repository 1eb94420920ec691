"""``kgbuild load FILE...``: graph files into a store, walked as the files are walked with
--graph; the same content is not read again, a changed file replaces its document, a file
that cannot be read leaves the store as it was."""

from __future__ import annotations

import json
import os
import shutil

import pyoxigraph as ox
import pytest
from click.testing import CliRunner
from conftest import REPO

from kgbuild import Project
from kgbuild.cli.main import main

FOREIGN = REPO / "fixtures" / "foreign"
LAB, SCHEMA = FOREIGN / "lab.nt", FOREIGN / "lab-schema.yaml"
WALKS = [("k1", "locationOf/locationOf/employs"), ("w1", "citedBy/citedBy/writtenBy"),
         ("p2", "bornIn/bornIn:in/authorOf/cites:in")]
FORMATS = {"ttl": ox.RdfFormat.TURTLE, "nq": ox.RdfFormat.N_QUADS, "trig": ox.RdfFormat.TRIG,
           "jsonld": ox.RdfFormat.JSON_LD, "rdf": ox.RdfFormat.RDF_XML}


def run(*args, code=0):
    r = CliRunner().invoke(main, [*args, "--schema", str(SCHEMA)])
    assert r.exit_code == code, r.output
    return r


def load(store, *files, code=0):
    return run("load", *map(str, files), "--store", str(store), "--format", "json", code=code)


def walk(seed, path, *where):
    r = CliRunner().invoke(main, ["traverse", *where, "--schema", str(SCHEMA), "--seed", seed,
                                  "--path", path, "--no-cap", "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


def as_format(tmp_path, suffix):
    """lab.nt written as ``suffix`` (the quad formats with the triples in a named graph)."""
    quads = [ox.Quad(q.subject, q.predicate, q.object, ox.NamedNode("http://example.org/g"))
             if suffix in ("nq", "trig") else q
             for q in ox.parse(path=str(LAB), format=ox.RdfFormat.N_TRIPLES)]
    out = tmp_path / f"lab.{suffix}"
    if suffix in ("nq", "trig"):
        ox.serialize(quads, output=str(out), format=FORMATS[suffix])
    else:
        ox.serialize([q.triple for q in quads], output=str(out), format=FORMATS[suffix])
    return out


def state(store, files=True):
    """What a load that changes nothing leaves as it is: the database named (and, when it did
    not need to open it for writing, its files), the read model named."""
    current = (store / "CURRENT").read_text()
    db = store / current.split()[0]
    return current, (store / "model" / "current").read_text(), \
        sorted((p.name, p.stat().st_mtime_ns) for p in db.iterdir()) if files else None


@pytest.mark.parametrize("suffix", ["nt", *FORMATS])
def test_a_loaded_file_walks_as_the_file_does(tmp_path, suffix):
    graph = LAB if suffix == "nt" else as_format(tmp_path, suffix)
    out = json.loads(load(tmp_path / "st", graph).stdout)
    assert out["files"] == [{"file": str(graph), "document": str(graph.resolve()),
                             "status": "added", "quads": 116}]
    stats = json.loads(run("stats", "--graph", str(LAB), "--format", "json").stdout)
    assert (out["nodes"], out["edges"]) == (stats["nodes"], stats["edges"]) == (20, 38)
    assert json.loads(run("stats", "--store", str(tmp_path / "st"), "--format", "json").stdout) \
        == stats
    for seed, path in WALKS:
        from_file = walk(seed, path, "--graph", str(LAB))
        assert from_file["answers"]
        assert walk(seed, path, "--store", str(tmp_path / "st")) == from_file


def test_reloading_the_same_content_is_a_no_op(tmp_path):
    store = tmp_path / "st"
    load(store, LAB)
    before = state(store)
    out = json.loads(load(store, LAB, LAB).stdout)
    assert [f["status"] for f in out["files"]] == ["unchanged"]
    assert out["files"][0]["quads"] is None and state(store) == before


@pytest.mark.slow
def test_a_changed_file_replaces_its_document_and_keeps_the_others(tmp_path):
    store, graph, other = tmp_path / "st", tmp_path / "lab.nt", as_format(tmp_path, "ttl")
    text = LAB.read_text()
    graph.write_text(text)
    other.rename(tmp_path / "other.ttl")
    other = tmp_path / "other.ttl"
    load(store, graph)
    seed, path = WALKS[1]
    before = walk(seed, path, "--store", str(store))
    # w1 loses its citers in lab.nt; other.ttl still says them
    cited_by = "<http://example.org/paper/1> <http://example.org/vocab#citedBy>"
    graph.write_text("".join(line + "\n" for line in text.splitlines()
                             if "vocab#cites> <http://example.org/paper/1>" not in line
                             and not line.startswith(cited_by)))
    out = json.loads(load(store, graph, other).stdout)
    assert [f["status"] for f in out["files"]] == ["changed", "added"]
    assert walk(seed, path, "--store", str(store)) == before  # other.ttl has the edges
    out = json.loads(run("load", str(graph), "--store", str(store), "--format", "json").stdout)
    assert out["files"][0]["status"] == "unchanged"
    with Project.open(tmp_path, store=store, schema=SCHEMA).store() as st:
        assert sorted(st.documents()) == [str(graph.resolve()), str(other.resolve())]
    os.remove(other)
    lone = tmp_path / "lone"
    load(lone, graph)
    assert walk(seed, path, "--store", str(lone))["abstain"]


def test_a_file_that_cannot_be_read_leaves_the_store_as_it_was(tmp_path):
    store = tmp_path / "st"
    load(store, LAB)
    before, answer = state(store, files=False), walk(*WALKS[0], "--store", str(store))
    bad = tmp_path / "bad.nt"
    bad.write_text(LAB.read_text() + '<http://x/a> <http://x/p> "open .\n')
    r = load(store, LAB, bad, code=2)
    assert r.output.count("\n") == 1 and f"{bad}:117:" in r.output and "[input]" in r.output
    assert state(store, files=False) == before
    assert walk(*WALKS[0], "--store", str(store)) == answer
    assert sorted(p.name for p in store.iterdir() if p.name.startswith("db-")) == [
        before[0].split()[0], before[0].split()[0] + ".id"]


def test_an_xml_entity_bomb_is_refused_before_any_parser(tmp_path):
    ents = ['<!ENTITY lol0 "lol">'] + [f'<!ENTITY lol{i} "{("&lol%d;" % (i - 1)) * 10}">'
                                       for i in range(1, 10)]
    bomb = tmp_path / "bomb.rdf"
    bomb.write_text('<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n' + "\n".join(ents) + "\n]>\n"
                    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
                    'xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#">\n<rdf:Description '
                    'rdf:about="http://x/a"><rdfs:comment>&lol9;</rdfs:comment>'
                    '</rdf:Description>\n</rdf:RDF>\n')
    r = load(tmp_path / "st", bomb, code=2)
    assert "[xml-entities]" in r.output and str(bomb) in r.output


def test_formats_pyoxigraph_does_not_read_are_refused_before_the_store(tmp_path):
    n3 = tmp_path / "g.n3"
    n3.write_text(LAB.read_text())
    r = load(tmp_path / "st", n3, code=2)
    assert "not N3" in r.output and not (tmp_path / "st").exists()


def test_the_library_verb_returns_what_was_loaded(tmp_path):
    result = Project.open(tmp_path, store=tmp_path / "st", schema=SCHEMA).load([LAB])
    assert result.changed and result.to_dict()["files"][0]["status"] == "added"
    assert "116 quads" in result.render()


def test_the_model_a_load_makes_is_the_one_the_database_gives(tmp_path):
    """The read model is made from the quads as they are loaded and copied; made again from
    the database (its folder removed), every answer is the same: blank nodes included."""
    blank = tmp_path / "blank.ttl"
    blank.write_text('@prefix ex: <http://example.org/vocab#> .\n'
                     '@prefix dct: <http://purl.org/dc/terms/> .\n'
                     '_:lab a ex:Organisation ; dct:identifier "o9" ; ex:locatedIn '
                     '<http://example.org/place/harbor> ; ex:employs _:who .\n'
                     '_:who a <http://xmlns.com/foaf/0.1/Person> ; dct:identifier "p9" .\n')
    store = tmp_path / "st"
    load(store, LAB)
    load(store, blank)  # LAB's graph copied into the new database, blank.ttl parsed
    seeds = [("o9", "employs"), ("c3", "locationOf/employs"), *WALKS]
    made = [walk(seed, path, "--store", str(store)) for seed, path in seeds]
    stats = run("stats", "--store", str(store), "--format", "json").stdout
    assert made[0]["answers"] and made[1]["answers"]
    shutil.rmtree(store / "model")
    assert [walk(seed, path, "--store", str(store)) for seed, path in seeds] == made
    assert run("stats", "--store", str(store), "--format", "json").stdout == stats


@pytest.mark.slow
def test_a_build_keeps_the_loaded_documents_and_a_load_the_built_ones(tmp_path):
    """A store holding a build and a loaded export of the same catalog: neither command
    touches the other's documents, whatever the build's settings say."""
    from conftest import FIXTURE_CATALOG

    store, export = tmp_path / "st", tmp_path / "export.ttl"
    build = ["build", str(FIXTURE_CATALOG), "--store", str(store), "--no-validate"]
    assert CliRunner().invoke(main, build).exit_code == 0
    assert CliRunner().invoke(main, ["export", "--store", str(store), "-o", str(export)]
                              ).exit_code == 0
    seed = ["--seed", "component:default/pricing-sdk", "--follow", "ownedBy:both", "--hops",
            "2", "--format", "json"]
    built = CliRunner().invoke(main, ["traverse", "--store", str(store), *seed]).stdout
    assert CliRunner().invoke(main, ["load", str(export), "--store", str(store)]).exit_code == 0
    with Project.open(tmp_path, store=store).store() as st:
        docs = st.documents()
    assert str(export.resolve()) in docs and len(docs) > 5
    r = CliRunner().invoke(main, [*build, "--full"])
    assert r.exit_code == 0, r.output
    with Project.open(tmp_path, store=store).store() as st:
        assert st.documents() == docs
    # the export's assertions are the build's own: the walk is the same
    assert CliRunner().invoke(main, ["traverse", "--store", str(store), *seed]).stdout == built
