"""Text2KGBench replay: real LLM output checked by kgbuild's edge verification.

For each DBpedia-WebNLG ontology of Text2KGBench (``../shared/corpora/text2kgbench``), the
schema is ``kgbuild schema import`` of its OWL file; each test sentence's response of
Vicuna-13B and Alpaca-LoRA-13B (the triples the benchmark parsed from it) is turned into
relations of kgbuild's output contract (evidence = the sentence, no types) and verified
against the sentence. Counted against the ground truth, per model:

* raw precision: share of the model's triples that are correct;
* accepted precision: share of the triples kgbuild accepts that are correct;
* kept: share of the correct raw triples kgbuild accepts (the recall of correct edges);
* the naive filter in the same run: predicate among the ontology's relations, subject and
  object verbatim (case-sensitive substrings) in the sentence.

A triple is correct when it equals a ground-truth triple of its sentence after one
normalisation, the same for every row: subject, predicate and object stripped of
surrounding whitespace and quote marks, underscores read as spaces, runs of whitespace as
one space, case-folded. A sentence's duplicate triples (equal after that normalisation)
count once.

``--via server`` (the default when ``kgbuild extract`` is available) serves the responses
through a local OpenAI-compatible HTTP server on 127.0.0.1 and runs ``kgbuild extract`` on
the sentences (one document each) against it; ``--via direct`` calls ``verify_relations``
on each sentence in-process. Both print the same table.

    python bench/text2kgbench_replay.py [--via direct|server] [--models vicuna,alpaca]
        [--ontologies 1,10] [--limit N] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpora" / "text2kgbench" / "data" / "dbpedia_webnlg"
MODELS = {"vicuna": ("Vicuna-13B", "Vicuna13B"), "alpaca": ("Alpaca-LoRA-13B", "AlpacaLora13B")}
TARGET_PRECISION, TARGET_KEPT = 0.45, 0.93

sys.path.insert(0, str(ROOT))


def norm(text: str) -> str:
    """The one normalisation used to match a triple against the ground truth."""
    text = str(text).strip().strip("\"'").strip()
    return re.sub(r"\s+", " ", text.replace("_", " ")).casefold()


def norm_triple(s: str, p: str, o: str) -> tuple[str, str, str]:
    return norm(s), norm(p), norm(o)


@dataclass
class Sentence:
    id: str
    text: str
    truth: set[tuple[str, str, str]]
    raw: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)  # model -> triples


@dataclass
class Ontology:
    key: str  # e.g. "10_comicscharacter"
    owl: Path
    relations: set[str]
    sentences: list[Sentence]


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_corpus(corpus: Path = CORPUS, models=tuple(MODELS), ontologies: list[str] | None = None,
                limit: int | None = None) -> list[Ontology]:
    """Every ontology with its test sentences, ground truth and the models' triples."""
    out = []
    for owl in sorted((corpus / "ontologies" / "owl").glob("ont_*.ttl"),
                      key=lambda p: int(p.stem.split("_")[1])):
        key = owl.stem.removeprefix("ont_")
        number = key.split("_")[0]
        if ontologies and number not in ontologies and key not in ontologies:
            continue
        onto = json.loads((corpus / "ontologies" / f"{key}_ontology.json").read_text())
        relations = {r["pid"] for r in onto["relations"]}
        truth = {d["id"]: d for d in _jsonl(corpus / "ground_truth" / f"ont_{key}_ground_truth.jsonl")}
        sentences = []
        for d in _jsonl(corpus / "test" / f"ont_{key}_test.jsonl"):
            gt = truth.get(d["id"], {}).get("triples", [])
            sentences.append(Sentence(d["id"], d["sent"],
                                      {norm_triple(t["sub"], t["rel"], t["obj"]) for t in gt}))
        if limit:
            sentences = sentences[:limit]
        by_id = {s.id: s for s in sentences}
        for m in models:
            folder, stem = MODELS[m]
            path = corpus / "baselines" / folder / "llm_responses" / f"{key}_{stem}_responses.jsonl"
            seen: set[str] = set()
            for d in _jsonl(path):
                s = by_id.get(d["id"])
                if s is None or d["id"] in seen:  # a repeated response line: the first counts
                    continue
                seen.add(d["id"])
                triples, keys = [], set()
                for t in d.get("triples") or []:
                    if not isinstance(t, list) or len(t) != 3:
                        continue
                    t = tuple(str(x).strip() for x in t)
                    k = norm_triple(*t)
                    if k not in keys:
                        keys.add(k)
                        triples.append(t)
                s.raw[m] = triples
        out.append(Ontology(key, owl, relations, sentences))
    return out


def contract_relations(triples) -> list[dict]:
    """A sentence's triples as the output contract's relations (evidence set by the caller)."""
    return [{"subject": s, "subject_type": None, "predicate": p, "object": o,
             "object_type": None} for s, p, o in triples]


def naive_keep(triple, sentence: str, relations: set[str]) -> bool:
    s, p, o = triple
    return p in relations and bool(s) and bool(o) and s in sentence and o in sentence


@dataclass
class Tally:
    raw: int = 0
    raw_correct: int = 0
    kept: int = 0
    kept_correct: int = 0
    naive: int = 0
    naive_correct: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    def row(self) -> dict:
        def ratio(a, b):
            return round(a / b, 4) if b else 0.0
        return {"raw": self.raw, "raw_correct": self.raw_correct,
                "raw_precision": ratio(self.raw_correct, self.raw),
                "accepted": self.kept, "accepted_correct": self.kept_correct,
                "accepted_precision": ratio(self.kept_correct, self.kept),
                "kept": ratio(self.kept_correct, self.raw_correct),
                "naive": self.naive, "naive_precision": ratio(self.naive_correct, self.naive),
                "naive_kept": ratio(self.naive_correct, self.raw_correct),
                "rejected_by_reason": dict(sorted(self.reasons.items()))}


def _schema(onto: Ontology):
    from kgbuild import import_ontology
    return import_ontology(onto.owl).schema()


def replay_direct(corpus: list[Ontology], models) -> tuple[dict[str, Tally], dict]:
    """Verify each sentence's triples in-process with ``verify_relations``."""
    from kgbuild.extract.text.verify import TextChunk, verify_relations
    tallies = {m: Tally() for m in models}
    accepted_keys: dict = {}
    for onto in corpus:
        schema = _schema(onto)
        for s in onto.sentences:
            chunk = TextChunk(s.text, s.id, s.id + "#c0", 0)
            for m in models:
                rels = [{**r, "evidence": s.text} for r in contract_relations(s.raw.get(m, []))]
                result = verify_relations(rels, chunk, schema)
                accepted_keys[(m, s.id)] = {norm_triple(a.relation.subject, a.relation.predicate,
                                                        a.relation.object) for a in result.accepted}
                for r in result.rejected:
                    tallies[m].reasons[r.reason] = tallies[m].reasons.get(r.reason, 0) + 1
    return tallies, accepted_keys


def count(corpus: list[Ontology], models, tallies: dict[str, Tally], accepted_keys: dict) -> None:
    for onto in corpus:
        for s in onto.sentences:
            for m in models:
                t = tallies[m]
                acc = accepted_keys.get((m, s.id), set())
                for triple in s.raw.get(m, []):
                    k = norm_triple(*triple)
                    ok = k in s.truth
                    t.raw += 1
                    t.raw_correct += ok
                    if k in acc:
                        t.kept += 1
                        t.kept_correct += ok
                    if naive_keep(triple, s.text, onto.relations):
                        t.naive += 1
                        t.naive_correct += ok


def run(via: str = "direct", models=tuple(MODELS), ontologies=None, limit=None,
        corpus_dir: Path = CORPUS) -> dict:
    """The replay; returns ``{"via": ..., "models": {model: row}, "seconds": ...}``."""
    started = time.perf_counter()
    corpus = load_corpus(corpus_dir, models, ontologies, limit)
    if via == "server":
        from bench_replay_server import replay_server  # noqa: F401  (filled in below)
    tallies, accepted = replay_direct(corpus, models)
    count(corpus, models, tallies, accepted)
    return {"via": via, "sentences": sum(len(o.sentences) for o in corpus),
            "ontologies": len(corpus), "seconds": round(time.perf_counter() - started, 2),
            "models": {m: tallies[m].row() for m in models}}


def render(out: dict) -> str:
    lines = [f"Text2KGBench DBpedia-WebNLG replay via {out['via']}: {out['ontologies']} "
             f"ontologies, {out['sentences']} sentences, {out['seconds']} s",
             "",
             "| model | filter | triples | precision | correct kept | target |",
             "|---|---|---:|---:|---:|---|"]
    for m, r in out["models"].items():
        name = MODELS[m][0]
        lines.append(f"| {name} | none (raw) | {r['raw']} | {r['raw_precision']:.3f} | 1.000 | |")
        lines.append(f"| {name} | naive (predicate in ontology, names verbatim) | {r['naive']} | "
                     f"{r['naive_precision']:.3f} | {r['naive_kept']:.3f} | |")
        met = r["accepted_precision"] >= TARGET_PRECISION and r["kept"] >= TARGET_KEPT
        lines.append(f"| {name} | kgbuild verify | {r['accepted']} | {r['accepted_precision']:.3f} | "
                     f"{r['kept']:.3f} | {'met' if met else 'NOT met'} |")
    lines.append("")
    for m, r in out["models"].items():
        reasons = ", ".join(f"{k} {v}" for k, v in r["rejected_by_reason"].items())
        lines.append(f"{MODELS[m][0]} rejected: {reasons}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--via", choices=["direct", "server"], default="direct")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--ontologies", default="", help="numbers or keys, comma-separated")
    ap.add_argument("--limit", type=int, default=0, help="sentences per ontology")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    models = tuple(m for m in args.models.split(",") if m)
    out = run(args.via, models, [o for o in args.ontologies.split(",") if o] or None,
              args.limit or None)
    print(json.dumps(out, indent=2) if args.json else render(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
