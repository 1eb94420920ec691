"""A layered layout: one column per hop from the seeds, left to right.

Columns are ordered to keep edges short and uncrossed by two barycentre sweeps (each node
moves to the mean row of its neighbours in the column before, then after); ties keep the
order of labels and IDs, so the same picture always gets the same layout.
"""

from __future__ import annotations

from dataclasses import dataclass

CHAR = 8.2  # px per character of a bold 13 px sans-serif label (DejaVu Sans, the widest)
MAX_LABEL = 32  # characters drawn inside a box; the full label is in the details
BOX_H, ROW_GAP, COL_GAP, MARGIN = 44, 30, 130, 30


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    w: float
    h: float


def short(label: str, limit: int = MAX_LABEL) -> str:
    return label if len(label) <= limit else label[:limit - 1] + "…"


def layered(nodes: list[dict], edges: list[dict]) -> tuple[dict[str, Box], float, float]:
    """Boxes for ``nodes`` (``id``, ``label``, ``type``, ``hop``) and the drawing's size."""
    columns: dict[int, list[str]] = {}
    for n in sorted(nodes, key=lambda n: (n["label"], n["id"])):
        columns.setdefault(n["hop"], []).append(n["id"])
    hops = sorted(columns)
    nbrs: dict[str, set[str]] = {n["id"]: set() for n in nodes}
    for e in edges:
        if e["subject"] != e["object"]:
            nbrs[e["subject"]].add(e["object"])
            nbrs[e["object"]].add(e["subject"])
    row = {i: r for h in hops for r, i in enumerate(columns[h])}

    def sweep(order: list[int]) -> None:
        for prev, h in zip(order, order[1:]):
            col = columns[h]
            before = {i for i in columns[prev]}

            def key(i: str, r: int) -> tuple[float, int]:
                near = [row[j] for j in nbrs[i] if j in before]
                return (sum(near) / len(near) if near else r, r)
            col.sort(key=lambda i: key(i, row[i]))
            row.update({i: r for r, i in enumerate(col)})

    sweep(hops)
    sweep(hops[::-1])
    sweep(hops)
    width = {n["id"]: max(90.0, CHAR * max(len(short(n["label"])), len(n["type"]) + 2) + 28)
             for n in nodes}
    tallest = max((len(c) for c in columns.values()), default=0)
    height = tallest * BOX_H + max(tallest - 1, 0) * ROW_GAP
    boxes: dict[str, Box] = {}
    x = MARGIN
    for h in hops:
        col = columns[h]
        w = max(width[i] for i in col)
        used = len(col) * BOX_H + (len(col) - 1) * ROW_GAP
        y = MARGIN + (height - used) / 2
        for i in col:
            boxes[i] = Box(round(x + (w - width[i]) / 2, 1), round(y, 1), round(width[i], 1), BOX_H)
            y += BOX_H + ROW_GAP
        x += w + COL_GAP
    return boxes, round(max(x - COL_GAP + MARGIN, 2 * MARGIN), 1), round(height + 2 * MARGIN, 1)
