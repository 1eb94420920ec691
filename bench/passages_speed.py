"""Passage ingest and query speed at 100k and 1M generated passages, against bm25s.

    python bench/passages_speed.py [--sizes 100000 1000000] [--queries 200] [--dense-at 100000]

Generated corpus (fixed seed): titles are two made-up capitalised words; each text has 40-90
words drawn from a Zipf-distributed vocabulary of 60k made-up words, a comma every eleventh
word, with 1-4 mentions of other passages' titles (so linking has work to do). For each size, in the same run:

* kgbuild: ``ingest`` (JSONL read, SQLite FTS5 index, links through the Aho-Corasick
  automaton; one transaction) in a child process, its wall time and peak RSS; then a
  one-line change re-ingested (incremental); then ``PassageRetriever.run`` per question
  (lexical + graph; at ``--dense-at`` sizes also dense, 384-d vectors from a fake endpoint,
  question vectors given: embedding the question is not timed): p50 / p99.
* baseline: bm25s over the same texts (tokenise + index in a child process, wall time and
  peak RSS; ``retrieve`` k=10 per question: p50 / p99). bm25s keeps no passages, no
  links and no incremental index; it is the speed floor of a BM25 in Python.

Targets (issue 23): 1M passages linked and lexically indexed in < 10 min; query p50 < 50 ms
at 100k; memory bounded.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DIM = 384


def make_corpus(path: Path, n: int, seed: int = 23) -> list[str]:
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = ["".join(rng.choice(letters, size=rng.integers(3, 10))) for _ in range(60_000)]
    ranks = np.arange(1, len(vocab) + 1)
    p = 1 / ranks ** 1.05
    p /= p.sum()
    titles = [f"{vocab[rng.integers(1000, 60000)].title()} {vocab[rng.integers(1000, 60000)].title()}"
              for _ in range(n)]
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            words = [vocab[j] for j in rng.choice(len(vocab), size=rng.integers(40, 90), p=p)]
            for _ in range(rng.integers(1, 5)):
                words.insert(rng.integers(0, len(words)), titles[rng.integers(0, n)])
            words[0] = words[0].title()
            for j in range(8, len(words) - 1, 11):  # punctuation, as real text has
                words[j] += ","
            out.write(json.dumps({"id": f"g{i:07d}", "title": titles[i],
                                  "text": " ".join(words) + "."}) + "\n")
    return titles


def child(code: str, *args: str) -> tuple[float, float, str]:
    """Run ``code`` in a fresh interpreter: (wall seconds, its peak RSS in MiB, its stdout,
    whose last line is JSON with ``rss``)."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    text = out.stdout.strip()
    return wall, json.loads(text.splitlines()[-1])["rss"], text


INGEST = """
import sys, json
from kgbuild.passages.ingest import ingest
from kgbuild.passages.dense import EmbeddingSettings
url = sys.argv[3]
emb = EmbeddingSettings(url, "fake-passage", "fake-query") if url else None
r = ingest(sys.argv[1], [sys.argv[2]], embeddings=emb)
import resource
print(json.dumps({"passages": r.passages, "links": r.links, "names": r.names, "added": r.added,
                  "changed": r.changed, "embedded": r.embedded,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

BM25S = """
import sys, json
import bm25s
texts = [(lambda d: d["title"] + " " + d["text"])(json.loads(l)) for l in open(sys.argv[1])]
r = bm25s.BM25()
r.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
r.save(sys.argv[2])
import resource
print(json.dumps({"rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def fake_server():
    sys.path.insert(0, str(ROOT / "tests"))
    from embeddings_server import EmbeddingsServer

    def vector(text: str) -> list[float]:
        rng = np.random.default_rng(abs(hash(text)) % (2 ** 32))
        return rng.standard_normal(DIM).round(4).tolist()

    return EmbeddingsServer(vector)


def percentiles(times: list[float]) -> tuple[float, float]:
    return float(np.percentile(times, 50)) * 1000, float(np.percentile(times, 99)) * 1000


def run_size(n: int, queries: int, dense: bool, work: Path) -> None:
    from kgbuild.graph.access import Principal
    from kgbuild.passages.dense import EmbeddingSettings
    from kgbuild.passages.retrieve import PassageRetriever, Question, RetrievalSettings

    corpus = work / f"corpus-{n}.jsonl"
    t0 = time.perf_counter()
    titles = make_corpus(corpus, n)
    print(f"\n== {n:,} passages ({corpus.stat().st_size / 2**20:.0f} MiB, generated in "
          f"{time.perf_counter() - t0:.0f} s)")
    server = fake_server() if dense else None
    url = server.url if server else ""
    store = work / f"store-{n}"
    try:
        wall, rss, out = child(INGEST, str(store), str(corpus), url)
        info = json.loads(out)
        print(f"kgbuild ingest{' (+ embed, fake endpoint)' if dense else ''}: {wall:.1f} s, "
              f"peak RSS {rss:.0f} MiB; {info['passages']:,} passages, {info['links']:,} links "
              f"to {info['names']:,} names")
        bwall, brss, _ = child(BM25S, str(corpus), str(work / f"bm25s-{n}"))
        print(f"baseline bm25s tokenise+index: {bwall:.1f} s, peak RSS {brss:.0f} MiB "
              f"(kgbuild/bm25s: {wall / bwall:.2f}x time)")
        lines = corpus.read_text(encoding="utf-8").splitlines()
        row = json.loads(lines[n // 2])
        row["text"] += " Changed."
        lines[n // 2] = json.dumps(row)
        corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
        del lines
        iwall, irss, out = child(INGEST, str(store), str(corpus), url)
        print(f"incremental: one changed line re-ingested in {iwall:.1f} s ({json.loads(out)['changed']} "
              f"changed), peak RSS {irss:.0f} MiB")
        rng = np.random.default_rng(7)
        texts = []
        picked = _lines(corpus, set(rng.integers(0, n, size=queries).tolist()))
        for i in rng.integers(0, len(picked), size=queries):
            doc = json.loads(picked[int(i)])
            words = doc["text"].split()
            pick = [words[j] for j in rng.integers(0, len(words), size=6)]
            texts.append(f"What {' '.join(pick[:3])} of {doc['title']} {' '.join(pick[3:])}?")
        settings = EmbeddingSettings(url, "fake-passage", "fake-query") if dense else None
        rs = RetrievalSettings(k=10, method="default")
        t0 = time.perf_counter()
        with PassageRetriever(store, Principal(), settings, rs) as retriever:
            load = time.perf_counter() - t0
            qvecs = np.random.default_rng(3).standard_normal((queries, DIM)).astype(np.float32)
            qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
            retriever.run(Question("warm", texts[0]), qvecs[0] if dense else None)
            times = []
            for i, text in enumerate(texts):
                t = time.perf_counter()
                retriever.run(Question(f"q{i}", text), qvecs[i] if dense else None)
                times.append(time.perf_counter() - t)
        p50, p99 = percentiles(times)
        print(f"kgbuild query (default: lexical{' + dense' if dense else ''} + graph, k=10): "
              f"p50 {p50:.1f} ms, p99 {p99:.1f} ms; first load of the read model {load:.1f} s")
        import bm25s

        bm = bm25s.BM25.load(str(work / f"bm25s-{n}"))
        btimes = []
        for text in texts:
            t = time.perf_counter()
            bm.retrieve(bm25s.tokenize([text], stopwords="en", show_progress=False), k=10,
                        show_progress=False)
            btimes.append(time.perf_counter() - t)
        b50, b99 = percentiles(btimes)
        print(f"baseline bm25s query: p50 {b50:.1f} ms, p99 {b99:.1f} ms "
              f"(kgbuild/bm25s p50: {p50 / b50:.1f}x)")
        del titles
    finally:
        if server:
            server.close()


ENGINES = """
import json, resource, sqlite3, sys, time
engine, corpus, work = sys.argv[1], sys.argv[2], sys.argv[3]
docs = [json.loads(l) for l in open(corpus)]
queries = [d["title"] + " " + " ".join(d["text"].split()[3:8]) for d in docs[::max(1, len(docs) // 200)]][:200]
t0 = time.perf_counter()
if engine == "fts5":
    db = sqlite3.connect(work + "/fts.sqlite")
    db.execute("CREATE VIRTUAL TABLE f USING fts5(title, text, tokenize='porter unicode61')")
    with db:
        db.executemany("INSERT INTO f VALUES(?, ?)", ((d["title"], d["text"]) for d in docs))
    build = time.perf_counter() - t0
    def run(q):
        expr = " OR ".join('"' + w + '"' for w in q.lower().split())
        return db.execute("SELECT rowid FROM f WHERE f MATCH ? ORDER BY rank LIMIT 10", (expr,)).fetchall()
elif engine == "tantivy":
    import tantivy
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("title", stored=False)
    sb.add_text_field("text", stored=False)
    sb.add_integer_field("row", stored=True)
    schema = sb.build()
    index = tantivy.Index(schema, path=work + "/tantivy" if False else None)
    writer = index.writer()
    for i, d in enumerate(docs):
        writer.add_document(tantivy.Document(title=d["title"], text=d["text"], row=i))
    writer.commit()
    index.reload()
    build = time.perf_counter() - t0
    searcher = index.searcher()
    def run(q):
        return searcher.search(index.parse_query(" ".join(q.lower().split()), ["title", "text"]), 10).hits
else:
    import bm25s
    r = bm25s.BM25()
    r.index(bm25s.tokenize([d["title"] + " " + d["text"] for d in docs], show_progress=False), show_progress=False)
    build = time.perf_counter() - t0
    def run(q):
        return r.retrieve(bm25s.tokenize([q], show_progress=False), k=10, show_progress=False)
times = []
for q in queries:
    t = time.perf_counter(); run(q); times.append(time.perf_counter() - t)
times.sort()
print(json.dumps({"build": build, "p50": times[len(times) // 2] * 1000, "p99": times[int(len(times) * 0.99)] * 1000,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def engines(n: int, work: Path) -> None:
    """The three lexical engines alone on the same texts (no stop words removed, every word
    of a title and five text words OR-ed): index time, query p50/p99, peak RSS."""
    corpus = work / f"engines-{n}.jsonl"
    make_corpus(corpus, n)
    print(f"\n== lexical engines alone, {n:,} passages")
    for engine in ("fts5", "tantivy", "bm25s"):
        folder = work / f"engine-{engine}"
        folder.mkdir(exist_ok=True)
        _, rss, out = child(ENGINES, engine, str(corpus), str(folder))
        r = json.loads(out.splitlines()[-1])
        print(f"{engine:8s} index {r['build']:6.1f} s, query p50 {r['p50']:6.2f} ms, "
              f"p99 {r['p99']:6.2f} ms, peak RSS {rss:.0f} MiB")


def _lines(path: Path, wanted: set[int]) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line for j, line in enumerate(f) if j in wanted]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--dense-at", type=int, nargs="*", default=[100_000])
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--engines", type=int, default=0, metavar="N",
                    help="Only compare the lexical engines (FTS5, tantivy, bm25s) at N passages.")
    args = ap.parse_args()
    if args.engines:
        with tempfile.TemporaryDirectory(dir=args.work) as tmp:
            engines(args.engines, Path(tmp))
        return
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        for n in args.sizes:
            run_size(n, args.queries, n in args.dense_at, Path(tmp))


if __name__ == "__main__":
    main()
