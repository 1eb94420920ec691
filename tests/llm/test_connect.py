"""What every client of a model server shares (kgbuild/llm/connect.py): what a server says
reaches an error, a summary or a remembered file without the secrets of its URL, for chat,
embeddings and rerank alike; and importing the clients imports neither ``openai`` nor
``httpx2``."""

from __future__ import annotations

import json
import subprocess
import sys

import llm_fixtures
import pytest
from loopback_http import Loopback, answer

from kgbuild.errors import KgbuildError
from kgbuild.llm.client import LLMClient, Request
from kgbuild.llm.rerank import Reranker
from kgbuild.llm.settings import LLMSettings
from kgbuild.retrieve.embeddings import EmbeddingMatcher

_no_ambient_llm_settings = llm_fixtures.no_ambient_llm_settings

SECRET = "S3cr%40t-pw"  # as written in the URL; decoded: S3cr@t-pw
ECHO = b'{"error": {"message": "denied for bob:S3cr@t-pw (S3cr%40t-pw)"}}'
SCHEMA = {"type": "object", "required": ["relations"],
          "properties": {"relations": {"type": "array"}}}


def with_creds(url: str) -> str:
    return url.replace("http://", f"http://bob:{SECRET}@")


def leaks(text: str) -> bool:
    return "S3cr" in text


@pytest.mark.parametrize("status", [500, 401])
def test_chat_errors_hide_the_urls_password(status, tmp_path):
    with Loopback(answer(status, ECHO)) as srv:
        client = LLMClient(LLMSettings("m", with_creds(srv.url) + "/v1", max_retries=0,
                                       structured_output="json_schema"), tmp_path)
        request = Request(({"role": "user", "content": "x"},), SCHEMA)
        if status == 401:  # the endpoint refuses the key: the run stops with one error
            with pytest.raises(KgbuildError) as err:
                client.run([request])
            text = str(err.value)
        else:
            [out] = client.run([request])
            text = out.error
    assert "denied for bob:***" in text and not leaks(text)
    assert not leaks(json.dumps(client.usage.to_dict()))


def test_a_rejected_mode_is_remembered_without_the_password(tmp_path):
    rejection = (b'{"error": {"message": "response_format json_schema is not supported '
                 b'at bob:S3cr@t-pw"}}')
    with Loopback(answer(400, rejection)) as srv:
        client = LLMClient(LLMSettings("m", with_creds(srv.url) + "/v1", max_retries=0),
                           tmp_path)
        client.run([Request(({"role": "user", "content": "x"},), SCHEMA)])
    assert [m["mode"] for m in client.usage.rejected_modes] == ["json_schema", "json_object_schema"]
    assert not leaks(json.dumps(client.usage.rejected_modes))
    assert not any(leaks(p.read_text()) for p in tmp_path.rglob("*.json"))


@pytest.mark.parametrize("status, code", [(500, "embeddings"), (404, "embeddings-unsupported")])
def test_embeddings_errors_hide_the_urls_password(status, code, tmp_path):
    with Loopback(answer(status, ECHO)) as srv:
        matcher = EmbeddingMatcher.from_env("e", with_creds(srv.url) + "/v1", "k",
                                            cache_dir=tmp_path)
        matcher.embedder.client = matcher.embedder.client.with_options(max_retries=0)
        with pytest.raises(KgbuildError) as err:
            matcher.embed(["a"])
    assert err.value.code == code and "bob:***" in str(err.value) and not leaks(str(err.value))
    assert not any(leaks(p.read_text()) for p in tmp_path.glob("*.json"))


def test_rerank_errors_hide_the_urls_password():
    with Loopback(answer(500, ECHO)) as srv:
        reranker = Reranker(with_creds(srv.url) + "/v1")
        with pytest.raises(KgbuildError) as err:
            reranker.scores("q", ["a"])
        reranker.close()
    assert err.value.code == "rerank" and "HTTP 500" in str(err.value)
    assert not leaks(str(err.value))


@pytest.mark.slow  # (two fresh interpreters)
def test_importing_the_clients_imports_no_openai():
    clients = ("import sys, kgbuild.llm.client, kgbuild.llm.embeddings, kgbuild.passages.dense, "
               "kgbuild.retrieve.embeddings\nprint('openai' in sys.modules)")
    rerank = ("import sys, kgbuild.passages.rerank\n"
              "print(sorted({'openai', 'httpx2', 'numpy'} & set(sys.modules)))")
    for code, expected in ((clients, "False"), (rerank, "[]")):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True)
        assert out.stdout.strip() == expected
