"""Access during passage retrieval: for a principal, retrieval equals retrieval over the
corpus without the passages they may not see (same passages, same order, same scores:
corpus statistics included), for every method."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgbuild.graph.access import Principal
from kgbuild.passages.dense import EmbeddingSettings
from kgbuild.passages.ingest import ingest
from kgbuild.passages.retrieve import Question, RetrievalSettings, retrieve

from .helpers import write_jsonl

NAMES = ["Alder Park", "Mira Stone", "Coldwater", "Pell Road", "Vesna Ray", "Orrin"]
WORDS = ["river", "film", "born", "capital", "album", "team", "founded", "director", "museum"]
LABELS = ["a", "b"]

passage = st.fixed_dictionaries({
    "title": st.sampled_from(NAMES),
    "words": st.lists(st.sampled_from(WORDS + NAMES), min_size=1, max_size=8),
    "labels": st.lists(st.sampled_from(LABELS), max_size=2, unique=True),
})


def rows_of(passages) -> list[dict]:
    return [{"id": f"p{i}", "title": p["title"], "text": " ".join(p["words"]) + ".",
             "access": p["labels"]} for i, p in enumerate(passages)]


def answer(store, question, method, principal, embeddings):
    r = retrieve(store, [Question("q", question)], k=5, principal=principal, embeddings=embeddings,
                 settings=RetrievalSettings(k=5, method=method))[0]
    return [(p["id"], p["score"]) for p in r.passages], r.abstain


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(passages=st.lists(passage, min_size=1, max_size=10),
       held=st.lists(st.sampled_from(LABELS), max_size=2, unique=True),
       question=st.lists(st.sampled_from(WORDS + NAMES), min_size=1, max_size=5).map(" ".join),
       with_dense=st.booleans())
@pytest.mark.slow
def test_retrieval_for_a_principal_equals_retrieval_without_hidden_passages(
        tmp_path_factory, fake_embeddings, passages, held, question, with_dense):
    tmp = tmp_path_factory.mktemp("access")
    rows = rows_of(passages)
    principal = Principal.of(held)
    visible = [r for r in rows if set(r["access"]) <= set(held)]
    embeddings = EmbeddingSettings(fake_embeddings.url, "e5-passage", "e5-query") if with_dense else None
    ingest(tmp / "all", [write_jsonl(tmp / "all.jsonl", rows)], embeddings=embeddings)
    if not visible:
        return
    ingest(tmp / "seen", [write_jsonl(tmp / "seen.jsonl", visible)], embeddings=embeddings)
    for method in ("bm25", "hybrid", "graph", "default") + (("dense",) if with_dense else ()):
        mine = answer(tmp / "all", question, method, principal, embeddings)
        theirs = answer(tmp / "seen", question, method, Principal.all_access(), embeddings)
        assert mine == theirs, method
