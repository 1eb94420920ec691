"""A traversal result as Graphviz DOT, and as SVG through the ``dot`` program when installed.

DOT: one column per hop (``rank=same``), left to right, node types coloured as in the HTML
picture, edges in their stored direction labelled with their type, each edge's provenance
(source, line, evidence) as its tooltip, seeds drawn bold, answers double, cut hubs dashed
red with the number of edges the cap cut. ``dot`` runs with a time limit
(:data:`DOT_TIMEOUT`) and its output is bounded (:data:`MAX_SVG_BYTES`).
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Iterable

from ..errors import KgbuildError
from .layout import short
from .picture import Picture, picture

DOT_TIMEOUT = 60  # seconds
MAX_SVG_BYTES = 64 * 1024 * 1024


def _q(text: str) -> str:
    """A DOT double-quoted string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def picture_dot(pic: Picture) -> str:
    """DOT source for a :class:`~kgbuild.render.picture.Picture`."""
    keys = {n["id"]: f"n{i}" for i, n in enumerate(pic.nodes, 1)}
    label = {n["id"]: n["label"] for n in pic.nodes}
    hop = {n["id"]: n["hop"] for n in pic.nodes}
    lines = ["digraph kgbuild {", f"  label={_q(pic.title)}; labelloc=t; fontsize=16;",
             '  rankdir=LR; nodesep=0.35; ranksep=1.1; fontname="DejaVu Sans";',
             '  node [shape=box, style="rounded,filled", fontname="DejaVu Sans", fontsize=12];',
             '  edge [fontname="DejaVu Sans", fontsize=10, color="#6b6b6b"];']
    for n in pic.nodes:
        fill, border = pic.colours[n["type"]]
        attrs = {"label": f"{short(n['label'])}\n{n['type']}", "fillcolor": fill,
                 "color": border, "tooltip": f"{n['label']} ({n['type']}, {n['id']})"}
        styles = ["rounded", "filled"]
        if n["seed"]:
            styles.append("bold")
        if n["answer"]:
            attrs["peripheries"] = "2"
        if n["cut"]:
            styles.append("dashed")
            attrs["color"] = "#b3261e"
            attrs["xlabel"] = f"hub: +{n['cut']} edges not shown"
            attrs["tooltip"] += f"\nhub: {n['cut']} more edges cut by the hub cap"
        attrs["style"] = ",".join(styles)
        lines.append(f"  {keys[n['id']]} [" + ", ".join(f"{k}={_q(v)}" for k, v in attrs.items())
                     + "];")
    for column in sorted(set(hop.values())):
        same = " ".join(keys[n["id"]] for n in pic.nodes if n["hop"] == column)
        lines.append(f"  {{ rank=same; {same} }}")
    for e in pic.edges:
        s, p, o = e["subject"], e["predicate"], e["object"]
        where = [f"{a.get('source', '')} {a.get('location', '')}".strip()
                 + (f' "{a["evidence"]}"' if a.get("evidence") else "") for a in e["assertions"]]
        tip = "\n".join([f"{label[s]} {p} {label[o]}"] + where)
        attrs = f"label={_q(p)}, tooltip={_q(tip)}, labeltooltip={_q(tip)}"
        if hop[s] > hop[o]:  # laid out from the seeds outwards, the arrow still at the object
            lines.append(f"  {keys[o]} -> {keys[s]} [{attrs}, dir=back];")
        else:
            lines.append(f"  {keys[s]} -> {keys[o]} [{attrs}"
                         + (", constraint=false" if hop[s] == hop[o] else "") + "];")
    if pic.abstain:
        note = _q("No answer: " + pic.abstain)
        lines.append(f'  abstain [shape=plaintext, style="", label={note}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_dot(result: dict, known_types: Iterable[str] = ()) -> str:
    """A traversal result (``TraversalResult.to_dict()``) as Graphviz DOT source."""
    return picture_dot(picture(result, known_types))


def dot_program() -> str:
    """The path of Graphviz's ``dot`` on ``PATH``; raises :class:`KgbuildError`
    (``missing-tool``) when it is not installed."""
    program = shutil.which("dot")
    if not program:
        raise KgbuildError("SVG needs Graphviz's 'dot', which is not installed (Debian: apt-get "
                           "install graphviz); --format html needs nothing", code="missing-tool")
    return program


def render_svg(result: dict, known_types: Iterable[str] = (), dot: str | None = None) -> str:
    """A traversal result as SVG, laid out by Graphviz ``dot`` (``dot``: its path, else found
    on ``PATH``); raises :class:`KgbuildError` (``missing-tool``) when it is not installed,
    (``dot-failed``) when it fails or takes longer than :data:`DOT_TIMEOUT` seconds."""
    program = dot or dot_program()
    try:
        run = subprocess.run([program, "-Tsvg"], input=render_dot(result, known_types).encode(),
                             capture_output=True, timeout=DOT_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise KgbuildError(f"Graphviz 'dot' took longer than {DOT_TIMEOUT} s",
                           code="dot-failed") from None
    except OSError as exc:
        raise KgbuildError(f"cannot run Graphviz 'dot' ({program}): {exc.strerror or exc}",
                           code="missing-tool") from None
    if run.returncode != 0 or len(run.stdout) > MAX_SVG_BYTES:
        why = run.stderr.decode(errors="replace").strip().splitlines()[:1] or ["no output"]
        raise KgbuildError(f"Graphviz 'dot' failed (exit {run.returncode}): {why[0]}",
                           code="dot-failed")
    return run.stdout.decode("utf-8", errors="replace")
