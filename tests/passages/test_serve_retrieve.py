"""kgbuild serve's POST /retrieve: the JSON of kgbuild retrieve --format json, per token."""

from __future__ import annotations

import hashlib
import json

from click.testing import CliRunner
from conftest import FIXTURE_CATALOG
from starlette.testclient import TestClient

from kgbuild.project.pipeline import build_graph
from kgbuild.cli import main
from kgbuild.passages.ingest import ingest
from kgbuild.schema.loader import load_schema
from kgbuild.serve.app import create_app
from kgbuild.serve.config import load_serve_config

from .helpers import write_jsonl

ROWS = [{"id": "a", "title": "Blue Harbor", "text": "Blue Harbor is a film by Mara Quill."},
        {"id": "b", "title": "Mara Quill", "text": "Mara Quill was born in Tartu.", "access": ["x"]}]


def test_post_retrieve_answers_what_the_cli_prints_per_token(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("KGBUILD_EMBEDDINGS_URL", raising=False)
    store = tmp_path / "store"
    build_graph([FIXTURE_CATALOG], load_schema(), store=store, timestamp=0).store.close()
    ingest(store, [write_jsonl(tmp_path / "c.jsonl", ROWS)])
    digest = hashlib.sha256(b"tok").hexdigest()
    (tmp_path / "serve.yaml").write_text(f"tokens:\n  - name: x\n    sha256: {digest}\n    labels: [x]\n")
    app = create_app(store, load_schema(), load_serve_config(tmp_path / "serve.yaml"), watch=False)
    question = "Where was Mara Quill born?"
    with TestClient(app) as client:
        public = client.post("/retrieve", json={"question": question, "k": 5}).json()
        labelled = client.post("/retrieve", json={"question": question, "k": 5},
                               headers={"Authorization": "Bearer tok"}).json()
        bad = client.post("/retrieve", json={"question": question, "k": 0})
    assert [p["id"] for p in public["passages"]] == ["a"]
    cli = CliRunner().invoke(main, ["retrieve", "--store", str(store), "-q", question, "--k", "5",
                                    "--principal", "x", "--format", "json"])
    assert labelled == json.loads(cli.stdout)
    assert bad.status_code == 400 and bad.json()["code"] == "usage"
