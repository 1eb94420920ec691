"""LlamaIndex retrievers over kgbuild: typed graph paths (:func:`graph_retriever`) and ranked
passages (:func:`passage_retriever`) as ``NodeWithScore``\\ s whose ``TextNode`` carries the
metadata (see :mod:`kgbuild.adapters.search`). Needs the extra ``llamaindex``
(``llama-index-core``), imported when a retriever is made."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from pathlib import Path

from ..errors import KgbuildError
from ..graph.access import Principal
from ..schema.model import Schema
from .search import GraphSearch, PassageSearch, Record

SHOWN = ("sources", "citation", "title")  # the metadata an LLM or embedder is shown


def graph_retriever(graph, *, schema: Schema | str | Path = "software",
                    principal: Principal | str | Iterable[str] | None = None,
                    query_as: str = "question", **spec):
    """A LlamaIndex retriever: a query (a question, or a seed ID or name with ``query_as``)
    walks ``graph`` as :class:`~kgbuild.adapters.search.GraphSearch` does and gives one node
    per typed path, scored by its confidence (none when the traversal abstains)."""
    return _retriever_class()(GraphSearch(graph, schema=schema, principal=principal, query_as=query_as, **spec))


def passage_retriever(store: str | Path, *,
                      principal: Principal | str | Iterable[str] | None = None, **settings):
    """A LlamaIndex retriever: a question ranks the store's passages as ``kgbuild retrieve``
    does (:class:`~kgbuild.adapters.search.PassageSearch` settings) and gives one node per
    passage with its fused score, best first (none when the answer abstains)."""
    return _retriever_class()(PassageSearch(store, principal=principal, **settings))


def node(record: Record):
    """A record as a LlamaIndex ``NodeWithScore``; only :data:`SHOWN` metadata goes into
    the text an LLM or an embedder reads."""
    from llama_index.core.schema import NodeWithScore, TextNode

    hidden = [k for k in record.metadata if k not in SHOWN]
    return NodeWithScore(node=TextNode(id_=record.id, text=record.text, metadata=record.metadata,
                                       excluded_llm_metadata_keys=hidden,
                                       excluded_embed_metadata_keys=hidden),
                         score=record.score)


@cache
def _retriever_class():
    try:
        from llama_index.core.retrievers import BaseRetriever
    except ImportError:
        raise KgbuildError("the LlamaIndex retrievers need llama-index-core: pip install "
                           "'kgbuild[llamaindex]'", code="missing-extra") from None

    class KgbuildRetriever(BaseRetriever):
        """kgbuild's answers (a GraphSearch's paths or a PassageSearch's passages) as
        scored nodes."""

        def __init__(self, search: GraphSearch | PassageSearch):
            self.search = search
            super().__init__()

        def _retrieve(self, query_bundle) -> list:
            return [node(r) for r in self.search.records(query_bundle.query_str)]

    return KgbuildRetriever
