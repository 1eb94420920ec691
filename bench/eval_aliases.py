"""Evaluate the resolver on real alias data that nobody here wrote.

    python bench/eval_aliases.py [--corpora /work/shared/corpora/aliases] [--json FILE]

* GitHub Linguist ``linguist_languages.yml``: each language is an entity (label = its name);
  each explicit ``aliases`` entry that does not merely case-fold to the name is a mention
  whose answer is that language.
* pipreqs ``pipreqs_mapping.txt`` (``import_name:distribution``): each distribution is an
  entity ``pkg:pypi/<PEP 503 name>`` labelled with its name; each import name that does not
  merely case-fold to its distribution is a mention whose answer is that distribution.

Split: a mention goes to the curated half when the first byte of SHA-256 of its folded text
is even, else to the evaluation half. The evaluation half is scored *without* the curated
table (names alone) and *with* the curated half loaded as the alias table (``aliases.yaml``;
aliases match exactly, so this shows the table adds no wrong resolutions elsewhere). The
last row scores the curated half itself with the table loaded: what a deployment with that
table resolves. An alias naming two entities is left out (no single answer).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import defaultdict
from pathlib import Path

import yaml

from kgbuild.io.text import split_lines
from kgbuild.resolve.aliases import AliasRegistry
from kgbuild.resolve.normalize import fold
from kgbuild.resolve.resolver import Resolver
from kgbuild.schema.loader import parse_schema

SCHEMA = parse_schema({
    "name": "aliaseval", "namespace": "https://kgbuild.dev/alias-eval#",
    "node_types": {"Language": {}, "Package": {}},
    "edge_types": {"writtenIn": {"domain": "Package", "range": "Language"}},
})


def linguist(path: Path) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """(entity ID -> label, [(alias, entity ID)]) for Linguist languages."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    entities = {f"linguist:{name}": name for name in data}
    pairs = [(alias, f"linguist:{name}") for name, spec in data.items()
             for alias in (spec or {}).get("aliases") or [] if fold(alias) != fold(name)]
    return entities, pairs


def pipreqs(path: Path) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """(entity ID -> label, [(import name, entity ID)]) for pipreqs' mapping."""
    entities, pairs = {}, []
    for line in split_lines(path.read_text(encoding="utf-8")):
        if ":" not in line:
            continue
        module, dist = (x.strip() for x in line.split(":", 1))
        cid = "pkg:pypi/" + "-".join(fold(dist).replace("_", "-").replace(".", "-").split("-"))
        entities[cid] = dist
        if fold(module) != fold(dist):
            pairs.append((module, cid))
    return entities, pairs


CONDITIONS = (("without table", "evaluated"), ("with table", "evaluated"),
              ("curated, with table", "curated"))


def curated(alias: str) -> bool:
    return hashlib.sha256(fold(alias).encode()).digest()[0] % 2 == 0


def evaluate(type_name: str, entities: dict[str, str], pairs: list[tuple[str, str]]) -> dict:
    answers = defaultdict(set)
    for alias, cid in pairs:
        answers[fold(alias)].add(cid)
    pairs = sorted({(a, c) for a, c in pairs if len(answers[fold(a)]) == 1})
    table = [(a, c) for a, c in pairs if curated(a)]
    test = [(a, c) for a, c in pairs if not curated(a)]
    out = {"entities": len(entities), "aliases": len(pairs), "curated": len(table),
           "evaluated": len(test), "left_out_ambiguous": sum(len(v) > 1 for v in answers.values())}
    for condition, mentions in CONDITIONS:
        registry = AliasRegistry()
        if condition != "without table":
            for alias, cid in table:
                registry.add_alias(type_name, cid, alias)
        r = Resolver(SCHEMA, registry)
        for cid, label in sorted(entities.items()):
            r.add_entity(cid, type_name, label)
        counts = {"correct": 0, "wrong": 0, "flagged": 0, "unresolved": 0}
        wrong = []
        for alias, cid in (test if mentions == "evaluated" else table):
            res = r.resolve(alias, type_name)
            if res.status == "resolved":
                ok = res.id == cid
                counts["correct" if ok else "wrong"] += 1
                if not ok:
                    wrong.append(f"{alias} -> {res.id} ({res.stage}), expected {cid}")
            else:
                counts["flagged" if res.status in ("review", "ambiguous") else "unresolved"] += 1
        auto = counts["correct"] + counts["wrong"]
        n = sum(counts.values())
        out[condition] = {**counts, "precision": counts["correct"] / auto if auto else 1.0,
                          "recall": counts["correct"] / n if n else 0.0, "wrong_examples": wrong}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default="/work/shared/corpora/aliases", type=Path)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    report = {
        "linguist": evaluate("Language", *linguist(args.corpora / "linguist_languages.yml")),
        "pipreqs": evaluate("Package", *pipreqs(args.corpora / "pipreqs_mapping.txt")),
    }
    for corpus, r in report.items():
        print(f"\n== {corpus}: {r['entities']} entities, {r['aliases']} aliases "
              f"({r['curated']} curated, {r['evaluated']} evaluated, "
              f"{r['left_out_ambiguous']} ambiguous left out) ==")
        print(f"{'condition':<21}{'correct':>9}{'wrong':>7}{'flagged':>9}{'unresolved':>12}"
              f"{'precision':>11}{'recall':>8}")
        for condition, _ in CONDITIONS:
            c = r[condition]
            print(f"{condition:<21}{c['correct']:>9}{c['wrong']:>7}{c['flagged']:>9}"
                  f"{c['unresolved']:>12}{c['precision']:>11.3f}{c['recall']:>8.3f}")
            for line in c["wrong_examples"]:
                print(f"    wrong: {line}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
