"""kgbuild: build, validate and serve typed, provenance-carrying knowledge graphs for retrieval."""

from .errors import InputError, KgbuildError, SchemaError
from .model import Assertion, KnowledgeGraph, Node, SourceDocument, from_rdf
from .schema import Schema, load_schema

__all__ = [
    "Assertion", "InputError", "KgbuildError", "KnowledgeGraph", "Node", "Schema",
    "SchemaError", "SourceDocument", "from_rdf", "load_schema",
]
__version__ = "0.1.0"
