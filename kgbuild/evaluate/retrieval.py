"""Retrieval evaluation: run traversal cases and score the evidence they put in the context pack.

A cases file (YAML)::

    graph: catalog                 # optional: folder to build, or a graph file (relative path)
    cases:
      - name: classic
        question: Which service depends on the library maintained by the team that owns Payments API?
        path: ownedBy:out/ownerOf:out/dependsOn:in   # or follow: [...] and hops: N
        cap: 50                    # any TraversalSpec setting: seeds, names, types, max_* ...
        principal: [risk]          # access labels held (default: none), or "all"
        remove: [[s, p, o]]        # edges deleted from the graph for this case
        required:                  # evidence the pack must contain
          - node: api:default/payments-api
          - edge: [component:default/checkout-service, dependsOn, component:default/pricing-sdk]
        forbidden: [...]           # evidence it must not contain (same form)
        answers: [component:default/checkout-service]   # exact answer set (path mode)
        expect: answer             # or "abstain"; abstain_reason: no-seed|ambiguous|no-path|no-edges

Per case: required-evidence recall (required items some pack passage refers to), irrelevant
items (passages referring to nothing required), hops used, edges the hub cap cut, context
size in characters, and
whether it passed: ``answer`` cases need recall 1.0, no forbidden item and the exact answers;
``abstain`` cases need an abstain (with the given reason) and an empty pack.
"""

from __future__ import annotations

from pathlib import Path

from ..build.pipeline import build_graph
from ..errors import InputError, KgbuildError
from ..graph.access import Principal
from ..graph.model import KnowledgeGraph
from ..graph.rdf import from_rdf
from ..io.yamlfile import YamlError, load_yaml_file
from ..retrieve.traverse import TraversalSpec, Traverser
from ..schema.loader import load_schema
from ..validate.validator import load_graph

_SPEC_KEYS = {"seeds", "names", "question", "follow", "hops", "path", "cap", "types",
              "max_nodes", "max_edges", "max_paths", "max_chars"}
_CASE_KEYS = _SPEC_KEYS | {"name", "principal", "remove", "required", "forbidden", "answers",
                           "expect", "abstain_reason", "note"}


def load_cases(path: str | Path) -> dict:
    """Read a cases file; raises :class:`InputError` for unreadable or malformed ones."""
    try:  # bounded: size cap, alias bombs and duplicate keys refused, errors at file:line
        raw = load_yaml_file(path).data
    except YamlError as exc:
        raise InputError(f"not a readable YAML file: {exc.message}", str(path), exc.line) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("cases"), list) or not raw["cases"]:
        raise InputError("expected a mapping with a non-empty 'cases' list", str(path))
    for i, case in enumerate(raw["cases"], 1):
        if not isinstance(case, dict) or not case.get("name"):
            raise InputError(f"case {i} needs a name", str(path))
        extra = sorted(set(case) - _CASE_KEYS)
        if extra:
            raise InputError(f"case {case['name']!r}: unknown key {extra[0]!r}", str(path))
        if case.get("expect", "answer") not in ("answer", "abstain"):
            raise InputError(f"case {case['name']!r}: expect must be answer or abstain", str(path))
    return raw


def graph_for_cases(cases_path: str | Path, raw: dict) -> KnowledgeGraph:
    """The graph a cases file names: a folder is built (fixed timestamp), a file is read."""
    if not raw.get("graph"):
        raise InputError("no graph given and the cases file names none", str(cases_path))
    target = Path(cases_path).parent / str(raw["graph"])
    if target.is_dir():
        return build_graph([target], timestamp=0, validate=False).graph
    return from_rdf(load_graph(target), load_schema())


def _item(kg: KnowledgeGraph, entry: dict, case: str) -> tuple:
    if isinstance(entry, dict) and set(entry) == {"node"}:
        return ("node", str(entry["node"]))
    if isinstance(entry, dict) and set(entry) == {"edge"} and len(entry["edge"]) == 3:
        try:
            return ("edge", kg.schema.canonical(*map(str, entry["edge"])))
        except KgbuildError as exc:
            raise KgbuildError(f"case {case!r}: {exc}") from None
    raise KgbuildError(f"case {case!r}: evidence items are {{node: ID}} or {{edge: [s, p, o]}}, "
                       f"got {entry!r}")


def _without(kg: KnowledgeGraph, edges: set) -> KnowledgeGraph:
    out = KnowledgeGraph(kg.schema)
    out.nodes, out.documents = kg.nodes, kg.documents
    out.assertions = {k: a for k, a in kg.assertions.items() if a.edge not in edges}
    out.untyped_edges = kg.untyped_edges - edges
    return out


def eval_retrieval(cases_path: str | Path, graph: KnowledgeGraph | None = None,
                   cache_dir: str | Path | None = None) -> dict:
    """Run every case of ``cases_path`` on ``graph`` (default: the file's own) and score it."""
    raw = load_cases(cases_path)
    kg = graph if graph is not None else graph_for_cases(cases_path, raw)
    traversers: dict[tuple, Traverser] = {}
    results = []
    for case in raw["cases"]:
        name = str(case["name"])
        held = case.get("principal") or []
        principal = Principal.all_access() if held == "all" else Principal.of(held)
        removed = frozenset(_item(kg, {"edge": e}, name)[1] for e in case.get("remove") or [])
        key = (principal, removed)
        if key not in traversers:
            traversers[key] = Traverser(_without(kg, removed) if removed else kg, principal, cache_dir)
        spec = TraversalSpec(**{k: v for k, v in case.items() if k in _SPEC_KEYS})
        result = traversers[key].run(spec)
        results.append(_score(kg, case, name, result))
    answerable = [r for r in results if r["expect"] == "answer"]
    return {
        "cases": results,
        "total": {
            "cases": len(results), "passed": sum(r["passed"] for r in results),
            "failed": [r["name"] for r in results if not r["passed"]],
            "recall": round(sum(r["recall"] for r in answerable) / len(answerable), 4) if answerable else None,
            "abstained_correctly": sum(r["passed"] for r in results if r["expect"] == "abstain"),
            "abstain_cases": len(results) - len(answerable),
            "irrelevant": sum(r["irrelevant"] for r in results),
            "context_chars": sum(r["context_chars"] for r in results),
        },
    }


def _score(kg: KnowledgeGraph, case: dict, name: str, result) -> dict:
    required = {_item(kg, e, name) for e in case.get("required") or []}
    forbidden = {_item(kg, e, name) for e in case.get("forbidden") or []}
    refs = [("node", i["node"]) if "node" in i else ("edge", tuple(i["edge"]))
            for i in result.context["items"]]
    found = required & set(refs)
    expect = case.get("expect", "answer")
    abstained = result.abstain is not None
    recall = len(found) / len(required) if required else 1.0
    if expect == "answer":
        answers_ok = "answers" not in case or sorted(map(str, case["answers"])) == result.answers
        passed = not abstained and recall == 1.0 and not forbidden & set(refs) and answers_ok
    else:
        reason = case.get("abstain_reason")
        passed = abstained and not refs and (reason is None or result.abstain["reason"] == reason)
    return {
        "name": name, "expect": expect, "passed": bool(passed),
        "abstain": result.abstain["reason"] if abstained else None,
        "recall": round(recall, 4), "required": len(required), "found": len(found),
        "missing": [list(x[1]) if x[0] == "edge" else x[1] for x in sorted(required - found)],
        "forbidden_found": len(forbidden & set(refs)),
        "irrelevant": sum(1 for r in refs if r not in required),
        "hops": max((e["hop"] for e in result.edges), default=0),
        "cap_cut": sum(c["edges"] for c in result.truncated["cap"]),
        "context_chars": result.context["chars"], "answers": result.answers,
    }


def render_report(report: dict) -> str:
    """The evaluation report as a table for people."""
    lines = [f"{'case':<28} {'ok':<4} {'recall':>6} {'irrel':>5} {'hops':>4} {'cut':>4} "
             f"{'chars':>6}  abstain"]
    for r in report["cases"]:
        lines.append(f"{r['name']:<28} {'yes' if r['passed'] else 'NO':<4} {r['recall']:>6.2f} "
                     f"{r['irrelevant']:>5} {r['hops']:>4} {r['cap_cut']:>4} {r['context_chars']:>6}"
                     f"  {r['abstain'] or '-'}")
        if r["missing"]:
            lines.append(f"{'':<28} missing: {r['missing']}")
    t = report["total"]
    lines.append(f"passed {t['passed']}/{t['cases']}; recall on answerable cases "
                 f"{t['recall'] if t['recall'] is not None else '-'}; abstained correctly "
                 f"{t['abstained_correctly']}/{t['abstain_cases']}; {t['irrelevant']} irrelevant "
                 f"items; {t['context_chars']} context chars")
    return "\n".join(lines)
