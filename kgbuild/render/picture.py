"""What a picture shows, read from a traversal result: nodes, edges, provenance, cut hubs.

The input is the JSON of ``kgbuild traverse --format json`` (``TraversalResult.to_dict()``),
also what :meth:`kgbuild.retrieve.browse.Browser.neighbourhood` returns. Pictures draw at most
:data:`MAX_NODES` nodes and :data:`MAX_EDGES` edges (in the result's order; the rest is
counted in ``left_out``). Node colours come from one fixed palette: the schema's node types in
name order take its colours in turn, a type the schema does not know one by its name's hash.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..errors import InputError
from ..io.text import decode_text, read_bytes

MAX_NODES = 400
MAX_EDGES = 800
MAX_RESULT_BYTES = 64 * 1024 * 1024  # a saved traversal result read by ``show --result``

# 12 colours that stay apart from each other and carry black text (light fills, dark borders)
PALETTE = [
    ("#cfe2f3", "#2f5f8a"), ("#fde2c4", "#a65c12"), ("#d5ecd0", "#3d7a33"),
    ("#f6d0d0", "#a33232"), ("#e2d6ef", "#62468c"), ("#ead8cc", "#7a4f36"),
    ("#f8d7ea", "#a23c7a"), ("#dcdcdc", "#555555"), ("#eef0c2", "#7c7f1c"),
    ("#cdeef2", "#1f7a86"), ("#fff1b8", "#8a6d00"), ("#d9e0f7", "#3a4d99"),
]


@dataclass
class Picture:
    """The drawable part of a traversal result."""

    nodes: list[dict]  # {id, label, type, hop, seed, answer, cut}
    edges: list[dict]  # {id, subject, predicate, object, assertions}
    title: str
    colours: dict[str, tuple[str, str]]  # node type -> (fill, border)
    left_out: dict[str, int] = field(default_factory=dict)  # nodes, edges not drawn
    abstain: str | None = None


def colours(types: Iterable[str], known: Iterable[str] = ()) -> dict[str, tuple[str, str]]:
    """Fill and border colour of each of ``types``: the ``known`` (schema) types in name order
    take the palette's colours in turn; any other type one chosen by its name's hash."""
    order = {t: i for i, t in enumerate(sorted(set(known)))}
    out = {}
    for t in sorted(set(types)):
        i = order[t] if t in order else int(hashlib.sha256(t.encode()).hexdigest(), 16)
        out[t] = PALETTE[i % len(PALETTE)]
    return out


def picture(result: dict, known_types: Iterable[str] = ()) -> Picture:
    """A :class:`Picture` of a traversal result dict (see the module docstring)."""
    nodes = result.get("nodes") or []
    edges = result.get("edges") or []
    cut: dict[str, int] = {}
    for c in ((result.get("truncated") or {}).get("cap") or []):
        cut[c["node"]] = cut.get(c["node"], 0) + int(c["edges"])
    answers = set(result.get("answers") or [])
    drawn, seen = [], set()
    for n in nodes:
        if n["id"] in seen:
            continue
        if len(drawn) == MAX_NODES:
            break
        seen.add(n["id"])
        drawn.append({"id": n["id"], "label": n.get("label") or n["id"],
                      "type": n.get("type") or "", "hop": int(n.get("hop") or 0),
                      "seed": bool(n.get("seed")),
                      "answer": n["id"] in answers, "cut": cut.get(n["id"], 0)})
    ids = {n["id"] for n in drawn}
    kept = [e for e in edges if e["subject"] in ids and e["object"] in ids][:MAX_EDGES]
    seeds = [s.get("label") or s["id"] for s in result.get("seeds") or []]
    title = "Neighbourhood of " + ", ".join(seeds) if seeds else "Traversal result"
    if (result.get("spec") or {}).get("path"):
        title = f"{', '.join(seeds)}: {result['spec']['path']}"
    abstain = result.get("abstain")
    return Picture(drawn, [{k: e.get(k) for k in ("id", "subject", "predicate", "object")}
                           | {"assertions": e.get("assertions") or []} for e in kept],
                   title, colours([n["type"] for n in drawn], known_types),
                   {"nodes": len({n["id"] for n in nodes}) - len(drawn),
                    "edges": len(edges) - len(kept)},
                   abstain.get("message") if isinstance(abstain, dict) else None)


def load_result(path: str | Path) -> dict:
    """A saved traversal result (``kgbuild traverse --format json``), every field a picture
    reads checked; raises :class:`InputError` naming the file (and line) when it is not one."""
    name = str(path)
    text = decode_text(read_bytes(path, MAX_RESULT_BYTES, name, "a traversal result"), name)

    def constant(word: str):
        raise ValueError(f"{word} is not a JSON number")

    try:
        data = json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}", name, exc.lineno) from None
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InputError(f"not JSON: {why}", name) from None
    problem = _problem(data)
    if problem:
        raise InputError(f"not a traversal result (kgbuild traverse --format json): {problem}",
                         name)
    return data


_TEXT, _OPT_TEXT = (str,), (str, type(None))


def _is(value: object, kinds: tuple) -> bool:
    return isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))


def _fields(item: object, what: str, required: dict, optional: dict) -> str | None:
    if not isinstance(item, dict):
        return f"{what} is not an object"
    for key, kinds in required.items():
        if not _is(item.get(key), kinds):
            return f"{what} needs '{key}'"
    for key, kinds in optional.items():
        if key in item and not _is(item[key], kinds):
            return f"{what}: '{key}' has the wrong type"
    return None


def _problem(data: object) -> str | None:
    """What makes ``data`` no traversal result a picture can draw, or None."""
    if not isinstance(data, dict):
        return "expected an object"
    lists = {k: data.get(k, []) for k in ("nodes", "edges", "answers", "seeds")}
    if not isinstance(data.get("nodes"), list) or not isinstance(data.get("edges"), list):
        return "expected 'nodes' and 'edges' lists"
    if any(not isinstance(v, list) for v in lists.values()):
        return "'answers' and 'seeds' must be lists"
    checks = [(n, "a node", {"id": _TEXT}, {"label": _OPT_TEXT, "type": _OPT_TEXT,
                                            "hop": (int, type(None)), "seed": (bool, type(None))})
              for n in lists["nodes"]]
    checks += [(s, "a seed", {"id": _TEXT}, {"label": _OPT_TEXT}) for s in lists["seeds"]]
    checks += [(e, "an edge", {"subject": _TEXT, "predicate": _TEXT, "object": _TEXT},
                {"id": _OPT_TEXT, "assertions": (list,)}) for e in lists["edges"]]
    checks += [(a, "an assertion", {}, {"source": _OPT_TEXT, "location": _OPT_TEXT,
                                        "evidence": _OPT_TEXT, "extractor": _OPT_TEXT,
                                        "passage": _OPT_TEXT, "qualifiers": (list,),
                                        "confidence": (int, float, type(None))})
               for e in lists["edges"] if isinstance(e, dict)
               for a in e.get("assertions") or []]
    truncated = data.get("truncated") or {}
    if not isinstance(truncated, dict) or not isinstance(truncated.get("cap") or [], list):
        return "'truncated.cap' must be a list"
    checks += [(c, "a truncated.cap item", {"node": _TEXT, "edges": (int,)}, {})
               for c in truncated.get("cap") or []]
    for check in checks:
        problem = _fields(*check)
        if problem:
            return problem
    if any(not isinstance(a, str) for a in lists["answers"]):
        return "'answers' must list IDs"
    if not isinstance(data.get("spec") or {}, dict) or not isinstance(
            (data.get("spec") or {}).get("path"), _OPT_TEXT):
        return "'spec.path' must be text"
    abstain = data.get("abstain")
    if abstain is not None and not (isinstance(abstain, dict)
                                    and isinstance(abstain.get("message"), str)):
        return "'abstain' must be null or have a 'message'"
    return None
