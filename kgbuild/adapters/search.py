"""What a retriever adapter asks of kgbuild, framework-free: a query becomes typed graph paths
(:class:`GraphSearch`, one traversal) or ranked passages (:class:`PassageSearch`, one
passage retrieval), each item a :class:`Record` (prompt text, JSON-ready metadata, a score).

A path record's text is the path as ``kgbuild traverse`` prints it, then each of its
relations as a sentence with its evidence cited (``file:line "quote"``); its metadata names
the seed and the answer (the path's end), the nodes, the edge types and directions, every
assertion (source, location, ``file:line`` citation, evidence, extractor, confidence) and
the path's confidence: that of its weakest edge (an edge counts its best assertion). A
passage record's text is the passage; its metadata holds its ID, title, score and rank, its
``file:line``, each signal's score and rank, the graph link that brought it in (``graph``:
named in the question, or reached from another passage through a name) and the chain of
such links back to the question (``graph_path``, :func:`graph_paths`).

Access: both run as one principal (public items only by default) exactly as the CLI does:
hidden items are never walked, ranked or reported. An answer that abstains gives no record.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import KgbuildError
from ..graph.access import WITHHELD, Principal
from ..passages.dense import EmbeddingSettings
from ..passages.retrieve import Question, Retrieved, RetrievalSettings, retrieve
from ..retrieve.context import sentence
from ..retrieve.spec import TraversalSpec, request_spec
from ..retrieve.traverse import TraversalResult, open_traverser
from ..schema.loader import load_schema
from ..schema.model import Schema

QUERY_AS = {"question": "question", "seed": "seeds", "name": "names"}  # -> the spec's field


@dataclass(frozen=True)
class Record:
    """One retrieved item: an ``id``, prompt ``text``, JSON-ready ``metadata``, a ``score``
    (a path's confidence, a passage's fused score)."""

    id: str
    text: str
    metadata: dict
    score: float | None = None


def principal_of(principal: Principal | str | Iterable[str] | None) -> Principal:
    """A :class:`Principal` from one, from its labels (``"finance,hr"`` or a list), or public
    (None)."""
    if principal is None or isinstance(principal, Principal):
        return principal or Principal()
    labels = principal if isinstance(principal, str) else ",".join(principal)
    try:
        return Principal.of(labels)
    except ValueError as exc:
        raise KgbuildError(str(exc), code="usage") from None


def citation(source: str, location: str) -> str:
    """``file:12`` for a line, ``file#/pointer`` for a JSON pointer, else ``file location``."""
    if location.startswith("line "):
        return f"{source}:{location[5:]}"
    if location.startswith("/"):
        return f"{source}#{location}"
    return f"{source} {location}".strip()


class GraphSearch:
    """Traversals of one graph (a store folder, a graph file, a graph in memory, a SPARQL
    client: as :func:`~kgbuild.retrieve.traverse.open_traverser`) as one principal, the query
    read as a ``question`` (its entities are the seeds), a ``seed`` ID or a ``name``.
    ``spec``: the other :class:`~kgbuild.retrieve.spec.TraversalSpec` settings (``path``,
    ``follow``, ``hops``, ``cap`` (0: none), ``types``, budgets, filters), checked here."""

    def __init__(self, graph, *, schema: Schema | str | Path = "software",
                 principal: Principal | str | Iterable[str] | None = None,
                 query_as: str = "question", **spec):
        if query_as not in QUERY_AS:
            raise KgbuildError(f"query_as must be one of {', '.join(QUERY_AS)}, got "
                               f"{query_as!r}", code="usage")
        if set(spec) & {"seeds", "names", "question"}:
            raise KgbuildError("the query is the seed: give no seeds, names or question",
                               code="usage")
        self.schema = schema if isinstance(schema, Schema) else load_schema(schema)
        self.query_as, self.settings = query_as, dict(spec)
        try:
            self.spec_for("x").check(self.schema)
        except TypeError as exc:  # a setting TraversalSpec does not have
            raise KgbuildError(f"not a traversal setting: {exc}", code="usage") from None
        self.traverser = open_traverser(graph, self.schema, principal_of(principal))

    def spec_for(self, query: str) -> TraversalSpec:
        """The spec one query runs."""
        field = QUERY_AS[self.query_as]
        return request_spec({**self.settings, field: query if field == "question" else [query]})

    def run(self, query: str) -> TraversalResult:
        """The whole traversal result (what ``kgbuild traverse --format json`` prints)."""
        return self.traverser.run(self.spec_for(query))

    def records(self, query: str) -> list[Record]:
        """One record per typed path of the query's traversal; none when it abstains."""
        return path_records(self.run(query))


def path_records(result: TraversalResult) -> list[Record]:
    """One record per path of ``result`` (complete walks in path mode, the walk to each leaf
    in follow mode), in its order; none when it abstained."""
    if result.abstain:
        return []
    edges = {e["id"]: e for e in result.edges}
    labels = {**result.labels, **{n["id"]: n["label"] for n in result.nodes}}
    out = []
    for path in result.paths:
        steps = [edges[e] for e in path["edges"] if e in edges]
        lines, evidence, strengths = [path["text"]], [], []
        for e in steps:
            triple = [e["subject"], e["predicate"], e["object"]]
            cites = []
            for a in e["assertions"]:
                where = citation(a["source"], a["location"])
                quoted = a["evidence"] and a["evidence"] != WITHHELD
                cites.append(f'{where} "{" ".join(a["evidence"].split())}"' if quoted else where)
                evidence.append({"edge": triple, "source": a["source"], "location": a["location"],
                                 "citation": where, "evidence": a["evidence"],
                                 "extractor": a["extractor"], "confidence": a["confidence"]})
            if e["assertions"]:
                strengths.append(max(a["confidence"] for a in e["assertions"]))
            lines.append(sentence(labels.get(e["subject"], e["subject"]), e["predicate"],
                                  labels.get(e["object"], e["object"]))
                         + "".join(f" [{c}]" for c in cites))
        confidence = min(strengths) if strengths else None
        metadata = {
            "kind": "path", "mode": result.mode, "seed": path["seed"], "answer": path["end"],
            "nodes": path["nodes"], "labels": [labels.get(n, n) for n in path["nodes"]],
            "edge_types": [e["predicate"] for e in steps],
            "directions": [e["direction"] for e in steps],
            "edges": [[e["subject"], e["predicate"], e["object"]] for e in steps],
            "sources": list(dict.fromkeys(x["citation"] for x in evidence)),
            "evidence": evidence, "confidence": confidence, "principal": result.principal}
        out.append(Record(path["text"], "\n".join(lines), metadata, confidence))
    return out


class PassageSearch:
    """Passage retrieval over one store as one principal, as ``kgbuild retrieve`` ranks
    (``k``, ``method``; ``embeddings`` None: lexical and graph search only; ``schema`` the
    store graph's, for typed edges from the entities a question names; ``rerank``: a
    :class:`~kgbuild.passages.rerank.RerankSettings`). Each query opens the store anew, so a
    retriever may be shared across threads."""

    def __init__(self, store: str | Path, *,
                 principal: Principal | str | Iterable[str] | None = None, k: int = 10,
                 method: str = "default",
                 embeddings: EmbeddingSettings | None = None,
                 schema: Schema | str | Path | None = None, rerank=None):
        self.store, self.principal = Path(store), principal_of(principal)
        self.settings = RetrievalSettings(k=k, method=method)
        self.settings.check()
        self.embeddings, self.rerank = embeddings, rerank
        self.schema = schema if schema is None or isinstance(schema, Schema) else load_schema(schema)

    def run(self, query: str) -> Retrieved:
        """The whole answer (what ``kgbuild retrieve --format json`` prints for one question)."""
        [answer] = retrieve(self.store, [Question("q1", query)], principal=self.principal,
                            embeddings=self.embeddings, settings=self.settings,
                            schema=self.schema, rerank=self.rerank)
        return answer

    def records(self, query: str) -> list[Record]:
        """One record per ranked passage; none when the answer abstains."""
        return passage_records(self.run(query))


def passage_records(answer: Retrieved) -> list[Record]:
    """One record per passage of ``answer``, best first; none when it abstained."""
    if answer.abstain:
        return []
    paths = graph_paths(answer.passages)
    out = []
    for p in answer.passages:
        where = p["citation"]
        metadata = {"kind": "passage", "id": p["id"], "title": p["title"], "score": p["score"],
                    "rank": p["rank"], "source": where["source"], "line": where["line"],
                    "citation": f"{where['source']}:{where['line']}", "method": answer.method,
                    "signals": p["signals"], "graph": p["signals"].get("graph"),
                    "graph_path": paths[p["id"]], "meta": p["meta"]}
        out.append(Record(str(p["id"]), p["text"], metadata, p["score"]))
    return out


def graph_paths(passages: list[dict]) -> dict[str, list[dict]]:
    """Passage ID -> the chain of graph links that led to it, first link first: each
    ``{passage, from, way, name}`` (``way``: ``question`` for a passage the question names,
    ``mentions``/``mentioned-by`` for a link between passages, an edge type for a step
    through the catalog graph). A chain goes back through the passages of the answer and
    stops at one the question names or one outside the answer; empty without graph signal."""
    links = {p["id"]: p["signals"].get("graph") for p in passages}
    out = {}
    for pid in links:
        chain, seen, cur = [], set(), pid
        while cur in links and links[cur] and cur not in seen:
            seen.add(cur)
            g = links[cur]
            chain.append({"passage": cur, "from": g.get("from"),
                          "way": "question" if g.get("question") else g["way"],
                          "name": g.get("name")})
            cur = None if g.get("question") else g.get("from")
        out[pid] = chain[::-1]
    return out

