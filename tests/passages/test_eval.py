"""kgbuild eval retrieval QUESTIONS.jsonl: every passage method side by side."""

from __future__ import annotations

import json

from click.testing import CliRunner

from kgbuild.cli import main

from .helpers import write_jsonl
from .test_ingest_retrieve import CORPUS


def test_eval_scores_every_method_on_a_jsonl(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("KGBUILD_EMBEDDINGS_URL", raising=False)
    write_jsonl(tmp_path / "c.jsonl", CORPUS)
    write_jsonl(tmp_path / "q.jsonl", [
        {"id": "a", "question": "Where was the director of Blue Harbor born?",
         "supporting_ids": ["p1", "p2"], "type": "bridge"},
        {"id": "b", "question": "What did Zorblatt say about Quexon?", "supporting_ids": []}])
    runner = CliRunner()
    assert runner.invoke(main, ["ingest", "c.jsonl", "--no-embed"]).exit_code == 0
    out = runner.invoke(main, ["eval", "retrieval", "q.jsonl", "--format", "json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert set(report["methods"]) == {"default", "bm25", "hybrid", "graph"}  # no dense: no endpoint
    default = report["methods"]["default"]
    assert default["total"]["recall@5"] == 100.0 and default["total"]["all@2"] == 100.0
    assert default["type:bridge"]["questions"] == 1 and "hops:2" in default
    assert default["unanswerable"] == {"questions": 1, "abstain_rate": 1.0}
    text = runner.invoke(main, ["eval", "retrieval", "q.jsonl"]).output
    assert text.splitlines()[0] == "2 questions, top 10" and "default" in text
