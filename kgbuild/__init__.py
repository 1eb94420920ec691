"""kgbuild: build, validate and serve typed, provenance-carrying knowledge graphs for retrieval.

The verbs a Python user needs are exported here; every CLI command is a thin layer over one
of them. The parts live in one folder each: ``schema``, ``graph``, ``store``, ``extract``,
``resolve``, ``validate``, ``retrieve``, ``build``, ``evaluate`` and ``cli``.
"""

from .build.pipeline import BuildResult, build, build_graph
from .build.project import Project, find_project, load_project
from .build.textextract import ExtractResult, extract_text
from .build.validation import validate_target
from .build.verifyfile import VerifyFileResult, verify_file
from .errors import InputError, KgbuildError, Problem, SchemaError
from .evaluate.passages import eval_passages
from .evaluate.retrieval import eval_retrieval
from .extract.text.contract import Relation, parse_relations
from .extract.text.extractor import TextSettings
from .extract.text.verify import VerifyResult, verify_relations
from .graph.access import AccessRules, Principal, load_access
from .graph.model import Assertion, KnowledgeGraph, Node, SourceDocument
from .graph.rdf import from_rdf, to_rdflib
from .io.rdffile import load_graph
from .llm.settings import LLMSettings
from .passages.dense import EmbeddingSettings
from .passages.index import IngestResult
from .passages.ingest import ingest
from .passages.retrieve import PassageRetriever, Question, RetrievalSettings, Retrieved, retrieve
from .remote.cypher import cypher_script, push_falkordb
from .remote.push import PushReport, pull_store, push_store
from .remote.sparql import Auth, RemoteError, SparqlClient
from .render.html import render_html
from .render.svg import render_svg
from .resolve.aliases import AliasRegistry
from .resolve.resolver import Resolution, Resolver
from .retrieve.browse import Browser
from .retrieve.paths import typed_paths
from .retrieve.snapshot import Snapshot, open_snapshot
from .retrieve.traverse import (
    SnapshotTraverser,
    TraversalResult,
    TraversalSpec,
    Traverser,
    store_traverser,
    traverse,
)
from .schema.importer import SchemaDraft, import_ontology, infer_schema
from .schema.loader import load_schema, parse_schema
from .schema.model import Schema
from .schema.shapes import all_shapes
from .schema.vocabulary import vocabulary
from .store.export import export_store, write_export
from .store.graphstore import GraphStore
from .store.query import QueryResult, query_store, run_query
from .validate.hygiene import HygieneOptions
from .validate.incremental import validate_changed
from .validate.validator import (
    ValidationReport,
    validate_file,
    validate_graph,
    validate_store,
)

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
    "store_traverser", "SnapshotTraverser", "Snapshot", "open_snapshot",
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
