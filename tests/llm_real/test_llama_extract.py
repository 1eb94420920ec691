"""`kgbuild extract` against the real llama.cpp server (llama-cpp-python) with a real 135M
model, which hallucinates freely: the run completes, the server's rejection of json_schema
costs one request and JSON mode with the schema is used and remembered, nothing the model
invented enters the graph (checked against the text by tests/llm_real/checks.py, not by
kgbuild's verifier), every rejection has a reason, and a second run sends nothing."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import REPO, SHARED

from kgbuild.cli import main
from kgbuild.extract.text.verify import REASONS
from kgbuild.schema.loader import load_schema
from kgbuild.store.graphstore import GraphStore

from .checks import problems
from .conftest import report

pytestmark = [pytest.mark.llm_real, pytest.mark.server, pytest.mark.slow]

FIXTURES = REPO / "fixtures"


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def extract(server, docs: str, store: str, *extra: str) -> tuple[dict, float]:
    started = time.monotonic()
    # a generous timeout: on a busy 2-core machine a first answer (its 1.5k-token prompt
    # evaluated from scratch) has taken over 3 minutes, and a timed-out request is retried;
    # 200 tokens bound an answer that repeats itself (at times 2 s a token, measured)
    out = run("extract", docs, "--store", store, "--base-url", server.base_url, "--model",
              server.model, "--timestamp", "0", "--report", f"{store}-rejected.jsonl",
              "--timeout", "900", "--max-tokens", "200", "--format", "json", *extra)
    elapsed = time.monotonic() - started
    assert out.exit_code in (0, 1), out.output  # 1: SHACL violations or a failed request
    return json.loads(out.output), elapsed


def check_run(server, summary: dict, store: str, root: Path, label: str, elapsed: float) -> None:
    """The assertions every real run must pass, and its line in the CI log."""
    llm, usage, ex = summary["llm"], summary["usage"], summary["extraction"]
    # llama-cpp-python answers json_schema with HTTP 500; JSON mode with the schema attached
    # (a grammar) works: one wasted request, then every chunk in that mode
    assert llm["confirmed"] and llm["mode"] == "json_object_schema", llm
    assert [r["mode"] for r in llm["rejected"]] == ["json_schema"], llm["rejected"]
    assert llm["rejected"][0]["status"] in (400, 422, 500)
    assert usage["failures"] == 0 and ex["failed_requests"] == 0, (usage, ex)
    assert usage["requests"] == usage["completions"] + 1  # no retries: json_schema asked once
    assert usage["modes"] == {"json_object_schema": usage["completions"]}
    # every rejection has a known reason and a detail; the report lists them all
    lines = [json.loads(line) for line in Path(f"{store}-rejected.jsonl").read_text().splitlines()]
    assert len(lines) == ex["rejected"] == sum(ex["rejected_by_reason"].values())
    assert all(r["reason"] in REASONS and r["detail"] for r in lines), lines
    # nothing invented is in the graph
    schema = load_schema("software")
    with GraphStore(store, schema, write=False) as s:
        kg = s.knowledge_graph()
    bad = problems(kg, root, schema, f"llm:{server.model}")
    assert not bad, "\n".join(bad)
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(ex["rejected_by_reason"].items()))
    report(f"{label}: mode {llm['mode']} (rejected: "
           + "; ".join(f"{r['mode']} HTTP {r['status']}" for r in llm["rejected"])
           + f"); {ex['chunks']} chunk(s), {ex['relations']} relation(s) read, "
           f"{ex['accepted']} accepted, {ex['rejected']} rejected ({reasons or 'none'}); "
           f"{usage['requests']} request(s), {usage['completion_tokens']} completion tokens, "
           f"{elapsed:.1f} s")
    for r in lines[:8]:
        rel = r["relation"]
        report(f"  rejected {r['reason']}: {rel.get('subject')!r} {rel.get('predicate')} "
               f"{rel.get('object')!r} ({str(r['detail'])[:90]})")


def check_second_run(server, docs: str, store: str, label: str, *extra: str) -> None:
    again, elapsed = extract(server, docs, store, *extra)
    assert again["usage"]["requests"] == 0, again["usage"]
    assert again["build"]["documents_changed"]["unchanged"] >= 1
    full, _ = extract(server, docs, store, "--full", *extra)  # re-verified from the cache
    assert full["usage"]["requests"] == 0 and full["usage"]["cache_hits"] >= 1, full["usage"]
    report(f"{label}: second run {again['usage']['requests']} requests ({elapsed:.1f} s); "
           f"--full {full['usage']['requests']} requests, {full['usage']['cache_hits']} cache hits")


def test_fixture_prose_against_the_real_server(llama_chat, tmp_path):
    shutil.copytree(FIXTURES / "catalog", tmp_path / "catalog")
    shutil.copytree(FIXTURES / "prose", tmp_path / "docs")
    assert run("build", "catalog", "--store", "store", "--timestamp", "0").exit_code == 0
    summary, elapsed = extract(llama_chat, "docs", "store")
    check_run(llama_chat, summary, "store", tmp_path, "fixture prose", elapsed)
    check_second_run(llama_chat, "docs", "store", "fixture prose")


def _janus_paragraphs() -> dict[str, str]:
    """Real prose: the descriptions people wrote for janus-idp's showcase catalog entities
    (the ones that say what the showcase uses each system for), one document each."""
    root = SHARED / "catalogs" / "backstage" / "janus-idp-backstage-showcase"
    out = {}
    for path in sorted(root.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            text = ((doc or {}).get("metadata") or {}).get("description") or ""
            name = ((doc or {}).get("metadata") or {}).get("name") or ""
            if " We " in f" {text} " and len(text) > 80:
                out[f"{name}.txt"] = text.strip() + "\n"
    return out


@pytest.mark.corpus
def test_real_paragraphs_against_the_real_server(llama_chat, tmp_path):
    paragraphs = _janus_paragraphs()
    assert len(paragraphs) >= 3, paragraphs
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in paragraphs.items():
        (docs / name).write_text(text)
    summary, elapsed = extract(llama_chat, "docs", "store", "--mode", "document")
    assert summary["extraction"]["documents"] == len(paragraphs)
    check_run(llama_chat, summary, "store", tmp_path, f"{len(paragraphs)} janus-idp paragraphs",
              elapsed)
    check_second_run(llama_chat, "docs", "store", "janus-idp paragraphs", "--mode", "document")

