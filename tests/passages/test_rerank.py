"""The optional rerank step: a loopback fake rerank server (scores by word overlap with the
question, records every request) reorders the best fused passages; access applies before;
failures keep the fused order with a note; the CLI flags."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from kgbuild.cli.main import main
from kgbuild.errors import KgbuildError
from kgbuild.graph.access import Principal
from kgbuild.passages.ingest import ingest
from kgbuild.passages.rerank import RerankSettings
from kgbuild.passages.retrieve import Question, RetrievalSettings, retrieve

from .helpers import write_jsonl

# BM25 favours the short passages repeating "river"; word overlap favours the long ones
# naming the castle and the bridge too
CORPUS = [
    {"id": "p1", "title": "Alpha", "text": "River river river."},
    {"id": "p2", "title": "Beta", "text": "The river runs past the old castle and under the stone "
                                         "bridge, a long way from anything else said here."},
    {"id": "p3", "title": "Gamma", "text": "River river."},
    {"id": "p4", "title": "Delta", "text": "A river, a castle, a bridge and a mill, told at length "
                                          "with many other words around them all."},
    {"id": "p5", "title": "Epsilon", "text": "River and castle."},
    {"id": "p6", "title": "Secret", "text": "River castle bridge secret.", "access": ["hidden"]},
]
QUESTION = "river castle bridge"


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def overlap(query: str, doc: str) -> float:
    return len(words(query) & words(doc)) + 0.001 * len(words(doc))


class FakeRerank:
    """A rerank endpoint on 127.0.0.1: ``mode`` is ``cohere`` ({"results": [...]}, best
    first, cut at top_n), ``tei`` (a list of {index, score}), ``error`` (HTTP 500) or
    ``slow`` (answers after ``delay`` seconds)."""

    def __init__(self, mode: str = "cohere", delay: float = 3.0):
        self.mode, self.delay = mode, delay
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self.release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                fake.paths.append(self.path)
                if fake.mode == "slow":
                    fake.release.wait(fake.delay)
                if fake.mode == "error":
                    return self._send(500, {"error": "model not loaded"})
                scores = [overlap(body["query"], d) for d in body["documents"]]
                if fake.mode == "tei":
                    return self._send(200, [{"index": i, "score": s} for i, s in enumerate(scores)])
                best = sorted(range(len(scores)), key=lambda i: -scores[i])[:body.get("top_n")]
                self._send(200, {"model": body.get("model"), "results": [
                    {"index": i, "relevance_score": scores[i]} for i in best]})

            def _send(self, status, obj):
                data = json.dumps(obj).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (the slow mode)
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeRerank":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def store(tmp_path):
    ingest(tmp_path / "store", [write_jsonl(tmp_path / "c.jsonl", CORPUS)])
    return tmp_path / "store"


def run(store, rerank, k=5, principal=None, questions=(QUESTION,)):
    return retrieve(store, [Question(f"q{i}", q) for i, q in enumerate(questions, 1)],
                    settings=RetrievalSettings(k=k, method="bm25"), rerank=rerank,
                    principal=principal or Principal())


def ids(result) -> list[str]:
    return [p["id"] for p in result.passages]


def test_the_reranker_reorders_the_fused_candidates(store):
    fused = run(store, None)[0]
    with FakeRerank() as server:
        got = run(store, RerankSettings(server.url, "bge-reranker"))[0]
    assert server.paths == ["/v1/rerank"]
    sent = server.requests[0]
    assert sent["model"] == "bge-reranker" and sent["query"] == QUESTION
    assert sent["top_n"] == len(sent["documents"]) == len(fused.passages)
    # the fused order, each passage's context header (here its title) then its text
    assert sent["documents"] == [f"{p['title']}\n{p['text']}" for p in fused.passages]
    by_text = {p["text"]: p["id"] for p in fused.passages}
    expected = sorted(fused.passages, key=lambda p: -overlap(QUESTION, next(
        d for d in sent["documents"] if d.endswith(p["text"]))))
    assert ids(got) == [p["id"] for p in expected] != ids(fused)
    assert set(by_text.values()) == set(ids(got))
    assert [p["signals"]["rerank"]["rank"] for p in got.passages] == [1, 2, 3, 4, 5]
    assert [p["rank"] for p in got.passages] == [1, 2, 3, 4, 5]
    assert got.passages[0]["signals"]["bm25"] == next(
        p["signals"]["bm25"] for p in fused.passages if p["id"] == got.passages[0]["id"])
    assert "rerank #1" in got.render() and not got.notes


def test_only_the_top_n_are_reranked(store):
    fused = run(store, None, k=4)[0]
    with FakeRerank() as server:
        got = run(store, RerankSettings(server.url, top_n=2), k=4)[0]
    sent = server.requests[0]
    assert len(sent["documents"]) == 2 and "model" not in sent
    assert set(ids(got)[:2]) == set(ids(fused)[:2]) and ids(got)[2:] == ids(fused)[2:]
    assert [("rerank" in p["signals"]) for p in got.passages] == [True, True, False, False]


def test_more_candidates_than_k_are_reranked(store):
    with FakeRerank() as server:
        got = run(store, RerankSettings(server.url, top_n=30), k=1)[0]
    assert len(server.requests[0]["documents"]) == 5  # every visible match, not only k
    assert ids(got) == ["p2"]  # the longest passage naming all three words


def test_hidden_passages_are_never_sent(store):
    with FakeRerank() as server:
        got = run(store, RerankSettings(server.url))[0]
        everyone = run(store, RerankSettings(server.url), k=6, principal=Principal.all_access())[0]
    assert "p6" not in ids(got)
    assert not any("secret" in d.lower() for d in server.requests[0]["documents"])
    assert "p6" in ids(everyone) and any("Secret" in d for d in server.requests[1]["documents"])


def test_a_tei_shaped_answer_is_read(store):
    with FakeRerank() as cohere, FakeRerank("tei") as tei:
        a = run(store, RerankSettings(cohere.url))[0]
        b = run(store, RerankSettings(tei.url.removesuffix("/v1")))[0]
    assert tei.paths == ["/rerank"]
    assert ids(a) == ids(b)
    assert [p["signals"]["rerank"] for p in a.passages] == [p["signals"]["rerank"] for p in b.passages]


def test_a_failing_server_keeps_the_fused_order_with_a_note(store):
    fused = run(store, None, questions=(QUESTION, "castle"))
    with FakeRerank("error") as server:
        got = run(store, RerankSettings(server.url), questions=(QUESTION, "castle"))
    assert len(server.requests) == 1  # off for the rest of the run
    for a, b in zip(fused, got):
        assert a.passages == b.passages
        assert len(b.notes) == 1 and b.notes[0].startswith("rerank off: the fused order is kept")
        assert "HTTP 500" in b.notes[0] and b.notes[0].endswith("[rerank])")


def test_a_slow_server_is_bounded_by_the_deadline(store):
    with FakeRerank("slow", delay=5.0) as server:
        start = time.monotonic()
        got = run(store, RerankSettings(server.url, timeout=0.3))[0]
        took = time.monotonic() - start
    assert took < 1.5
    assert ids(got) == ids(run(store, None)[0])
    assert "no answer within 0.3 s" in got.notes[0]


def test_answers_that_cannot_be_read_are_one_line_errors():
    settings = RerankSettings("http://user:pw123@127.0.0.1:9/v1")
    reranker = settings.client()
    for answer, why in [({"data": []}, "no results list"),
                        ({"results": [{"index": 5, "relevance_score": 1}]}, "index"),
                        ([{"index": 0}], "no finite score"),
                        ([{"index": 0, "score": 1}, {"index": 0, "score": 2}], "scored twice")]:
        with pytest.raises(KgbuildError) as info:
            reranker._read(answer, 2)
        assert info.value.code == "rerank-answer" and why in info.value.message
        assert "pw123" not in info.value.message and "***" in info.value.message
    assert reranker._read({"results": [{"index": 1, "relevance_score": 0.5}]}, 2) == [None, 0.5]
    with pytest.raises(KgbuildError) as info:  # nothing listens on port 9
        reranker.scores("q", ["a"])
    assert info.value.code == "rerank" and "pw123" not in str(info.value)
    reranker.close()


def test_settings_come_from_flags_environment_and_project():
    env = {"KGBUILD_RERANK_URL": "http://env:1/v1", "KGBUILD_RERANK_MODEL": "m-env",
           "OPENAI_API_KEY": "sk-1"}
    assert RerankSettings.resolve(env={}) is None
    s = RerankSettings.resolve(env=env, config={"base_url": "http://proj:2", "top_n": 7})
    assert (s.base_url, s.model, s.top_n, s.api_key, s.warning) == ("http://env:1/v1", "m-env", 7,
                                                                    "sk-1", None)
    s = RerankSettings.resolve(base_url="http://flag:3/", top_n=3, env=env)
    assert (s.endpoint, s.top_n) == ("http://flag:3/rerank", 3)
    # a project file's URL gets no key unless the user trusts it
    s = RerankSettings.resolve(env={"OPENAI_API_KEY": "sk-1"}, config={"base_url": "http://proj:2"})
    assert s.api_key is None and "--trust-project-url" in s.warning
    s = RerankSettings.resolve(env={"KGBUILD_RERANK_API_KEY": "k2", "OPENAI_API_KEY": "sk-1"},
                               config={"base_url": "http://proj:2"}, trust_project_url=True)
    assert s.api_key == "k2" and s.warning is None
    assert "k2" not in repr(s)
    with pytest.raises(KgbuildError):
        RerankSettings.resolve(base_url="ftp://x", env={})


def test_cli_rerank_flags_with_jsonl(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("KGBUILD_EMBEDDINGS_URL", "OPENAI_BASE_URL", "KGBUILD_RERANK_URL",
                "KGBUILD_RERANK_MODEL"):
        monkeypatch.delenv(var, raising=False)
    write_jsonl(tmp_path / "c.jsonl", CORPUS)
    runner = CliRunner()
    assert runner.invoke(main, ["ingest", "c.jsonl", "--no-embed"]).exit_code == 0
    args = ["retrieve", "-q", QUESTION, "--method", "bm25", "--k", "3", "--format", "jsonl"]
    plain = runner.invoke(main, args)
    with FakeRerank() as server:
        out = runner.invoke(main, args + ["--rerank-url", server.url, "--rerank-model", "r",
                                          "--rerank-top", "4"])
    assert out.exit_code == 0, out.output
    line = json.loads(out.stdout)
    assert [p["id"] for p in line["passages"]][0] == "p2"
    assert [p["id"] for p in line["passages"]] != [p["id"] for p in json.loads(plain.stdout)["passages"]]
    assert server.requests[0]["model"] == "r" and len(server.requests[0]["documents"]) == 4
    (tmp_path / "kgbuild.toml").write_text('[rerank]\nbase_url = "http://127.0.0.1:9/v1"\n')
    out = runner.invoke(main, args)  # the project's endpoint, unreachable: fused order, a note
    assert out.exit_code == 0 and json.loads(out.stdout) == json.loads(plain.stdout)
    assert "note: rerank off: the fused order is kept" in out.stderr


def test_the_project_rerank_table_is_checked(tmp_path):
    from kgbuild.errors import InputError
    from kgbuild.project.config import load_project

    path = tmp_path / "kgbuild.toml"
    path.write_text('[rerank]\nbase_url = "http://127.0.0.1:8080/v1"\ntop_n = 12\ntimeout = 5\n')
    assert load_project(path).rerank == {"base_url": "http://127.0.0.1:8080/v1", "top_n": 12,
                                         "timeout": 5.0}
    path.write_text('[rerank]\ntop_n = 0\n')
    with pytest.raises(InputError, match="rerank.top_n must be between 1 and 1000"):
        load_project(path)
