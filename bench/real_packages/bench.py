"""Entity resolution on real packages: PyPI sdists and npm tarballs built together.

    python bench/real_packages/fetch.py                  # once: download and unpack
    python bench/real_packages/bench.py [--corpus DIR] [--baseline COMMIT | --no-baseline]

Builds the corpus of :mod:`fetch` (one graph, no store) and scores it against the hand-checked
``truth.yaml`` (which package each manifest describes):

* auto-merges: pairs of manifests whose entities became one node; precision is the share
  that are one package; missed merges are pairs of one package left on different nodes;
* self-edges: dependency edges from a package to itself;
* the review queue (a queued mention's best candidate) and the possible-duplicate pairs, as
  ``kgbuild resolve review --all-access`` lists them: precision is the share a person would
  accept (both sides one package); cross-ecosystem counts proposals pairing two ecosystems;
  the build summary's counts are printed beside them (they should agree).

The baseline is the same measurement by the code of ``--baseline`` (default: the commit
before issue 15's resolver work), checked out into a temporary ``git worktree`` and run
there in a child process (PYTHONPATH pointing at it); the current tree is measured the same
way. Each child has a time limit.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BASELINE = "5ac37fa"  # before issue 15: the resolver as the issue found it
TIMEOUT = 900  # seconds per measurement


def identity_of_purl(node_id: str) -> str | None:
    """``pypi:requests`` for ``pkg:pypi/requests`` (purls are version-less here)."""
    if not node_id.startswith("pkg:"):
        return None
    kind, _, name = node_id[4:].partition("/")
    return f"{kind}:{unquote(name).split('?')[0]}"


def measure(corpus: Path, truth: dict) -> dict:
    """Build ``corpus`` and score it (see the module docstring)."""
    from kgbuild.project.pipeline import build_graph
    from kgbuild.graph.access import Principal
    from kgbuild.resolve.review import review

    with tempfile.TemporaryDirectory() as tmp:
        store, registry = Path(tmp) / "store", Path(tmp) / "aliases.yaml"
        result = build_graph([corpus], store=store, timestamp=0, validate=False, resolve=True,
                             root=corpus, registry=registry)
        try:
            kg, report = result.graph, result.resolution
            listed = review(kg, registry, store / "review-queue.json",
                            principal=Principal.all_access())  # what `resolve review` lists
        finally:
            result.store.close()
    docs = truth["documents"]
    same = {m: group[0] for group in truth.get("same") or [] for m in group}

    def identity(node_id: str) -> str:
        node = kg.nodes.get(node_id)
        found = identity_of_purl(node_id)
        if found is None and node is not None:
            ids = Counter(docs[d] for d in node.defined_in if d in docs)
            found = ids.most_common(1)[0][0] if ids else None
        found = found or f"node:{node_id}"
        return same.get(found, found)

    own: dict[str, set[str]] = {}  # document -> the nodes it defines
    for node in kg.nodes.values():
        for d in node.defined_in:
            own.setdefault(d, set()).add(node.id)
    extracted = sorted(d for d in docs if d in own)
    merged = correct = missed = 0
    for a, b in itertools.combinations(extracted, 2):
        one_node = bool(own[a] & own[b])
        one_package = docs[a] == docs[b]
        merged += one_node
        correct += one_node and one_package
        missed += one_package and not one_node
    self_edges = sum(1 for (s, p, o) in kg.edges() if p == "dependsOn"
                     and (s == o or identity(s) == identity(o)))
    stubs = {(n.label, n.type): n.id for n in sorted(kg.nodes.values(), key=lambda n: n.id)
             if not n.defined_in}

    def judged(pairs: list[tuple[str, str]]) -> dict:
        ok = sum(identity(a) == identity(b) for a, b in pairs)
        cross = sum(identity(a).split(":")[0] != identity(b).split(":")[0]
                    for a, b in pairs if not {identity(a)[:5], identity(b)[:5]} & {"node:", "local"})
        return {"items": len(pairs), "accepted": ok, "precision": ok / len(pairs) if pairs else None,
                "cross_ecosystem": cross, "shown": [[a, b] for a, b in pairs[:12]]}

    queue = [(q.get("own_id") or stubs.get((q["mention"], q["type"]), q["mention"]),
              q["candidates"][0]["id"]) for q in listed["queue"] if q.get("candidates")]
    duplicates = [(d["a"], d["b"]) for d in listed["possible_duplicates"]]
    return {"documents": len(extracted), "entities": len(kg.nodes), "edges": len(kg.edges()),
            "auto_merges": {"pairs": merged, "correct": correct,
                            "precision": correct / merged if merged else None, "missed": missed},
            "self_edges": self_edges, "summary_queued": report["queued"],
            "summary_duplicates": report["possible_duplicates"],
            "queue": judged(queue), "duplicates": judged(duplicates)}


def run_in(tree: Path, corpus: Path) -> dict:
    """:func:`measure` by the kgbuild of ``tree``, in a child process."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--measure",
                          "--corpus", str(corpus)], env=env, capture_output=True, text=True,
                         timeout=TIMEOUT, cwd=tree, stdin=subprocess.DEVNULL)
    if out.returncode:
        raise SystemExit(f"measurement in {tree} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout)


def _fmt(x) -> str:
    return "–" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def render(rows: dict[str, dict]) -> str:
    head = ["method", "docs", "entities", "merge pairs", "merge precision", "missed merges",
            "self-edges", "queued", "queue precision", "queue cross-eco", "dup pairs",
            "dup precision", "dup cross-eco", "summary says (queued/dups)"]
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    for name, m in rows.items():
        a, q, d = m["auto_merges"], m["queue"], m["duplicates"]
        lines.append(" | ".join(_fmt(v) for v in [
            name, m["documents"], m["entities"], a["pairs"], a["precision"], a["missed"],
            m["self_edges"], q["items"], q["precision"], q["cross_ecosystem"], d["items"],
            d["precision"], d["cross_ecosystem"],
            f"{m['summary_queued']}/{m['summary_duplicates']}"]))
    for name, m in rows.items():
        for what in ("queue", "duplicates"):
            for a, b in m[what]["shown"]:
                lines.append(f"  {name} {what}: {a} ~ {b}")
    return "\n".join(lines)


def main() -> None:
    from fetch import default_out

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=default_out() / "corpus")
    ap.add_argument("--baseline", default=BASELINE, help="commit to compare with (default %(default)s)")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--measure", action="store_true", help="(internal) measure with the importable kgbuild")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = ap.parse_args()
    if not args.corpus.is_dir():
        raise SystemExit(f"no corpus at {args.corpus}: run bench/real_packages/fetch.py first")
    truth = yaml.safe_load((HERE / "truth.yaml").read_text())
    if args.measure:
        print(json.dumps(measure(args.corpus.resolve(), truth)))
        return
    rows = {}
    if not args.no_baseline:
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp) / "base"
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(tree),
                            args.baseline], check=True, timeout=120)
            try:
                rows[f"baseline {args.baseline}"] = run_in(tree, args.corpus.resolve())
            finally:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                               timeout=120)
    rows["current"] = run_in(REPO, args.corpus.resolve())
    print(render(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, sort_keys=True))


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
