"""The build: sources into the store (:mod:`kgbuild.project.update`), then the resolution
report, validation and the Turtle file.

``build_graph`` is the library call behind ``kgbuild build``; each step reports problems with
file and line instead of stopping, so one bad file never costs the rest of the catalog.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..errors import KgbuildError
from ..graph.access import AccessRules, load_access
from ..graph.model import DECLARED_LABEL, MENTION_LABEL, node_iri, source_iri
from ..schema.loader import load_schema
from ..schema.model import Schema
from ..store.graphstore import GraphStore
from ..validate.incremental import record_change
from .update import BuildResult, Phase, Progress, update_store

if TYPE_CHECKING:
    from ..remote.backstage import Catalog, CatalogSource


DEFAULT_REGISTRY = "aliases.yaml"  # in the project folder, beside the default store


def default_registry(paths: Sequence[str | Path], root: str | Path | None = None) -> Path:
    """``aliases.yaml`` in the project root (default: the working directory); or, when there
    is none, an ``aliases.yaml`` in the first source folder (beside the sources) if one
    exists there."""
    here = (Path(root or ".") / DEFAULT_REGISTRY).resolve()
    if not here.is_file() and paths:
        first = Path(paths[0]).resolve()
        beside = (first if first.is_dir() else first.parent) / DEFAULT_REGISTRY
        if beside.is_file():
            return beside
    return here


RESOLVE_AUTO_LIMIT = 5_000


def report_resolution(result: BuildResult, registry: Path | None, queue: Path | None,
                      enabled: bool | None = None) -> None:
    """Resolve every mentioned-but-undefined entity against the defined ones; count outcomes
    by stage, queue what needs a person, list possible duplicates among defined entities.
    ``enabled``: True always, False never, None when the graph has at most 5,000 entities."""
    if enabled is False:
        return
    total = result.store.node_count()
    if enabled is None and total > RESOLVE_AUTO_LIMIT:
        result.resolution_note = (f"resolution report skipped: {total:,} entities is over the "
                                  f"automatic limit of {RESOLVE_AUTO_LIMIT:,}; run `kgbuild resolve "
                                  f"review` or pass --resolve")
        return
    from ..resolve.aliases import AliasRegistry
    from ..resolve.review import resolution_report, save_review_queue  # (when a report is made)

    reg = AliasRegistry.load(registry, missing_ok=True) if registry else None
    stats, items, duplicates = resolution_report(result.graph, reg, _renamed(result.store))
    if queue is not None:
        save_review_queue(queue, items)
    result.resolution = {**stats.to_dict(), "queue_file": str(queue) if queue else None,
                         "review": items[:20],
                         "duplicates": [d.to_dict() for d in duplicates[:20]]}


def _renamed(store: GraphStore):
    """``(document, entity) -> bool``: whether the registry renamed the document's mention to
    the entity (its claim there carries no label: see :func:`document_triples`)."""
    labelled: dict[str, set[str]] = {}

    def renamed(doc_id: str, node_id: str) -> bool:
        if doc_id not in labelled:
            labelled[doc_id] = {str(q.subject) for q in store.graph_quads(source_iri(doc_id))
                                if str(q.predicate) in (DECLARED_LABEL, MENTION_LABEL)}
        return f"<{node_iri(node_id)}>" not in labelled[doc_id]
    return renamed


FULL_SHARE = 0.5  # above this share of documents changed, a full validation is as cheap


def check(result: BuildResult, validate: bool | None = None) -> None:
    """Validate the built graph (fast engine): the whole graph (True, or when the store was
    rebuilt or most documents changed), only the focus nodes the changed documents touched
    (None), or not at all (False). What changed is recorded for ``kgbuild validate --changed``."""
    changes = result.changes
    changed = [d for k in ("changed", "added", "deleted") for d in changes.get(k, ())]
    if changed:
        record_change(result.store, changed, result.touched or {})
    if validate is False:
        return
    from ..validate.incremental import validate_changed  # (when a build validates)
    from ..validate.validator import validate_store

    total = len(changed) + len(changes.get("unchanged", ())) + len(changes.get("kept", ())) \
        + result.unlisted
    if validate or result.touched is None or len(changed) > FULL_SHARE * total:
        result.validation = validate_store(result.store)
    elif not changed:
        result.validation_note = "validation: no document changed, nothing to re-validate"
    else:
        result.validation = validate_changed(result.store, changed, before=result.touched)


def build_graph(paths: Sequence[str | Path], schema: Schema | str | Path | None = None, *,
                store: str | Path | None = None, full: bool = False, timestamp: float | None = None,
                validate: bool | None = None, progress: Progress | None = None,
                max_file_bytes: int = 20 * 1024 * 1024, access: AccessRules | str | Path | None = None,
                registry: str | Path | None = None, resolve: bool | None = None,
                root: str | Path | None = None, exclude: Sequence[str] = (),
                gitignore: bool = True, prune: bool = False, phase: Phase | None = None,
                backstage: Sequence[str | CatalogSource] = (),
                changed: Sequence[str | Path] | None = None) -> BuildResult:
    """Discover, extract and store a graph from files and folders; SHACL-check it.

    ``store`` is a store folder (updated incrementally; see :func:`update_store`) or None for
    an in-memory store. ``timestamp`` fixes ``prov:generatedAtTime`` (seconds since the epoch);
    otherwise ``SOURCE_DATE_EPOCH``, else the last commit touching a file git tracks unmodified,
    else its modification time, so the same commit gives the same graph in any checkout. ``validate``: True always, False never, None when small.
    ``access`` maps source paths to access labels (an ``access.yaml`` path or an AccessRules).
    ``registry`` is the alias registry (default :func:`default_registry`); ``resolve`` runs
    the resolution report: True always, False never, None for graphs up to 5,000 entities
    (its review queue is written to ``<store>/review-queue.json``). ``root``, ``exclude``,
    ``gitignore`` and ``prune``: see :func:`update_store` and :func:`~kgbuild.extract.discover.candidates`.
    ``phase`` is told when each long phase after extraction (``progress``) starts.
    ``backstage``: running Backstages whose catalog API is read too, each entity a document
    (a URL, its token from ``$BACKSTAGE_TOKEN``, or a
    :class:`~kgbuild.remote.backstage.CatalogSource`); each is read in full before the store
    is touched (:class:`~kgbuild.remote.backstage.CatalogError` otherwise, nothing changed).
    ``changed``: the files that changed since the last build, when the caller knows (git,
    a file watcher): only they are looked at (see :func:`update_store`).
    """
    schema = schema if isinstance(schema, Schema) else load_schema(schema or "software")
    if access is not None and not isinstance(access, AccessRules):
        access = load_access(access)
    catalogs = read_catalogs(backstage, phase) if backstage else []
    graph_store = GraphStore(store, schema, rebuild=full)
    try:
        registry = Path(registry).resolve() if registry else default_registry(paths, root)
        result = update_store(graph_store, paths, full=full or store is None, timestamp=timestamp,
                              progress=progress, max_file_bytes=max_file_bytes, access=access,
                              registry=registry, root=root, exclude=exclude, gitignore=gitignore,
                              prune=prune, phase=phase, catalogs=catalogs, changed=changed)
        result.catalogs = [{"url": c.base, "entities": len(c.entities), "pages": c.pages,
                            "endpoint": c.endpoint} for c in catalogs]
        queue = Path(store) / "review-queue.json" if store is not None else None
        if phase and resolve is not False:
            phase("resolving")
        report_resolution(result, registry, queue, resolve)
        if phase and validate is not False:
            phase("validating")
        check(result, validate)
    except BaseException:
        graph_store.close()
        raise
    return result


def read_catalogs(urls: Sequence[str | CatalogSource], phase: Phase | None = None
                  ) -> list[Catalog]:
    """Every entity of each catalog (a URL: its token from ``$BACKSTAGE_TOKEN``)."""
    from ..remote.backstage import TOKEN_ENV, CatalogSource, read_catalog

    if phase:
        phase("reading Backstage")
    return [read_catalog(s if isinstance(s, CatalogSource)
                         else CatalogSource(s, os.environ.get(TOKEN_ENV) or None))
            for s in urls]


def build(paths: Sequence[str | Path], output: str | Path, schema: Schema | str | Path | None = None,
          **kwargs) -> BuildResult:
    """:func:`build_graph`, then write deterministic Turtle to ``output`` atomically (a file
    that already holds the store's unchanged content is left alone: see
    :func:`~kgbuild.store.export.write_export`)."""
    if output is None or not str(output).strip():
        raise KgbuildError("build() writes Turtle to an output path: give one (build_graph "
                           "builds without writing a file)", code="usage")
    from ..store.export import write_export  # (a build without -o writes no file)

    result = build_graph(paths, schema, **kwargs)
    if kwargs.get("phase"):
        kwargs["phase"]("writing")
    write_export(result.store, output)
    result.output = str(output)
    return result
