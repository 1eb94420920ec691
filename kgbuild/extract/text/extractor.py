"""The text extractor: prose documents through an LLM into verified records.

Not registered with the manifest extractors (``kgbuild build`` never calls an LLM): ``kgbuild
extract`` hands an instance to the build pipeline, which drives it exactly like a manifest
extractor (content hashes, per-document graphs, incremental updates). For each document:

1. the text is read (bounded, decoded like every source) and cut into chunks
   (:mod:`.chunking`, or one chunk with ``mode="document"``);
2. each chunk is asked for relations (:mod:`.prompts`), plus ``gleanings`` follow-ups asking
   for relations it missed; answers come from the client's cache when the same prompt was
   answered before, so :meth:`TextExtractor.prepare` can send every document's requests
   concurrently up front and the per-document extraction then reads them from the cache;
3. the answers are parsed (:func:`~.contract.parse_relations`) and every relation verified
   against the chunk (:func:`~.verify.verify_relations`): accepted ones become records like
   a manifest's (evidence, character span, chunk, confidence; extractor ``llm:<model>``),
   rejected ones are counted by reason and kept for the report;
4. every chunk is kept as a passage (ID ``<doc_id>#c<n>``, span, text).

A document with a failed request (after the client's retries) is stored with what could be
read and marked incomplete, so the next run asks again (the answered chunks from the cache).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from ...errors import InputError, Problem
from ...io.text import LineIndex, read_text
from ...llm.cache import digest
from ...llm.client import Completion, LLMClient, Request, estimate_tokens
from ...resolve.results import Resolution
from ...schema.model import Schema
from .. import manifests  # noqa: F401  (registers the manifest extractors, which go first)
from ..records import Context, EdgeRecord, Extraction, NodeRecord, PassageRecord, SourceFile
from ..registry import EXTRACTORS, TEXT_EXTRACTOR_PREFIX
from .chunking import DEFAULT_OVERLAP, DEFAULT_SIZE, Chunk, chunk_text
from .contract import parse_relations
from .prompts import (
    PROMPT_VERSION,
    extraction_request,
    gleaning_request,
    response_schema,
    system_message,
)

TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst"})
MODES = ("chunk", "document")
MAX_RELATIONS_PER_ANSWER = 1000  # one chunk's answer: more is a runaway model, not prose


@dataclass(frozen=True)
class TextSettings:
    """How documents are cut and asked: ``mode`` chunk|document, sizes in characters,
    ``gleanings`` extra passes per chunk asking for missed relations."""

    mode: str = "chunk"
    chunk_size: int = DEFAULT_SIZE
    chunk_overlap: int = DEFAULT_OVERLAP
    gleanings: int = 0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InputError(f"mode must be chunk or document, not {self.mode!r}")
        if not 100 <= self.chunk_size <= 1_000_000:
            raise InputError("chunk_size is in characters, between 100 and 1000000")
        if not 0 <= self.chunk_overlap < self.chunk_size:
            raise InputError("chunk_overlap must be at least 0 and less than chunk_size")
        if not 0 <= self.gleanings <= 5:
            raise InputError("gleanings must be between 0 and 5")


@dataclass
class TextStats:
    """What the extraction of this run found: per document, and in total."""

    documents: int = 0
    chunks: int = 0
    relations: int = 0  # parsed from the answers
    accepted: int = 0
    duplicates: int = 0  # accepted again from the overlap of two chunks: stored once
    rejected: Counter = field(default_factory=Counter)  # reason code -> count
    rejections: list[dict] = field(default_factory=list)  # the report's lines
    unreadable_answers: int = 0
    failed_requests: int = 0

    def to_dict(self) -> dict:
        return {"documents": self.documents, "chunks": self.chunks, "relations": self.relations,
                "accepted": self.accepted, "duplicates": self.duplicates,
                "rejected": sum(self.rejected.values()),
                "rejected_by_reason": dict(sorted(self.rejected.items())),
                "unreadable_answers": self.unreadable_answers,
                "failed_requests": self.failed_requests}


Verifier = Callable  # (relations, chunk, schema, resolver) -> result with .accepted, .rejected


class TextExtractor:
    """Relations from prose through an LLM (see the module docstring)."""

    ownable = False
    emits: frozenset[str] = frozenset()  # whatever the schema has

    def __init__(self, schema: Schema, client: LLMClient, settings: TextSettings | None = None,
                 resolver=None, explicit: Iterable[str | Path] = (), salt: str = "",
                 verifier: Verifier | None = None, progress: Callable[[int, int], None] | None = None):
        self.schema = schema
        self.client = client
        self.settings = settings or TextSettings()
        self.resolver = resolver
        # the entities a document's stored graph introduced (doc_id -> IDs): re-extracted, the
        # document introduces them again instead of resolving to its own old nodes
        self.own: Callable[[str], set[str]] | None = None
        self.explicit = frozenset(str(Path(p).resolve()) for p in explicit)
        self.name = f"{TEXT_EXTRACTOR_PREFIX}{client.settings.model}"
        # everything the output of a document depends on besides its text: a change re-extracts
        self.version = f"{PROMPT_VERSION}-" + digest({
            "schema": schema.digest, "mode": self.settings.mode, "size": self.settings.chunk_size,
            "overlap": self.settings.chunk_overlap, "gleanings": self.settings.gleanings,
            "salt": salt})[:16]
        self._system = system_message(schema)
        self._schema_json = response_schema(schema)
        if verifier is None:
            from .verify import verify_relations as verifier
        self._verify = verifier
        self.progress = progress
        self.stats = TextStats()

    # -- the extractor protocol ------------------------------------------------------------------
    def claims(self, path: Path, head: bytes) -> bool:
        """Markdown, text and reStructuredText files that no manifest extractor reads (a
        ``requirements.txt`` is `kgbuild build`'s), and any file named explicitly."""
        if str(path.resolve()) in self.explicit:
            return True
        return path.suffix.lower() in TEXT_SUFFIXES and not any(
            ex.claims(path, head) for ex in EXTRACTORS)

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        out = Extraction()
        read = self._chunks(src, ctx, out.problems)
        if read is None:
            return out
        text, chunks = read
        self.stats.documents += 1
        self.stats.chunks += len(chunks)
        answers = self._answers(chunks)
        lines = LineIndex(text)
        seen: set[tuple] = set()
        defined: set[str] = set()
        own = self.own(src.doc_id) if self.own is not None and self.resolver is not None else ()
        resolver = WithoutOwn(self.resolver, set(own)) if own else self.resolver
        for chunk in chunks:
            out.passages.append(PassageRecord(chunk.id, chunk.start, chunk.end, chunk.text,
                                              chunk.title, chunk.section))
            for completion in answers[chunk.id]:
                if completion.error:
                    self.stats.failed_requests += 1
                    out.complete = False
                    out.problems.append(Problem("error", "llm-error", f"{chunk.id}: {completion.error}; "
                                                f"retried on the next run", src.doc_id,
                                                lines.line(chunk.start)))
                    continue
                relations, errors = parse_relations(completion.text or "")
                if len(relations) > MAX_RELATIONS_PER_ANSWER:
                    out.problems.append(Problem(
                        "warning", "llm-answer", f"{chunk.id}: the answer lists {len(relations):,} "
                        f"relations; the first {MAX_RELATIONS_PER_ANSWER:,} are read",
                        src.doc_id, lines.line(chunk.start)))
                    relations = relations[:MAX_RELATIONS_PER_ANSWER]
                if errors and not relations:
                    self.stats.unreadable_answers += 1
                    out.problems.append(Problem("warning", "llm-answer", f"{chunk.id}: the answer "
                                                f"could not be read: {errors[0]}", src.doc_id,
                                                lines.line(chunk.start)))
                self.stats.relations += len(relations)
                self._verified(relations, chunk, src.doc_id, lines, out, seen, defined, resolver)
        return out

    # -- reading and asking -----------------------------------------------------------------------
    def _chunks(self, src: SourceFile, ctx: Context, problems: list[Problem]
                ) -> tuple[str, list[Chunk]] | None:
        try:
            text = read_text(src.path, ctx.max_file_bytes, src.doc_id)
        except InputError as exc:
            problems.append(Problem("error", exc.code if exc.code != "input" else "bad-input",
                                    exc.message, src.doc_id, exc.line))
            return None
        s = self.settings
        return text, chunk_text(text, src.doc_id, size=s.chunk_size, overlap=s.chunk_overlap,
                                mode=s.mode)

    def requests(self, chunk: Chunk) -> Request:
        return extraction_request(self.schema, chunk, self._system, self._schema_json)

    def _answers(self, chunks: list[Chunk], progress: Callable[[int, int], None] | None = None
                 ) -> dict[str, list[Completion]]:
        """Every answer for these chunks: the first request, then each gleaning round (a
        round's requests depend on the previous answers), all rounds concurrent across chunks."""
        out: dict[str, list[Completion]] = {c.id: [] for c in chunks}
        current = {c.id: self.requests(c) for c in chunks}
        check = _check
        for round_no in range(1 + self.settings.gleanings):
            ids = list(current)
            if not ids:
                break
            results = self.client.run([current[i] for i in ids], check,
                                      progress if round_no == 0 else None)
            nxt = {}
            for chunk_id, completion in zip(ids, results):
                out[chunk_id].append(completion)
                if completion.text is not None and not completion.error:
                    nxt[chunk_id] = gleaning_request(current[chunk_id], completion.text)
            current = nxt
        return out

    def prepare(self, sources: list[SourceFile], ctx: Context) -> None:
        """Send the requests of every document concurrently (warming the cache the
        per-document extraction then reads)."""
        chunks: list[Chunk] = []
        for src in sources:
            read = self._chunks(src, ctx, [])
            if read:
                chunks.extend(read[1])
        if chunks:
            self._answers(chunks, self.progress)

    def plan(self, sources: list[SourceFile], ctx: Context) -> dict:
        """What :meth:`prepare` would send, without sending anything (``--dry-run``): calls,
        cache hits and estimated input tokens (characters / 4; a gleaning pass is estimated as
        one more call per chunk with the same prompt plus a short answer)."""
        calls: list[dict] = []
        cached = 0
        tokens = 0
        for src in sources:
            read = self._chunks(src, ctx, [])
            for chunk in read[1] if read else []:
                req = self.requests(chunk)
                if self.client.cached(req):
                    cached += 1
                    continue
                est = sum(estimate_tokens(m["content"]) for m in req.messages)
                n = 1 + self.settings.gleanings
                tokens += est * n + 200 * (n - 1) * n // 2
                calls.append({"chunk": chunk.id, "chars": chunk.end - chunk.start,
                              "estimated_prompt_tokens": est, "calls": n})
        return {"calls": sum(c["calls"] for c in calls), "cached": cached,
                "estimated_prompt_tokens": tokens, "requests": calls,
                "estimate": "characters / 4 (no tokenizer); completion tokens not estimated"}

    # -- verified relations into records ----------------------------------------------------------
    def _verified(self, relations, chunk: Chunk, doc_id: str, lines: LineIndex, out: Extraction,
                  seen: set[tuple], defined: set[str], resolver) -> None:
        result = self._verify(relations, chunk, self.schema, resolver)
        for rej in result.rejected:
            self.stats.rejected[rej.reason] += 1
            self.stats.rejections.append({"document": doc_id, "chunk": chunk.id, **rej.to_dict()})
        for edge in result.accepted:
            records = edge_records(edge, chunk, lines, self.schema, resolver, defined)
            if records is None:
                continue
            nodes, rec = records
            key = (rec.subject, rec.predicate, rec.object, rec.span, rec.literal)
            if key in seen:  # the same quote read again in an overlap
                self.stats.duplicates += 1
                continue
            seen.add(key)
            self.stats.accepted += 1
            out.nodes.extend(nodes)
            out.edges.append(rec)


class WithoutOwn:
    """A resolver that does not know ``own``, the entities a document's stored graph
    introduced: verified again, the document introduces them again (defined by it, typed and
    scored as the first time) instead of resolving to its own old nodes."""

    def __init__(self, resolver, own: set[str]):
        self._resolver, self._own = resolver, own

    def resolve(self, name: str, type_name: str | None = None, **kwargs) -> Resolution:
        res = self._resolver.resolve(name, type_name, **kwargs)
        if res.id in self._own or (res.candidates and all(c[0] in self._own
                                                          for c in res.candidates)):
            return Resolution(name, type_name, "new", reason="introduced by this document")
        return res

    def __getattr__(self, name: str):
        return getattr(self._resolver, name)


def _check(text: str) -> str | None:
    """Why an answer needs a repair: it is no JSON, or holds no relations list."""
    relations, errors = parse_relations(text)
    if errors and not relations:
        return errors[0]
    return None


def edge_records(edge, chunk, lines: LineIndex, schema: Schema, resolver,
                 defined: set[str]) -> tuple[list[NodeRecord], EdgeRecord] | None:
    """Records for one :class:`~.verify.VerifiedEdge`, the one builder ``kgbuild extract`` and
    ``kgbuild verify`` share: the edge or attribute value (evidence, span, chunk, confidence;
    a value's assertion has the literal as its object, whatever entity it is about), and a
    node record for an endpoint no known entity is (the document introduces it). An edge an
    end of which the context header grounded cites the header with its quote (``Funny Lady >
    Awards … The film was nominated ...``, a quote with an omission) and records
    ``grounding:header`` and ``header:<text>`` as qualifiers. ``chunk`` has ``id`` (empty:
    no passage) and ``start``."""
    span = tuple(edge.span) if edge.span else None
    line = lines.line(span[0]) if span else lines.line(chunk.start)
    nodes: list[NodeRecord] = []
    literal = edge.object_literal is not None
    ends = [(edge.subject_id, edge.subject_type, edge.subject_label, edge.subject_status)]
    if not literal:
        ends.append((edge.object_id, edge.object_type, edge.object_label, edge.object_status))
    for node_id, type_name, label, status in ends:
        if status == "new" and node_id not in defined and type_name:
            defined.add(node_id)
            nodes.append(NodeRecord(node_id, type_name, label or node_id, line))
    evidence = edge.evidence
    qualifiers = tuple(getattr(edge, "qualifiers", ()))
    if getattr(edge, "header", ""):
        evidence = f"{edge.header} \u2026 {evidence}"
    rec = EdgeRecord(edge.subject_id, edge.predicate,
                     edge.object_literal if literal else edge.object_id, line=line,
                     evidence=evidence, confidence=float(edge.confidence),
                     subject_type=edge.subject_type, object_type=edge.object_type,
                     subject_label=edge.subject_label,
                     object_label=None if literal else edge.object_label, span=span,
                     chunk=chunk.id or None, literal=literal, qualifiers=qualifiers)
    return nodes, rec
