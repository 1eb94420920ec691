"""An endpoint that does not serve embeddings (the answers real servers give) costs one
request and one clear error line, remembered beside the vectors; a transient failure of the
first request is still retried; per-token vectors are mean-pooled; a malformed vector is an
error, not a wrong ranking."""

from __future__ import annotations

import pytest
from embeddings_server import JsonServer

from kgbuild.errors import KgbuildError
from kgbuild.retrieve.embeddings import EmbeddingMatcher

LLAMA_500 = {"error": {"message": "Llama model must be created with embedding=True to call "
                                  "this method", "type": "internal_server_error"}}


class Endpoint(JsonServer):
    """``POST /v1/embeddings`` on 127.0.0.1 answering from a list of (status, body) in turn
    (the last one repeats); records how many requests came."""

    def __init__(self, answers):
        self.answers, self.count = list(answers), 0

        def answer(path: str, body: dict) -> tuple[int, object]:
            status, payload = self.answers[min(self.count, len(self.answers) - 1)]
            self.count += 1
            return status, payload

        super().__init__(answer)


@pytest.fixture
def endpoint():
    servers = []

    def start(*answers):
        servers.append(Endpoint(answers))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def vectors(*rows):
    return {"object": "list", "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1},
            "data": [{"object": "embedding", "index": i, "embedding": r} for i, r in enumerate(rows)]}


@pytest.mark.parametrize("status, body", [
    (500, LLAMA_500),  # llama-cpp-python, model loaded without --embedding
    (501, {"error": {"message": "This server does not support embeddings. Start it with "
                                "`--embeddings`", "type": "not_supported_error"}}),  # llama-server
    (404, {"detail": "Not Found"}),  # no such route
    (405, {"detail": "Method Not Allowed"}),
])
@pytest.mark.slow
def test_not_served_is_one_request_one_line_and_remembered(endpoint, tmp_path, status, body):
    server = endpoint((status, body))
    matcher = EmbeddingMatcher.from_env("m", server.url, cache_dir=tmp_path)
    with pytest.raises(KgbuildError) as err:
        matcher.embed(["Payments API (API)", "Pricing SDK (Library)"])
    message = str(err.value)
    assert server.count == 1  # the openai client's retries were not used on it
    assert err.value.code == "embeddings-unsupported" and "\n" not in message
    assert f"{server.url} does not serve embeddings for model 'm': HTTP {status}" in message
    assert "embeddings-m.unsupported.json" in message
    # the same matcher, and a new one on the same cache (a later run): no request at all
    with pytest.raises(KgbuildError, match="does not serve embeddings"):
        matcher.embed(["another text"])
    with pytest.raises(KgbuildError, match="does not serve embeddings"):
        EmbeddingMatcher.from_env("m", server.url, cache_dir=tmp_path).embed(["x"])
    assert server.count == 1
    # another endpoint is asked (what was remembered is this endpoint's answer)
    other = endpoint((200, vectors([1.0, 0.0])))
    assert EmbeddingMatcher.from_env("m", other.url, cache_dir=tmp_path).embed(["x"]).shape == (1, 2)
    assert other.count == 1
    # deleting the file asks again (for a text whose vector is not cached yet)
    (tmp_path / "embeddings-m.unsupported.json").unlink()
    with pytest.raises(KgbuildError):
        EmbeddingMatcher.from_env("m", server.url, cache_dir=tmp_path).embed(["y"])
    assert server.count == 2


def test_a_transient_failure_of_the_first_request_is_retried(endpoint, tmp_path):
    server = endpoint((503, {"error": {"message": "loading model"}}),
                      (200, vectors([3.0, 4.0])))
    matcher = EmbeddingMatcher.from_env("m", server.url, cache_dir=tmp_path)
    assert matcher.embed(["x"]).tolist() == [[pytest.approx(0.6), pytest.approx(0.8)]]
    assert server.count == 2 and matcher.requests == 2
    assert not (tmp_path / "embeddings-m.unsupported.json").exists()


@pytest.mark.slow
def test_an_unrelated_server_error_is_not_remembered(endpoint, tmp_path):
    server = endpoint((500, {"error": {"message": "out of memory"}}))
    matcher = EmbeddingMatcher.from_env("m", server.url, cache_dir=tmp_path)
    with pytest.raises(KgbuildError, match="embeddings endpoint failed") as err:
        matcher.embed(["x"])
    assert err.value.code == "embeddings" and not (tmp_path / "embeddings-m.unsupported.json").exists()


def test_one_vector_per_token_is_mean_pooled(endpoint, tmp_path):
    """llama-cpp-python's server answers a model without a pooling layer with one vector per
    token; they are averaged into the text's vector."""
    server = endpoint((200, vectors([[1.0, 0.0], [5.0, 8.0]])))
    got = EmbeddingMatcher.from_env("m", server.url, cache_dir=tmp_path).embed(["a b"])
    assert got.tolist() == [[pytest.approx(0.6), pytest.approx(0.8)]]


@pytest.mark.slow
@pytest.mark.parametrize("row", [[[[0.1]]], [], [[]], [1.0, float("nan")]])
def test_a_vector_that_is_not_a_list_of_numbers_is_an_error(endpoint, tmp_path, row):
    server = endpoint((200, vectors(row)))  # (json.dumps writes NaN as some servers do)
    with pytest.raises(KgbuildError, match="embeddings endpoint returned a vector of shape"):
        EmbeddingMatcher.from_env("m", server.url, cache_dir=tmp_path).embed(["x"])
