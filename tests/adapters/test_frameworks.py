"""The LangChain and LlamaIndex retrievers, on the real packages: the classic question gives
`kgbuild traverse`'s paths and answers, passages are `kgbuild retrieve`'s, a principal is
carried through, metadata holds file:line, edge types and confidence; a missing extra is a
one-line error."""

from __future__ import annotations

import sys

import pytest

from kgbuild.adapters import langchain as lc
from kgbuild.adapters import llamaindex as li
from kgbuild.errors import KgbuildError

from .conftest import CLASSIC, CLASSIC_PATH, cli_json, framework

pytestmark = pytest.mark.slow  # each opens a store; llama-index-core takes seconds to import


def langchain_answers(retriever, query):
    framework("langchain_core", "langchain")
    docs = retriever.invoke(query)
    assert all(type(d).__name__ == "Document" for d in docs)
    return [(d.page_content, d.metadata, d.id) for d in docs]


def llamaindex_answers(retriever, query):
    framework("llama_index.core", "llamaindex")
    nodes = retriever.retrieve(query)
    assert all(type(n).__name__ == "NodeWithScore" and n.score == n.node.metadata.get(
        "confidence", n.node.metadata.get("score")) for n in nodes)
    return [(n.node.text, n.node.metadata, n.node.id_) for n in nodes]


FRAMEWORKS = [(lc, langchain_answers), (li, llamaindex_answers)]
IDS = ["langchain", "llamaindex"]


@pytest.mark.parametrize("module,answers", FRAMEWORKS, ids=IDS)
def test_classic_question_gives_the_traversals_answers(module, answers, catalog_store):
    local = cli_json("traverse", "--store", catalog_store, "-q", CLASSIC, "--path", CLASSIC_PATH)
    got = answers(module.graph_retriever(catalog_store, path=CLASSIC_PATH), CLASSIC)
    assert sorted({meta["answer"] for _, meta, _ in got}) == local["answers"]
    assert [text.splitlines()[0] for text, _, _ in got] == [p["text"] for p in local["paths"]]
    typed = {e["id"]: e["predicate"] for e in local["edges"]}
    assert [meta["edge_types"] for _, meta, _ in got] == [
        [typed[e] for e in p["edges"]] for p in local["paths"]]
    for text, meta, _ in got:
        assert meta["sources"][0] == "catalog/apis/payments-api.yaml:10"
        assert meta["confidence"] == 1.0
        assert 'Payments API is owned by Commerce Platform. [catalog/apis/payments-api.yaml:10 ' \
               '"owner: commerce-platform"]' in text


@pytest.mark.parametrize("module,answers", FRAMEWORKS, ids=IDS)
def test_a_principal_is_carried_through(module, answers, labelled_store):
    for principal, flags in ((None, []), ("risk", ["--principal", "risk"])):
        local = cli_json("traverse", "--store", labelled_store, "-q", CLASSIC, "--path",
                         CLASSIC_PATH, *flags)
        got = answers(module.graph_retriever(labelled_store, principal=principal,
                                             path=CLASSIC_PATH), CLASSIC)
        assert sorted({meta["answer"] for _, meta, _ in got}) == local["answers"]
    assert "component:default/fraud-scoring" in local["answers"]
    assert answers(module.graph_retriever(labelled_store, query_as="seed", follow=["dependsOn"]),
                   "component:default/fraud-scoring") == []  # hidden: an unknown seed


@pytest.mark.parametrize("module,answers", FRAMEWORKS, ids=IDS)
def test_passages_are_kgbuild_retrieves(module, answers, passage_store):
    question = "Where was the director of Blue Harbor born?"
    local = cli_json("retrieve", "--store", passage_store, "-q", question)
    got = answers(module.passage_retriever(passage_store, k=4), question)
    assert [(i, meta["score"]) for _, meta, i in got] == [
        (p["id"], p["score"]) for p in local["passages"]][:4]
    assert [text for text, _, _ in got] == [p["text"] for p in local["passages"]][:4]
    meta = {i: m for _, m, i in got}
    assert meta["p2"]["graph"]["from"] == "p1" and meta["p2"]["citation"].endswith(":2")
    secret = "What did Mara Quill say in an interview?"
    assert "p6" in [i for _, _, i in answers(module.passage_retriever(
        passage_store, principal=["press"], k=3), secret)]
    assert "p6" not in [i for _, _, i in answers(module.passage_retriever(
        passage_store, k=3), secret)]


def test_llamaindex_shows_an_llm_only_the_text_and_its_sources(catalog_store):
    framework("llama_index.core", "llamaindex")
    [first, _] = li.graph_retriever(catalog_store, path=CLASSIC_PATH).retrieve(CLASSIC)
    shown = first.node.get_content(metadata_mode="llm")
    assert "catalog/apis/payments-api.yaml:10" in shown and "extractor" not in shown


@pytest.mark.parametrize("module,package", [(lc, "langchain_core.retrievers"),
                                            (li, "llama_index.core.retrievers")], ids=IDS)
def test_a_missing_extra_is_one_line(module, package, catalog_store, monkeypatch):
    monkeypatch.setitem(sys.modules, package, None)  # what an uninstalled package imports as
    module._retriever_class.cache_clear()
    try:
        with pytest.raises(KgbuildError) as err:
            module.graph_retriever(catalog_store, path=CLASSIC_PATH)
    finally:
        module._retriever_class.cache_clear()
    assert err.value.code == "missing-extra" and "\n" not in err.value.message
    assert "pip install 'kgbuild[" in err.value.message
