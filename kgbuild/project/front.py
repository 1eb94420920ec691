"""The front object: a project folder, its settings, and every verb kgbuild offers on it.

``Project.open(root)`` finds the project's configuration (``kgbuild.toml``, or
``pyproject.toml`` with ``[tool.kgbuild]``, from ``root`` upwards; see
:mod:`kgbuild.project.config`) and each verb runs with its settings: the schema, the store,
the sources, excludes, access rules, alias registry, LLM and embeddings tables. Keyword
arguments of :meth:`Project.open` (or :meth:`Project.using`) override the file, as flags do on
the command line; every CLI command is one call on a ``Project``::

    project = Project.open(".")
    result = project.build(output="graph.ttl")        # the project's sources
    project.traverser(Principal.of("pci")).run(TraversalSpec(seeds=["Payments API"]))

Relative paths given to a verb are relative to the working directory, as usual; relative
paths in the file are relative to the project root.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from ..errors import KgbuildError
from .config import ProjectConfig, find_project, load_project

if TYPE_CHECKING:
    from ..graph.access import AccessRules, Principal
    from ..passages.index import IngestResult
    from ..passages.retrieve import Question, Retrieved
    from ..remote.push import PushReport
    from ..remote.sparql import SparqlClient
    from ..retrieve.browse import Browser
    from ..retrieve.traverse import Traverser
    from ..schema.model import Schema
    from ..store.graphstore import GraphStore
    from ..store.load import LoadResult
    from ..store.query import QueryResult
    from ..validate.validator import ValidationReport
    from .textextract import ExtractResult
    from .update import BuildResult
    from .verifyfile import VerifyFileResult

MiB = 1 << 20


class Project:
    """A project folder and the verbs on it (see the module docstring)."""

    def __init__(self, config: ProjectConfig | None = None):
        self.config = config or find_project()

    @classmethod
    def open(cls, root: str | Path | None = None, **overrides) -> "Project":
        """The project of ``root`` (a folder, searched upwards, or a configuration file;
        default: the working directory), with ``overrides`` of its settings (``schema``,
        ``store``, ``sources``, ``exclude``, ``access``, ``aliases``, ...)."""
        path = Path(root or ".")
        config = load_project(path) if path.is_file() else find_project(path)
        return cls(config).using(**overrides)

    def using(self, **overrides) -> "Project":
        """This project with some settings replaced (``None`` keeps the file's). Paths given
        here are taken as they are (relative to the working directory)."""
        fields = {f.name for f in dataclasses.fields(ProjectConfig)} - {"root", "config"}
        unknown = set(overrides) - fields
        if unknown:
            raise KgbuildError(f"unknown project setting(s): {', '.join(sorted(unknown))} "
                               f"(known: {', '.join(sorted(fields))})", code="usage")
        changes = {}
        for key, value in overrides.items():
            if value is None:
                continue
            if key in ("store", "access", "aliases") or (key == "schema" and _is_path(value)):
                value = str(Path(value).resolve())
            elif key == "sources":
                value = tuple(str(Path(v).resolve()) for v in value)
            elif key == "exclude":
                value = tuple(value)
            changes[key] = value
        return Project(dataclasses.replace(self.config, **changes)) if changes else self

    def __repr__(self) -> str:
        return f"Project({str(self.root)!r}, config={str(self.config.config) if self.config.config else None!r})"

    # --- settings ---------------------------------------------------------------------------

    @property
    def root(self) -> Path:
        return self.config.root

    @property
    def store_path(self) -> Path:
        return self.config.store_path()

    @cached_property
    def schema(self) -> Schema:
        """The project's schema (loaded once)."""
        from ..schema.loader import load_schema

        return load_schema(self.config.schema_ref())

    def access_rules(self) -> AccessRules | None:
        from ..graph.access import load_access

        path = self.config.access_path()
        return load_access(path) if path else None

    def sources(self) -> list[Path]:
        """The project's ``sources`` setting, as paths."""
        return self.config.source_paths()

    def store(self, *, write: bool = False) -> GraphStore:
        """The project's store, opened (read-only unless ``write``); use it in ``with``."""
        from ..store.graphstore import GraphStore

        return GraphStore(self.store_path, self.schema, write=write)

    def _built(self) -> bool:
        """Whether a build made the store (passage-only stores have no graph)."""
        return (self.store_path / "CURRENT").is_file()

    def _scan(self) -> dict:
        """What every verb that reads source folders shares."""
        return {"root": self.root, "exclude": list(self.config.exclude),
                "gitignore": self.config.gitignore,
                "max_file_bytes": self.config.max_file_size * MiB,
                "access": self.config.access_path()}

    def _sources(self, sources: Sequence[str | Path] | None, verb: str) -> list[str | Path]:
        if sources:
            return list(sources)
        if not self.config.sources:
            where = self.config.config or f"{self.root} (no kgbuild.toml or [tool.kgbuild] found)"
            raise KgbuildError(f"no sources given and the project names none: pass files or "
                               f"folders to {verb}, or set sources in {where}", code="usage")
        return [str(p) for p in self.sources()]

    # --- verbs ------------------------------------------------------------------------------

    def build(self, sources: Sequence[str | Path] | None = None, *, output: str | Path | None = None,
              in_memory: bool = False, backstage: Sequence = (), **options) -> BuildResult:
        """``kgbuild build``: extract ``sources`` (default: the project's, and its
        ``[backstage]`` catalog) into the store, check it, and write Turtle to ``output`` if
        given. ``in_memory`` builds without the store. ``options`` are those of
        :func:`~kgbuild.project.pipeline.build_graph` (``full``, ``prune``, ``validate``,
        ``resolve``, ``timestamp``, ``progress``, ``phase``, ``registry``, ...)."""
        from .pipeline import build, build_graph

        if not sources and not backstage:
            if not self.config.sources and self.config.backstage:
                sources = []
                backstage = [self.config.backstage["url"]]
            else:
                sources = self._sources(sources, "build")
                if self.config.backstage:
                    backstage = [self.config.backstage["url"]]
        kwargs = {**self._scan(), "registry": self.config.aliases_path(),
                  "store": None if in_memory else self.store_path, "backstage": backstage}
        kwargs.update({k: v for k, v in options.items() if v is not None or k == "validate"})
        if output:
            return build(sources, output, self.schema, **kwargs)
        return build_graph(sources, self.schema, **kwargs)

    def extract(self, sources: Sequence[str | Path] | None = None, *, llm=None, text=None,
                in_memory: bool = False, output: str | Path | None = None,
                report: str | Path | None = None, **options) -> ExtractResult:
        """``kgbuild extract``: relations from prose through an LLM (``llm``: an
        :class:`~kgbuild.llm.settings.LLMSettings`, default from the environment and the
        project's ``[llm]``), verified, into the store; the graph written as Turtle to
        ``output`` and the rejected relations as JSON lines to ``report`` (atomically), when
        given. ``options``: those of :func:`~kgbuild.project.textextract.extract_text`
        (``dry_run``, ``full``, ``validate``, ``timestamp``, ``progress``, ...). Close
        ``result.store`` when done."""
        import json

        from ..graph.turtle import to_turtle
        from ..io.atomic import atomic_write
        from ..llm.settings import LLMSettings
        from .textextract import extract_text

        llm = llm or LLMSettings.resolve(config=self.config.llm)
        kwargs = {**self._scan(), "registry": self.config.aliases_path(),
                  "store": None if in_memory else self.store_path}
        kwargs.update({k: v for k, v in options.items() if v is not None or k == "validate"})
        result = extract_text(self._sources(sources, "extract"), self.schema, llm=llm, text=text,
                              **kwargs)
        try:
            if output and result.store is not None:
                atomic_write(output, to_turtle(result.store.triples(), result.schema))
            if report and not options.get("dry_run"):
                lines = [json.dumps(r, sort_keys=True, ensure_ascii=False)
                         for r in result.stats.rejections]
                atomic_write(report, "".join(line + "\n" for line in lines))
        except BaseException:
            if result.store is not None:
                result.store.close()
            raise
        return result

    def verify(self, relations: str | Path, sources: str | Path, *, use_store: bool | None = None,
               write: bool = False, **options) -> VerifyFileResult:
        """``kgbuild verify``: another extractor's relations checked against their source
        documents, resolved against the project's store when it is built (``use_store``: True
        always, False never) and its alias registry; with ``write`` the verified documents go
        into the store (made if need be), incremental by document. ``options``: those of
        :func:`~kgbuild.project.verifyfile.verify_file` (``output``, ``report``,
        ``timestamp``)."""
        from .verifyfile import verify_file

        store = self.store_path if write or (
            use_store is not False and (use_store or self._built())) else None
        registry = self.config.aliases_path() or self.root / "aliases.yaml"
        return verify_file(relations, sources, self.schema, store=store, write=write,
                           registry=registry if registry.is_file() else None,
                           max_file_bytes=self.config.max_file_size * MiB, **options)

    def load(self, files: Sequence[str | Path], **options) -> LoadResult:
        """``kgbuild load``: graph files (any RDF format pyoxigraph reads) into the store,
        one document each, bulk-loaded; a file whose content the store holds is not read
        again, a changed one replaces its document (see :mod:`kgbuild.store.load`).
        ``options``: ``indexing`` (called when the read model is made)."""
        from ..store.load import load_files

        return load_files(self.store_path, self.schema, files, **options)

    def validate(self, graph: str | Path | None = None, **options) -> ValidationReport:
        """``kgbuild validate``: a graph file, or else the project's store, against the SHACL
        shapes. ``options``: those of :func:`~kgbuild.project.validation.validate_target`
        (``changed``, ``engine``, ``shapes``, ``hygiene``)."""
        from .validation import validate_target

        return validate_target(self.schema, graph, store=None if graph else self.store_path,
                               **options)

    def ingest(self, corpora: Iterable[str | Path], *, embeddings=None, embed: bool = True,
               **options) -> IngestResult:
        """``kgbuild ingest``: passage corpora into the store, indexed, linked to the names they
        mention (the store's entities too) and embedded (``embeddings``: default from the
        arguments' environment, the project's ``[embeddings]`` and the store's last ingest;
        ``embed=False``: none)."""
        from ..passages.catalog import from_store
        from ..passages.ingest import ingest

        if embeddings is None and embed:
            embeddings = self.embeddings()
        corpora = list(corpora)
        catalog, chunks = from_store(self.store_path, self.schema)
        if not corpora and not chunks:
            raise KgbuildError("give at least one JSONL file (the store holds no text `kgbuild "
                               "extract` chunked either)", code="usage")
        return ingest(self.store_path, corpora, embeddings=embeddings if embed else None,
                      catalog=catalog, chunks=chunks, **options)

    def embeddings(self, base_url: str | None = None, model: str | None = None,
                   query_model: str | None = None):
        """The embeddings settings passage commands use (arguments, environment, the
        project's ``[embeddings]``, what the store's last ingest used), or None."""
        from ..passages.dense import EmbeddingSettings, recorded_settings

        return EmbeddingSettings.resolve(base_url=base_url, model=model, query_model=query_model,
                                         config=self.config.embeddings,
                                         recorded=recorded_settings(self.store_path))

    def rerank(self, base_url: str | None = None, model: str | None = None,
               top_n: int | None = None, trust_project_url: bool = False):
        """The rerank settings of ``kgbuild retrieve`` (arguments, environment, the
        project's ``[rerank]``), or None."""
        from ..passages.rerank import RerankSettings

        return RerankSettings.resolve(base_url=base_url, model=model, top_n=top_n,
                                      trust_project_url=trust_project_url,
                                      config=self.config.rerank)

    def retrieve(self, questions: Iterable[Question | str], *, embeddings=None,
                 **options) -> list[Retrieved]:
        """``kgbuild retrieve``: rank the store's passages for each question (lexical, dense
        and graph search fused). ``options``: those of
        :func:`~kgbuild.passages.retrieve.retrieve` (``k``, ``method``, ``principal``,
        ``settings``, ``rerank``)."""
        from ..passages.retrieve import retrieve

        if embeddings is None:
            embeddings = self.embeddings()
        # typed edges from the store's entities when a build made a graph there
        schema = self.schema if self._built() else None
        return retrieve(self.store_path, questions, embeddings=embeddings, schema=schema,
                        **options)

    def _graph(self, graph=None):
        """What a reading verb reads: the store (None), a graph file (a path), or ``graph``
        itself (a ``SparqlClient``, a graph in memory, a graph source)."""
        from ..retrieve.sources import GraphFile, StoreGraph

        if graph is None:
            return StoreGraph(self.store_path, self.schema)
        return GraphFile(graph, self.schema) if isinstance(graph, (str, Path)) else graph

    def traverser(self, principal: Principal | None = None, *, graph=None, matcher=None,
                  resolver=None) -> Traverser:
        """A :class:`~kgbuild.retrieve.traverse.Traverser` over the principal's view of the
        project's store (or of ``graph``: a graph file's path, a ``SparqlClient``, a graph in
        memory)."""
        from ..retrieve.traverse import open_traverser

        return open_traverser(self._graph(graph), self.schema, principal, matcher=matcher,
                              resolver=resolver)

    def browser(self, principal: Principal | None = None, *, graph=None) -> Browser:
        """A :class:`~kgbuild.retrieve.browse.Browser` (``show``, ``ls``, ``stats``) over the
        principal's view (default: public items only) of the store (or of a graph file; what
        reading it skipped is the browser's ``problems``)."""
        from ..retrieve.browse import Browser

        return Browser(self._graph(graph), principal)

    def query(self, sparql: str, **options) -> QueryResult:
        """``kgbuild query``: a SPARQL query over the store, bounded in time and rows
        (``options``: ``limit``, ``union``, ``timeout``)."""
        from ..store.query import query_store

        return query_store(self.store_path, self.schema, sparql, **options)

    def export(self, output: str | Path | None = None, fmt: str = "turtle") -> Iterator[bytes] | bool:
        """``kgbuild export``: the store as ``fmt`` (turtle, nt, jsonld, trig, nquads,
        cypher). With ``output``, written atomically (False when the file already held this
        state of the store); without, the export's bytes as they are produced."""
        from ..store.export import export_chunks, write_export

        if fmt == "cypher":
            from ..io.atomic import atomic_write
            from ..io.text import safe_text
            from ..remote.cypher import cypher_script

            with self.store() as store:
                text = safe_text(cypher_script(store.knowledge_graph()))
            if output is None:
                return iter([text.encode("utf-8")])
            atomic_write(output, text)
            return True
        if output is not None:
            with self.store() as store:
                return write_export(store, output, fmt)

        def chunks() -> Iterator[bytes]:
            with self.store() as store:
                yield from export_chunks(store, fmt)
        return chunks()

    def push(self, client: SparqlClient, **options) -> PushReport:
        """``kgbuild push``: the store to a SPARQL 1.1 server, one named graph per document,
        incrementally (``options``: ``graph_iri``, ``full``, ``batch_bytes``, ``bulk``: a
        :class:`~kgbuild.remote.virtuoso.BulkLoader` for the graphs Virtuoso lacks)."""
        from ..remote.push import push_store

        return push_store(self.store_path, self.schema, client, **options)

    def push_falkordb(self, url: str, graph_name: str = "kgbuild", **options) -> dict:
        """``kgbuild push --falkordb``: the store as a property graph, MERGEd."""
        from ..remote.cypher import push_falkordb

        return push_falkordb(self.store_path, self.schema, url, graph_name, **options)

    def push_neo4j(self, url: str, **options) -> dict:
        """``kgbuild push --neo4j``: the store as a property graph over Bolt, MERGEd in one
        transaction (``options``: ``database``, ``user``, ``password``, ``token``,
        ``timeout``)."""
        from ..remote.neo4j import push_neo4j

        return push_neo4j(self.store_path, self.schema, url, **options)


def _is_path(value: str) -> bool:
    return str(value).endswith((".yaml", ".yml")) or "/" in str(value)
