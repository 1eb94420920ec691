"""The LLM and embeddings clients are bounded: an attempt ends at its deadline whatever the
server sends (a one-byte-a-second drip), and an answer larger than the cap, received or
decompressed, is one error with its own code (a gzip bomb, a huge plain answer)."""

from __future__ import annotations

import resource
import time

import llm_fixtures
import pytest
from click.testing import CliRunner
from loopback_http import Loopback, answer, chat, completion, drip, gzip_bomb

from kgbuild.cli import main
from kgbuild.errors import KgbuildError
from kgbuild.llm.client import LLMClient, Request
from kgbuild.llm.settings import LLMSettings
from kgbuild.retrieve.embeddings import EmbeddingMatcher

_no_ambient_llm_settings = llm_fixtures.no_ambient_llm_settings

TIMEOUT = 2.0  # the drip sends a byte a second: a per-read timeout of 2 s never fires
SCHEMA = {"type": "object", "required": ["relations"],
          "properties": {"relations": {"type": "array"}}}
REQUEST = Request(({"role": "user", "content": "x"},), SCHEMA)
OTHER = Request(({"role": "user", "content": "y"},), SCHEMA)


def llm(url: str, **kw) -> LLMClient:
    return LLMClient(LLMSettings("m", url + "/v1", structured_output="json_schema", **kw))


@pytest.mark.slow
@pytest.mark.parametrize("retries", [0, 1])
def test_an_llm_request_ends_at_its_deadlines(retries):
    with Loopback(drip()) as srv:
        start = time.monotonic()
        [out] = llm(srv.url, timeout=TIMEOUT, max_retries=retries).run([REQUEST])
        took = time.monotonic() - start
    assert out.text is None and "Timeout" in out.error
    assert len(srv.seen) == 1 + retries  # the mode probe counts as the first attempt
    assert took < (1 + retries) * (TIMEOUT * 3 + 2)  # each attempt its own deadline


@pytest.mark.slow
def test_extract_with_a_timeout_ends_in_about_that_time(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.md").write_text("The checkout service depends on the pricing library.\n")
    with Loopback(drip()) as srv:
        start = time.monotonic()
        r = CliRunner().invoke(main, ["extract", "notes.md", "--base-url", srv.url + "/v1",
                                      "--model", "m", "--timeout", str(TIMEOUT),
                                      "--max-retries", "0", "--no-validate"])
        took = time.monotonic() - start
    assert r.exit_code == 1, r.output  # the request failed (retried next run)
    assert took < TIMEOUT * 3 + 2


@pytest.mark.parametrize("body, headers", [
    (gzip_bomb(64 << 20), {"Content-Encoding": "gzip"}),
    (completion("x" * (3 << 20)), {}),
], ids=["gzip-bomb", "plain"])
def test_an_llm_answer_over_the_cap_stops_the_run(body, headers):
    with Loopback(answer(200, body, headers)) as srv, pytest.raises(KgbuildError) as err:
        llm(srv.url, max_retries=2, max_response_bytes=1 << 20).run([REQUEST, OTHER])
    assert err.value.code == "llm-too-large" and "larger than 1 MiB" in str(err.value)
    assert len(srv.seen) == 1  # not retried, nothing more sent


@pytest.mark.slow
def test_the_default_cap_stops_a_gigabyte_bomb_quickly_and_small():
    bomb = gzip_bomb(1 << 30)  # 1 MB on the wire
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with Loopback(answer(200, bomb, {"Content-Encoding": "gzip"})) as srv:
        start = time.monotonic()
        with pytest.raises(KgbuildError) as err:
            llm(srv.url).run([REQUEST])
        assert time.monotonic() - start < 10
    assert err.value.code == "llm-too-large" and "32 MiB" in str(err.value)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 << 10  # KiB


@pytest.mark.slow
def test_extract_max_response_size_flag(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.md").write_text("The checkout service depends on the pricing library.\n")
    with Loopback(answer(200, completion("x" * (2 << 20)))) as srv:
        r = CliRunner().invoke(main, ["extract", "notes.md", "--base-url", srv.url + "/v1",
                                      "--model", "m", "--max-response-size", "1",
                                      "--no-validate"])
    assert r.exit_code == 2 and "[llm-too-large]" in r.output and "1 MiB" in r.output
    with Loopback(chat()) as srv:  # a normal answer passes
        r = CliRunner().invoke(main, ["extract", "notes.md", "--base-url", srv.url + "/v1",
                                      "--model", "m", "--max-response-size", "1",
                                      "--no-validate"])
    assert r.exit_code == 0, r.output


@pytest.mark.slow
def test_embeddings_requests_are_bounded_too(tmp_path):
    with Loopback(drip()) as srv:
        matcher = EmbeddingMatcher.from_env("e", srv.url + "/v1", "k", timeout=TIMEOUT)
        matcher.embedder.client = matcher.embedder.client.with_options(max_retries=0)
        start = time.monotonic()
        with pytest.raises(KgbuildError, match="embeddings endpoint failed"):
            matcher.embed(["a"])
        assert time.monotonic() - start < TIMEOUT * 3 + 2
    with Loopback(answer(200, gzip_bomb(64 << 20), {"Content-Encoding": "gzip"})) as srv:
        matcher = EmbeddingMatcher.from_env("e", srv.url + "/v1", "k", max_response_bytes=1 << 20)
        with pytest.raises(KgbuildError) as err:
            matcher.embed(["a"])
    assert err.value.code == "embeddings-too-large" and len(srv.seen) == 1
