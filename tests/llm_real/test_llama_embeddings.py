"""Semantic seeds through the real llama.cpp server's /v1/embeddings (the same 135M model,
loaded for embeddings), and the answer of the chat-only server, which does not serve them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG

from kgbuild.project.pipeline import build
from kgbuild.cli import main
from kgbuild.errors import KgbuildError
from kgbuild.retrieve.embeddings import EmbeddingMatcher, node_text

from .conftest import report

pytestmark = [pytest.mark.llm_real, pytest.mark.server]


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    """The fixture catalog's graph, in memory and as a Turtle file for the CLI."""
    out = tmp_path_factory.mktemp("catalog") / "graph.ttl"
    result = build([FIXTURE_CATALOG], out, store=None, timestamp=0, validate=False)
    return result.graph, out


def candidates(kg) -> list[tuple[str, str]]:
    return [(n.id, node_text(n.label, n.type, min(n.attributes.get("description", [""]))))
            for n in sorted(kg.nodes.values(), key=lambda n: n.id)]


def test_vectors_come_from_the_server_and_are_cached(llama_embeddings, catalog, tmp_path):
    kg, _ = catalog
    texts = [t for _, t in candidates(kg)]
    m = EmbeddingMatcher.from_env(llama_embeddings.model, llama_embeddings.base_url,
                                  cache_dir=tmp_path)
    vectors = m.embed(texts)
    assert m.requests == 1 and vectors.shape[0] == len(texts) and vectors.shape[1] >= 64
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert len({v.tobytes() for v in vectors}) == len(texts)  # a vector of its own per text
    again = EmbeddingMatcher.from_env(llama_embeddings.model, llama_embeddings.base_url,
                                      cache_dir=tmp_path)
    assert np.array_equal(again.embed(texts[::-1]), vectors[::-1]) and again.requests == 0
    report(f"embeddings: {len(texts)} node texts -> {vectors.shape[1]}-dimensional vectors in "
           f"1 request; a second matcher on the cache made {again.requests}")


def test_semantic_seed_through_traverse(llama_embeddings, catalog, tmp_path):
    """Each node's own text is its nearest neighbour among all the catalog's nodes (what a
    135M chat model's mean-pooled vectors do reliably; a paraphrase of a description found
    its node for 1 of 7 descriptions, measured), and `kgbuild traverse -q ... --semantic`
    seeds through the server: the node texts and the question embedded (two requests), a
    question that names no entity seeded by similarity alone."""
    kg, ttl = catalog
    m = EmbeddingMatcher.from_env(llama_embeddings.model, llama_embeddings.base_url,
                                  cache_dir=tmp_path)
    texts = candidates(kg)
    misses = [(node_id, m.match(text, texts, top=1, min_score=-1.0)) for node_id, text in texts]
    misses = [(node_id, best) for node_id, [(best, _)] in misses if best != node_id]
    assert not misses, misses

    def traverse(question: str) -> list[dict]:
        out = CliRunner().invoke(main, [
            "traverse", "--graph", str(ttl), "-q", question, "--follow", "ownedBy", "--hops",
            "1", "--semantic", "2", "--semantic-min", "-1", "--embeddings-url",
            llama_embeddings.base_url, "--embeddings-model", llama_embeddings.model,
            "--format", "json"])
        assert out.exit_code in (0, 1), out.output
        return json.loads(out.output)["seeds"]

    log = llama_embeddings.log
    before = log.read_text(errors="replace").count("POST /v1/embeddings")
    seeds = traverse("Something that charges cards and refunds orders?")
    after = log.read_text(errors="replace").count("POST /v1/embeddings")
    assert after - before == 2  # the visible nodes' texts in one request, the question in one
    semantic = [s for s in seeds if s["via"] == "semantic"]
    assert len(semantic) == 2 and all(s["id"] in kg.nodes for s in semantic), seeds
    assert semantic[0]["score"] >= semantic[1]["score"]
    report(f"semantic seeds: each of {len(texts)} node texts ranks its own node first; "
           f"traverse --semantic 2 on a question naming no entity seeded "
           + ", ".join(f"{s['id']} ({s['score']})" for s in semantic)
           + f" in {after - before} embeddings requests")


def test_a_server_without_embeddings_is_one_request_and_one_line(llama_chat, tmp_path):
    m = EmbeddingMatcher.from_env(llama_chat.model, llama_chat.base_url, cache_dir=tmp_path)
    before = llama_chat.log.read_text(errors="replace").count("POST /v1/embeddings")
    with pytest.raises(KgbuildError) as err:
        m.embed(["Payments API (API)"])
    assert err.value.code == "embeddings-unsupported" and "\n" not in str(err.value)
    assert "does not serve embeddings" in str(err.value) and "embedding=True" in str(err.value)
    again = EmbeddingMatcher.from_env(llama_chat.model, llama_chat.base_url, cache_dir=tmp_path)
    with pytest.raises(KgbuildError, match="does not serve embeddings"):
        again.embed(["another question"])
    after = llama_chat.log.read_text(errors="replace").count("POST /v1/embeddings")
    assert after - before == 1  # the openai client's retries were not spent on it
    report(f"chat-only server asked for embeddings: {after - before} request; {err.value}")
