"""Retrieval evaluation: run traversal cases and score the evidence they put in the context pack.

A cases file (YAML)::

    graph: catalog                 # optional: folder to build, or a graph file (relative path)
    cases:
      - name: classic
        question: Which service depends on the library maintained by the team that owns Payments API?
        path: ownedBy:out/ownerOf:out/dependsOn:in   # or follow: [...] and hops: N
        cap: 50                    # any TraversalSpec setting: seeds, names, types, max_* ...
                                   # (read as kgbuild traverse reads them: cap 0 is no cap)
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

from ..project.pipeline import build_graph
from ..errors import InputError, KgbuildError, YamlError
from ..graph.access import Principal
from ..graph.model import KnowledgeGraph
from ..graph.rdf import from_rdf
from ..io.yamlfile import load_yaml_file, plain
from ..retrieve.spec import BOUNDS, may_be_none, request_spec
from ..retrieve.traverse import Traverser, open_traverser
from ..schema.loader import load_schema
from ..io.rdffile import load_graph

_SPEC_KEYS = {"seeds", "names", "question", "follow", "hops", "path", "cap", "types",
              "max_nodes", "max_edges", "max_paths", "max_chars", "shortest_path"}
_CASE_KEYS = _SPEC_KEYS | {"name", "principal", "remove", "required", "forbidden", "answers",
                           "expect", "abstain_reason", "note"}
_FILE_KEYS = {"graph", "cases", "description", "note"}
_NUMBERS = {k: (*BOUNDS[k], may_be_none(k)) for k in _SPEC_KEYS & set(BOUNDS)}  # (low, high, null?)
_TEXT_LISTS = ("seeds", "names", "follow", "types", "answers")  # a list of text, or one text
_REASONS = ("no-seed", "ambiguous", "no-path", "no-edges")


def _kind(value: object) -> str:
    """What a YAML value is, for messages."""
    for kind, name in ((bool, "true/false"), (dict, "a mapping"), (list, "a list"),
                       ((int, float), "a number"), (str, "text"), (type(None), "null")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _line(container, key) -> int | None:
    return container.line_of(key) if hasattr(container, "line_of") else None


def load_cases(path: str | Path) -> dict:
    """Read a cases file and check every field's type and range; raises :class:`InputError`
    at the file and line of the first bad value, naming the case."""
    try:  # bounded: size cap, alias bombs and duplicate keys refused, errors at file:line
        raw = load_yaml_file(path).tree  # mappings and lists that know their lines
    except YamlError as exc:
        raise InputError(f"not a readable YAML file: {exc.message}", str(path), exc.line) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("cases"), list) or not raw["cases"]:
        raise InputError("expected a mapping with a non-empty 'cases' list", str(path))
    extra = sorted(str(k) for k in set(raw) - _FILE_KEYS)
    if extra:
        raise InputError(f"unknown key {extra[0]!r} (allowed: {', '.join(sorted(_FILE_KEYS))})",
                         str(path), _line(raw, extra[0]))
    if raw.get("graph") is not None and not isinstance(raw["graph"], str):
        raise InputError(f"graph must be the path of a folder or graph file, got "
                         f"{_kind(raw['graph'])}", str(path), _line(raw, "graph"))
    cases, names = [], set()
    for i, case in enumerate(raw["cases"]):
        where = _line(raw["cases"], i)
        if not isinstance(case, dict) or not isinstance(case.get("name"), (str, int)) \
                or isinstance(case.get("name"), bool) or not str(case["name"]).strip():
            raise InputError(f"case {i + 1} needs a name (text)", str(path), where)
        cases.append(_check_case(case, str(path), where))
        if cases[-1]["name"] in names:
            raise InputError(f"case {cases[-1]['name']!r}: the name is used twice", str(path), where)
        names.add(cases[-1]["name"])
    return {"graph": raw.get("graph"), "cases": cases}


def _check_case(case: dict, path: str, where: int | None) -> dict:
    """One case with each field checked; one text where a list belongs becomes a list."""
    name = str(case["name"])

    def fail(msg: str, key: str | None = None) -> InputError:
        return InputError(f"case {name!r}: {msg}", path, (_line(case, key) if key else None) or where)

    extra = sorted(str(k) for k in set(case) - _CASE_KEYS)
    if extra:
        raise fail(f"unknown key {extra[0]!r}", extra[0])
    out: dict = {"name": name, "_line": where}
    for key, value in case.items():
        if key == "name" or (value is None and key not in _NUMBERS):
            continue
        if key in _TEXT_LISTS:
            values = [value] if isinstance(value, str) else value
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                bad = next((v for v in values if not isinstance(v, str)), None) \
                    if isinstance(values, list) else None
                raise fail(f"{key} must be a list of text, got "
                           + (f"{_kind(bad)} {bad!r} in the list" if isinstance(values, list)
                              else _kind(value)), key)
            out[key] = values
        elif key == "shortest_path":
            if not isinstance(value, bool):
                raise fail(f"{key} must be true or false, got {_kind(value)}", key)
            out[key] = value
        elif key in ("question", "path", "note"):
            if not isinstance(value, str):
                raise fail(f"{key} must be text, got {_kind(value)}", key)
            out[key] = value
        elif key in _NUMBERS:
            low, high, nullable = _NUMBERS[key]
            if value is None and nullable:
                out[key] = None
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise fail(f"{key} must be an integer from {low} to {high}"
                           + (" (or null: no limit)" if nullable else "") + f", got {value!r}", key)
            out[key] = value
        elif key == "principal":
            if value != "all":
                if isinstance(value, str):
                    value = [value]
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise fail(f"principal must be \"all\" or a list of access labels, got "
                               f"{_kind(value)}", key)
                try:
                    Principal.of(value)
                except ValueError as exc:
                    raise fail(str(exc), key) from None
            out[key] = value
        elif key == "remove":
            if not isinstance(value, list) or not all(_is_triple(e) for e in value):
                raise fail("remove must be a list of edges [subject, edge, object]", key)
            out[key] = value
        elif key in ("required", "forbidden"):
            if not isinstance(value, list) or not all(_is_evidence(e) for e in value):
                bad = next((e for e in value if not _is_evidence(e)), value) \
                    if isinstance(value, list) else value
                raise fail(f"{key}: evidence items are {{node: ID}} or {{edge: [s, p, o]}}, "
                           f"got {bad!r}", key)
            out[key] = value
        elif key == "expect":
            if value not in ("answer", "abstain"):
                raise fail("expect must be answer or abstain", key)
            out[key] = value
        elif key == "abstain_reason":
            if value not in _REASONS:
                raise fail(f"abstain_reason must be one of {', '.join(_REASONS)}", key)
            out[key] = value
    return {k: plain(v) for k, v in out.items()}


def _is_triple(value: object) -> bool:
    return isinstance(value, list) and len(value) == 3 and all(isinstance(v, str) for v in value)


def _is_evidence(entry: object) -> bool:
    return isinstance(entry, dict) and (
        (set(entry) == {"node"} and isinstance(entry["node"], str))
        or (set(entry) == {"edge"} and _is_triple(entry["edge"])))


def graph_for_cases(cases_path: str | Path, raw: dict) -> KnowledgeGraph:
    """The graph a cases file names: a folder is built (fixed timestamp), a file is read."""
    if not raw.get("graph"):
        raise InputError("no graph given and the cases file names none", str(cases_path))
    target = Path(cases_path).parent / str(raw["graph"])
    if target.is_dir():
        return build_graph([target], timestamp=0, validate=False).graph
    return from_rdf(load_graph(target), load_schema())


def _item(kg: KnowledgeGraph, entry: dict, case: str) -> tuple:
    """A checked evidence item (see :func:`_is_evidence`) as ``(node, ID)`` or ``(edge, s p o)``
    in the stored direction; an unknown edge name raises :class:`KgbuildError`."""
    if "node" in entry:
        return ("node", entry["node"])
    return ("edge", kg.schema.canonical(*entry["edge"]))


def _without(kg: KnowledgeGraph, edges: set) -> KnowledgeGraph:
    out = KnowledgeGraph(kg.schema)
    out.nodes, out.documents = kg.nodes, kg.documents
    out.assertions = {k: a for k, a in kg.assertions.items() if a.edge not in edges}
    out.untyped_edges = kg.untyped_edges - edges
    return out


def eval_retrieval(cases_path: str | Path, graph: KnowledgeGraph | None = None) -> dict:
    """Run every case of ``cases_path`` on ``graph`` (default: the file's own) and score it."""
    raw = load_cases(cases_path)
    kg = graph if graph is not None else graph_for_cases(cases_path, raw)
    traversers: dict[tuple, Traverser] = {}
    results = []
    for case in raw["cases"]:
        name = case["name"]
        try:  # a setting the graph's schema does not know (an edge or type name): this case
            held = case.get("principal") or []
            principal = Principal.all_access() if held == "all" else Principal.of(held)
            removed = frozenset(_item(kg, {"edge": e}, name)[1] for e in case.get("remove") or [])
            key = (principal, removed)
            if key not in traversers:
                traversers[key] = open_traverser(_without(kg, removed) if removed else kg,
                                                 kg.schema, principal)
            spec = request_spec({k: v for k, v in case.items() if k in _SPEC_KEYS})
            result = traversers[key].run(spec)
            results.append(_score(kg, case, name, result))
        except KgbuildError as exc:
            raise InputError(f"case {name!r}: {exc.message}", str(cases_path),
                             case.get("_line")) from None
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
