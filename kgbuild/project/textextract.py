"""``kgbuild extract``: relations from prose through an LLM, into the same store as the manifests.

The text documents under the given paths are compared with the store exactly as
:func:`~kgbuild.project.update.update_store` compares manifests (content hash, file stat, the
extractor's tag: model, prompts, chunking, schema). The requests of every new or changed
document are sent first, concurrently (bounded), in a background thread that fills the
response cache (:meth:`~kgbuild.llm.client.LLMClient.warm_up`); meanwhile the pipeline
extracts document by document, each as its answers come, verifies every relation against
its chunk and, once every answer is in, replaces the documents' named graphs in one
transaction. Manifest documents are never touched (and ``kgbuild build`` never touches
these). A second run with nothing changed reads no file it need not and sends no request.

With ``batch`` the requests go through the server's Batch API instead
(:mod:`kgbuild.llm.batch`): each run folds what the batches sent so far have answered into
the cache, extracts the documents whose every answer is there, and (``"submit"``) submits
the requests still unanswered, once ``confirm`` accepts the estimate.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ..errors import InputError
from ..extract.discover import candidates
from ..extract.records import Context, SourceFile
from ..extract.text.extractor import TextExtractor, TextSettings, TextStats
from ..graph.access import AccessRules, load_access
from ..llm.batch import BatchClient
from ..llm.client import LLMClient
from ..llm.settings import LLMSettings
from ..resolve.aliases import AliasRegistry
from ..resolve.review import QUEUE_FILE, ambiguous_items, queue_sources
from ..schema.loader import load_schema
from ..schema.model import Schema
from ..store.graphstore import GraphStore
from .pipeline import check, default_registry
from .update import (
    VERSION,
    BuildResult,
    access_labels,
    document_kind,
    extractor_tag,
    update_store,
)
from .verifyfile import declared_entities

LLM_CACHE = "llm-cache"  # under the store folder


@dataclass
class ExtractResult:
    """What ``kgbuild extract`` did: the build (store, changes, problems), the extraction
    counts, the LLM usage and mode; ``plan`` instead of all that for a dry run."""

    schema: Schema
    stats: TextStats
    usage: dict
    mode: dict
    build: BuildResult | None = None
    plan: dict | None = None
    pending: list[str] = field(default_factory=list)  # documents whose requests were (to be) sent
    batch: dict | None = None  # with --batch: the batches polled, the plan, what was submitted

    @property
    def store(self) -> GraphStore | None:
        return self.build.store if self.build else None

    def summary(self) -> dict:
        out = {"dry_run": self.plan is not None, "llm": self.mode, "usage": self.usage,
               "extraction": self.stats.to_dict(), "pending_documents": self.pending}
        if self.plan is not None:
            out["plan"] = self.plan
        if self.batch is not None:
            out["batch"] = self.batch
        if self.build is not None:
            out["build"] = self.build.summary()
        return out


def extract_text(paths: Sequence[str | Path], schema: Schema | str | Path | None = None, *,
                 llm: LLMSettings, text: TextSettings | None = None,
                 store: str | Path | None = None, dry_run: bool = False, full: bool = False,
                 timestamp: float | None = None, validate: bool | None = None,
                 registry: str | Path | None = None, access: AccessRules | str | Path | None = None,
                 root: str | Path | None = None, exclude: Sequence[str] = (),
                 gitignore: bool = True, max_file_bytes: int = 20 * 1024 * 1024,
                 progress: Callable[[int, int], None] | None = None,
                 verifier: Callable | None = None, batch: str | None = None,
                 confirm: Callable[[dict], bool] | None = None) -> ExtractResult:
    """Extract verified relations from the text documents under ``paths`` into ``store``
    (a folder, or None for memory). ``dry_run`` sends nothing and changes nothing: it says
    which requests would be sent (and which the cache answers) with estimated tokens. The
    other options are those of :func:`~kgbuild.project.pipeline.build_graph`; ``progress``
    is called with (done, total) requests. ``batch`` ``"submit"`` or ``"status"`` goes
    through the Batch API (:func:`_run_batch`; ``confirm(plan)`` decides whether to submit,
    None: submit). The caller closes ``result.store``."""
    if batch not in (None, "submit", "status"):
        raise InputError(f"batch must be None, 'submit' or 'status', not {batch!r}")
    if batch and (store is None or dry_run):
        raise InputError("a batch extraction keeps its batches in the store folder: give a "
                         "store, and no --dry-run" if store is None else
                         "--batch and --dry-run do not go together (the batch shows its "
                         "estimate before submitting)")
    schema = schema if isinstance(schema, Schema) else load_schema(schema or "software")
    if access is not None and not isinstance(access, AccessRules):
        access = load_access(access)
    registry = Path(registry).resolve() if registry else default_registry(paths, root)
    opening = None
    if dry_run:
        exists = store is not None and (Path(store) / "CURRENT").is_file()
        graph_store = GraphStore(store if exists else None, schema, write=not exists)
    elif store is not None and not batch and _new(Path(store)):  # nothing in it yet: it is made
        opening = _Opening(store, schema)  # while the requests are out, planned on an empty
        graph_store = GraphStore(None, schema)  # store in memory
    else:
        graph_store = GraphStore(store, schema)
    client = None
    try:
        cache = Path(store) / LLM_CACHE if store is not None else None
        client = BatchClient(llm, cache) if batch else LLMClient(llm, cache)
        reg = AliasRegistry.load(registry, missing_ok=True)
        extractor = TextExtractor(schema, client, text, None,
                                  explicit=[p for p in paths if Path(p).is_file()],
                                  salt=VERSION, verifier=verifier, progress=progress)
        pending = _pending(graph_store, paths, extractor, full, root, exclude, gitignore, access)
        ctx = Context(schema, sorted({s.root for s in pending}), max_file_bytes)
        if dry_run:
            plan = extractor.plan(pending, ctx)
            graph_store.close()
            return ExtractResult(schema, extractor.stats, client.usage.to_dict(llm),
                                 client.mode_report(), None, plan, [s.doc_id for s in pending])
        batched = None
        if batch:
            try:
                batched = _run_batch(client, extractor, pending, ctx, batch == "submit", confirm)
            finally:
                client.close()
            awaiting = set(batched["awaiting_documents"])
            if awaiting:  # only the documents whose every answer is in
                paths = [str(s.path) for s in pending if s.doc_id not in awaiting]
            if not paths:
                graph_store.close()
                return ExtractResult(schema, extractor.stats, client.usage.to_dict(llm),
                                     client.mode_report(), None, None,
                                     [s.doc_id for s in pending], batched)
        else:  # every request, concurrently: fills the cache while documents are extracted,
            # asked in the order the pipeline reads them (extract_documents takes the last
            # document first): each is verified while the later ones' answers are out
            client.warm_up(lambda: extractor.prepare(pending[::-1], ctx))
        extractor.resolver = graph_store.read_model().resolver(reg)
        if opening is not None:
            graph_store.close()
            graph_store = opening.store()
        store_now = graph_store
        extractor.own = lambda doc_id: declared_entities(store_now, doc_id)
        result = update_store(graph_store, paths, full=full, timestamp=timestamp,
                              max_file_bytes=max_file_bytes, access=access, registry=registry,
                              root=root, exclude=exclude, gitignore=gitignore,
                              extractors=[extractor], phase=lambda name: (
                                  client.finish_warm_up() if name == "storing" else None))
        client.finish_warm_up()  # (joined before anything is stored: its error stops the write)
        check(result, validate)
        if store is not None:
            _queue_ambiguous(Path(store), extractor.stats.rejections, result.changes)
    except BaseException:
        if client is not None:
            try:  # (no request is left running; the first error is the one raised)
                client.finish_warm_up()
            except BaseException:
                pass
        graph_store.close()
        if opening is not None:
            opening.close()
        raise
    return ExtractResult(schema, extractor.stats, client.usage.to_dict(llm), client.mode_report(),
                         result, None, [s.doc_id for s in pending], batched)


def _run_batch(client: BatchClient, extractor: TextExtractor, pending: list[SourceFile],
               ctx: Context, submit: bool, confirm: Callable[[dict], bool] | None) -> dict:
    """Fold what the remembered batches answered, then plan (and with ``submit``, once
    ``confirm`` accepts the plan, submit) the requests still unanswered; returns the polled
    batches, the plan, what was submitted and the documents still awaiting an answer.

    The requests are those the extractor asks, read off a client that sends nothing: the
    first pass names the answers to fold, the second what is left (after a folded answer,
    a gleaning round's next request)."""
    extractor.prepare(pending, ctx)
    polled = client.poll()
    client.wanted.clear()
    extractor.prepare(pending, ctx)
    plan = client.plan()
    lines = plan.pop("lines")
    submitted: list[dict] = []
    if submit and lines and (confirm is None or confirm(plan)):
        submitted = client.submit({**plan, "lines": lines})
    client.usage.cache_hits = 0  # counted again as the documents are extracted
    awaiting = sorted({r.tag.rsplit("#c", 1)[0] for r, _ in client.wanted.values()})
    return {"polled": polled, "plan": plan, "submitted": submitted,
            "declined": bool(submit and lines and not submitted),
            "awaiting_documents": awaiting}


def _queue_ambiguous(store: Path, rejections: list[dict], changes: dict) -> None:
    """The names this run found ambiguous join the store's review queue, per document
    extracted (with candidates and evidence, never merged); a removed document's go."""
    done = [*changes.get("changed", ()), *changes.get("added", ())]
    reviews = {d: ambiguous_items([r for r in rejections if r.get("document") == d], d)
               for d in done}
    reviews.update({d: [] for d in changes.get("deleted", ())})
    if reviews:
        queue_sources(store / QUEUE_FILE, reviews)


def _new(path: Path) -> bool:
    """Whether a store can be made at ``path`` and none is there yet (no database, committed
    or not): a folder not there yet, or one without databases, in a place that can be
    written (else the store is opened first, so that its error comes before any request)."""
    if path.exists():
        return path.is_dir() and os.access(path, os.W_OK | os.X_OK) \
            and not (path / "CURRENT").exists() and not any(path.glob("db-*"))
    parent = next((p for p in path.absolute().parents if p.exists()), None)
    return parent is not None and parent.is_dir() and os.access(parent, os.W_OK | os.X_OK)


class _Opening:
    """A new store made in a thread: creating its database (files written and synced by
    RocksDB, without the GIL; 0.02-0.2 s on a busy machine) overlaps the LLM requests."""

    def __init__(self, path: str | Path, schema: Schema):
        self._made: GraphStore | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._open, args=(path, schema),
                                        name="kgbuild-store", daemon=True)
        self._thread.start()

    def _open(self, path, schema) -> None:
        try:
            self._made = GraphStore(path, schema)
        except BaseException as exc:  # raised where the store is needed
            self._error = exc

    def store(self) -> GraphStore:
        self._thread.join()
        if self._error is not None:
            raise self._error
        made, self._made = self._made, None
        return made

    def close(self) -> None:
        self._thread.join()
        if self._made is not None:
            self._made.close()


def _pending(store: GraphStore, paths: Sequence[str | Path], extractor: TextExtractor, full: bool,
             root, exclude, gitignore, access) -> list[SourceFile]:
    """The text documents the pipeline will (probably) re-extract: new ones, those whose file
    changed (by stat; one only touched costs cache hits, no request) or whose extractor tag or
    access labels differ. Over-approximating is free: their answers are cached."""
    states = {d: s for d, s in store.document_states().items()
              if document_kind(s.extractor) == "text"}
    others = set(store.document_states()) - set(states)
    tag = extractor_tag(extractor)
    found = candidates(paths, {} if full else {d: s.stat for d, s in states.items()}, root=root,
                       exclude=exclude, gitignore=gitignore, extractors=[extractor]).found
    out = []
    for doc_id, c in found.items():
        st = states.get(doc_id)
        if doc_id in others:
            continue
        if c.extractor is None and st is not None and st.extractor == tag \
                and sorted(access_labels(access, doc_id)) == sorted(st.labels):
            continue  # unchanged: the pipeline will not read it
        out.append(SourceFile(Path(c.path), doc_id, c.root, c.stat, c.base))
    return out
