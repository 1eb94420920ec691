"""Passages linked to the store's catalog entities: a question naming an entity seeds the
passages that mention it, whoever wrote its name how (label, alias, ID's name part); a
hidden entity's name links nothing for a principal who cannot see it."""

from __future__ import annotations

from click.testing import CliRunner
from conftest import FIXTURE_CATALOG

from kgbuild.cli import main
from kgbuild.passages.index import PassageIndex
from kgbuild.passages.retrieve import retrieve

from .helpers import write_jsonl

NOTES = [
    {"id": "n1", "title": "Release notes 4.2", "text": "The payments-api now refunds in two steps."},
    {"id": "n2", "title": "Incident 17", "text": "Checkout was slow because Pricing SDK cached nothing."},
    {"id": "n3", "title": "Lunch", "text": "The canteen serves soup on Fridays."},
]


def test_catalog_names_link_passages_and_seed_questions(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(main, ["build", str(FIXTURE_CATALOG)]).exit_code == 0
    write_jsonl(tmp_path / "notes.jsonl", NOTES)
    out = runner.invoke(main, ["ingest", "notes.jsonl", "--no-embed"])
    assert out.exit_code == 0, out.output
    with PassageIndex(tmp_path / ".kgbuild") as index:
        linked = dict(index.db.execute(
            "SELECT p.id, c.node FROM links l JOIN passages p ON p.rowid=l.passage "
            "JOIN catalog c ON c.name=l.name"))
    assert linked == {"n1": "api:default/payments-api", "n2": "component:default/pricing-sdk"}
    answer = retrieve(tmp_path / ".kgbuild", ["What changed in Payments API?"], k=3)[0]
    assert answer.passages[0]["id"] == "n1"
    assert answer.passages[0]["signals"]["graph"] == {"question": True, "name": "payments api"}


def test_typed_edges_lead_from_a_named_entity(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(main, ["build", str(FIXTURE_CATALOG)]).exit_code == 0
    write_jsonl(tmp_path / "notes.jsonl", NOTES + [
        {"id": "n4", "title": "Team page", "text": "Commerce Platform meets on Tuesdays."}])
    assert runner.invoke(main, ["ingest", "notes.jsonl", "--no-embed"]).exit_code == 0
    out = runner.invoke(main, ["retrieve", "-q", "Who looks after Payments API?", "--format", "json"])
    assert out.exit_code == 0, out.output
    import json

    passages = {p["id"]: p for p in json.loads(out.stdout)["passages"]}
    assert passages["n4"]["signals"]["graph"] == {"from": "n1", "way": "ownedBy",
                                                  "name": "commerce platform"}


def test_extracted_chunks_are_passages(tmp_path, monkeypatch):
    """The chunks kgbuild extract stored are ingested like corpus lines (header: the
    document's title and section path), and follow the store."""
    from kgbuild.graph.model import Passage
    from kgbuild.passages.catalog import chunk_passages
    from kgbuild.passages.index import STORE_CHUNKS, PassageIndex
    from kgbuild.passages.ingest import ingest

    chunk = Passage("docs/design.md#c1", "docs/design.md", 0, 40, "Checkout depends on Pricing SDK.",
                    "Checkout design", ("Decision",))
    store = tmp_path / "store"
    ingest(store, [], chunks=chunk_passages([chunk]))
    with PassageIndex(store) as index:
        row = index.db.execute("SELECT id, source, header FROM passages").fetchone()
    assert row == ("docs/design.md#c1", STORE_CHUNKS,
                   "Checkout design\ndocument: docs/design.md\nsection: Decision")
    gone = ingest(store, [], chunks=[])
    assert gone.removed == 1
