"""The API's OpenAPI 3.1 description (served at ``/openapi.json``); the traverse request's
schema is derived from :class:`~kgbuild.retrieve.spec.TraversalSpec`, so the two never
drift apart."""

from __future__ import annotations

from dataclasses import MISSING, fields
from importlib.metadata import version

from ..retrieve.spec import TraversalSpec
from .spec import BOUNDS, field_kind

_ERROR = {"description": "refused: a one-line message and a code",
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
_OBJECT = {"application/json": {"schema": {"type": "object"}}}


def _field_schema(f) -> dict:
    kind, nullable = field_kind(f.name)
    out = {"type": "array", "items": {"type": "string"}} if kind == "texts" else {
        "type": "string" if kind == "text" else kind}
    if f.name in BOUNDS:
        out.update(minimum=BOUNDS[f.name][0], maximum=BOUNDS[f.name][1])
    if f.name == "semantic":
        out["description"] = "with a question: seeds by embeddings (0 unless the server's config " \
                             "names an embeddings endpoint)"
    if nullable:
        out["type"] = [out["type"], "null"]
    if f.default is not MISSING:
        out["default"] = list(f.default) if isinstance(f.default, tuple) else f.default
    return out


def _get(summary: str, params: list[tuple[str, bool, str]], ok: str) -> dict:
    return {"get": {"summary": summary, "security": [{}, {"bearer": []}],
                    "parameters": [{"name": n, "in": "query", "required": r,
                                    "schema": {"type": "string"}, "description": d}
                                   for n, r, d in params],
                    "responses": {"200": {"description": ok, "content": _OBJECT},
                                  "4XX": _ERROR}}}


_RESULTS = ["application/sparql-results+json", "application/sparql-results+xml", "text/csv",
            "text/tab-separated-values", "text/turtle", "application/n-triples",
            "application/rdf+xml", "application/ld+json", "text/html"]
_PAGES = [("/ui", "The visible graph's counts by type (HTML)", []),
          ("/ui/nodes", "The visible entities of one type (HTML)",
           [("type", False, "a node type")]),
          ("/ui/search", "Entities named by a name, alias or ID (HTML)",
           [("q", False, "the text searched")]),
          ("/ui/node", "An entity page: edges, evidence, file:line, picture (HTML)",
           [("id", True, "the node's ID")]),
          ("/ui/query", "The SPARQL query form, posting to /sparql (HTML)",
           [("query", False, "the text to fill in")])]


def _page(summary: str, params: list[tuple[str, bool, str]]) -> dict:
    out = _get(summary, params, "the page")
    out["get"]["responses"]["200"]["content"] = {"text/html": {"schema": {"type": "string"}}}
    return out


def _sparql() -> dict:
    ok = {"200": {"description": "the result, in the format the Accept header prefers",
                  "content": {m: {"schema": {"type": "string"}} for m in _RESULTS}},
          "4XX": _ERROR, "503": _ERROR}
    query = {"name": "query", "in": "query", "required": True, "schema": {"type": "string"},
             "description": "SPARQL 1.1 query (read-only)"}
    return {"get": {"summary": "SPARQL 1.1 Protocol query over what the caller may see",
                    "security": [{}, {"bearer": []}], "parameters": [query], "responses": ok},
            "post": {"summary": "SPARQL 1.1 Protocol query (sparql-query body or form)",
                     "security": [{}, {"bearer": []}],
                     "requestBody": {"required": True, "content": {
                         "application/sparql-query": {"schema": {"type": "string"}},
                         "application/x-www-form-urlencoded": {"schema": {
                             "type": "object", "required": ["query"],
                             "properties": {"query": {"type": "string"}}}}}},
                     "responses": ok}}


def openapi() -> dict:
    """The OpenAPI document of :func:`kgbuild.serve.app.create_app`'s routes."""
    spec = {"type": "object", "additionalProperties": False,
            "description": "kgbuild traverse's options; at least one of seeds, names, question",
            "properties": {f.name: _field_schema(f) for f in fields(TraversalSpec)}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "kgbuild serve", "version": version("kgbuild"),
                 "description": "Traversal, resolution, node lookup and SPARQL over a kgbuild "
                                "store. Without a bearer token only public items are visible."},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "TraversalSpec": spec,
                "Error": {"type": "object", "required": ["error", "code"],
                          "properties": {"error": {"type": "string"}, "code": {"type": "string"}}},
            }},
        "paths": {
            "/health": {"get": {"summary": "Up, and the generation served; to an all_access "
                                           "token also the store, reloads, the last reload "
                                           "error and counts",
                                "responses": {"200": {"description": "status",
                                                      "content": _OBJECT}}}},
            "/openapi.json": {"get": {"summary": "This document",
                                      "responses": {"200": {"description": "OpenAPI 3.1",
                                                            "content": _OBJECT}}}},
            "/traverse": {"post": {
                "summary": "Walk from seeds: the JSON of kgbuild traverse --format json",
                "security": [{}, {"bearer": []}],
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/TraversalSpec"}}}},
                "responses": {"200": {"description": "a TraversalResult (abstain: see 'abstain')",
                                      "content": _OBJECT},
                              "4XX": _ERROR, "503": _ERROR}}},
            "/resolve": _get("How a mention resolves: kgbuild resolve explain --format json",
                             [("mention", True, "the name to resolve"),
                              ("type", False, "the mention's node type")], "the explanation"),
            "/node": _get("One visible node: attributes, documents, edge counts",
                          [("id", True, "the node's stable ID")], "the node"),
            "/query": {"post": {
                "summary": "Read-only SPARQL 1.1 (all_access tokens only), bounded rows and time",
                "security": [{"bearer": []}],
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["query"], "additionalProperties": False,
                    "properties": {"query": {"type": "string"}}}}}},
                "responses": {"200": {"description": "kgbuild query --format json: kind, "
                                                     "variables, rows, boolean, truncated",
                                      "content": _OBJECT},
                              "4XX": _ERROR, "503": _ERROR}}},
            "/sparql": _sparql(),
            **{path: _page(summary, params) for path, summary, params in _PAGES},
            "/retrieve": {"post": {
                "summary": "Rank passages for questions: the JSON of kgbuild retrieve --format json",
                "security": [{}, {"bearer": []}],
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "type": "object", "additionalProperties": False,
                    "properties": {
                        "question": {"type": "string"},
                        "questions": {"type": "array", "maxItems": 100, "items": {
                            "type": "object", "required": ["id", "question"],
                            "properties": {"id": {"type": "string"},
                                           "question": {"type": "string"}}}},
                        "k": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 10},
                        "method": {"enum": ["default", "bm25", "dense", "hybrid", "graph"]}}}}}},
                "responses": {"200": {"description": "ranked passages, abstain",
                                      "content": _OBJECT},
                              "4XX": _ERROR, "503": _ERROR}}},
        },
    }
