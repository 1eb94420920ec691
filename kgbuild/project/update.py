"""Bringing a store in line with its sources, in named stages.

:func:`update_store` is ``kgbuild build``'s and ``kgbuild extract``'s core, one stage each:

1. :func:`plan_update`: which stored documents are stale (settings changed since the store
   was built), which files are candidates, which documents are kept or theirs;
2. :func:`extract_documents`: every new or changed document read by its extractor, and
   :func:`assemble_document`: its extraction made the triples of its named graph;
3. :func:`commit_update`: the changes written to the store in one transaction (or a new
   database when everything is rebuilt); the store's own write brings its read model up to
   date (the *index* stage, named to the ``phase`` callback as ``indexing``).

Each stage reports problems with file and line instead of stopping, so one bad file never
costs the rest of the catalog.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
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
    listed,
    sha256_file,
)
from ..extract.manifests.codeowners import add_fallback_owners
from ..extract.records import Context, Extraction, Extractor, SourceFile
from ..extract.registry import EXTRACTORS, TEXT_EXTRACTOR_PREFIX
from ..graph.access import AccessRules
from ..graph.model import KnowledgeGraph, SourceDocument, utc_timestamp
from ..io.collector import gc_paused
from ..resolve.aliases import AliasRegistry
from ..resolve.normalize import fold
from ..schema.model import Schema
from ..store.graphstore import DocumentState, DocumentUpdate, GraphStore
from ..store.manifest import shard
from ..validate.incremental import Touched, touched_terms

if TYPE_CHECKING:
    from ..remote.backstage import Catalog
    from ..validate.report import ValidationReport

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
    unlisted: int = 0  # told what changed: stored documents not looked at (taken as unchanged)
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
            "documents": self.unlisted + sum(len(self.changes.get(k, ()))
                                             for k in ("unchanged", "changed", "added", "kept")),
            "documents_unlisted": self.unlisted,
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


_COMMANDS = {TEXT_KIND: "extract", "verify": "verify --store", "manifest": "build",
             "load": "load"}  # by kind


def document_kind(extractor_tag: str) -> str:
    """Which command owns a stored document, from the extractor that built it: ``text``
    (``llm:<model>@...``, `kgbuild extract`), ``verify`` (``verify:<edges file>@...``,
    `kgbuild verify --store`: neither a build nor an extraction touches it), ``load`` (a
    graph file `kgbuild load` put there: untouched by the others too) or ``manifest``
    (`kgbuild build`)."""
    if extractor_tag.startswith(TEXT_EXTRACTOR_PREFIX):
        return TEXT_KIND
    if extractor_tag == "load":
        return "load"
    return "verify" if extractor_tag.startswith("verify:") else "manifest"


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
    low, high = sorted((old.get("max_file_bytes", 0), new["max_file_bytes"]))
    tags = set(new["extractors"].values())
    if low == high and access is None:  # (the common case: one pass, no call per document)
        return False, {d for d, st in states.items()
                       if (st.extractor and st.extractor not in tags) or st.labels}
    stale = set()
    for doc_id, st in states.items():
        size = int(st.stat.split(":")[0]) if st.stat else 0
        if low != high and low < size <= high:
            stale.add(doc_id)
        elif st.extractor and st.extractor not in tags:
            stale.add(doc_id)
        elif sorted(access_labels(access, doc_id)) != sorted(st.labels):
            stale.add(doc_id)
    return False, stale


def access_labels(access: AccessRules | None, doc_id: str) -> frozenset[str]:
    """The labels the access rules give a document: matched against its ID and the path
    below its scanned folder (a catalog entity's: ``<kind>/<namespace>/<name>``)."""
    if access is None:
        return frozenset()
    below = "/".join(doc_id.split("/")[-3:]) if "://" in doc_id else doc_id.partition("/")[2]
    return access.labels_for(doc_id, below or doc_id)



@dataclass
class Plan:
    """What an update will do, decided before any source is read (:func:`plan_update`)."""

    kind: str  # TEXT_KIND or "manifest": which command's documents this update touches
    selection: list[Extractor]
    all_states: dict[str, DocumentState]  # every stored document
    states: dict[str, DocumentState]  # the stored documents of this kind
    others: set[str]  # the other kind's: never touched
    settings: dict | None  # what the store will record it was built with (manifests only)
    everything: bool  # every document is stale
    stale: set[str]  # the documents to re-extract whatever their content
    found: dict[str, Candidate]  # doc_id -> a candidate file under the paths
    outside: set[str]  # stored documents outside the paths: kept unless reached
    problems: list[Problem]
    is_excluded: Callable[[str], bool]
    gone: set[str] | None = None  # told what changed: the listed documents no longer found
    stored: int = 0  # told what changed: the store's documents of this kind before

    @property
    def told(self) -> bool:
        """Whether the plan was told which files changed (and read only their states)."""
        return self.gone is not None

    @cached_property
    def before(self) -> dict[str, str]:
        return {doc: state.sha256 for doc, state in self.states.items()}


@dataclass
class Extracted:
    """What :func:`extract_documents` read: each changed document's update, the extractor
    that read it, document changes by kind, and every document present (None: unchanged)."""

    updates: dict[str, DocumentUpdate] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    changes: dict[str, list[str]] = field(default_factory=lambda: {
        "unchanged": [], "changed": [], "added": [], "deleted": []})
    files: dict[str, SourceFile | None] = field(default_factory=dict)


def plan_update(store: GraphStore, paths: Sequence[str | Path], *, full: bool = False,
                max_file_bytes: int = 20 * 1024 * 1024, access: AccessRules | None = None,
                root: str | Path | None = None, exclude: Sequence[str] = (),
                gitignore: bool = True, prune: bool = False,
                extractors: Sequence[Extractor] | None = None,
                changed: Sequence[str | Path] | None = None) -> Plan:
    """The plan stage: stale documents (the settings the store was built with against
    today's), candidate files under ``paths`` (unchanged stats skipped cheaply), the other
    command's documents set aside, and stale documents outside ``paths`` re-read from where
    they were. ``changed``: see :func:`plan_changed` (a full scan when it cannot be used)."""
    schema = store.schema
    selection = list(EXTRACTORS if extractors is None else extractors)
    kind = document_kind(extractor_tag(selection[0])) if selection else "manifest"
    scan_problems: list[Problem] = []
    if changed is not None:
        told = plan_changed(store, paths, changed, selection, kind, max_file_bytes=max_file_bytes,
                            access=access, root=root, exclude=exclude, gitignore=gitignore)
        if isinstance(told, Plan):
            return told
        scan_problems.append(Problem("warning", "full-scan", f"every file looked at: {told}",
                                     str(store.path)))
    all_states = store.document_states()
    kinds = {tag: document_kind(tag) for tag in {st.extractor for st in all_states.values()}}
    states = {d: st for d, st in all_states.items() if kinds[st.extractor] == kind}
    others = set(all_states) - set(states)
    settings: dict | None = None
    if kind == "manifest":
        settings = build_settings(schema, max_file_bytes)
        everything, stale = _stale(states, store.settings(), settings, access)
    else:
        tags = {extractor_tag(ex) for ex in selection}
        everything = False
        stale = {d for d, st in states.items() if st.extractor not in tags
                 or sorted(access_labels(access, d)) != sorted(st.labels)}
    found_all = candidates(paths, {} if full or everything else {d: s.stat for d, s in states.items()},
                           root=root, exclude=exclude, gitignore=gitignore, extractors=selection)
    found, scope = found_all.found, found_all.scope
    for doc_id in sorted(others & set(found)):  # the other command's document: not ours to touch
        del found[doc_id]
        found_all.problems.append(_other_kind(all_states[doc_id], doc_id))
    # (a catalog entity's document, an API URL, is never under a scanned path)
    outside = set() if prune else {d for d in states if d not in found
                                   and (not in_scope(d, scope) or "://" in d)}
    for doc_id in sorted(stale & outside):  # re-extract a stale document from where it was
        st = states[doc_id]
        if st.path and Path(st.path).is_file():
            found[doc_id] = Candidate(st.path, Path(st.root), Path(st.base), file_stat(Path(st.path)), None)
            outside.discard(doc_id)
    if full:
        stale |= {d for d in states if d in found}
    return Plan(kind, selection, all_states, states, others, settings, everything, stale, found,
                outside, scan_problems + found_all.problems, found_all.is_excluded)


def plan_changed(store: GraphStore, paths: Sequence[str | Path], changed: Sequence[str | Path],
                 selection: list[Extractor], kind: str, *, max_file_bytes: int,
                 access: AccessRules | None, root: str | Path | None, exclude: Sequence[str],
                 gitignore: bool) -> Plan | str:
    """The plan of an update told which files changed since the last build (``changed``:
    added, modified or deleted; the caller vouches that no other file did): only those
    files are looked at, with the documents that depend on them, and only their shards'
    states are read (:meth:`~kgbuild.store.manifest.Manifest.states_index`), so its cost
    follows the change, not the estate. Every other stored document is taken as unchanged
    without a ``stat``. Returns why a full scan is needed instead when that cannot be
    exact: no saved store of this kind, access rules (their labels are every document's),
    other build settings or extractor versions than the stored documents'."""
    index = store.states_index()
    if store.path is None or index is None:
        return "the store has no index of its documents' states yet"
    tags = {tag for shard in index.extractors for tag in shard}
    ours = {tag for tag in tags if document_kind(tag) == kind}
    stored = sum(n for shard in index.extractors for tag, n in shard.items() if tag in ours)
    settings = build_settings(store.schema, max_file_bytes) if kind == "manifest" else None
    if not stored:
        return "the store holds no document of this kind"
    if access is not None:
        return "access rules are given (they may change any document's labels)"
    if settings is not None and settings != store.settings():
        return "the build settings changed since the store was built"
    if not ours <= {extractor_tag(ex) for ex in selection}:
        return "stored documents were read by another extractor version"
    seen = listed(changed, paths, root=root, exclude=exclude, gitignore=gitignore,
                  extractors=selection)
    found, gone = seen.discovery.found, seen.gone
    files = {str(Path(c).parent.resolve() / Path(c).name) for c in changed}
    shards = {shard(d) for d in (*found, *gone)} | index.shards_depending(files)
    all_states = store.document_states(shards)
    states = {d: st for d, st in all_states.items() if document_kind(st.extractor) == kind}
    others = set(all_states) - set(states)
    for doc_id, st in states.items():  # a document depending on a listed file is looked at
        if doc_id not in found and doc_id not in gone and files.intersection(st.depends) \
                and st.path and Path(st.path).is_file():
            found[doc_id] = Candidate(st.path, Path(st.root), Path(st.base),
                                      file_stat(Path(st.path)), None)
    problems = seen.discovery.problems
    for doc_id in sorted(others & set(found)):
        del found[doc_id]
        problems.append(_other_kind(all_states[doc_id], doc_id))
    return Plan(kind, selection, all_states, states, others, settings, False, set(),
                dict(sorted(found.items())), set(), problems, seen.discovery.is_excluded,
                gone=set(gone) & set(states), stored=stored)


def _other_kind(state: DocumentState, doc_id: str) -> Problem:
    """The warning for a document of the other command found under the paths (kept)."""
    owner = _COMMANDS[document_kind(state.extractor)]
    return Problem("warning", "other-kind", f"kept: `kgbuild {owner}` extracted this document, "
                   "this command does not read it", doc_id)


def assemble_document(store: GraphStore, src: SourceFile, digest: str, ex: Extractor,
                      extraction: Extraction, *, when: str, access: AccessRules | None,
                      registry: Path | None, canonical) -> DocumentUpdate:
    """The assemble stage: one document's extraction made the triples of its named graph,
    with what a later update needs to skip it (stat, hash, dependencies, extractor, labels)."""
    labels = access_labels(access, src.doc_id)
    doc = SourceDocument(src.doc_id, src.doc_id, digest, labels)
    triples, problems = document_triples(doc, extraction, ex.name, store.schema, when,
                                         store.node_type, canonical)
    depends = extraction.depends + ([registry] if registry else [])
    complete = extraction.complete  # else (an LLM call failed) retried next time
    return DocumentUpdate(
        triples, problems, [str(p) for p in extraction.follow],
        {str(p): fingerprint(p) for p in depends}, src.stat if complete else "",
        digest if complete else "incomplete",
        (str(src.path), str(src.root), str(src.base or src.root.parent)),
        extractor_tag(ex), sorted(labels))


def extract_documents(store: GraphStore, plan: Plan, *, timestamp: float | None = None,
                      progress: Progress | None = None, max_file_bytes: int = 20 * 1024 * 1024,
                      access: AccessRules | None = None, registry: Path | None = None,
                      canonical=None, seen: dict[str, str] | None = None,
                      sink: Callable[[str, DocumentUpdate], None] | None = None) -> Extracted:
    """The extract stage: every candidate whose stat, content hash or dependencies changed
    (or that is stale) read by its extractor and assembled (:func:`assemble_document`);
    files an extraction follows (a catalog's targets) joined to the queue. Each update goes
    to ``sink(doc_id, update)`` when given (a full build's loader), else to ``updates``."""
    seen = {} if seen is None else seen
    found, states, stale, everything = plan.found, plan.states, plan.stale, plan.everything
    before = plan.before
    times = SourceTimes(c.path for c in found.values() if c.extractor is not None)
    ctx = Context(store.schema, sorted({c.root for c in found.values()}), max_file_bytes)
    out = Extracted()
    changes, files = out.changes, out.files
    put = sink or out.updates.__setitem__
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
            put(doc_id, DocumentUpdate([], [problem], sha256="unreadable"))
            continue
        if state is not None and state.sha256 == digest and _deps_unchanged(state.depends, seen):
            changes["unchanged"].append(doc_id)
            followed = [Path(p) for p in state.follows]
        else:
            extracted = _extract(src, ctx, claimed, plan.selection)
            if extracted is None:  # no longer a source (e.g. rewritten into something else)
                del files[doc_id]
                continue
            changes["changed" if doc_id in before else "added"].append(doc_id)
            ex, extraction = extracted
            out.names[doc_id] = ex.name
            put(doc_id, assemble_document(
                store, src, digest, ex, extraction, when=_timestamp(src.path, timestamp, times),
                access=access, registry=registry, canonical=canonical))
            followed = extraction.follow
        for target in followed:
            target_id = src.doc_id_of(target) if target.is_relative_to(src.root) else None
            if target_id and target_id not in files and target_id not in found and target.is_file() \
                    and not plan.is_excluded(target_id):
                files[target_id] = SourceFile(target, target_id, src.root, file_stat(target), src.base)
                queue.append(target_id)
                total += 1
        done += 1
        if progress:
            progress(doc_id, done, total)
    return out


def commit_update(store: GraphStore, plan: Plan, extracted: Extracted, *, full: bool = False,
                  phase: Phase | None = None) -> tuple[list[Problem], Touched | None]:
    """The commit stage: documents kept and deleted settled, then every change written in one
    transaction (``store.apply``), or the whole store loaded into a new database when
    everything was rebuilt; the store's write brings its read model up to date (the index
    stage). Returns the store's problems and, for incremental validation, the terms the
    change touched as they were before it (None: validate in full)."""
    updates, changes = extracted.updates, extracted.changes
    kept = _settle(plan, extracted)
    # a store holding none of these documents is loaded whole into a new database, unless
    # few text documents are added (kgbuild extract: a transaction costs less than making a
    # second database, when the store was just made)
    replace = not plan.told and (
        plan.everything or (not plan.before and not (plan.kind == TEXT_KIND and len(updates) <= 100))
        or (full and not kept))
    if phase and (updates or changes["deleted"]):
        phase("storing")
    indexing = (lambda: phase("indexing")) if phase else None  # the store's read model
    if replace and not plan.others:
        return store.replace_all(updates, plan.settings, indexing=indexing), None
    changed: dict[str, DocumentUpdate | None] = dict(updates)
    changed.update({d: None for d in changes["deleted"]})
    # (for incremental validation: before the change)
    touched = touched_terms(store, changed, (t for u in updates.values() for t in u.triples))
    return store.apply(changed, plan.all_states, plan.settings, indexing=indexing,
                       whole=not plan.told), touched


def _settle(plan: Plan, extracted: Extracted) -> list[str]:
    """The documents kept (outside the given paths and not reached by them) and deleted, in
    ``extracted.changes``; returns those kept before settings that make everything stale
    drop them. A plan told what changed deletes only the listed documents no longer found."""
    changes, files = extracted.changes, extracted.files
    if plan.told:
        changes["kept"] = []
        looked = {d for d in plan.found if d in plan.before} - set(files)
        changes["deleted"] = sorted(plan.gone | looked)
        return []
    kept = sorted(plan.outside - set(files))
    changes["kept"] = kept
    changes["deleted"] = sorted(set(plan.before) - set(files) - set(kept))
    if plan.everything and kept:  # built with other settings and no longer found: dropped
        changes["deleted"] = sorted(set(changes["deleted"]) | set(kept))
        changes["kept"] = []
    return kept


def unlisted(plan: Plan, extracted: Extracted) -> int:
    """How many stored documents of the plan's kind a plan told what changed did not look
    at (taken as unchanged; 0 for a plan that scanned the paths)."""
    if not plan.told:
        return 0
    looked = {d for d in extracted.files if d in plan.before} | set(extracted.changes["deleted"])
    return plan.stored - len(looked)


def streams(store: GraphStore, plan: Plan, full: bool) -> bool:
    """Whether the update will replace the whole saved store whatever its sources hold (see
    :func:`commit_update`): then each document is loaded as it is extracted, not kept until
    the commit (an in-memory store is cleared by a full load: it reads as before meanwhile)."""
    return store.path is not None and not plan.others and not plan.told and (
        plan.everything or (not plan.before and plan.kind != TEXT_KIND)
        or (full and not plan.outside))


def update_store(store: GraphStore, paths: Sequence[str | Path], *, full: bool = False,
                 timestamp: float | None = None, progress: Progress | None = None,
                 max_file_bytes: int = 20 * 1024 * 1024, access: AccessRules | None = None,
                 registry: Path | None = None, root: str | Path | None = None,
                 exclude: Sequence[str] = (), gitignore: bool = True,
                 prune: bool = False, extractors: Sequence[Extractor] | None = None,
                 phase: Phase | None = None, catalogs: Sequence[Catalog] = (),
                 changed: Sequence[str | Path] | None = None) -> BuildResult:
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

    ``changed`` tells the update which files changed since the last build (added, modified
    or deleted; the caller vouches for the rest, as git's index or a file watcher would):
    only they and the documents depending on them are looked at, so a one-file rebuild of a
    million-file estate reads one file, not a million ``stat`` results (see
    :func:`plan_changed`; a warning ``full-scan`` says why when every file had to be looked
    at instead). It cannot be combined with ``full``, ``prune`` or ``catalogs``.

    The stages (see the module docstring) are :func:`plan_update`, :func:`extract_documents`
    (with :func:`assemble_document`) and :func:`commit_update`.
    """
    if changed is not None and (full or prune or catalogs):
        raise KgbuildError("a build told what changed (--changed) cannot also rebuild everything "
                           "(--full), prune or read Backstage catalogs", code="usage")
    seen: dict[str, str] = {}
    canonical = _canonical(AliasRegistry.load(registry, missing_ok=True), store.schema) \
        if registry else None
    with gc_paused():  # (it makes a few objects per stored document, and no cycles)
        plan = plan_update(store, paths, full=full, max_file_bytes=max_file_bytes,
                           access=access, root=root, exclude=exclude, gitignore=gitignore,
                           prune=prune, extractors=extractors, changed=changed)

    def extract(sink=None) -> Extracted:
        extracted = extract_documents(store, plan, timestamp=timestamp, progress=progress,
                                      max_file_bytes=max_file_bytes, access=access,
                                      registry=registry, canonical=canonical, seen=seen,
                                      sink=sink)
        if catalogs:  # running Backstages' entities, one document each
            from .catalog import sync_catalogs

            ctx = Context(store.schema, sorted({c.root for c in plan.found.values()}),
                          max_file_bytes)
            synced = sync_catalogs(catalogs, store, plan.states, redo=plan.everything or full,
                                   stale=plan.stale, ctx=ctx, access=access, registry=registry,
                                   canonical=canonical, timestamp=timestamp,
                                   deps_unchanged=lambda deps: _deps_unchanged(deps, seen))
            for doc_id, upd in synced.updates.items():
                (sink or extracted.updates.__setitem__)(doc_id, upd)
            extracted.names.update(synced.names)
            for key, docs in synced.changes.items():
                extracted.changes[key] += docs
            extracted.files.update(dict.fromkeys(synced.present))
            plan.outside -= synced.owned
        return extracted

    if streams(store, plan, full):  # each document loaded as it is extracted
        indexing = (lambda: phase("indexing")) if phase else None
        with store.full_build(plan.settings, indexing=indexing) as build:
            extracted = extract(build.add)
            _settle(plan, extracted)
            if phase:
                phase("storing")
        problems, touched = build.problems, None
    else:
        extracted = extract()
        problems, touched = commit_update(store, plan, extracted, full=full, phase=phase)
    taken = {c.path for c in plan.found.values()}
    ignored = [Problem("warning", "unrecognised", "no extractor reads this file; it was skipped",
                       Path(p).name) for p in paths if Path(p).is_file()
               and str(Path(p).resolve()) not in taken]
    result = BuildResult(store, store.schema,
                         ignored + plan.problems + store.problems() + problems,
                         extracted.names, {k: sorted(v) for k, v in extracted.changes.items()})
    result.touched = touched
    result.unlisted = unlisted(plan, extracted)
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

