"""LangChain retrievers over kgbuild: typed graph paths (:func:`graph_retriever`) and ranked
passages (:func:`passage_retriever`) as ``Document``\\ s with their metadata (see
:mod:`kgbuild.adapters.search`). Needs the extra ``langchain`` (``langchain-core``), imported
when a retriever is made."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from pathlib import Path

from ..errors import KgbuildError
from ..graph.access import Principal
from ..schema.model import Schema
from .search import GraphSearch, PassageSearch, Record


def graph_retriever(graph, *, schema: Schema | str | Path = "software",
                    principal: Principal | str | Iterable[str] | None = None,
                    query_as: str = "question", **spec):
    """A LangChain retriever: a query (a question, or a seed ID or name with ``query_as``)
    walks ``graph`` as :class:`~kgbuild.adapters.search.GraphSearch` does and gives one
    ``Document`` per typed path (none when the traversal abstains)."""
    return _retriever_class()(search=GraphSearch(graph, schema=schema, principal=principal, query_as=query_as,
                                                 **spec))


def passage_retriever(store: str | Path, *,
                      principal: Principal | str | Iterable[str] | None = None, **settings):
    """A LangChain retriever: a question ranks the store's passages as ``kgbuild retrieve``
    does (:class:`~kgbuild.adapters.search.PassageSearch` settings) and gives one
    ``Document`` per passage, best first (none when the answer abstains)."""
    return _retriever_class()(search=PassageSearch(store, principal=principal, **settings))


def document(record: Record):
    """A record as a LangChain ``Document`` (its score in the metadata when it has none)."""
    from langchain_core.documents import Document

    return Document(page_content=record.text, id=record.id,
                    metadata={"score": record.score, **record.metadata})


@cache
def _retriever_class():
    try:
        from langchain_core.retrievers import BaseRetriever
    except ImportError:
        raise KgbuildError("the LangChain retrievers need langchain-core: pip install "
                           "'kgbuild[langchain]'", code="missing-extra") from None

    class KgbuildRetriever(BaseRetriever):
        """kgbuild's answers (a GraphSearch's paths or a PassageSearch's passages) as
        documents."""

        search: GraphSearch | PassageSearch

        def _get_relevant_documents(self, query: str, *, run_manager) -> list:
            return [document(r) for r in self.search.records(query)]

    return KgbuildRetriever
