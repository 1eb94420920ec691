"""Benchmark: LLM requests at bounded concurrency against a server answering in 200 ms.

A loopback OpenAI-compatible server (``tests/llm/fakellm.py``, in a child process, as a real
server would be) answers every chat request after ``--latency`` seconds. Two measurements,
each at ``--concurrency`` (default 16) and at concurrency 1 (the baseline, same run):

* ``client``: ``LLMClient.run`` on ``--chunks`` (default 100) distinct requests;
* ``extract``: the whole ``kgbuild extract`` path (chunking, prompts, the concurrent warm-up,
  verification, the store update) on generated Markdown documents of ``--chunks`` chunks in
  all, into a fresh store.

Each prints wall time and the ratio to the ideal, ``ceil(chunks / concurrency) * latency``
(no client overhead, a server that never queues). The ``openai`` package is imported before
timing (about 0.5 s once per process, the same for any concurrency). Cold cache every time.

``--baseline REV`` also times the ``extract`` path of an older kgbuild against the same
server, in the same run: this tree and a git worktree of ``REV`` each extract in a child
process (one warm-up extraction, then ``--runs`` timed ones), the two alternated; the medians
and ranges are printed side by side.

Run: ``python bench/llm_concurrency_bench.py [--chunks 100] [--concurrency 16] [--latency 0.2]
[--baseline REV] [--runs 5]``
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "llm"))

from fakellm import FakeLLM, Reply, rel  # noqa: E402

from kgbuild.project.textextract import extract_text  # noqa: E402
from kgbuild.extract.text.extractor import TextSettings  # noqa: E402
from kgbuild.llm.client import LLMClient, Request  # noqa: E402
from kgbuild.llm.settings import LLMSettings  # noqa: E402

SCHEMA = {"type": "object", "required": ["relations"],
          "properties": {"relations": {"type": "array"}}}


def serve(latency: float, queue) -> None:
    def answer(body):
        text = body["messages"][-1]["content"]
        if "depends on Library" in text:  # an extraction request of the generated documents
            n = text.split("Service ", 1)[1].split(" ", 1)[0]
            return Reply.relations(rel(f"Service {n}", "dependsOn", f"Library {n}",
                                       f"Service {n} depends on Library {n}."), delay=latency)
        return Reply('{"relations": []}', delay=latency)
    with FakeLLM(answer) as server:
        queue.put(server.base_url)
        time.sleep(3600)


def documents(folder: Path, chunks: int, per_doc: int = 10) -> None:
    """Markdown documents of ``per_doc`` sections each (one chunk per section at size 600)."""
    for d in range(math.ceil(chunks / per_doc)):
        parts = [f"# Design {d}\n"]
        for s in range(min(per_doc, chunks - d * per_doc)):
            n = d * per_doc + s
            parts.append(f"## Part {s}\n\nService {n} depends on Library {n}. " + "Filler text. " * 30)
        (folder / f"doc{d:03d}.md").write_text("\n\n".join(parts) + "\n")


def run_client(url: str, chunks: int, concurrency: int) -> float:
    client = LLMClient(LLMSettings("bench-model", url, concurrency=concurrency,
                                   structured_output="json_object"), None)
    requests = [Request(({"role": "user", "content": f"chunk {i} at {concurrency} {time.time()}"},),
                        SCHEMA) for i in range(chunks)]
    start = time.perf_counter()
    out = client.run(requests)
    elapsed = time.perf_counter() - start
    assert len(out) == chunks and not any(o.error for o in out), "requests failed"
    return elapsed


def run_extract(url: str, chunks: int, concurrency: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        documents(folder, chunks)
        settings = LLMSettings("bench-model", url, concurrency=concurrency,
                               structured_output="json_object")
        start = time.perf_counter()
        result = extract_text([folder], llm=settings, text=TextSettings(chunk_size=600, chunk_overlap=0),
                              store=Path(tmp) / "store", timestamp=0, validate=False, root=tmp)
        elapsed = time.perf_counter() - start
        stats = result.stats
        result.store.close()
    assert stats.chunks == chunks, f"{stats.chunks} chunks, expected {chunks}"
    assert stats.accepted == chunks, f"{stats.accepted} relations accepted, expected {chunks}"
    return elapsed


CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import openai  # noqa: F401  (before timing, as in the parent)
import llm_concurrency_bench as bench
url, chunks, concurrency, runs = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
bench.run_extract(url, 10, concurrency)  # warm-up: imports, connections, first-call costs
print(json.dumps([bench.run_extract(url, chunks, concurrency) for _ in range(runs)]))
"""


def extract_in_child(tree: Path, url: str, chunks: int, concurrency: int, runs: int) -> list[float]:
    """``run_extract`` timings with the kgbuild of ``tree``, in a child process."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT / "bench"), url, str(chunks),
                          str(concurrency), str(runs)], cwd=tree, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(tree)}, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(url: str, baseline: str, chunks: int, concurrency: int, latency: float,
            runs: int) -> None:
    """This tree's extract path against a worktree of ``baseline``'s, alternated."""
    ideal = math.ceil(chunks / concurrency) * latency
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old), baseline],
                       check=True, capture_output=True)
        try:
            times: dict[str, list[float]] = {"this tree": [], baseline: []}
            for _ in range(2):
                for name, tree in (("this tree", ROOT), (baseline, old)):
                    times[name] += extract_in_child(tree, url, chunks, concurrency, runs)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                           capture_output=True)
    print(f"extract, {chunks} chunks at concurrency {concurrency} (ideal {ideal:.2f} s), "
          f"{2 * runs} runs each, alternated in child processes:")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"  {name:12s} median {med:5.2f} s (ratio {med / ideal:4.2f}), "
              f"range {min(ts):.2f}-{max(ts):.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=100)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--baseline-chunks", type=int, default=None,
                    help="chunks of the concurrency-1 baseline (default: --chunks)")
    ap.add_argument("--baseline", help="git commit whose extract path is timed beside this tree's")
    ap.add_argument("--runs", type=int, default=5, help="timed extractions per child (--baseline)")
    args = ap.parse_args()
    import openai  # noqa: F401  (imported before timing, see the docstring)

    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    server = ctx.Process(target=serve, args=(args.latency, queue), daemon=True)
    server.start()
    url = queue.get(timeout=60)
    try:
        run_client(url, 4, 4)  # warm-up: connections, first-call costs
        rows = []
        base_chunks = args.baseline_chunks or args.chunks
        for what, fn in (("client", run_client), ("extract", run_extract)):
            for conc, n in ((args.concurrency, args.chunks), (1, base_chunks)):
                elapsed = fn(url, n, conc)
                ideal = math.ceil(n / conc) * args.latency
                rows.append((what, n, conc, elapsed, ideal))
        print(f"{'path':8} {'chunks':>6} {'conc':>4} {'wall s':>7} {'ideal s':>7} {'ratio':>6}")
        for what, n, conc, elapsed, ideal in rows:
            print(f"{what:8} {n:6} {conc:4} {elapsed:7.2f} {ideal:7.2f} {elapsed / ideal:6.2f}")
        for what in ("client", "extract"):
            fast = next(r for r in rows if r[0] == what and r[2] == args.concurrency)
            slow = next(r for r in rows if r[0] == what and r[2] == 1)
            per_fast, per_slow = fast[3] / fast[1], slow[3] / slow[1]
            print(f"{what}: concurrency {args.concurrency} is {per_slow / per_fast:.1f}x faster per "
                  f"chunk than concurrency 1; ratio to ideal {fast[3] / fast[4]:.2f} "
                  f"(target <= 1.5)")
        if args.baseline:
            compare(url, args.baseline, args.chunks, args.concurrency, args.latency, args.runs)
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
