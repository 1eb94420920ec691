"""The build pipeline: discover sources, extract, assemble a typed graph, validate, write.

``build_graph`` is the library call behind ``kgbuild build``; each step reports problems with
file and line instead of stopping, so one bad file never costs the rest of the catalog.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from ..errors import KgbuildError, Problem
from ..extract import manifests as sources  # noqa: F401  (registers the extractors)
from ..extract.assemble import document_triples
from ..extract.discover import (
    Candidate,
    SourceTimes,
    candidates,
    extractor_for,
    file_stat,
    fingerprint,
    in_scope,
    sha256_file,
)
from ..extract.manifests.codeowners import add_fallback_owners
from ..extract.records import Context, Extraction, Extractor, SourceFile
from ..extract.registry import EXTRACTORS
from ..extract.text.extractor import TEXT_EXTRACTOR_PREFIX
from ..graph.access import AccessRules, load_access
from ..graph.model import (
    DECLARED_LABEL,
    MENTION_LABEL,
    KnowledgeGraph,
    SourceDocument,
    node_iri,
    source_iri,
    utc_timestamp,
)
from ..resolve.aliases import AliasRegistry
from ..resolve.normalize import fold
from ..resolve.review import resolution_report, save_review_queue
from ..schema.loader import load_schema
from ..schema.model import Schema
from ..store.export import write_export
from ..store.graphstore import DocumentState, DocumentUpdate, GraphStore
from ..validate.incremental import Touched, touched_terms, validate_changed
from ..validate.validator import ValidationReport, validate_store
from .validation import record_change

if TYPE_CHECKING:
    from ..remote.backstage import Catalog, CatalogSource

Progress = Callable[[str, int, int], None]
Phase = Callable[[str], None]  # told when a long phase starts: "storing", "validating", ...
try:
    VERSION = metadata.version("kgbuild")
except metadata.PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
    VERSION = "0+unknown"


@dataclass
class BuildResult:
    """What a build did: the store it updated, document changes, problems, validation."""

    store: GraphStore
    schema: Schema
    problems: list[Problem] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # doc_id -> extractor name (this run)
    changes: dict[str, list[str]] = field(default_factory=dict)
    validation: ValidationReport | None = None
    validation_note: str | None = None
    touched: Touched | None = field(default=None, repr=False)  # IRIs the change used, their types before
    resolution: dict | None = None
    resolution_note: str | None = None
    output: str | None = None
    catalogs: list[dict] = field(default_factory=list)  # Backstage catalogs read: base, entities, pages
    _graph: KnowledgeGraph | None = field(default=None, repr=False)

    @property
    def graph(self) -> KnowledgeGraph:
        """The built graph in memory (materialised from the store on first use)."""
        if self._graph is None:
            self._graph = self.store.knowledge_graph()
        return self._graph

    def summary(self) -> dict:
        """Entities by type, edges by type, document changes and problems: JSON-ready."""
        counts = self.store.counts()
        by_code: dict[str, int] = {}
        for p in self.problems:
            by_code[p.code] = by_code.get(p.code, 0) + 1
        return {
            "output": self.output,
            "store": str(self.store.path) if self.store.path else None,
            "schema": self.schema.name,
            "documents": sum(len(self.changes.get(k, ())) for k in ("unchanged", "changed", "added", "kept")),
            "documents_changed": {k: len(self.changes.get(k, ()))
                                  for k in ("unchanged", "changed", "added", "deleted")},
            "documents_kept": len(self.changes.get("kept", ())),
            "entities": sum(counts["nodes"].values()),
            "entities_by_type": counts["nodes"],
            "edges": sum(counts["edges"].values()),
            "edges_by_type": counts["edges"],
            "assertions": counts["assertions"],
            "problems": len(self.problems),
            "problems_by_code": dict(sorted(by_code.items())),
            "problem_list": [p.to_dict() for p in self.problems],
            "conforms": None if self.validation is None else self.validation.conforms,
            "violations": None if self.validation is None else len(self.validation.violations),
            "validation_note": self.validation_note,
            "resolution": self.resolution,
            "resolution_note": self.resolution_note,
            "catalogs": self.catalogs,
        }


def _timestamp(path: Path, fixed: float | None, times: SourceTimes) -> str:
    """``fixed``, else ``$SOURCE_DATE_EPOCH``, else the source's commit time or mtime."""
    if fixed is not None:
        return utc_timestamp(fixed)
    env = os.environ.get("SOURCE_DATE_EPOCH")
    if env and env.strip().isdigit():
        return utc_timestamp(int(env))
    return utc_timestamp(times.epoch(path))


def _extract(src: SourceFile, ctx: Context, ex: Extractor | None = None,
             extractors: Sequence[Extractor] | None = None) -> tuple[Extractor, Extraction] | None:
    """Run the extractor (``ex``, or the one of ``extractors`` claiming the file now) and
    CODEOWNERS fallback."""
    ex = ex or extractor_for(src.path, extractors)
    if ex is None:
        return None
    extraction = ex.extract(src, ctx)
    add_fallback_owners(src, extraction, ex, ctx)
    return ex, extraction


def _deps_unchanged(deps: dict[str, str], seen: dict[str, str]) -> bool:
    """Whether every dependency still has its fingerprint (``seen`` memoises this build's)."""
    for p, digest in deps.items():
        if p not in seen:
            seen[p] = fingerprint(Path(p))
        if seen[p] != digest:
            return False
    return True


TEXT_KIND = "text"  # documents `kgbuild extract` reads through an LLM; "manifest": `kgbuild build`'s


def document_kind(extractor_tag: str) -> str:
    """Which command owns a stored document, from the extractor that built it: ``text``
    (``llm:<model>@...``, `kgbuild extract`) or ``manifest`` (`kgbuild build`)."""
    return TEXT_KIND if extractor_tag.startswith(TEXT_EXTRACTOR_PREFIX) else "manifest"


def build_settings(schema: Schema, max_file_bytes: int) -> dict:
    """What a store records about how its documents were built; a change re-extracts what it
    affects (see :func:`update_store`)."""
    return {"kgbuild": VERSION, "schema": schema.digest, "max_file_bytes": max_file_bytes,
            "extractors": {ex.name: extractor_tag(ex) for ex in EXTRACTORS}}


def extractor_tag(ex: Extractor) -> str:
    return f"{ex.name}@{getattr(ex, 'version', 1)}"


def _stale(states: dict[str, DocumentState], old: dict | None, new: dict,
           access: AccessRules | None) -> tuple[bool, set[str]]:
    """(everything stale?, documents to re-extract) when the settings changed since the store
    was built: another schema or kgbuild version rebuilds all; a changed size limit the
    documents whose size lies between the two limits; a changed extractor its documents;
    changed access rules the documents whose labels they change."""
    if old is None or old.get("schema") != new["schema"] or old.get("kgbuild") != new["kgbuild"]:
        return True, set(states)
    stale = set()
    low, high = sorted((old.get("max_file_bytes", 0), new["max_file_bytes"]))
    tags = set(new["extractors"].values())
    for doc_id, st in states.items():
        size = int(st.stat.split(":")[0]) if st.stat else 0
        if low != high and low < size <= high:
            stale.add(doc_id)
        elif st.extractor and st.extractor not in tags:
            stale.add(doc_id)
        elif sorted(_labels(access, doc_id)) != sorted(st.labels):
            stale.add(doc_id)
    return False, stale


def _labels(access: AccessRules | None, doc_id: str) -> frozenset[str]:
    """The labels the access rules give a document: matched against its ID and the path
    below its scanned folder (a catalog entity's: ``<kind>/<namespace>/<name>``)."""
    if access is None:
        return frozenset()
    below = "/".join(doc_id.split("/")[-3:]) if "://" in doc_id else doc_id.partition("/")[2]
    return access.labels_for(doc_id, below or doc_id)


def update_store(store: GraphStore, paths: Sequence[str | Path], *, full: bool = False,
                 timestamp: float | None = None, progress: Progress | None = None,
                 max_file_bytes: int = 20 * 1024 * 1024, access: AccessRules | None = None,
                 registry: Path | None = None, root: str | Path | None = None,
                 exclude: Sequence[str] = (), gitignore: bool = True,
                 prune: bool = False, extractors: Sequence[Extractor] | None = None,
                 phase: Phase | None = None, catalogs: Sequence[Catalog] = ()) -> BuildResult:
    """Bring ``store`` in line with the sources under ``paths``, re-extracting only what changed.

    A document whose content hash is unchanged is not read again; a changed or new one is
    extracted and its named graph replaced; a document under ``paths`` no longer found is
    removed with everything only it asserted. Documents of the store outside ``paths`` are
    kept (``changes["kept"]``) unless ``prune``. Document IDs are paths relative to ``root``
    (the project root; default the working directory). ``full`` re-extracts every document
    under ``paths``. The store remembers the settings it was built with: when the schema,
    the kgbuild or an extractor version, the size limit or the access rules change, exactly
    the documents they affect are re-extracted, wherever they are. ``registry`` (an
    ``aliases.yaml``, which need not exist yet) renames mentioned entities to their
    canonical IDs; every document depends on it.

    ``extractors`` (default: the registered manifest extractors, ``kgbuild build``) are the
    only ones tried. With text extractors (``kgbuild extract``) only text documents are
    touched, and a build touches only manifest documents: documents of the other kind are
    always kept as they are, whatever ``paths``, ``full`` or ``prune`` say (a build never
    calls an LLM, nor deletes what one extracted). A text run re-extracts a document when its
    content or its extractor's tag (model, prompts, chunking, schema) changed; it records no
    build settings (those describe the manifest documents).

    ``catalogs`` (read by :func:`~kgbuild.remote.backstage.read_catalog`) are running
    Backstages' catalogs: each entity a document, incremental by etag (see
    :mod:`kgbuild.project.catalog`); an entity no longer listed is removed. Their documents
    are never under ``paths``: a build without a catalog keeps them (unless ``prune``).
    """
    schema = store.schema
    seen: dict[str, str] = {}
    canonical = _canonical(AliasRegistry.load(registry, missing_ok=True), schema) if registry else None
    selection = list(EXTRACTORS if extractors is None else extractors)
    kind = document_kind(extractor_tag(selection[0])) if selection else "manifest"
    all_states = store.document_states()
    states = {d: st for d, st in all_states.items() if document_kind(st.extractor) == kind}
    others = set(all_states) - set(states)
    settings: dict | None = None
    if kind == "manifest":
        settings = build_settings(schema, max_file_bytes)
        everything, stale = _stale(states, store.settings(), settings, access)
    else:
        tags = {extractor_tag(ex) for ex in selection}
        everything = False
        stale = {d for d, st in states.items() if st.extractor not in tags
                 or sorted(_labels(access, d)) != sorted(st.labels)}
    found_all = candidates(paths, {} if full or everything else {d: s.stat for d, s in states.items()},
                           root=root, exclude=exclude, gitignore=gitignore, extractors=selection)
    found, scope = found_all.found, found_all.scope
    for doc_id in sorted(others & set(found)):  # the other command's document: not ours to touch
        del found[doc_id]
        found_all.problems.append(Problem(
            "warning", "other-kind", f"kept: `kgbuild {'build' if kind == TEXT_KIND else 'extract'}` "
            f"extracted this document, this command does not read it", doc_id))
    # (a catalog entity's document, an API URL, is never under a scanned path)
    outside = set() if prune else {d for d in states if (not in_scope(d, scope) or "://" in d)
                                   and d not in found}
    for doc_id in sorted(stale & outside):  # re-extract a stale document from where it was
        st = states[doc_id]
        if st.path and Path(st.path).is_file():
            found[doc_id] = Candidate(st.path, Path(st.root), Path(st.base), file_stat(Path(st.path)), None)
            outside.discard(doc_id)
    if full:
        stale |= {d for d in states if d in found}
    before = {doc: state.sha256 for doc, state in states.items()}
    times = SourceTimes(c.path for c in found.values() if c.extractor is not None)
    roots = sorted({c.root for c in found.values()})
    ctx = Context(schema, roots, max_file_bytes)
    updates: dict[str, DocumentUpdate] = {}
    names: dict[str, str] = {}
    changes: dict[str, list[str]] = {"unchanged": [], "changed": [], "added": [], "deleted": []}
    files: dict[str, SourceFile | None] = {}
    queue = list(found)
    total = len(queue)
    done = 0
    while queue:
        doc_id = queue.pop()
        state = None if everything or doc_id in stale else states.get(doc_id)
        claimed = None
        if doc_id in found:
            path, scan_root, base, stat, claimed = found[doc_id]
            if state is not None and stat and state.stat == stat and not state.follows \
                    and _deps_unchanged(state.depends, seen):  # the common case, kept cheap
                changes["unchanged"].append(doc_id)
                files[doc_id] = None
                done += 1
                if progress:
                    progress(doc_id, done, total)
                continue
            files[doc_id] = SourceFile(Path(path), doc_id, scan_root, stat, base)
        src = files[doc_id]
        same_stat = state is not None and src.stat and state.stat == src.stat
        try:
            digest = state.sha256 if same_stat else sha256_file(src.path)
        except OSError as exc:
            problem = Problem("error", "bad-input", f"cannot read: {exc.strerror or exc}", doc_id)
            updates[doc_id] = DocumentUpdate([], [problem], sha256="unreadable")
            continue
        if state is not None and state.sha256 == digest and _deps_unchanged(state.depends, seen):
            changes["unchanged"].append(doc_id)
            followed = [Path(p) for p in state.follows]
        else:
            extracted = _extract(src, ctx, claimed, selection)
            if extracted is None:  # no longer a source (e.g. rewritten into something else)
                del files[doc_id]
                continue
            changes["changed" if doc_id in before else "added"].append(doc_id)
            ex, extraction = extracted
            names[doc_id] = ex.name
            labels = _labels(access, doc_id)
            doc = SourceDocument(doc_id, doc_id, digest, labels)
            when = _timestamp(src.path, timestamp, times)
            triples, problems = document_triples(doc, extraction, ex.name, schema, when,
                                                 store.node_type, canonical)
            followed = extraction.follow
            depends = extraction.depends + ([registry] if registry else [])
            complete = extraction.complete  # else (an LLM call failed) retried next time
            updates[doc_id] = DocumentUpdate(
                triples, problems, [str(p) for p in followed],
                {str(p): fingerprint(p) for p in depends}, src.stat if complete else "",
                digest if complete else "incomplete",
                (str(src.path), str(src.root), str(src.base or src.root.parent)),
                extractor_tag(ex), sorted(labels))
        for target in followed:
            target_id = src.doc_id_of(target) if target.is_relative_to(src.root) else None
            if target_id and target_id not in files and target_id not in found and target.is_file() \
                    and not found_all.is_excluded(target_id):
                files[target_id] = SourceFile(target, target_id, src.root, file_stat(target), src.base)
                queue.append(target_id)
                total += 1
        done += 1
        if progress:
            progress(doc_id, done, total)
    if catalogs:  # running Backstages' entities, one document each
        from .catalog import sync_catalogs

        synced = sync_catalogs(catalogs, store, states, redo=everything or full, stale=stale,
                               ctx=ctx, access=access, registry=registry, canonical=canonical,
                               timestamp=timestamp,
                               deps_unchanged=lambda deps: _deps_unchanged(deps, seen))
        updates.update(synced.updates)
        names.update(synced.names)
        for key, docs in synced.changes.items():
            changes[key] += docs
        files.update(dict.fromkeys(synced.present))
        outside -= synced.owned
    kept = sorted(outside - set(files))  # outside the given paths and not reached by them
    changes["kept"] = kept
    changes["deleted"] = sorted(set(before) - set(files) - set(kept))
    # a store holding none of these documents is loaded whole into a new database, unless
    # few text documents are added (kgbuild extract: a transaction costs less than making a
    # second database, when the store was just made)
    replace = everything or (not before and not (kind == TEXT_KIND and len(updates) <= 100)) \
        or (full and not kept)
    if everything and kept:  # built with other settings and no longer found: dropped
        changes["deleted"] = sorted(set(changes["deleted"]) | set(kept))
        changes["kept"] = []
    if phase and (updates or changes["deleted"]):
        phase("storing")
    touched = None  # a rebuilt store is validated in full
    indexing = (lambda: phase("indexing")) if phase else None  # the store's read model
    if replace and not others:
        problems = store.replace_all(updates, settings, indexing=indexing)
    else:
        changed: dict[str, DocumentUpdate | None] = dict(updates)
        changed.update({d: None for d in changes["deleted"]})
        touched = touched_terms(store, changed, (t for u in updates.values() for t in u.triples))
        # (for incremental validation: before the change)
        problems = store.apply(changed, all_states, settings, indexing=indexing)
    taken = {c.path for c in found.values()}
    ignored = [Problem("warning", "unrecognised", "no extractor reads this file; it was skipped",
                       Path(p).name) for p in paths if Path(p).is_file()
               and str(Path(p).resolve()) not in taken]
    result = BuildResult(store, schema, ignored + found_all.problems + store.problems() + problems,
                         names, {k: sorted(v) for k, v in changes.items()})
    result.touched = touched
    return result


def _canonical(registry: AliasRegistry, schema: Schema):
    """``(id, type, label) -> canonical ID`` from curated aliases and accepted decisions."""
    table = registry.canonical_ids()
    if not table:
        return None

    def canonical(node_id: str, type_name: str, label: str | None) -> str | None:
        types = [type_name, *sorted(schema.compatible_types(type_name) - {type_name})]
        for t in types:
            for mention in (label, node_id):
                found = table.get((fold(mention), t)) if mention else None
                if found and not registry.is_distinct(node_id, found):
                    return found
        return None
    return canonical


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
    total = len(changed) + len(changes.get("unchanged", ())) + len(changes.get("kept", ()))
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
                backstage: Sequence[str | CatalogSource] = ()) -> BuildResult:
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
                              prune=prune, phase=phase, catalogs=catalogs)
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
    result = build_graph(paths, schema, **kwargs)
    if kwargs.get("phase"):
        kwargs["phase"]("writing")
    write_export(result.store, output)
    result.output = str(output)
    return result
