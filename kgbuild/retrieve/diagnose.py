"""Why a ``--path`` walk found nothing: the failing step, what would match instead, how far it got.

The diagnosis walks the steps forward from the seeds without the hub cap (exactly) until a
step matches no edge from the nodes it starts at. For that step it reports the nodes,
how many edges the same name would match in the other direction (and that step written
with the inverse name), the edge types that do leave those nodes, and the nearest partial
walk (through the steps that did match, to the failing step's first node by ID). When every step matches but
no walk ends at a ``--type`` node, or only the hub cap cut the walks, it says that.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..store.adjacency import DIRECTIONS, AdjacencyIndex
from .walk import Walker

MAX_LISTED = 10  # nodes and alternative steps named in one diagnosis


def _written(schema, edge: str, dirs: tuple[int, ...], inverse: bool) -> str:
    """A step over stored ``edge`` in stored ``dirs``, written with its inverse name or not."""
    et = schema.edge_types[edge]
    name = et.inverse if inverse and et.inverse else edge
    flip = inverse and et.inverse
    d = {(0,): "out", (1,): "in", (0, 1): "both"}[tuple(sorted(1 - x for x in dirs) if flip else dirs)]
    return f"{name}:{d}"


def diagnose_path(walker: Walker, schema, seeds: Sequence[int], steps: Sequence,
                  lists: Callable, keep: Callable | None, label: Callable[[int], str]) -> dict:
    """The diagnosis of a path walk with no complete walk (see the module doc).

    ``steps``: parsed :class:`~kgbuild.retrieve.traverse.Step` objects; ``lists(edge, dirs)``
    the index lists of a stored edge type in stored directions; ``keep`` the end-node
    filter; ``label(node)`` a node's label.
    Returns ``{step, step_text, reason: no-edge|no-type|cap, from: [{id, label}], from_count,
    alternatives: [{step, same_as, edges}], leaving: [{step, edges}], partial: {steps, text,
    nodes} | None, message}``.
    """
    layer = np.unique(np.asarray(seeds, dtype=np.int32))
    parents: list[dict[int, tuple[int, int, int]]] = []
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        ent, _ = walker.expand(layer, lists(step.edge, step.dirs), None, keep if last else None)
        if not len(ent.eid):
            typed = last and keep is not None and len(
                walker.expand(layer, lists(step.edge, step.dirs), None)[0].eid)
            return _report(walker, schema, i, step, layer, parents, lists, label,
                           "no-type" if typed else "no-edge")
        first: dict[int, tuple[int, int, int]] = {}
        for o, n, e, d in zip(ent.owner.tolist(), ent.nbr.tolist(), ent.eid.tolist(),
                              ent.dir.tolist()):
            first.setdefault(n, (o, e, d))
        parents.append(first)
        layer = np.unique(ent.nbr)
    return {"step": None, "step_text": None, "reason": "cap", "from": [], "from_count": 0,
            "alternatives": [], "leaving": [], "partial": None,
            "message": "the hub cap cut every complete walk; walk without it (--no-cap) "
                       "or raise --hub-cap"}


def _report(walker, schema, i, step, layer, parents, lists, label, reason) -> dict:
    index = walker.index
    et = schema.edge_types[step.edge]
    inverse_written = step.text.split(":")[0] != step.edge
    names = [{"id": index.node_ids[n], "label": label(n)} for n in layer[:MAX_LISTED].tolist()]
    alternatives = []
    other = tuple(d for d in (0, 1) if d not in step.dirs)
    if other:
        n = len(walker.expand(layer, lists(step.edge, other), None)[0].eid)
        if n:
            same = _written(schema, step.edge, other, not inverse_written) if et.inverse else None
            alternatives.append({"step": _written(schema, step.edge, other, inverse_written),
                                 "same_as": same, "edges": n})
    leaving = leaving_edges(walker, schema, layer)
    partial = _partial(index, parents, layer, label) if parents else None
    where = ", ".join(x["label"] for x in names[:3]) + (
        f" and {len(layer) - 3} more" if len(layer) > 3 else "")
    if reason == "no-type":
        message = f"step {i + 1} ({step.text}) matched edges from {where} but none ends at the --type"
    else:
        message = f"step {i + 1} ({step.text}) matched no edge from {where}"
    for a in alternatives:
        message += f"; {a['step']}" + (f" (same as {a['same_as']})" if a["same_as"] else "") + \
                   f" would match {a['edges']} edge{'s' if a['edges'] != 1 else ''}"
    if not alternatives and leaving and reason == "no-edge":
        message += "; edges there: " + ", ".join(f"{x['step']} ({x['edges']})" for x in leaving[:5])
    if partial:
        message += f"; nearest partial walk: {partial['text']}"
    return {"step": i + 1, "step_text": step.text, "reason": reason, "from": names,
            "from_count": len(layer), "alternatives": alternatives, "leaving": leaving,
            "partial": partial, "message": message}


def leaving_edges(walker: Walker, schema, nodes) -> list[dict]:
    """The steps (``ownedBy:out``, inverse names for ``in``) with edges at ``nodes`` and how
    many, most first, at most :data:`MAX_LISTED`."""
    index = walker.index
    nodes = np.asarray(nodes, dtype=np.int32)
    code = {t: c for c, t in enumerate(index.edge_types)}
    leaving = []
    for edge in sorted(schema.edge_types):
        for d in (0, 1):
            if edge in code and (code[edge], d) in index.lists:
                n = int(walker.degree(nodes, [(code[edge], d)]).sum())
                if n:
                    leaving.append({"step": _written(schema, edge, (d,), d == 1), "edges": n})
    return sorted(leaving, key=lambda x: (-x["edges"], x["step"]))[:MAX_LISTED]


def _partial(index: AdjacencyIndex, parents, layer, label) -> dict:
    """A walk through the matched steps (each node reached by its best-ranked edge), ending at
    the failing step's first node."""
    node = int(layer[0])
    chain = []
    for first in reversed(parents):
        o, e, d = first[node]
        chain.append((o, e, d, node))
        node = o
    chain.reverse()
    text = label(chain[0][0])
    for _, e, d, n in chain:
        p = index.edge_types[index.etype[e]]
        text += (f" -{p}-> " if d == 0 else f" <-{p}- ") + label(n)
    return {"steps": len(chain), "text": text,
            "nodes": [index.node_ids[chain[0][0]]] + [index.node_ids[n] for *_, n in chain],
            "direction": [DIRECTIONS[d] for _, _, d, _ in chain]}
