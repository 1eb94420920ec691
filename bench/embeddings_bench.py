"""The embeddings path against a loopback OpenAI-compatible server, this tree beside another
commit's (same server, same run, child processes alternated).

    python bench/embeddings_bench.py [--baseline REV] [--runs 3] [--latency 0.005]

Corpus: HotpotQA's 994 passages and 100 questions (``../shared/corpora/multihop/
hotpotqa-train-100``). Per child process, timed separately: ``embed_passages`` of every
passage of a freshly ingested index (batches of 16); ``embed_questions`` of the 100
questions, cold (no vector cache) and warm (all cached); semantic seed matching, i.e.
``EmbeddingMatcher.match`` of each question against the 994 titles as node texts, cold then
warm. Printed: median seconds, HTTP requests the server counted, and a digest of every
vector stored and returned, which must be equal across the trees (byte-identical output).
The server answers each request after ``--latency`` seconds with 384-d vectors hashed from
the words of each text.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpora" / "multihop" / "hotpotqa-train-100"
sys.path.insert(0, str(ROOT / "tests"))
from embeddings_server import JsonServer  # noqa: E402  (the tests' loopback server)
DIM = 384

CHILD = r"""
import hashlib, json, sqlite3, sys, time
from pathlib import Path
tree, corpus, url, work = sys.argv[1:5]
sys.path.insert(0, tree)
from kgbuild.passages.dense import EmbeddingSettings, embed_passages, embed_questions
from kgbuild.passages.index import PassageIndex
from kgbuild.passages.ingest import ingest
from kgbuild.retrieve.embeddings import EmbeddingMatcher, node_text

work = Path(work)
questions = [json.loads(l)["question"] for l in open(Path(corpus) / "questions.jsonl")]
titles = sorted({json.loads(l)["title"] for l in open(Path(corpus) / "corpus.jsonl")})
settings = EmbeddingSettings(url, "bench-passage", "bench-query", "passage: ", "query: ")
ingest(work / "store", [Path(corpus) / "corpus.jsonl"])
digest, out = hashlib.sha256(), {}
with PassageIndex(work / "store", write=True) as index:
    t = time.perf_counter(); n = embed_passages(index, settings)
    out["embed_passages"] = time.perf_counter() - t
db = sqlite3.connect(work / "store" / "passages" / "passages.sqlite")
for row in db.execute("SELECT model, hash, vec FROM vectors ORDER BY model, hash"):
    digest.update(repr(row).encode())
for name in ("embed_questions cold", "embed_questions warm"):
    t = time.perf_counter(); q = embed_questions(questions, settings, work / "qcache")
    out[name] = time.perf_counter() - t
    digest.update(q.tobytes())
candidates = [(f"n{i}", node_text(title, "Topic")) for i, title in enumerate(titles)]
for name in ("semantic seeds cold", "semantic seeds warm"):
    matcher = EmbeddingMatcher.from_env("bench-seeds", url, cache_dir=work / "seeds")
    t = time.perf_counter()
    seeds = [matcher.match(question, candidates, 5, 0.1) for question in questions]
    out[name] = time.perf_counter() - t
    digest.update(json.dumps(seeds).encode())
print(json.dumps({"times": out, "passages": n, "digest": digest.hexdigest()}))
"""


def vector(text: str) -> list[float]:
    vec = [0.0] * DIM
    for word in text.lower().split():
        vec[zlib.crc32(word.encode()) % DIM] += 1.0
    return vec


class Server:
    """``POST /v1/embeddings`` on 127.0.0.1 (the tests' loopback server), each answer after
    ``latency`` seconds; counts requests."""

    def __init__(self, latency: float):
        self.requests = 0

        def answer(path: str, body: dict) -> tuple[int, object]:
            self.requests += 1
            time.sleep(latency)
            return 200, {"object": "list", "model": body["model"], "data": [
                {"object": "embedding", "index": i, "embedding": vector(t)}
                for i, t in enumerate(body["input"])]}

        self.httpd = JsonServer(answer)
        self.url = self.httpd.url


def run(tree: Path, server: Server) -> dict:
    before = server.requests
    with tempfile.TemporaryDirectory() as work:
        out = subprocess.run([sys.executable, "-c", CHILD, str(tree), str(CORPUS), server.url,
                              work], capture_output=True, text=True, check=True, cwd=work)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["requests"] = server.requests - before
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", help="git commit timed beside this tree")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--latency", type=float, default=0.005, help="seconds per answer")
    args = ap.parse_args()
    server = Server(args.latency)
    trees = {"this tree": ROOT}
    with tempfile.TemporaryDirectory() as tmp:
        if args.baseline:
            old = Path(tmp) / "baseline"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old),
                            args.baseline], check=True, capture_output=True)
            trees[args.baseline] = old
        try:
            results: dict[str, list[dict]] = {name: [] for name in trees}
            for _ in range(args.runs):
                for name, tree in trees.items():
                    results[name].append(run(tree, server))
        finally:
            if args.baseline:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(trees[args.baseline])], check=True, capture_output=True)
    steps = list(results["this tree"][0]["times"])
    print(f"{'step':24}" + "".join(f"{name:>16}" for name in trees))
    for step in steps:
        print(f"{step:24}" + "".join(
            f"{statistics.median(r['times'][step] for r in results[name]):15.3f}s"
            for name in trees))
    for key in ("requests", "passages"):
        print(f"{key:24}" + "".join(f"{results[name][0][key]:>16}" for name in trees))
    digests = {r["digest"] for rs in results.values() for r in rs}
    print(f"{'vectors and seeds':24}" + ("identical in every run" if len(digests) == 1
                                        else f"DIFFER: {sorted(digests)}"))


if __name__ == "__main__":
    main()
