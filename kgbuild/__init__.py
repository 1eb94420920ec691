"""kgbuild: build, validate and serve typed, provenance-carrying knowledge graphs for retrieval.

The verbs a Python user needs are exported here; every CLI command is a thin layer over one
of them. The parts live in one folder each: ``schema``, ``graph``, ``store``, ``extract``,
``resolve``, ``validate``, ``retrieve``, ``passages``, ``project``, ``evaluate`` and
``cli``. Each name is imported on first use (PEP 562): ``import kgbuild`` loads nothing else.
"""

from __future__ import annotations

import importlib

_MODULES = {  # module -> the names of __all__ it defines
    "errors": "KgbuildError SchemaError InputError Problem",
    "evaluate.passages": "eval_passages",
    "evaluate.retrieval": "eval_retrieval",
    "extract.text.contract": "Relation parse_relations",
    "extract.text.extractor": "TextSettings",
    "extract.text.verify": "verify_relations VerifyResult",
    "graph.access": "Principal AccessRules load_access",
    "graph.model": "KnowledgeGraph Node Assertion SourceDocument",
    "graph.rdf": "from_rdf to_rdflib",
    "io.rdffile": "load_graph",
    "llm.settings": "LLMSettings",
    "passages.dense": "EmbeddingSettings",
    "passages.index": "IngestResult",
    "passages.ingest": "ingest",
    "passages.retrieve": "retrieve Retrieved Question PassageRetriever RetrievalSettings",
    "project.config": "find_project load_project",
    "project.front": "Project",
    "project.pipeline": "build_graph build",
    "project.update": "BuildResult",
    "project.textextract": "extract_text ExtractResult",
    "project.validation": "validate_target",
    "project.verifyfile": "verify_file VerifyFileResult",
    "remote.cypher": "cypher_script push_falkordb",
    "remote.push": "push_store pull_store PushReport",
    "remote.sparql": "SparqlClient Auth RemoteError",
    "render.html": "render_html",
    "render.svg": "render_svg",
    "resolve.aliases": "AliasRegistry",
    "resolve.resolver": "Resolver Resolution",
    "retrieve.browse": "Browser",
    "retrieve.paths": "typed_paths",
    "retrieve.spec": "TraversalSpec",
    "retrieve.traverse": "Traverser TraversalResult traverse open_traverser",
    "schema.importer": "import_ontology infer_schema SchemaDraft",
    "schema.loader": "load_schema parse_schema",
    "schema.model": "Schema",
    "schema.shapes": "all_shapes",
    "schema.vocabulary": "vocabulary",
    "store.export": "export_store write_export",
    "store.graphstore": "GraphStore",
    "store.query": "query_store run_query QueryResult",
    "validate.hygiene": "HygieneOptions",
    "validate.incremental": "validate_changed",
    "validate.validator": "validate_graph validate_file ValidationReport validate_store",
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    # schema
    "Schema", "load_schema", "parse_schema", "vocabulary", "all_shapes",
    "import_ontology", "infer_schema", "SchemaDraft",
    # graph
    "KnowledgeGraph", "Node", "Assertion", "SourceDocument", "from_rdf", "to_rdflib",
    "Principal", "AccessRules", "load_access",
    # build and store
    "build_graph", "build", "BuildResult", "GraphStore", "export_store", "write_export",
    "query_store", "run_query", "QueryResult",
    "Project", "find_project", "load_project",
    # LLM extraction from text
    "extract_text", "ExtractResult", "LLMSettings", "TextSettings",
    # verification of extracted relations
    "Relation", "parse_relations", "verify_relations", "VerifyResult", "verify_file",
    "VerifyFileResult",
    # validate
    "validate_graph", "validate_file", "load_graph", "ValidationReport", "validate_store",
    "validate_changed", "validate_target", "HygieneOptions",
    # resolve
    "Resolver", "Resolution", "AliasRegistry",
    # retrieve and evaluate
    "Traverser", "TraversalSpec", "TraversalResult", "traverse", "typed_paths", "eval_retrieval",
    "open_traverser",
    # passage retrieval
    "ingest", "IngestResult", "retrieve", "Retrieved", "Question", "PassageRetriever",
    "RetrievalSettings", "EmbeddingSettings", "eval_passages",
    # looking around and pictures
    "Browser", "render_html", "render_svg",
    # servers
    "SparqlClient", "Auth", "RemoteError", "push_store", "pull_store", "PushReport",
    "cypher_script", "push_falkordb",
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
