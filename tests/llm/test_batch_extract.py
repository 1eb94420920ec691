"""`kgbuild extract --batch` against a Files and Batch API on 127.0.0.1 (batchserver), through
the real ``openai`` client: real recorded LLM outputs (Text2KGBench, Vicuna-13B) folded in over
several runs, a partly answered batch, idempotent re-runs, the live path's bodies, the CLI's
question."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import threading

import llm_fixtures
import pytest
from batchserver import BatchServer
from click.testing import CliRunner
from conftest import REPO, require
from fakellm import Reply, Script, rel

from kgbuild.cli.main import main
from kgbuild.extract.text.extractor import TextSettings
from kgbuild.llm.batch import STATE_FILE
from kgbuild.llm.settings import LLMSettings, Price
from kgbuild.project.textextract import LLM_CACHE, extract_text

fake_llm = llm_fixtures.fake_llm
_no_ambient_llm_settings = llm_fixtures.no_ambient_llm_settings

TEXT = "# Notes\n\nBilling Worker depends on Ledger Library.\n"
GOOD = rel("Billing Worker", "dependsOn", "Ledger Library",
           "Billing Worker depends on Ledger Library.")


def _bench():
    spec = importlib.util.spec_from_file_location("text2kgbench_replay",
                                                  REPO / "bench" / "text2kgbench_replay.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _edges(result) -> set[tuple]:
    kg = result.store.knowledge_graph()
    result.store.close()
    return {(kg.nodes[s].label, p, kg.nodes[o].label if o in kg.nodes else o)
            for s, p, o in kg.edges()}


@pytest.mark.corpus
@pytest.mark.slow
def test_recorded_answers_fold_in_over_runs_as_the_live_path_stores_them(tmp_path):
    bench = _bench()
    require(bench.CORPUS.is_dir(), f"Text2KGBench corpus not present at {bench.CORPUS}")
    [onto] = bench.load_corpus(models=("vicuna",), ontologies=["1"], limit=16)
    schema = bench._schema(onto)
    folder = tmp_path / "docs"
    folder.mkdir()
    answers = {}
    for s in onto.sentences:
        (folder / f"{s.id}.txt").write_text(s.text + "\n", encoding="utf-8")
        said = bench.contract_relations(s.raw.get("vicuna", []))
        answers[s.id] = json.dumps({"relations": [{**r, "evidence": s.text} for r in said]})

    def answer(body: dict) -> str:  # the sentence's recorded answer, by its ID in the prompt
        prompt = "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")
        return answers[re.search(r"\bont_\w+?_test_\d+\b", prompt).group()]

    common = dict(text=TextSettings(mode="document"), timestamp=0, validate=False, root=tmp_path)
    store = tmp_path / "batched"
    with BatchServer(answer) as srv:
        settings = LLMSettings("vicuna", srv.base_url, max_retries=0, price=Price(0.15, 0.6))

        def run(mode="submit", **kw):
            return extract_text([folder], schema, llm=settings, store=store, batch=mode,
                                **common, **kw)

        first = run()  # nothing answered yet: everything submitted, nothing stored
        [sent] = first.batch["submitted"]
        n = len(onto.sentences)
        assert sent["requests"] == n and first.build is None
        assert first.batch["plan"]["estimated_cost_usd"] > 0
        assert len(first.batch["awaiting_documents"]) == n
        again = run()  # still in progress: nothing new submitted, nothing folded
        assert again.batch["submitted"] == [] and again.batch["plan"]["awaiting"] == n
        assert again.build is None

        srv.finish(sent["id"], "expired", answered=lambda i: i % 2 == 0)  # half answered
        second = run()
        half = (n + 1) // 2
        assert second.usage["completions"] == half
        assert second.build.changes["added"] and len(second.build.changes["added"]) == half
        [resent] = second.batch["submitted"]  # the expired half asked again
        assert resent["requests"] == n - half
        assert second.batch["polled"][0]["failed"] == n - half
        second.store.close()

        srv.finish(resent["id"])
        third = run("status")
        assert third.batch["submitted"] == [] and third.usage["completions"] == n - half
        assert third.batch["awaiting_documents"] == []
        third.store.close()

        seen = len(srv.seen)
        fourth = run()  # every batch folded: no request at all, nothing changes
        assert len(srv.seen) == seen and fourth.usage["completions"] == 0
        assert fourth.build.changes["unchanged"] and not fourth.build.changes["added"]
        batched = _edges(fourth)
        state = json.loads((store / LLM_CACHE / STATE_FILE).read_text())
        assert [b["status"] for b in state["batches"]] == ["expired", "completed"]
        first_half = [tmp_path / d for d in second.build.changes["added"]]

    replay = bench._Replay()  # the live path: the same answers through chat completions
    replay.answers["vicuna"] = answers
    threading.Thread(target=replay.serve_forever, daemon=True).start()
    live_llm = LLMSettings("vicuna", replay.base_url, max_retries=0)
    try:  # in the order the batches answered (what a document's names resolve to depends on
        # what the store has): the first half, then the rest
        extract_text(first_half, schema, llm=live_llm, store=tmp_path / "live",
                     **common).store.close()
        live = extract_text([folder], schema, llm=live_llm, store=tmp_path / "live", **common)
    finally:
        replay.shutdown()
        replay.server_close()
    assert replay.requests == n
    assert len(batched) >= 8
    assert batched == _edges(live)


@pytest.mark.slow
def test_a_batch_line_carries_the_live_request_body(fake_llm, tmp_path):
    (tmp_path / "notes.md").write_text(TEXT)
    server = fake_llm(Script(default=Reply.relations(GOOD)))
    live = extract_text([tmp_path / "notes.md"], store=tmp_path / "live", root=tmp_path,
                        llm=LLMSettings("m", server.base_url, max_retries=0), timestamp=0)
    live.store.close()
    [live_body] = server.bodies
    with BatchServer(lambda body: json.dumps({"relations": [GOOD]})) as srv:
        result = extract_text([tmp_path / "notes.md"], llm=LLMSettings("m", srv.base_url),
                              store=tmp_path / "batched", root=tmp_path, timestamp=0,
                              batch="submit")
        [sent] = result.batch["submitted"]
        [line] = srv.lines(sent["id"])
        assert line["url"] == "/v1/chat/completions" and line["method"] == "POST"
        assert line["body"] == live_body
        srv.finish(sent["id"])
        folded = extract_text([tmp_path / "notes.md"], llm=LLMSettings("m", srv.base_url),
                              store=tmp_path / "batched", root=tmp_path, timestamp=0,
                              batch="status")
        assert folded.stats.accepted == live.stats.accepted == 1
        folded.store.close()


@pytest.mark.slow
def test_the_cli_never_submits_without_yes_under_ci_and_says_the_cost(tmp_path, monkeypatch):
    (tmp_path / "notes.md").write_text(TEXT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    with BatchServer(lambda body: json.dumps({"relations": [GOOD]})) as srv:
        args = ["extract", "notes.md", "--store", "store", "--model", "m", "--base-url",
                srv.base_url]
        asked = CliRunner().invoke(main, [*args, "--batch"], catch_exceptions=False)
        assert asked.exit_code == 0, asked.output
        assert "not submitted: 1 request(s)" in asked.output and "--yes" in asked.output
        assert srv.files == {}
        done = CliRunner().invoke(main, [*args, "--batch", "--yes"], catch_exceptions=False)
        assert done.exit_code == 0 and "submitted: 1 request(s)" in done.output
        [batch_id] = srv.batches
        srv.finish(batch_id)
        status = CliRunner().invoke(main, [*args, "--batch-status", "--format", "json"],
                                    catch_exceptions=False)
        summary = json.loads(status.output)
        assert summary["batch"]["polled"][0]["status"] == "completed"
        assert summary["extraction"]["accepted"] == 1 and summary["usage"]["completions"] == 1
        assert len(srv.files) == 2  # the input and the output file: nothing new uploaded


def test_a_damaged_batch_list_is_one_error(tmp_path):
    (tmp_path / "notes.md").write_text(TEXT)
    (tmp_path / "store" / LLM_CACHE).mkdir(parents=True)
    (tmp_path / "store" / LLM_CACHE / STATE_FILE).write_text("{not json")
    result = CliRunner().invoke(main, ["extract", str(tmp_path / "notes.md"), "--store",
                                       str(tmp_path / "store"), "--model", "m", "--base-url",
                                       "http://127.0.0.1:9/v1", "--batch"])
    assert result.exit_code != 0 and STATE_FILE in result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_a_batch_the_server_lost_is_asked_again_and_other_endpoints_are_left_alone(tmp_path):
    (tmp_path / "notes.md").write_text(TEXT)
    def answer(body: dict) -> str:
        return json.dumps({"relations": [GOOD]})

    common = dict(store=tmp_path / "store", root=tmp_path, timestamp=0)
    with BatchServer(answer) as old:
        first = extract_text([tmp_path / "notes.md"], llm=LLMSettings("m", old.base_url),
                             batch="submit", **common)
        assert len(first.batch["submitted"]) == 1
    with BatchServer(answer) as other:  # another model here: the first batch is not its own
        mine = extract_text([tmp_path / "notes.md"], llm=LLMSettings("m2", other.base_url),
                            batch="status", **common)
        assert mine.batch["polled"] == [] and other.seen == []
    with BatchServer(answer) as new:  # the same endpoint restarted without the batch
        settings = LLMSettings("m", new.base_url)
        state = tmp_path / "store" / LLM_CACHE / STATE_FILE
        data = json.loads(state.read_text())
        data["batches"][0]["endpoint"] = settings.endpoint  # (as if it had kept its address)
        state.write_text(json.dumps(data))
        again = extract_text([tmp_path / "notes.md"], llm=settings, batch="submit", **common)
        assert [b["status"] for b in again.batch["polled"]] == ["missing"]
        [resent] = again.batch["submitted"]
        new.finish(resent["id"])
        done = extract_text([tmp_path / "notes.md"], llm=settings, batch="status", **common)
        assert done.stats.accepted == 1 and done.batch["awaiting_documents"] == []
        done.store.close()


@pytest.mark.slow
def test_gleaning_rounds_go_one_batch_each(tmp_path):
    (tmp_path / "notes.md").write_text(TEXT)

    def answer(body: dict) -> str:  # the first round finds the relation, the gleaning nothing
        return json.dumps({"relations": [] if len(body["messages"]) > 2 else [GOOD]})

    with BatchServer(answer) as srv:
        def run(mode="submit"):
            return extract_text([tmp_path / "notes.md"], llm=LLMSettings("m", srv.base_url),
                                text=TextSettings(gleanings=1), store=tmp_path / "store",
                                root=tmp_path, timestamp=0, batch=mode)

        [first] = run().batch["submitted"]
        srv.finish(first["id"])
        second = run()  # the first answer in: the gleaning request follows it
        [gleaning] = second.batch["submitted"]
        [line] = srv.lines(gleaning["id"])
        roles = [m["role"] for m in line["body"]["messages"]]
        assert roles == ["system", "user", "assistant", "user"]
        assert second.build is None and second.batch["awaiting_documents"] == ["notes.md"]
        srv.finish(gleaning["id"])
        done = run("status")
        assert done.stats.accepted == 1 and done.build.changes["added"] == ["notes.md"]
        done.store.close()


@pytest.mark.slow
def test_a_batch_the_server_refused_says_why_and_is_asked_again(tmp_path, monkeypatch):
    (tmp_path / "notes.md").write_text(TEXT)
    monkeypatch.chdir(tmp_path)
    with BatchServer(lambda body: json.dumps({"relations": [GOOD]})) as srv:
        args = ["extract", "notes.md", "--store", "store", "--model", "m", "--base-url",
                srv.base_url, "--batch", "--yes"]
        CliRunner().invoke(main, args, catch_exceptions=False)
        [first] = srv.batches
        srv.finish(first, refused="model 'm' does not support the Batch API")
        again = CliRunner().invoke(main, args, catch_exceptions=False)
        assert again.exit_code == 0
        assert "batch batch_1: failed" in again.output
        assert "the server: model 'm' does not support the Batch API" in again.output
        assert "submitted: 1 request(s)" in again.output and len(srv.batches) == 2
