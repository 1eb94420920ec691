"""Semantic seeds through a real ``openai`` client talking to a local test server."""

import json
import re
import zlib

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG
from embeddings_server import EmbeddingsServer

from kgbuild.project.pipeline import build
from kgbuild.cli.main import main
from kgbuild.errors import KgbuildError
from kgbuild.graph.access import Principal
from kgbuild.retrieve.embeddings import EmbeddingMatcher
from kgbuild.retrieve.traverse import TraversalSpec, Traverser

DIM = 64
STOP = {"a", "an", "the", "who", "can", "and", "of", "to", "which", "what", "is", "it", "by"}


def toy_vector(text: str) -> list[float]:
    """A bag of (crudely stemmed) words hashed into DIM buckets: overlap means similarity."""
    vec = np.zeros(DIM)
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        word = word.rstrip("s")
        if word and word not in STOP:
            vec[zlib.crc32(word.encode()) % DIM] += 1.0
    return vec.tolist()


@pytest.fixture
def server():
    s = EmbeddingsServer(toy_vector)
    yield s
    s.close()


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    out = tmp_path_factory.mktemp("emb") / "g.ttl"
    result = build([FIXTURE_CATALOG], out, store=None, timestamp=0, validate=False)
    return result.graph, out


def test_vectors_are_cached_on_disk(server, tmp_path):
    m = EmbeddingMatcher.from_env("toy", server.url, cache_dir=tmp_path)
    first = m.embed(["Payments API", "Pricing SDK"])
    assert m.requests == 1 and first.shape == (2, DIM)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0)
    again = EmbeddingMatcher.from_env("toy", server.url, cache_dir=tmp_path)
    assert np.allclose(again.embed(["Pricing SDK", "Payments API"]), first[::-1])
    assert again.requests == 0 and server.inputs == ["Payments API", "Pricing SDK"]


def test_questions_are_embedded_each_time_and_never_written_to_the_cache(server, tmp_path):
    labels = [("n1", "Payments API (API)"), ("n2", "Pricing SDK (Library)")]
    m = EmbeddingMatcher.from_env("toy", server.url, cache_dir=tmp_path)
    assert [i for i, _ in m.match("payments", labels, 1, 0.1)] == ["n1"]
    cache = tmp_path / "embeddings-toy.npz"
    written = cache.read_bytes()
    for question in ("pricing", "payments"):
        m.match(question, labels, 1, 0.1)
    assert cache.read_bytes() == written and len(m._cache) == 2  # the labels only
    assert server.inputs == ["Payments API (API)", "Pricing SDK (Library)", "payments",
                             "pricing", "payments"] and m.requests == 4


def test_question_without_a_name_finds_seeds_semantically(server, graph):
    kg, _ = graph
    matcher = EmbeddingMatcher.from_env("toy", server.url)
    spec = TraversalSpec(question="who can refund a charge?", follow=["ownedBy"], hops=1, semantic=2,
                         semantic_min=0.3)
    result = Traverser(kg, Principal.all_access(), matcher=matcher).run(spec)
    seeds = {s["id"]: s for s in result.seeds}
    assert set(seeds) == {"api:default/payments-api", "component:default/payments-service"}
    assert all(s["via"] == "semantic" and s["score"] >= 0.3 for s in seeds.values())
    assert result.abstain is None and any(e["predicate"] == "ownedBy" for e in result.edges)
    plain = Traverser(kg, Principal.all_access()).run(
        TraversalSpec(question="who can refund a charge?", follow=["ownedBy"], hops=1))
    assert plain.abstain["reason"] == "no-seed"  # without embeddings: abstain, not guess


def test_hidden_nodes_are_never_embedded_or_returned(server, graph):
    kg, _ = graph
    spec = TraversalSpec(question="payments database", follow=["ownedBy"], hops=1, semantic=5,
                         semantic_min=0.1)
    public = Traverser(kg, Principal(), matcher=EmbeddingMatcher.from_env("toy", server.url)).run(spec)
    assert not any("Payments DB" in t for t in server.inputs)
    assert "resource:default/payments-db" not in {s["id"] for s in public.seeds}
    pci = Traverser(kg, Principal.of("pci"), matcher=EmbeddingMatcher.from_env("toy", server.url)).run(spec)
    assert any("Payments DB" in t for t in server.inputs)
    assert "resource:default/payments-db" in {s["id"] for s in pci.seeds}


@pytest.mark.slow
def test_two_servers_with_one_model_name_never_share_cached_vectors(server, tmp_path):
    with EmbeddingsServer(lambda t: [1.0] + [0.0] * (DIM - 1)) as other:  # same size, other values
        first = EmbeddingMatcher.from_env("toy", server.url, cache_dir=tmp_path)
        first.embed(["Payments API"])
        second = EmbeddingMatcher.from_env("toy", other.url, cache_dir=tmp_path)
        vec = second.embed(["Payments API"])
        assert second.requests == 1 and other.inputs == ["Payments API"]
        assert vec.tolist() == [[1.0] + [0.0] * (DIM - 1)]
        again = EmbeddingMatcher.from_env("toy", server.url, cache_dir=tmp_path)
        again.embed(["Payments API"])
        assert again.requests == 0  # its own vectors are still cached


def test_unreachable_endpoint_is_a_clear_error(tmp_path):
    m = EmbeddingMatcher.from_env("toy", "http://127.0.0.1:9/v1")
    with pytest.raises(KgbuildError, match="embeddings endpoint failed"):
        m.embed(["x"])


def test_cli_semantic_seeds(server, graph, monkeypatch):
    _, ttl = graph
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    r = CliRunner().invoke(main, ["traverse", "--graph", str(ttl), "-q", "who can refund a charge?",
                                  "--follow", "ownedBy", "--hops", "1", "--semantic", "1",
                                  "--embeddings-url", server.url, "--embeddings-model", "toy",
                                  "--format", "json"])
    assert r.exit_code == 0, r.output
    [seed] = json.loads(r.output)["seeds"]
    assert seed["via"] == "semantic"
