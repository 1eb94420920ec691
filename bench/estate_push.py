"""Push an estate's store (``estate_bench.py``'s) to a local Virtuoso: in full, then after one
changed document, then with nothing changed.

    python bench/estate_push.py WORK N [--deadline 2100] [--buffers 170000]

``WORK`` holds ``catN/`` and ``storeN/`` (``estate_bench.py --work WORK``, run from ``WORK``).
Virtuoso is started as ``remote_push_bench.py`` starts it (its own database folder under
``WORK``, ``--buffers`` 8 KiB pages of cache, updates through ``/sparql-auth`` as dba). The full
push is stopped after ``--deadline`` seconds (the triples the server then holds are counted:
the rate); when it completes, component 2's description is edited, the store rebuilt and
pushed again (the incremental push: that document's graph only), then pushed once more with
nothing changed. Times, the server's peak RSS and the push's JSON summary are printed.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from catalog_gen import component_path  # noqa: E402
from remote_push_bench import peak_rss_mb, start_server  # noqa: E402


def server_triples(url: str) -> str:
    """How many triples the server's named graphs hold (or why that could not be read)."""
    query = urllib.parse.quote("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }")
    try:
        with urllib.request.urlopen(f"{url.replace('sparql-auth', 'sparql')}?query={query}"
                                    f"&format=json", timeout=600) as r:
            return json.load(r)["results"]["bindings"][0]["n"]["value"]
    except (OSError, ValueError, KeyError) as exc:
        return f"? ({exc})"


def timed(args: list[str], cwd: Path, limit: float) -> tuple[float, bool, str]:
    """Wall seconds, whether it was stopped at ``limit``, and the tail of its output."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    while proc.poll() is None and time.perf_counter() - start < limit:
        time.sleep(min(1.0, 0.01 + (time.perf_counter() - start) / 100))  # (fine at first)
    stopped = proc.poll() is None
    if stopped:
        proc.kill()
    out = proc.communicate()[0].decode(errors="replace")
    return time.perf_counter() - start, stopped, out[-600:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work", type=Path)
    ap.add_argument("n", type=int, help="the estate's components (its catN and storeN)")
    ap.add_argument("--deadline", type=float, default=2100, help="seconds the full push may take")
    ap.add_argument("--buffers", type=int, default=170_000, help="Virtuoso's NumberOfBuffers")
    args = ap.parse_args()
    work = args.work.resolve()
    proc, url, _ = start_server("virtuoso", work / "virtuoso", args.buffers)
    kgbuild = [sys.executable, "-m", "kgbuild.cli"]
    push = [*kgbuild, "push", "--endpoint", url, "--digest", "--user", "dba", "--password", "dba",
            "--store", f"store{args.n}", "--timeout", "900", "--format", "json"]
    try:
        wall, stopped, out = timed(push, work, args.deadline)
        print(f"full push: {wall:.1f} s{' (stopped)' if stopped else ''}, server peak RSS "
              f"{peak_rss_mb(proc.pid):.0f} MB; triples on the server: "
              f"{server_triples(url)}\n{out}", flush=True)
        if stopped:
            return
        edited = component_path(work / f"cat{args.n}", 2, 1000)
        edited.write_text(re.sub(r"(description: .*)", r"\1 (pushed)", edited.read_text(), count=1))
        subprocess.run([*kgbuild, "build", f"cat{args.n}", "--store", f"store{args.n}",
                        "--timestamp", "0", "--no-resolve", "--no-validate"], cwd=work,
                       check=True, capture_output=True)
        for what in ("one changed document", "nothing changed"):
            wall, stopped, out = timed(push, work, 900)
            print(f"{what}: {wall:.2f} s{' (stopped)' if stopped else ''}\n{out}", flush=True)
    finally:
        proc.terminate()
        proc.wait(60)


if __name__ == "__main__":
    main()
