"""Where a traversal reads the graph: a small interface and its implementations.

A :class:`GraphSource` gives the read model (:class:`~kgbuild.store.readmodel.GraphModel`)
a principal may see: the whole graph's view, or (``per_spec``) the part one spec's walk can
reach. The walk (:class:`~kgbuild.retrieve.traverse.Traverser`) is the same over each:

* :class:`MemoryGraph`: a :class:`~kgbuild.graph.model.KnowledgeGraph` in memory, its
  principal's view made into a model on first use;
* :class:`GraphFile`: an RDF file, its model cached per content (:mod:`kgbuild.store.filemodel`);
* :class:`StoreGraph`: a store's own read model (:mod:`kgbuild.store.storemodel`),
  memory-mapped: a walk reads the pages it touches (:class:`OpenModel`: one already open);
* :class:`~kgbuild.retrieve.remote.Endpoint`: a SPARQL server, the neighbourhood a spec walks
  fetched and handed to the walk as a model in memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import Problem
from ..store.readmodel import GraphModel

if TYPE_CHECKING:  # (a walk of a saved store imports neither the graph nor the database)
    from ..graph.access import Principal
    from ..graph.model import KnowledgeGraph


class GraphSource(Protocol):
    """What a walk reads: :meth:`model` (with ``per_spec``, per spec)."""

    per_spec: bool

    def model(self, principal: Principal, spec=None) -> GraphModel:
        """The read model ``principal`` may see (of the part ``spec`` walks, when
        ``per_spec``; else of the whole graph)."""


class MemoryGraph:
    """A graph in memory; each principal's view made into a model once."""

    per_spec = False

    def __init__(self, kg: KnowledgeGraph):
        self.kg = kg
        self._models: dict[Principal, GraphModel] = {}

    def model(self, principal: Principal, spec=None) -> GraphModel:
        from ..graph.access import visible_graph

        if principal not in self._models:
            self._models[principal] = GraphModel.of_graph(visible_graph(self.kg, principal))
        return self._models[principal]


class GraphFile:
    """An RDF file (Turtle, N-Triples, ...); ``problems``: what reading it skipped;
    ``folder``: its entry in the file cache, once read (None: not cached)."""

    per_spec = False

    def __init__(self, path: str | Path, schema):
        self.path, self.schema = path, schema
        self.problems: list[Problem] = []
        self.folder: Path | None = None

    def model(self, principal: Principal, spec=None) -> GraphModel:
        from ..store.filemodel import file_model  # (RDF parsers: only for a file)

        model, self.problems, self.folder = file_model(self.path, self.schema, principal)
        return model

    def graph(self) -> KnowledgeGraph:
        """The file's whole graph in memory (read again)."""
        from ..store.filemodel import read_graph_file

        kg, self.problems = read_graph_file(self.path, self.schema)
        return kg


class StoreGraph:
    """A store folder, read through its read model: the saved one without opening the
    database when a reader found it current for the database files as they still are
    (:func:`~kgbuild.store.storemodel.saved_model`)."""

    per_spec = False

    def __init__(self, path: str | Path, schema):
        self.path, self.schema = path, schema

    def model(self, principal: Principal, spec=None) -> GraphModel:
        from ..store.storemodel import checked_model, saved_model

        model = saved_model(self.path, self.schema, principal)
        return model if model is not None else checked_model(self.path, self.schema, principal)

    def graph(self) -> KnowledgeGraph:
        """The store's whole graph in memory (materialised from every quad)."""
        from ..store.graphstore import GraphStore

        with GraphStore(self.path, self.schema, write=False) as store:
            return store.knowledge_graph()


class OpenModel:
    """A read model already open (a served generation's): it must serve the principal."""

    per_spec = False

    def __init__(self, model: GraphModel):
        self._model = model

    def model(self, principal: Principal, spec=None) -> GraphModel:
        if not self._model.serves(principal):
            raise ValueError("this read model shows more than the principal may see")
        return self._model


def source_of(graph, schema) -> GraphSource:
    """The source of ``graph``: a source, a graph in memory, a store folder or a graph file
    (a path), a SPARQL endpoint (a :class:`~kgbuild.remote.sparql.SparqlClient`)."""
    if hasattr(graph, "model") and hasattr(graph, "per_spec"):
        return graph
    if isinstance(graph, (str, Path)):
        return StoreGraph(graph, schema) if Path(graph).is_dir() else GraphFile(graph, schema)
    from ..graph.model import KnowledgeGraph

    if isinstance(graph, KnowledgeGraph):
        return MemoryGraph(graph)
    from .remote import Endpoint  # (a client: the SPARQL part is loaded only for one)

    return Endpoint(graph, schema)
