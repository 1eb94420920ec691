"""Every error kgbuild raises for a user's input, and the codes errors and problems carry.

Each error carries a one-line message, the file and line it is about, and a ``code`` from
:data:`CODES` (its class's default, or a more specific one given when raised)::

    KgbuildError                  error
    ├── SchemaError               schema
    ├── InputError                input
    │   └── YamlError             input
    │       └── DuplicateKeyError input
    ├── InvalidValue              bad-value       (also a ValueError)
    │   └── RefError              bad-ref
    ├── ServiceRefused            sparql-service
    ├── RemoteError               remote          (kgbuild.remote.sparql)
    │   └── BulkLoadError         bulk-load       (kgbuild.remote.virtuoso)
    ├── CatalogError              backstage-api   (kgbuild.remote.backstage)
    └── ResponseTooLarge          too-large       (kgbuild.io.http)

A :class:`Problem` is what a build reports and goes on: a located message with a code from
the same table. Exceptions that never leave the module raising them (a Backstage entity
refused mid-read, a shape the fast engine cannot compile) are not drawn here.
"""

from __future__ import annotations

from dataclasses import dataclass

CODES: dict[str, str] = {  # every code kgbuild uses -> what it means (README: Error codes)
    "ambiguous": "a name given for one node names several; give its ID",
    "backstage-api": "a Backstage catalog API failed, could not be reached or answered no catalog",
    "backstage-auth": "a Backstage catalog API refused the token (401, 403)",
    "backstage-limit": "a Backstage catalog is over a limit (time, page size, entities, a loop)",
    "bad-access": "a passage's access labels are not labels",
    "bad-bom-entry": "a CycloneDX component or dependency entry cannot be read",
    "bad-chart": "a Helm Chart.yaml or one of its dependencies cannot be read",
    "bad-confidence": "an edge's confidence is outside [0, 1]",
    "bad-dependency": "a package manifest's dependency entry cannot be read",
    "bad-depends-on": "a Compose depends_on entry is not a service name",
    "bad-gitignore": "a .gitignore cannot be read (it is ignored)",
    "bad-gradle": "a Gradle build or settings file or one of its statements cannot be read",
    "bad-host": "serve: a request for a Host the server does not answer for",
    "bad-include": "a requirements file's -r/-c include is not followed",
    "bad-input": "a source file cannot be read or parsed",
    "bad-json": "serve: the request body is not UTF-8 JSON",
    "bad-k8s-object": "a Kubernetes object or one of its references cannot be read",
    "bad-label": "an access label has characters other than letters, digits and _ . : / -",
    "bad-lockfile": "a lock file or one of its package entries cannot be read",
    "bad-module": "a go.mod has no valid module path",
    "bad-name": "a package name its ecosystem would refuse",
    "bad-pom": "a Maven pom.xml or one of its entries cannot be read",
    "bad-queue": "a review queue file is not one",
    "bad-ref": "an entity reference Backstage would refuse",
    "bad-relation": "a line of the verify edges file is no relation",
    "bad-require": "a go.mod require line cannot be read",
    "bad-requirement": "a Python requirement cannot be read",
    "bad-service": "a Compose service is not a mapping",
    "bad-spdx": "an SPDX document, package or relationship cannot be read",
    "bad-terraform": "a Terraform block cannot be read (HCL syntax error, missing labels)",
    "bad-title": "a passage's title is not a string",
    "bad-value": "a value kgbuild cannot use",
    "blank-node": "a blank node: a node needs a stable ID",
    "body-timeout": "serve: the request body did not arrive in time",
    "bulk-load": "Virtuoso's bulk loader could not be run or failed on a file",
    "busy": "serve: too many connections",
    "codeowners": "a CODEOWNERS line cannot be used",
    "conflicting-types": "a node is typed on different branches of the schema",
    "dot-failed": "Graphviz dot failed",
    "duplicate-id": "two nodes of a graph file have one ID",
    "embeddings": "the embeddings endpoint failed",
    "embeddings-too-large": "an embeddings answer is over the size limit",
    "embeddings-unsupported": "the endpoint serves no embeddings for the model",
    "encoding": "a line is not UTF-8",
    "error": "any other error",
    "file-too-large": "a file is over the size limit",
    "forbidden": "serve: SPARQL needs an all_access token",
    "full-scan": "a build told what changed looked at every file (why is in the message)",
    "header-timeout": "serve: the request header did not arrive in time",
    "header-too-large": "serve: the request header is over 64 KiB",
    "http": "serve: another HTTP error",
    "id-too-long": "an entity ID is over the length limit (left out)",
    "input": "a source or graph file cannot be read or parsed",
    "internal": "a bug in kgbuild (please report)",
    "json-syntax": "a line is not JSON",
    "line-too-long": "a line is over the length limit",
    "literal-edge": "an edge triple with a literal object (skipped)",
    "literal-too-long": "a value is over the length limit (cut)",
    "llm": "the LLM endpoint refuses the key, model or address",
    "llm-answer": "an LLM answer cannot be read, or lists too many relations",
    "llm-batch": "a batch API request failed, or the batch list is damaged",
    "llm-error": "an LLM request failed after the retries (retried next run)",
    "llm-too-large": "an LLM answer is over the size limit",
    "malformed-assertion": "an assertion lacks its subject, predicate or object",
    "method-not-allowed": "serve: the route does not take this HTTP method",
    "missing-extra": "an optional extra (pip install 'kgbuild[NAME]') is not installed",
    "missing-id": "a passage has no id",
    "missing-target": "a Location target does not exist",
    "missing-text": "a passage has no text",
    "missing-tool": "a program kgbuild needs is not installed",
    "no-change": "the store changed since the recorded build (validate --changed)",
    "no-passages": "no passages were ingested here",
    "no-store": "no kgbuild store at the path",
    "no-title": "an API spec without info.title",
    "no-triples": "a graph file holds no triples",
    "node-conflict": "an ID defined with conflicting types",
    "not-a-manifest": "a package.json is not a JSON object",
    "not-a-regular-file": "a FIFO, socket, device or folder where a file is expected",
    "not-acceptable": "serve: the Accept header names no format the answer is served in",
    "not-an-object": "a line is not a JSON object",
    "not-compose": "a Compose file has no services mapping",
    "not-cyclonedx": "a JSON file is not a CycloneDX BOM",
    "not-fetched": "a Location target is a URL (never fetched)",
    "not-found": "serve: no such route",
    "os-error": "the operating system refused (a path, a permission)",
    "other-kind": "a document the other command extracted (kept)",
    "output": "an output path cannot be written",
    "outside-root": "a symlink points outside the scanned folder",
    "push-locked": "another push of this store to the endpoint is running",
    "query": "a SPARQL query is refused or fails",
    "query-timeout": "a SPARQL query ran over its time limit",
    "read-only": "serve: SPARQL Update sent to the read-only endpoint",
    "rejected-entity": "a catalog entity Backstage would refuse",
    "remote": "a SPARQL or graph server refused, failed or could not be reached",
    "remote-auth": "a server refused the credentials",
    "remote-too-large": "a server's answer is over the size limit",
    "rerank": "the rerank endpoint failed, could not be reached or ran over its time limit",
    "rerank-answer": "a rerank answer cannot be read (not JSON, no scores, a bad index)",
    "rerank-too-large": "a rerank answer is over the size limit",
    "schema": "the schema is malformed or inconsistent",
    "schema-mismatch": "a catalog kind the schema has no type for",
    "schema-violation": "an edge the schema's domain and range do not allow",
    "several-ids": "a node has several dcterms:identifier values",
    "sparql-service": "a SPARQL SERVICE clause: federation is never run",
    "store-changed": "the store was replaced by a build while being read",
    "store-damaged": "the store is damaged",
    "store-full": "no space left to write the store",
    "store-lock": "the store's lock file cannot be opened",
    "store-locked": "another writer holds the store",
    "store-not-folder": "a file is where the store folder should be",
    "store-permission": "the store's folder permissions refuse the access",
    "store-rebuilt": "a damaged store was rebuilt from the sources",
    "symlink-loop": "a symlink loop",
    "target-outside-root": "a Location target outside the scanned folder",
    "text-too-long": "a passage's text is over the length limit (cut)",
    "timeout": "serve: the work ran over its time limit",
    "too-large": "an HTTP body is over the size limit",
    "too-many-problems": "more problems in one file than are listed",
    "too-many-records": "a file yields more records than the limit (the rest left out)",
    "triple-term": "an RDF 1.2 triple term, which kgbuild cannot hold",
    "unauthorized": "serve: an unknown bearer token",
    "unknown-attribute": "an attribute the schema does not have",
    "unknown-directive": "a go.mod directive kgbuild does not know (skipped)",
    "unknown-edge": "an edge type the schema does not have",
    "unknown-entity": "an ID that is no entity of the graph",
    "unknown-kind": "a relation target's kind is no type of the schema",
    "unknown-node": "no node of that ID or name",
    "unknown-predicate": "an assertion's predicate is no edge type of the schema",
    "unknown-service": "a Compose service depends on an undefined service",
    "unknown-type": "a node type the schema does not have",
    "unreadable": "a file cannot be read",
    "unreadable-source": "a verify source document cannot be read",
    "unrecognised": "no extractor reads this file (skipped)",
    "unsupported-media-type": "serve: a SPARQL POST body of another media type",
    "unterminated-block": "a go.mod block is never closed",
    "untyped-node": "a node neither defined nor typed",
    "usage": "a call's or command's arguments do not fit",
    "xml-entities": "an XML entity declaration that could expand without bound",
}


class KgbuildError(Exception):
    """Base error: a one-line message, optionally located at ``file:line``, with a short
    machine ``code`` (the CLI prints it in brackets after the message)."""

    code = "error"

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 code: str | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        if code:
            self.code = code

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        return f"{where}{self.message}"


class SchemaError(KgbuildError):
    """The schema file is malformed or inconsistent."""

    code = "schema"


class InputError(KgbuildError):
    """A source or graph file cannot be read or parsed."""

    code = "input"


class YamlError(InputError):
    """The text is not acceptable YAML: syntax, alias bomb, duplicate or unhashable key, bad
    value, several documents where one is expected (reading problems are plain InputErrors)."""


class DuplicateKeyError(YamlError):
    """A mapping names one key twice."""


class InvalidValue(KgbuildError, ValueError):
    """A value kgbuild cannot use: an argument, a name, a label. Also a ValueError, as the
    bare ValueError it replaces was, so code catching that still does."""

    code = "bad-value"


class RefError(InvalidValue):
    """An entity reference that Backstage would refuse."""

    code = "bad-ref"


class ServiceRefused(KgbuildError):
    """A SPARQL text asks for ``SERVICE``: federation to other servers is never run."""

    code = "sparql-service"


@dataclass(frozen=True)
class Problem:
    """Something a user must know about an input: a located, one-line message."""

    severity: str  # "error" (input skipped) or "warning" (input kept)
    code: str  # one of CODES, e.g. "bad-input", "rejected-entity"
    message: str
    file: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.severity}: {self.message} [{self.code}]"

    def to_dict(self) -> dict:
        return {"severity": self.severity, "code": self.code, "message": self.message,
                "file": self.file, "line": self.line}
