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

:func:`render_prompt` prints the same pack for a prompt with each item once: the seeds, then
each relation sentence with its evidence attached as numbered citations (``Pricing SDK is
owned by Commerce Platform. [c3: catalog/pricing-sdk.yaml:11 "owner: commerce-platform"]``),
then the passages LLM evidence was read in, numbered in the same sequence.
"""

from __future__ import annotations

import re
import textwrap

from ..graph.access import WITHHELD
from ..graph.model import Passage
from ..store.readmodel import GraphModel


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


def context_pack(model: GraphModel, passages: dict[str, Passage], seeds: list[dict],
                 nodes: list[dict], edges: list[dict], abstain: dict | None,
                 max_chars: int | None) -> dict:
    """Build the pack for a traversal (``passages``: those the edges' assertions cite);
    returns ``{"items", "chars", "abstain", "dropped"}``."""
    if abstain:
        return {"items": [], "chars": 0, "abstain": abstain["message"], "dropped": 0}
    candidates: list[dict] = []
    for s in seeds:
        node = model.node(s["id"])
        kind = s["type"] or "node"
        text = f"{s['label']} is {'an' if kind[0] in 'AEIOU' else 'a'} {kind} (ID {s['id']})."
        if node and node.attributes.get("description"):
            text += " " + " ".join(sorted(node.attributes["description"]))
        docs = sorted(d for d in (node.defined_in if node else ()) if d in model.documents)
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
            p = passages.get(a.get("passage") or "")
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


def _where(source: dict) -> str:
    """``file:11`` for a line, ``file#/json/pointer``, ``file chars 3-9``; the file alone."""
    loc = source["location"]
    if loc.startswith("line "):
        return f"{source['source']}:{loc[5:]}"
    if loc.startswith("/"):
        return f"{source['source']}#{loc}"
    return f"{source['source']} {loc}".strip()


def render_prompt(result) -> str:
    """A traversal's context pack as prompt text, each item once (see the module doc)."""
    pack = result.context
    if pack["abstain"]:
        return f"No answer in the graph: {pack['abstain']}."
    items = pack["items"]
    evidence: dict[tuple, list[dict]] = {}
    passages = {i["id"]: i for i in items if i["kind"] == "passage"}
    for i in items:
        if i["kind"] == "evidence":
            evidence.setdefault(tuple(i["edge"]), []).append(i)
    related = {tuple(i["edge"]) for i in items if i["kind"] == "relation"}
    number: dict[int, str] = {}

    def cite(item: dict) -> str:
        number.setdefault(id(item), f"c{len(number) + 1}")
        return number[id(item)]

    def quote(ev: dict) -> str:
        text = f"[{cite(ev)}: {_where(ev['sources'][0])} {ev['text']}"
        if ev.get("passage") in passages:
            text += f", in {cite(passages[ev['passage']])}"
        return text + "]"

    lines = []
    for i in items:
        if i["kind"] == "seed":
            docs = ", ".join(s["source"] for s in i["sources"])
            lines.append(i["text"] + (f" [{docs}]" if docs else ""))
        elif i["kind"] == "relation":
            cites = [quote(ev) for ev in evidence.get(tuple(i["edge"]), [])]
            if not cites:  # evidence withheld or over the budget: the sources still count
                cites = ["[" + "; ".join(_where(s) for s in i["sources"]) + "]"] if i["sources"] else []
            lines.append(" ".join([i["text"], *cites]))
    label = {n["id"]: n["label"] for n in result.nodes}
    for edge, evs in evidence.items():  # evidence whose relation item the budget left out
        if edge not in related:
            s, p, o = edge
            lines.append(" ".join([sentence(label.get(s, s), p, label.get(o, o)),
                                   *(quote(ev) for ev in evs)]))
    for p in passages.values():
        if id(p) not in number:  # a passage only an omitted citation pointed at
            cite(p)
    for p in sorted(passages.values(), key=lambda p: int(number[id(p)][1:])):
        lines.append(f"[{number[id(p)]}: {p['id']}] {p['text']}")
    return "\n".join(lines)


WRAP_AFTER = 5  # answer lists longer than this are printed one answer per line
WIDTH = 100


def render_result(result) -> str:
    """A :class:`~kgbuild.retrieve.traverse.TraversalResult` as text for people."""
    lines = []
    known = {n["id"]: n["label"] for n in result.nodes}
    for s in result.seeds:
        lines.append(f"seed: {s['label']} ({s['type']}, {s['id']}) via {s['via']}"
                     + (f" {s['mention']!r}" if s["via"] != "id" else ""))
    for u in result.unresolved:
        cands = ", ".join(f"{c['label']} ({c['id']})" for c in u["candidates"])
        what = repr(u["mention"]) if u["via"] == "question" else \
            f"{u['via']} seed #{u['index'] + 1}" + (f" {u['mention']!r}" if "mention" in u else "")
        lines.append(f"unresolved: {what} {u['status']}" + (
            f": did you mean {cands}?" if cands and u["status"] == "unknown" else
            f": {cands}" if cands else ""))
    if result.abstain:
        lines.append(f"ABSTAIN ({result.abstain['reason']}): {result.abstain['message']}")
    if result.answers:
        label = {**result.labels, **known}
        names = [f"{label.get(a, a)} ({a})" for a in result.answers]
        if len(names) > WRAP_AFTER:
            lines.append(f"answers ({len(names)}):")
            lines.extend(textwrap.fill(x, WIDTH, initial_indent="  ", subsequent_indent="    ",
                                       break_long_words=False, break_on_hyphens=False)
                         for x in names)
        else:
            lines.append(textwrap.fill("answers: " + ", ".join(names), WIDTH, subsequent_indent="  ",
                                       break_long_words=False, break_on_hyphens=False))
    if result.paths:
        lines.append("paths:")
        lines.extend(f"  {p['text']}" for p in result.paths)
    if result.edges:
        lines.append(f"{len(result.nodes)} nodes, {len(result.edges)} edges")
    t = result.truncated
    for c in t["cap"]:
        at = f"{known[c['node']]} ({c['node']})" if c["node"] in known else c["node"]
        lines.append(f"cap: {c['edges']} more edges at {at} (hop {c['hop']}) not walked")
    for key in ("nodes", "edges", "paths", "context_items"):
        if t[key]:
            lines.append(f"budget: {t[key]} {key.replace('_', ' ')} left out")
    lines.append("context:")
    lines.extend("  " + x for x in render_context(result.context).splitlines())
    return "\n".join(lines)
