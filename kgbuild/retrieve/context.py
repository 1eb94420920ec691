"""The context pack handed to a generator, and the text rendering of a traversal.

A pack lists passages, each with the sources it comes from, in this order: **seed** hits
(the seed entity, its description and where it is defined), then **evidence** (the quoted
source text of every assertion behind a reported edge, in walk order), then the **passage**
(text chunk) behind each assertion an LLM read from prose, under its chunk ID
(``[docs/design.md#c3] ...``), then **relation** sentences ("Checkout Service depends on
Pricing SDK.") in each edge's stored direction.
Evidence withheld from the principal (it names a hidden entity, see
:func:`kgbuild.graph.access.visible_graph`) gives no passage; its relation sentence stays.
Passages are added in that order until ``max_chars`` (counted on :func:`render_context`
lines) would be exceeded; later ones are dropped and counted. An abstaining traversal gets
no passages, only its abstain note.
"""

from __future__ import annotations

import re

from ..graph.access import WITHHELD
from ..graph.model import KnowledgeGraph


def phrase(predicate: str) -> str:
    """An edge type as a verb phrase: ``dependsOn`` -> ``depends on``, ``ownedBy`` -> ``is owned by``."""
    words = [w.lower() if w.lower() != "api" else "API"
             for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", predicate)]
    if not words[0].endswith("s"):
        words.insert(0, "is")
    return " ".join(words)


def sentence(subject: str, predicate: str, obj: str) -> str:
    return f"{subject} {phrase(predicate)} {obj}."


def _line(item: dict) -> str:
    where = "; ".join(f"{s['source']} {s['location']}".strip() for s in item["sources"])
    if item.get("passage"):  # evidence an LLM read: the passage it was read in is cited too
        where += f", in [{item['passage']}]"
    return f"[{item['id']}] {item['text']}" + (f" ({where})" if where else "")


def context_pack(view: KnowledgeGraph, seeds: list[dict], nodes: list[dict], edges: list[dict],
                 abstain: dict | None, max_chars: int | None) -> dict:
    """Build the pack for a traversal; returns ``{"items", "chars", "abstain", "dropped"}``."""
    if abstain:
        return {"items": [], "chars": 0, "abstain": abstain["message"], "dropped": 0}
    candidates: list[dict] = []
    for s in seeds:
        node = view.nodes.get(s["id"])
        kind = s["type"] or "node"
        text = f"{s['label']} is {'an' if kind[0] in 'AEIOU' else 'a'} {kind} (ID {s['id']})."
        if node and node.attributes.get("description"):
            text += " " + " ".join(sorted(node.attributes["description"]))
        docs = sorted(d for d in (node.defined_in if node else ()) if d in view.documents)
        candidates.append({"kind": "seed", "node": s["id"], "text": text,
                           "sources": [{"source": d, "location": ""} for d in docs]})
    label = {n["id"]: n["label"] for n in nodes}
    seen = set()
    for e in edges:
        for a in e["assertions"]:
            key = (a["source"], a["location"], a["evidence"])
            if a["evidence"] and a["evidence"] != WITHHELD and key not in seen:
                seen.add(key)
                candidates.append({"kind": "evidence", "edge": [e["subject"], e["predicate"], e["object"]],
                                   "text": f'"{" ".join(a["evidence"].split())}"',
                                   "sources": [{"source": a["source"], "location": a["location"]}],
                                   **({"passage": a["passage"]} if a.get("passage") else {})})
    cited = set()
    for e in edges:
        for a in e["assertions"]:
            p = view.passages.get(a.get("passage") or "")
            if p is not None and p.id not in cited:
                cited.add(p.id)
                candidates.append({"kind": "passage", "id": p.id,
                                   "edge": [e["subject"], e["predicate"], e["object"]],
                                   "text": " ".join(p.text.split()),
                                   "sources": [{"source": p.document,
                                                "location": f"chars {p.start}-{p.end}"}]})
    for e in edges:
        candidates.append({
            "kind": "relation", "edge": [e["subject"], e["predicate"], e["object"]],
            "text": sentence(label[e["subject"]], e["predicate"], label[e["object"]]),
            "sources": sorted({(a["source"], a["location"]): {"source": a["source"],
                                                             "location": a["location"]}
                               for a in e["assertions"]}.values(),
                              key=lambda s: (s["source"], s["location"]))})
    items, chars = [], 0
    for item in candidates:
        item = {"id": f"c{len(items) + 1}", **item}
        size = len(_line(item)) + 1
        if max_chars is not None and chars + size > max_chars:
            break
        items.append(item)
        chars += size
    return {"items": items, "chars": chars, "abstain": None, "dropped": len(candidates) - len(items)}


def render_context(pack: dict) -> str:
    """The pack as prompt text: one passage per line with its sources, or the abstain note."""
    if pack["abstain"]:
        return f"No answer in the graph: {pack['abstain']}."
    return "\n".join(_line(item) for item in pack["items"])


def render_result(result) -> str:
    """A :class:`~kgbuild.traverse.TraversalResult` as text for people."""
    lines = []
    for s in result.seeds:
        lines.append(f"seed: {s['label']} ({s['type']}, {s['id']}) via {s['via']}"
                     + (f" {s['mention']!r}" if s["via"] != "id" else ""))
    for u in result.unresolved:
        cands = ", ".join(f"{c['label']} ({c['id']})" for c in u["candidates"])
        what = repr(u["mention"]) if "mention" in u else f"{u['via']} seed #{u['index'] + 1}"
        lines.append(f"unresolved: {what} {u['status']}" + (f": {cands}" if cands else ""))
    if result.abstain:
        lines.append(f"ABSTAIN ({result.abstain['reason']}): {result.abstain['message']}")
    if result.answers:
        label = {n["id"]: n["label"] for n in result.nodes}
        lines.append("answers: " + ", ".join(f"{label.get(a, a)} ({a})" for a in result.answers))
    if result.paths:
        lines.append("paths:")
        lines.extend(f"  {p['text']}" for p in result.paths)
    if result.edges:
        lines.append(f"{len(result.nodes)} nodes, {len(result.edges)} edges")
    t = result.truncated
    for c in t["cap"]:
        lines.append(f"cap: {c['edges']} more edges at {c['node']} (hop {c['hop']}) not walked")
    for key in ("nodes", "edges", "paths", "context_items"):
        if t[key]:
            lines.append(f"budget: {t[key]} {key.replace('_', ' ')} left out")
    lines.append("context:")
    lines.extend("  " + x for x in render_context(result.context).splitlines())
    return "\n".join(lines)
