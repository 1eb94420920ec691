"""Passage retrieval: the library entry point ``retrieve(store, questions, ...)``.

Methods (``--method``): ``bm25`` (FTS5), ``dense`` (cosine), ``hybrid`` (RRF of the two),
``graph`` (the passages the question's names and the best dense passages lead to, ranked
inside that set) and ``default``: the best combination measured on the visible multi-hop
set (``bench/passages_quality.py``): the dense z-score plus a small lexical one, the
question's named passages raised, and one hop of path scores through the entity links.
Without an embeddings endpoint every method that needs vectors runs on BM25 instead and the
result says so (``notes``).

Access: a principal's hidden passages are not in the candidate set, the corpus statistics
(BM25's IDF, document count and lengths; the z-scores' mean and spread; hub counts) are
those of the principal's visible passages, and no link to or from a hidden passage is
walked: the answer equals retrieval over the corpus without the hidden passages.

Rerank (optional, :mod:`.rerank`): with a rerank endpoint, the best ``top_n`` fused
candidates (visible ones only: access applies first) are sent with their context header and
reordered by the endpoint's score; each carries a ``rerank`` signal (score, rank). A failing
endpoint leaves the fused order, and the output says so in a note.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np

from ..errors import InputError, KgbuildError
from ..graph.access import Principal
from .abstain import AbstainPolicy, decide, shared_unknown
from .dense import EmbeddingSettings, dense_matrix_for, embed_questions
from .fuse import rrf, top, zscores
from .graph import GraphParams, propagate, question_seeds, typed_steps
from .index import PassageIndex
from .lexical import match_expression
from .links import Linker
from .model import ReadModel, load_model
from .rerank import RerankSettings, reorder

METHODS = ("default", "bm25", "dense", "hybrid", "graph")
LEXICAL_POOL = 1000  # BM25 hits read per question (the rest score 0)
LEXICAL_WEIGHT = 0.3  # weight of the lexical z-score beside the dense one (default method)
MAX_K = 1000


@dataclass(frozen=True)
class Question:
    """One question: its ID, text and whatever else its line held (gold IDs for eval)."""

    id: str
    text: str
    extra: dict = field(default_factory=dict, hash=False, compare=False)


@dataclass
class RetrievalSettings:
    """How many passages, by which method, with which weights."""

    k: int = 10
    method: str = "default"
    lexical_weight: float = LEXICAL_WEIGHT
    rrf_weights: tuple[float, float] = (1.0, 1.0)  # hybrid: BM25's and dense's weights in RRF
    graph: GraphParams = field(default_factory=GraphParams)
    abstain: AbstainPolicy = field(default_factory=AbstainPolicy)

    def check(self) -> None:
        if self.method not in METHODS:
            raise KgbuildError(f"unknown method {self.method!r} (one of {', '.join(METHODS)})",
                               code="usage")
        if not 1 <= self.k <= MAX_K:
            raise KgbuildError(f"k must be between 1 and {MAX_K}", code="usage")


@dataclass
class Retrieved:
    """One question's answer: ranked passages (with each signal's score and rank, what
    brought them in, their citation), abstention (None, or why) and notes."""

    id: str
    question: str
    method: str
    passages: list[dict]
    abstain: dict | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"id": self.id, "question": self.question, "method": self.method,
                "passages": self.passages, "abstain": self.abstain, "notes": self.notes}

    def to_line(self) -> dict:
        """The ``--format jsonl`` record: ID, passages (ID and score), abstain."""
        return {"id": self.id, "passages": [{"id": p["id"], "score": p["score"]}
                                            for p in self.passages],
                "abstain": self.abstain}

    def context(self) -> str:
        """Prompt-ready text: each passage once, under its ID (the title is labelled as
        such: it is the index's context header, not the passage's words)."""
        if self.abstain:
            return f"(no passages: {self.abstain['message']})\n"
        out = []
        for p in self.passages:
            title = f" (title: {p['title']})" if p.get("title") else ""
            out.append(f"[{p['id']}]{title}\n{p['text']}\n")
        return "\n".join(out)

    def render(self) -> str:
        lines = [f"question {self.id}: {self.question}"]
        lines += [f"note: {n}" for n in self.notes]
        if self.abstain:
            lines.append(f"ABSTAIN ({self.abstain['step']}): {self.abstain['message']}")
        for p in self.passages:
            why = _why(p)
            lines.append(f"{p['rank']:>3}. {p['id']}  {p['score']:.4f}  {p.get('title') or ''}"
                         + (f"  [{why}]" if why else ""))
        return "\n".join(lines)


def _why(p: dict) -> str:
    parts = []
    sig = p.get("signals", {})
    for name in ("rerank", "bm25", "dense"):
        if sig.get(name, {}).get("rank"):
            parts.append(f"{name} #{sig[name]['rank']}")
    g = sig.get("graph")
    if g:
        parts.append(f"named in the question ({g['name']})" if g.get("question")
                     else f"via {g['from']} {g['way']} {g['name']!r}")
    return ", ".join(parts)


class PassageRetriever:
    """Retrieval over one store's passages for one principal; reusable across questions
    (the read model, dense matrix and name matcher are loaded once)."""

    def __init__(self, store: str | Path, principal: Principal | None = None,
                 embeddings: EmbeddingSettings | None = None,
                 settings: RetrievalSettings | None = None, schema=None,
                 rerank: RerankSettings | None = None):
        self.store = Path(store)
        self.schema = schema  # the store's graph schema: typed edges from catalog entities
        self._traverser = None
        self.principal = principal or Principal()
        self.settings = settings or RetrievalSettings()
        self.settings.check()
        self.embeddings = embeddings
        self.index = PassageIndex(store)
        self.model: ReadModel = load_model(self.index)
        self.visible = self.model.mask(self.principal)
        self.n_visible = self.model.size if self.visible is None else int(self.visible.sum())
        self.notes: list[str] = []
        self.matrix = self.has_vec = None
        if embeddings is not None:
            self.matrix, self.has_vec = dense_matrix_for(self.index, self.model, embeddings)
            missing = int((~self.has_vec).sum()) if self.matrix is not None else self.model.size
            if self.matrix is None or not self.matrix.shape[1]:
                self.notes.append(f"no passage vectors for {embeddings.model}: run `kgbuild "
                                  f"ingest` with the embeddings endpoint; dense search is off")
                self.matrix = None
            elif missing:
                self.notes.append(f"{missing} passage(s) have no {embeddings.model} vector yet "
                                  f"(run `kgbuild ingest` again)")
        elif self.settings.method in ("default", "hybrid", "graph", "dense"):
            self.notes.append("no embeddings endpoint configured: lexical and graph search only")
        if self.settings.method == "dense" and self.matrix is None:
            raise KgbuildError("--method dense needs passage vectors and an embeddings endpoint "
                               "(--embeddings-url, $KGBUILD_EMBEDDINGS_URL or the project's "
                               "[embeddings])", code="embeddings")
        self._linker: Linker | None = None
        self._lexical_db: sqlite3.Connection | None = None
        self._counts: dict[str, int] = {}  # document counts of question words (this view)
        self._known: dict[str, bool] = {}  # question names the visible passages contain
        self.shared_unknown: set[str] = set()  # names a batch's questions share, not known
        self.reranker = rerank.client() if rerank is not None else None
        self.rerank_top = rerank.top_n if rerank is not None else 0
        if rerank is not None and rerank.warning:
            self.notes.append(rerank.warning)

    def close(self) -> None:
        if self.reranker is not None:
            self.reranker.close()
            self.reranker = None
        if self._lexical_db is not None and self._lexical_db is not self.index.db:
            self._lexical_db.close()
        self.index.close()

    def __enter__(self) -> "PassageRetriever":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- signals ------------------------------------------------------------------------------

    def lexical(self, text: str) -> np.ndarray:
        """BM25 scores of every row (0 where no query word occurs; -inf where hidden)."""
        out = np.zeros(self.model.size, dtype=np.float64)
        db = self._lexical_connection()
        expr = match_expression(text, db, counts=self._counts)
        if expr is not None:
            rows = db.execute("SELECT rowid, -bm25(fts) FROM fts WHERE fts MATCH ? "
                              "ORDER BY bm25(fts) LIMIT ?", (expr, LEXICAL_POOL)).fetchall()
            if rows:
                ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
                pos = np.searchsorted(self.model.rowids, ids)
                ok = (pos < self.model.size) & (self.model.rowids[np.minimum(pos, self.model.size - 1)] == ids)
                out[pos[ok]] = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))[ok]
        if self.visible is not None:
            out[~self.visible] = -np.inf
        return out

    def _lexical_connection(self) -> sqlite3.Connection:
        """The FTS index to ask: the store's own, or, for a principal who cannot see every
        passage, an index of their visible passages only (its statistics are theirs), made
        on first use per revision and label view."""
        if self._lexical_db is not None:
            return self._lexical_db
        if self.visible is None:
            self._lexical_db = self.index.db
            return self._lexical_db
        seen = sorted(i for i, s in enumerate(self.model.labelsets) if self.principal.can_see(s))
        key = hashlib.sha256(json.dumps([self.model.labelsets[i] for i in seen]).encode()).hexdigest()[:16]
        path = self.index.folder / "cache" / f"view-{key}-{self.model.revision}.sqlite"
        if not path.is_file():
            tmp = path.with_name(f".{uuid.uuid4().hex}.tmp")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._make_view(tmp)
                tmp.rename(path)
            except OSError:  # read-only store: the view is made in memory
                tmp.unlink(missing_ok=True)
                path = None
        if path is None:
            db = sqlite3.connect(":memory:", check_same_thread=False)
            self._fill_view(db)
        else:
            db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, check_same_thread=False)
        db.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, 'fts', 'row')")
        self._lexical_db = db
        return db

    def _make_view(self, path: Path) -> None:
        db = sqlite3.connect(path)
        try:
            self._fill_view(db)
        finally:
            db.close()

    def _fill_view(self, db: sqlite3.Connection) -> None:
        db.execute("CREATE VIRTUAL TABLE fts USING fts5(header, text, content='', "
                   "tokenize='porter unicode61 remove_diacritics 2')")
        rowids = self.model.rowids[self.visible].tolist()
        src = self.index.db
        for start in range(0, len(rowids), 2000):
            chunk = rowids[start:start + 2000]
            db.executemany("INSERT INTO fts(rowid, header, text) VALUES(?,?,?)", src.execute(
                f"SELECT rowid, header, text FROM passages WHERE rowid IN ({','.join('?' * len(chunk))}) "
                f"ORDER BY rowid", chunk).fetchall())
        db.commit()

    def knows_word(self, word: str) -> bool:
        """Whether some visible passage contains ``word`` (as the index stems it) or a near
        spelling of it (one edit up to 6 letters, two beyond)."""
        if word not in self._known:
            self._known[word] = self._knows(word)
        return self._known[word]

    def _knows(self, word: str) -> bool:
        db = self._lexical_connection()
        if db.execute("SELECT 1 FROM fts WHERE fts MATCH ? LIMIT 1",
                      ('"' + word.replace('"', '""') + '"',)).fetchone():
            return True
        from rapidfuzz.distance import Levenshtein

        low = word.lower()
        edits = 1 if len(low) <= 6 else 2
        first = low[0]
        terms = [t for (t,) in db.execute("SELECT term FROM temp.vocab WHERE term >= ? AND term < ?",
                                          (first, chr(ord(first) + 1)))]
        return any(Levenshtein.distance(low, t, score_cutoff=edits) <= edits
                   for t in terms if abs(len(t) - len(low)) <= edits)

    def dense(self, qvec: np.ndarray | None) -> np.ndarray | None:
        """Cosine of every row to the question (-inf where hidden or without a vector)."""
        if self.matrix is None or qvec is None:
            return None
        if self.matrix.shape[1] != len(qvec):
            raise KgbuildError(f"question and passage vectors differ in size ({len(qvec)} vs "
                               f"{self.matrix.shape[1]}): embed both sides with one model "
                               f"family", code="embeddings")
        out = np.asarray(self.matrix @ qvec, dtype=np.float64)
        ok = self.has_vec if self.visible is None else (self.has_vec & self.visible)
        out[~ok] = -np.inf
        return out

    def typed(self, names: list[int]) -> list[tuple[int, str, int]]:
        """The catalog neighbours of the question's entities (needs the store's schema)."""
        if self.schema is None or not any(self.model.entities(k, self.principal) for k in names):
            return []
        if self._traverser is None:
            from ..retrieve.traverse import open_traverser

            self._traverser = open_traverser(self.store, self.schema, self.principal)
        return typed_steps(self._traverser, self.schema, self.model, names, self.principal,
                           self.settings.graph.hub_cap)

    def names_in(self, text: str) -> list[int]:
        """Name indexes (read model) the question mentions, none inside a longer one."""
        if self._linker is None:
            position = {nid: i for i, nid in enumerate(self.model.name_ids)}
            names = {key: (position[nid], bool(proper)) for nid, key, proper in
                     self.index.db.execute("SELECT id, key, proper FROM names") if nid in position}
            self._linker = Linker(names)
        found = list(self._linker.find(text))
        # the longest name wins: "Payments API" names the API, not the Payments system
        return sorted({k for k, a, b in found
                       if not any(x <= a and b <= y and (x, y) != (a, b) for _, x, y in found)})

    # --- one question -------------------------------------------------------------------------

    def run(self, question: Question, qvec: np.ndarray | None = None) -> Retrieved:
        s = self.settings
        method = s.method
        notes = list(self.notes)
        k = min(s.k, max(self.n_visible, 0))
        bm = self.lexical(question.text)
        cos = self.dense(qvec)
        vis_bm = self.visible
        lexical_z = zscores(np.where(np.isfinite(bm), bm, 0.0), vis_bm)
        dense_z = None
        if cos is not None:
            ok = np.isfinite(cos)
            dense_z = np.where(ok, zscores(np.where(ok, cos, 0.0), ok), 0.0)
            if self.visible is not None:
                dense_z[~self.visible] = -np.inf
        names = self.names_in(question.text)
        graph = None
        if method == "bm25" or (cos is None and method in ("dense", "hybrid")):
            scores = np.where(bm > 0, bm, -np.inf)
        elif method == "dense":
            scores = cos
        elif method == "hybrid":
            size = self.model.size
            rb = top(np.where(bm > 0, bm, -np.inf), 100, self.model.idrank)
            rd = top(cos, 100, self.model.idrank)
            scores = rrf([rb, rd], list(s.rrf_weights), size=size)
            scores = np.where(scores > 0, scores, -np.inf)
        else:
            base = (dense_z + s.lexical_weight * lexical_z) if dense_z is not None else lexical_z
            graph = propagate(self.model, base, names, self.visible, s.graph, self.principal,
                              self.typed(names))
            scores = graph.scores
            if method == "graph":
                keep = np.zeros(self.model.size, dtype=bool)
                keep[list(graph.question_seeds)] = True
                keep[list(graph.reached)] = True
                if not graph.question_seeds:  # the semantic fallback: the best base rows
                    keep[top(base, s.graph.seeds, self.model.idrank)] = True
                scores = np.where(keep, scores, -np.inf)
        rows = top(scores, k, self.model.idrank)
        reranked: dict[int, tuple[float, int]] = {}
        if self.reranker is not None and len(rows):
            rows, reranked = self._rerank(question.text, scores, k, notes)
        has_seed = bool(graph.question_seeds) if graph is not None else \
            bool(question_seeds(self.model, names, self.visible, self.principal, s.graph.hub_cap))
        abstain = decide(s.abstain, question.text, lexical_z, dense_z, has_seed, self)
        passages = self._passages(rows, scores, bm, cos, graph, reranked)
        return Retrieved(question.id, question.text, method, passages, abstain, notes)

    def _rerank(self, text: str, scores: np.ndarray, k: int, notes: list[str]):
        """The ``k`` rows after the reranker reordered the best ``top_n`` fused ones, and the
        reranker's (score, rank) by row; on its failure the fused rows, a note, and no more
        reranking in this run."""
        n = self.rerank_top
        candidates = top(scores, max(k, n), self.model.idrank)
        head = candidates[:n]
        records = self.index.records(self.model.rowids[head].tolist())
        documents = []
        for row in head.tolist():
            rec = records[int(self.model.rowids[row])]
            documents.append(f"{rec['header']}\n{rec['text']}" if rec["header"] else rec["text"])
        try:
            got = self.reranker.scores(text, documents)
        except KgbuildError as exc:
            self.reranker.close()
            self.reranker = None
            note = f"rerank off: the fused order is kept ({exc.message} [{exc.code}])"
            self.notes.append(note)
            notes.append(note)
            return candidates[:k], {}
        order = reorder(got)
        rows = np.concatenate([head[order], candidates[n:]])[:k]
        ranks = {int(head[i]): (got[i], rank) for rank, i in enumerate(order, 1)
                 if got[i] is not None}
        return rows, ranks

    def _passages(self, rows, scores, bm, cos, graph, reranked=None) -> list[dict]:
        records = self.index.records(self.model.rowids[rows].tolist())
        name_ids = self.model.name_ids
        keys = self.index.names_of(name_ids[k] for k in
                                   ([] if graph is None else
                                    [*graph.question_seeds.values(),
                                     *(graph.reached[r][1] for r in rows.tolist() if r in graph.reached)]))
        out = []
        for rank, row in enumerate(rows.tolist(), 1):
            rec = records[int(self.model.rowids[row])]
            signals: dict = {}
            if reranked and row in reranked:
                signals["rerank"] = {"score": round(float(reranked[row][0]), 4),
                                     "rank": reranked[row][1]}
            if bm is not None and bm[row] > 0:
                signals["bm25"] = {"score": round(float(bm[row]), 4),
                                   "rank": int((bm > bm[row]).sum()) + 1}
            if cos is not None and np.isfinite(cos[row]):
                signals["dense"] = {"score": round(float(cos[row]), 4),
                                    "rank": int((cos > cos[row]).sum()) + 1}
            if graph is not None and row in graph.question_seeds:
                signals["graph"] = {"question": True,
                                    "name": keys.get(name_ids[graph.question_seeds[row]])}
            elif graph is not None and row in graph.reached:
                a, k, way = graph.reached[row]
                signals["graph"] = {"from": None if a < 0 else (
                    records.get(int(self.model.rowids[a]), {}).get("id") or self._id(a)),
                    "way": way, "name": keys.get(name_ids[k])}
            out.append({"id": rec["id"], "score": round(float(scores[row]), 6), "rank": rank,
                        "title": rec["title"], "text": rec["text"], "signals": signals,
                        "citation": {"source": rec["source"], "line": rec["line"]},
                        "meta": rec["meta"]})
        return out

    def _id(self, row: int) -> str:
        return self.index.records([int(self.model.rowids[row])])[int(self.model.rowids[row])]["id"]


def retrieve(store: str | Path, questions: Iterable[Question | str], *, k: int = 10,
             method: str = "default", principal: Principal | None = None,
             embeddings: EmbeddingSettings | None = None,
             settings: RetrievalSettings | None = None, schema=None,
             rerank: RerankSettings | None = None) -> list[Retrieved]:
    """Rank the store's passages for each question (``kgbuild retrieve``); questions may be
    plain strings (IDs ``q1``, ``q2``...). ``embeddings`` None: lexical and graph only;
    ``schema``: the store graph's, for typed edges from the catalog entities a question names;
    ``rerank``: a rerank endpoint reordering the best fused candidates (None: none)."""
    settings = settings or RetrievalSettings(k=k, method=method)
    qs = [q if isinstance(q, Question) else Question(f"q{i}", str(q))
          for i, q in enumerate(questions, 1)]
    with PassageRetriever(store, principal, embeddings, settings, schema, rerank) as retriever:
        vectors = None
        if retriever.matrix is not None and qs:
            try:
                vectors = embed_questions([q.text for q in qs], embeddings,
                                          Path(store) / "embeddings")
            except KgbuildError as exc:  # the endpoint is down: the other signals still answer
                if settings.method == "dense":
                    raise
                retriever.matrix = None
                retriever.notes.append(f"dense search off: the questions could not be embedded "
                                       f"({exc.message} [{exc.code}])")
        if settings.abstain.enabled:
            retriever.shared_unknown = shared_unknown([q.text for q in qs], retriever.knows_word)
        return [retriever.run(q, None if vectors is None else vectors[i]) for i, q in enumerate(qs)]


def read_questions(path: str | Path) -> list[Question]:
    """Questions from JSONL (``id`` and ``question`` per line, other keys kept; ``_id`` and
    ``query`` are read too, as HotpotQA and MultiHop-RAG name them); a bad line is an
    :class:`InputError` naming the file and line."""
    name = str(path)
    out: list[Question] = []
    seen: set[str] = set()
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", name) from None
    with handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise InputError(f"not a JSON line: {exc}", name, number) from None
            if not isinstance(obj, dict):
                raise InputError("a line must be a JSON object", name, number)
            qid = obj.get("id", obj.get("_id"))
            text = next((obj[k] for k in ("question", "query") if isinstance(obj.get(k), str)), None)
            if isinstance(qid, int) and not isinstance(qid, bool):
                qid = str(qid)
            if not isinstance(qid, str) or not qid:
                raise InputError("no 'id' (a non-empty string)", name, number)
            if not isinstance(text, str) or not text.strip():
                raise InputError(f"question {qid!r}: no 'question' (a non-empty string)", name, number)
            if qid in seen:
                raise InputError(f"question id {qid!r} repeats", name, number)
            seen.add(qid)
            out.append(Question(qid, text, {k: v for k, v in obj.items()
                                            if k not in ("id", "_id", "question", "query")}))
    return out


REQUEST_KEYS = {"question", "questions", "k", "method"}
MAX_QUESTIONS = 100


def answer_request(store: str | Path, body, principal: Principal) -> dict:
    """``POST /retrieve`` of ``kgbuild serve``: ``{"question": text}`` or ``{"questions":
    [{"id", "question"}, ...]}``, optional ``k`` and ``method``; the answer is what
    ``kgbuild retrieve --format json`` prints. Embeddings as ``kgbuild retrieve`` finds them
    without flags (environment, the store's last ingest). A bad body is a ``usage`` error."""
    from .dense import recorded_settings

    def bad(message: str) -> KgbuildError:
        return KgbuildError(message, code="usage")

    if not isinstance(body, dict) or set(body) - REQUEST_KEYS:
        raise bad(f"the body is an object with {', '.join(sorted(REQUEST_KEYS))}")
    k, method = body.get("k", 10), body.get("method", "default")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise bad(f"k must be an integer from 1 to {MAX_K}")
    if method not in METHODS:
        raise bad(f"method must be one of {', '.join(METHODS)}")
    if ("question" in body) == ("questions" in body):
        raise bad("give one of question or questions")
    if "question" in body:
        if not isinstance(body["question"], str) or not body["question"].strip():
            raise bad("question must be a non-empty string")
        questions = [Question("q1", body["question"])]
    else:
        items = body["questions"]
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_QUESTIONS or not all(
                isinstance(q, dict) and set(q) == {"id", "question"} and isinstance(q["id"], str)
                and isinstance(q["question"], str) and q["question"].strip() for q in items):
            raise bad(f"questions must be 1 to {MAX_QUESTIONS} objects with id and question")
        questions = [Question(q["id"], q["question"]) for q in items]
    settings = EmbeddingSettings.resolve(recorded=recorded_settings(store))
    results = retrieve(store, questions, k=k, method=method, principal=principal,
                       embeddings=settings)
    if "question" in body:
        return results[0].to_dict()
    return {"method": method, "k": k, "results": [r.to_dict() for r in results]}
