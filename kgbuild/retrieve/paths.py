"""The schema's typed paths between two node types, for choosing a ``--path``.

A step leaves a node of type T along an edge type whose domain (walked ``out``) or range
(walked ``in``) is compatible with T (T itself, an ancestor or a descendant: a Component
may be a Service) and arrives at each type of the other end. A path of 1 to ``max_hops``
steps *connects* A to B when it starts at A and ends at a type compatible with B. Each
step is written as :mod:`kgbuild.retrieve.traverse` reads it: the stored name with
``:out``, or the inverse name with ``:out`` when walked against the stored direction
(``ownerOf:out`` == ``ownedBy:in``; ``name:in`` when the edge type has no inverse name).

Paths are listed shortest first, then by their ``--path`` text, at most ``limit``; the
total is counted without listing them all.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..errors import KgbuildError
from ..schema.model import Schema

MAX_TYPED_HOPS = 6
MAX_LISTED = 10_000


@dataclass(frozen=True)
class TypedStep:
    """One step: as written for ``--path``, its stored edge type and direction, the types."""

    step: str
    edge: str
    direction: str  # out: subject to object of the stored edge
    source: str
    target: str


@dataclass(frozen=True)
class TypedPath:
    steps: tuple[TypedStep, ...]

    @property
    def path(self) -> str:
        """The ``--path`` argument walking this typed path."""
        return "/".join(s.step for s in self.steps)

    @property
    def text(self) -> str:
        """``API -ownedBy-> Group <-ownedBy- Component``: stored edges with their direction."""
        out = self.steps[0].source
        for s in self.steps:
            out += (f" -{s.edge}-> " if s.direction == "out" else f" <-{s.edge}- ") + s.target
        return out

    def to_dict(self) -> dict:
        return {"path": self.path, "text": self.text, "hops": len(self.steps),
                "steps": [asdict(s) for s in self.steps]}


def schema_steps(schema: Schema, type_name: str) -> list[TypedStep]:
    """Every step a node of ``type_name`` can take, in ``--path`` text order."""
    type_name = schema.node_type(type_name).name
    near = schema.compatible_types(type_name)
    out = []
    for et in schema.edge_types.values():
        if near & set(et.domain):
            out += [TypedStep(f"{et.name}:out", et.name, "out", type_name, t) for t in et.range]
        if near & set(et.range):
            step = f"{et.inverse}:out" if et.inverse else f"{et.name}:in"
            out += [TypedStep(step, et.name, "in", type_name, t) for t in et.domain]
    return sorted(out, key=lambda s: (s.step, s.target))


def typed_paths(schema: Schema, source: str, target: str, max_hops: int = 3,
                limit: int = 50) -> tuple[list[TypedPath], int]:
    """Up to ``limit`` typed paths from ``source`` to ``target`` (shortest first) and how many
    there are with at most ``max_hops`` steps."""
    if not 1 <= max_hops <= MAX_TYPED_HOPS:
        raise KgbuildError(f"max_hops must be from 1 to {MAX_TYPED_HOPS}, got {max_hops!r}")
    if not 0 <= limit <= MAX_LISTED:
        raise KgbuildError(f"limit must be from 0 to {MAX_LISTED}, got {limit!r}")
    source, target = schema.node_type(source).name, schema.node_type(target).name
    ends = schema.compatible_types(target)
    steps = {t: schema_steps(schema, t) for t in schema.node_types}
    # ways[h][t]: paths of exactly h more steps from type t that end at the target
    ways: list[dict[str, int]] = [{t: int(t in ends) for t in schema.node_types}]
    for _ in range(max_hops):
        prev = ways[-1]
        ways.append({t: sum(prev[s.target] for s in steps[t]) for t in schema.node_types})
    total = sum(ways[h][source] for h in range(1, max_hops + 1))
    found: list[TypedPath] = []

    def walk(t: str, left: int, prefix: list[TypedStep]) -> None:
        if len(found) >= limit:
            return
        if left == 0:
            found.append(TypedPath(tuple(prefix)))
            return
        for s in steps[t]:
            if ways[left - 1][s.target]:
                prefix.append(s)
                walk(s.target, left - 1, prefix)
                prefix.pop()

    for hops in range(1, max_hops + 1):
        if ways[hops][source]:
            walk(source, hops, [])
    return found, total


def paths_report(schema: Schema, source: str, target: str, max_hops: int = 3,
                 limit: int = 50) -> dict:
    """:func:`typed_paths` as JSON-ready ``{from, to, max_hops, total, paths: [{path, text,
    hops, steps: [{step, edge, direction, source, target}]}], left_out}``."""
    found, total = typed_paths(schema, source, target, max_hops, limit)
    return {"from": schema.node_type(source).name, "to": schema.node_type(target).name,
            "max_hops": max_hops, "total": total, "paths": [p.to_dict() for p in found],
            "left_out": total - len(found)}


def render_paths(report: dict) -> str:
    """The report as text: one ``--path`` per line with its typed reading."""
    if not report["paths"]:
        return (f"no typed path from {report['from']} to {report['to']} in at most "
                f"{report['max_hops']} hops")
    width = max(len(p["path"]) for p in report["paths"])
    lines = [f"{report['total']} typed path{'s' if report['total'] != 1 else ''} from "
             f"{report['from']} to {report['to']} in at most {report['max_hops']} hops:"]
    lines += [f"  {p['path']:<{width}}  {p['text']}" for p in report["paths"]]
    if report["left_out"]:
        lines.append(f"... and {report['left_out']} more (raise --limit)")
    return "\n".join(lines)
