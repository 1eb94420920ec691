"""Passage retrieval evaluation: ``kgbuild eval retrieval QUESTIONS.jsonl``.

Each question line has ``id``, ``question`` and its gold passage IDs (``supporting_ids``,
``gold_ids`` or ``gold``); an empty list, or ``answerable: false``, marks a question the
corpus cannot answer. Optional ``type`` and ``hops`` group the scores (hops default to the
number of gold passages). Every method runs on the same store in one call and is reported
side by side: recall@k (gold passages found in the top k, over the gold count), all@k (the
share of questions with every gold passage in the top k), MRR (of the first gold passage),
and abstention: how often a method abstained on answerable and on unanswerable questions.
Recall counts the ranked passages whether or not the method abstained.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from ..errors import InputError
from ..graph.access import Principal
from ..passages.dense import EmbeddingSettings
from ..passages.retrieve import METHODS, Question, RetrievalSettings, read_questions, retrieve

CUTS = (2, 5, 10)
GOLD_KEYS = ("supporting_ids", "gold_ids", "gold")


def gold_of(q: Question) -> list[str] | None:
    """The question's gold passage IDs ([] when unanswerable), or None when it names none."""
    if q.extra.get("answerable") is False:
        return []
    for key in GOLD_KEYS:
        value = q.extra.get(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
    return None


def score(results, questions: list[Question], cuts=CUTS) -> dict:
    """The metrics of one method's results (see the module docstring)."""
    groups: dict[str, dict] = defaultdict(lambda: defaultdict(float))
    for q, r in zip(questions, results):
        gold = set(gold_of(q) or [])
        ranked = [p["id"] for p in r.passages]
        keys = ["total"]
        if gold:
            keys += [f"type:{q.extra.get('type', 'any')}",
                     f"hops:{q.extra.get('hops', len(gold))}"]
        else:
            keys = ["unanswerable"]
        for key in keys:
            g = groups[key]
            g["questions"] += 1
            g["abstained"] += 1 if r.abstain else 0
            if not gold:
                continue
            g["answerable"] += 1
            for cut in cuts:
                found = len(gold & set(ranked[:cut]))
                g[f"recall@{cut}"] += found / len(gold)
                g[f"all@{cut}"] += 1.0 if found == len(gold) else 0.0
            g["mrr"] += next((1 / i for i, pid in enumerate(ranked, 1) if pid in gold), 0.0)
    out = {}
    for key, g in sorted(groups.items()):
        n = g["answerable"]
        row = {"questions": int(g["questions"]), "abstain_rate": round(g["abstained"] / g["questions"], 4)}
        if n:
            row.update({m: round(100 * g[m] / n, 2) for m in g if "@" in m})
            row["mrr"] = round(g["mrr"] / n, 4)
        out[key] = row
    return out


def eval_passages(store: str | Path, questions_file: str | Path, *, k: int = 10,
                  methods: tuple[str, ...] = METHODS, principal: Principal | None = None,
                  embeddings: EmbeddingSettings | None = None) -> dict:
    """Every method on the questions, side by side: ``{"methods": {name: metrics}, ...}``."""
    questions = read_questions(questions_file)
    missing = [q.id for q in questions if gold_of(q) is None]
    if missing:
        raise InputError(f"{len(missing)} question(s) name no gold passages (one of "
                         f"{', '.join(GOLD_KEYS)}, or answerable: false), e.g. {missing[0]!r}",
                         str(questions_file))
    report: dict = {"questions": len(questions), "k": k, "methods": {}, "notes": []}
    for method in methods:
        if method == "dense" and embeddings is None:
            continue
        results = retrieve(store, questions, principal=principal, embeddings=embeddings,
                           settings=RetrievalSettings(k=k, method=method))
        report["methods"][method] = score(results, questions)
        report["notes"] = sorted(set(report["notes"]) | {n for r in results for n in r.notes})
    return report


def render_passages_report(report: dict) -> str:
    """The side-by-side table for people."""
    cols = ["recall@2", "recall@5", "all@2", "all@5", "mrr"]
    lines = [f"{report['questions']} questions, top {report['k']}",
             f"{'method':10s} " + " ".join(f"{c:>9s}" for c in cols) + "  abstain(ans/unans)"]
    for method, groups in report["methods"].items():
        total = groups.get("total", {})
        una = groups.get("unanswerable", {}).get("abstain_rate")
        vals = " ".join(f"{total.get(c, 0):>9}" for c in cols)
        lines.append(f"{method:10s} {vals}  {total.get('abstain_rate', 0):.2f}/"
                     f"{'-' if una is None else f'{una:.2f}'}")
    lines += [f"note: {n}" for n in report.get("notes", [])]
    return "\n".join(lines)
