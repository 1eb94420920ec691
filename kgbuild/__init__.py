"""kgbuild: build, validate and serve typed, provenance-carrying knowledge graphs for retrieval.

The front object, :class:`Project`, offers every verb on a project folder (each CLI command
is one call on it); the package exports it and the data types its verbs take and return.
Deeper calls live in their parts' modules (docs/python-api.md lists them), one folder per
part: ``schema``, ``graph``, ``store``, ``extract``, ``resolve``, ``validate``,
``retrieve``, ``passages``, ``project``, ``evaluate``, ``serve`` and ``cli``. Each name is imported on first use (PEP 562): ``import kgbuild`` loads nothing else.
"""

from __future__ import annotations

import importlib

_MODULES = {  # module -> the names of __all__ it defines
    "errors": "KgbuildError SchemaError InputError Problem",
    "graph.access": "Principal",
    "graph.model": "KnowledgeGraph Assertion",
    "passages.index": "IngestResult",
    "passages.retrieve": "Question Retrieved",
    "project.front": "Project",
    "project.textextract": "ExtractResult",
    "project.update": "BuildResult",
    "project.verifyfile": "VerifyFileResult",
    "remote.push": "PushReport",
    "remote.sparql": "SparqlClient",
    "retrieve.browse": "Browser",
    "retrieve.spec": "TraversalSpec",
    "retrieve.traverse": "Traverser TraversalResult",
    "schema.loader": "load_schema",
    "schema.model": "Schema",
    "store.graphstore": "GraphStore",
    "store.query": "QueryResult",
    "validate.validator": "ValidationReport",
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    # the front object: a project folder and every verb on it
    "Project",
    # what the verbs take and return
    "Schema", "load_schema", "KnowledgeGraph", "Assertion", "Principal", "GraphStore",
    "BuildResult", "ExtractResult", "VerifyFileResult", "ValidationReport", "IngestResult",
    "Question", "Retrieved", "TraversalSpec", "Traverser", "TraversalResult", "Browser",
    "QueryResult", "SparqlClient", "PushReport",
    # errors
    "KgbuildError", "SchemaError", "InputError", "Problem",
]
__version__ = "0.1.0"


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'kgbuild' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
