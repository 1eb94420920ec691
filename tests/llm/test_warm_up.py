"""`LLMClient.warm_up`: requests sent in a background thread while this one reads the answers
as they come (``kgbuild extract`` extracts documents meanwhile): a request in flight there is
waited for and never sent twice, its error is raised, and a failed warm-up stores nothing."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import llm_fixtures
import pytest
from fakellm import Reply, Script
from prose_oracle import oracle

from kgbuild.errors import KgbuildError
from kgbuild.extract.text.extractor import TextSettings
from kgbuild.llm.client import LLMClient, Request
from kgbuild.llm.settings import LLMSettings
from kgbuild.project.textextract import extract_text
from kgbuild.schema.loader import load_schema
from kgbuild.store.graphstore import GraphStore

fake_llm = llm_fixtures.fake_llm
_no_ambient_llm_settings = llm_fixtures.no_ambient_llm_settings

SCHEMA = {"type": "object", "required": ["relations"],
          "properties": {"relations": {"type": "array"}}}
PROSE = Path(__file__).resolve().parents[2] / "fixtures" / "prose"


def req(text: str) -> Request:
    return Request(({"role": "user", "content": text},), SCHEMA, "kgbuild_test", text)


@pytest.mark.slow
def test_answers_in_flight_are_waited_for_not_asked_again(fake_llm, tmp_path):
    server = fake_llm(Script(default=Reply(json.dumps({"relations": []}), delay=0.15)))
    c = LLMClient(LLMSettings("m", server.base_url, concurrency=2,
                              structured_output="json_object"), tmp_path / "cache")
    requests = [req(f"chunk {i}") for i in range(6)]
    c.warm_up(lambda: c.run(requests))
    assert c._warming is not None and c._warming.is_alive()  # (it sends 3 rounds of 0.15 s)
    first = c.run(requests[:2])  # the first round's: answered before the warm-up ends
    assert c._warming is not None and c._warming.is_alive()
    rest = c.run(requests[2:] + [req("not warmed")])  # one the warm-up never asks
    c.finish_warm_up()
    assert [x.text for x in first + rest] == ['{"relations": []}'] * 7
    assert server.count == 7 and c.usage.requests == 7
    assert c.usage.cache_hits == 0  # (answers of this very run)


def test_the_warm_ups_error_is_raised_where_its_answers_are_read(fake_llm):
    server = fake_llm(Script(default=Reply(status=401, error="Incorrect API key provided")))
    c = LLMClient(LLMSettings("m", server.base_url, concurrency=4), None)
    requests = [req(f"chunk {i}") for i in range(5)]
    c.warm_up(lambda: c.run(requests))
    with pytest.raises(KgbuildError, match="AuthenticationError"):
        c.run(requests)
    c.finish_warm_up()  # (raised once: already joined)
    assert server.count == 1


def test_an_extraction_whose_requests_fail_stores_nothing(fake_llm, tmp_path):
    """The documents are extracted while the warm-up sends; a refused key stops it before
    any document is written, as when every answer was awaited first."""
    slow = threading.Event()

    def refuse(body):
        if not slow.is_set():
            slow.set()
            time.sleep(0.2)  # the pipeline reaches the first document meanwhile
        return Reply(status=401, error="Incorrect API key provided")

    server = fake_llm(refuse)
    shutil.copytree(PROSE, tmp_path / "docs")
    store = tmp_path / "store"
    with pytest.raises(KgbuildError, match="AuthenticationError"):
        extract_text([tmp_path / "docs"], llm=LLMSettings("fake-model", server.base_url),
                     store=store, timestamp=0, validate=False, root=tmp_path)
    made = GraphStore(store, load_schema())  # (made while the requests were out)
    try:
        assert made.document_states() == {}
    finally:
        made.close()
    assert server.count == 1


@pytest.mark.parametrize("gleanings", [0, 1])
def test_extract_sends_each_request_once(fake_llm, tmp_path, gleanings):
    """(A gleaning request, asked before the warm-up sends it, waits for the warm-up.)"""
    server = fake_llm(oracle)
    shutil.copytree(PROSE, tmp_path / "docs")
    result = extract_text([tmp_path / "docs"], llm=LLMSettings("fake-model", server.base_url),
                          text=TextSettings(gleanings=gleanings), store=tmp_path / "store",
                          timestamp=0, validate=False, root=tmp_path)
    try:
        bodies = [json.dumps(b["messages"]) for b in server.bodies]
        assert len(bodies) == len(set(bodies)) == result.stats.chunks * (1 + gleanings) > 1
        assert result.stats.accepted > 0
    finally:
        result.store.close()
