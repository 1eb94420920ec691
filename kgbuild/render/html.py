"""A traversal result as one self-contained HTML page: inline SVG, CSS and a little JS.

Nothing is fetched (no CDN, no fonts): the page works offline and from ``file://``. The layout
is computed here (:mod:`kgbuild.render.layout`), so the drawing is complete without
JavaScript; the script only adds details on click (every assertion's source, line and
evidence; ``page.html#e1`` opens with edge ``e1`` or node ``n1`` selected, any other fragment
with nothing: nodes and edges sit in Maps, no key reaches ``Object.prototype``) and
highlights a node's edges on hover. Without it, each node and edge still has a
tooltip (``<title>``) with its provenance. Same input, same bytes.
"""

from __future__ import annotations

import json
from html import escape
from typing import Callable, Iterable

from .layout import Box, layered, short
from .picture import Picture, picture

FIT_WIDTH = 2400  # a drawing up to this wide is scaled to the window; a wider one scrolls

_CSS = """
body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
color:#1d1d1f;background:#fafafa}
header{padding:12px 20px 8px;border-bottom:1px solid #ddd;background:#fff}
h1{font-size:18px;margin:0 0 4px}
header p{margin:0;color:#555}
.legend{display:flex;flex-wrap:wrap;gap:6px 14px;margin-top:8px;font-size:12px;color:#333}
.legend span{display:inline-flex;align-items:center;gap:5px}
.legend i{display:inline-block;width:14px;height:14px;border-radius:3px;border:1.5px solid}
main{padding:16px 20px}
#canvas{overflow:auto;background:#fff;border:1px solid #ddd;border-radius:6px}
#canvas svg{display:block;margin:0 auto}
aside{margin-top:12px;background:#fff;border:1px solid #ddd;border-radius:6px;padding:12px;
font-size:13px;word-wrap:break-word}
aside h2{font-size:15px;margin:0 0 6px}
aside ul{padding-left:18px;margin:6px 0}
aside code{background:#f2f2f2;padding:0 3px;border-radius:3px}
.node{cursor:pointer}
.node rect.box{stroke-width:1.6}
.node.seed rect.box{stroke-width:3.2}
.node rect.ring{fill:none;stroke:#1d1d1f;stroke-width:1.2}
.node .label{font-size:13px;font-weight:600;fill:#1d1d1f}
.node .type{font-size:11px;fill:#444}
.node .badge{font-size:11px;fill:#b3261e;font-weight:600}
.node.cut rect.box{stroke:#b3261e;stroke-dasharray:5 3}
.edge{cursor:pointer}
.edge path{fill:none;stroke:#6b6b6b;stroke-width:1.5}
.edge .name{font-size:12px;fill:#333;paint-order:stroke;stroke:#fff;stroke-width:4px;
stroke-linejoin:round}
.edge.on path,.edge:hover path{stroke:#0b57d0;stroke-width:2.6}
.edge.on .name,.edge:hover .name{fill:#0b57d0;font-weight:600}
.node.on rect.box{stroke:#0b57d0}
.note{fill:#b3261e;font-size:12px}
"""
SVG_CSS = _CSS[_CSS.index(".node{"):]  # the drawing's own rules (for a page of its own)

_JS = """
(function(){
var data=JSON.parse(document.getElementById('kg-data').textContent);
function table(o){var m=new Map();Object.keys(o).forEach(function(k){m.set(k,o[k]);});return m;}
var nodes=table(data.nodes),edges=table(data.edges);
var aside=document.getElementById('details');
function el(tag,text){var e=document.createElement(tag);
if(text!==undefined)e.textContent=text;return e;}
function sources(list){var ul=el('ul');list.forEach(function(a){var li=el('li');
li.appendChild(el('code',a.source+(a.location?' '+a.location:'')));
if(a.evidence){li.appendChild(el('div','\\u201c'+a.evidence+'\\u201d'));}
var meta=[a.extractor,a.confidence!==undefined&&a.confidence!==null?'confidence '+a.confidence:'']
.concat(a.qualifiers||[]).filter(Boolean).join(', ');if(meta)li.appendChild(el('div',meta));
ul.appendChild(li);});if(!list.length)ul.appendChild(el('li','no recorded source'));return ul;}
function show(key){aside.textContent='';var n=nodes.get(key),e=edges.get(key);
document.querySelectorAll('.on').forEach(function(x){x.classList.remove('on');});
if(n){aside.appendChild(el('h2',n.label));aside.appendChild(el('div',n.type+' \\u00b7 '+n.id));
var flags=[n.seed?'seed':'',n.answer?'answer':'',n.cut?n.cut+' edges cut by the hub cap':'']
.filter(Boolean).join(' \\u00b7 ');if(flags)aside.appendChild(el('div',flags));
var ul=el('ul');n.edges.forEach(function(k){var x=edges.get(k);
var li=el('li',x.subject_label+' \\u2014'+x.predicate+'\\u2192 '+x.object_label);
li.style.cursor='pointer';li.onclick=function(){show(k);};ul.appendChild(li);
document.getElementById(k).classList.add('on');});
aside.appendChild(el('h2','Edges'));aside.appendChild(ul);
document.getElementById(key).classList.add('on');}
else if(e){
aside.appendChild(el('h2',e.subject_label+' \\u2014'+e.predicate+'\\u2192 '+e.object_label));
aside.appendChild(el('div',e.subject+' \\u2192 '+e.object));aside.appendChild(el('h2','Sources'));
aside.appendChild(sources(e.assertions));document.getElementById(key).classList.add('on');}}
document.querySelectorAll('.node,.edge').forEach(function(g){
g.addEventListener('click',function(){show(g.id);});
g.addEventListener('keydown',function(ev){if(ev.key==='Enter'||ev.key===' ')show(g.id);});
if(g.classList.contains('node')){g.addEventListener('mouseenter',function(){
nodes.get(g.id).edges.forEach(function(k){document.getElementById(k).classList.add('on');});});
g.addEventListener('mouseleave',function(){nodes.get(g.id).edges.forEach(function(k){
document.getElementById(k).classList.remove('on');});});}});
var start='';try{start=decodeURIComponent(location.hash.slice(1));}catch(err){}
if(nodes.has(start)||edges.has(start))show(start);
document.body.setAttribute('data-rendered',String(nodes.size));
})();
"""


def _where(a: dict) -> str:
    text = f"{a.get('source', '')} {a.get('location', '')}".strip()
    return text + (f' "{a["evidence"]}"' if a.get("evidence") else "")


NAME_CHAR, NAME_H = 6.8, 14  # px per character and height of a 12 px edge name


def _free_spot(x: float, y: float, width: float, taken: list) -> float:
    """The baseline nearest ``y`` (in steps of a line, at most 4 up or down) where an edge name
    centred at ``x`` overlaps no box or name placed before; ``y`` itself when none is free.
    The spot found is added to ``taken``."""
    for dy in (0, -1, 1, -2, 2, -3, 3, -4, 4):
        top = y + dy * NAME_H - NAME_H + 3
        rect = (x - width / 2, top, x + width / 2, top + NAME_H)
        if not any(rect[0] < r[2] and r[0] < rect[2] and rect[1] < r[3] and r[1] < rect[3]
                   for r in taken):
            taken.append(rect)
            return y + dy * NAME_H
    return y


def _edge_geometry(s: Box, o: Box, lane: int, same_column: bool) -> tuple[str, float, float]:
    """SVG path from subject box to object box (arrow at the object) and its label point."""
    if s is o:  # a self-loop over the box
        x, y = s.x + s.w / 2, s.y
        return (f"M{x - 12:.1f},{y:.1f} C{x - 30:.1f},{y - 46:.1f} {x + 30:.1f},{y - 46:.1f} "
                f"{x + 12:.1f},{y:.1f}", x, y - 40 - 14 * lane)
    sy, oy = s.y + s.h / 2, o.y + o.h / 2
    if same_column:  # bow out to the right
        sx, ox = s.x + s.w, o.x + o.w
        bow = 50 + 18 * lane
        c1 = c2 = (max(sx, ox) + bow, 0.0)
        c1, c2 = (c1[0], sy), (c2[0], oy)
    else:
        forward = o.x > s.x
        sx, ox = (s.x + s.w, o.x) if forward else (s.x, o.x + o.w)
        dx = (ox - sx) / 2
        c1, c2 = (sx + dx, sy), (ox - dx, oy)
    mx = (sx + 3 * c1[0] + 3 * c2[0] + ox) / 8
    my = (sy + 3 * c1[1] + 3 * c2[1] + oy) / 8 - 4 - 15 * lane
    return (f"M{sx:.1f},{sy:.1f} C{c1[0]:.1f},{c1[1]:.1f} {c2[0]:.1f},{c2[1]:.1f} "
            f"{ox:.1f},{oy:.1f}", mx, my)


def _drawing(pic: Picture, href: Callable[[str], str] | None = None
             ) -> tuple[list[str], float, float, dict[str, str], dict[str, list[str]]]:
    """The SVG elements of a picture, its size, the nodes' keys and the edges touching each;
    with ``href``, each node's box is a link to ``href(node ID)``."""
    boxes, width, height = layered(pic.nodes, pic.edges)
    keys = {n["id"]: f"n{i}" for i, n in enumerate(pic.nodes, 1)}
    label = {n["id"]: n["label"] for n in pic.nodes}
    hop = {n["id"]: n["hop"] for n in pic.nodes}
    ekeys = [f"e{i}" for i in range(1, len(pic.edges) + 1)]
    touching: dict[str, list[str]] = {n["id"]: [] for n in pic.nodes}
    lanes: dict[frozenset, int] = {}
    taken = [(b.x, b.y, b.x + b.w, b.y + b.h) for b in boxes.values()]  # label obstacles
    parts = []
    for key, e in zip(ekeys, pic.edges):
        s, p, o = e["subject"], e["predicate"], e["object"]
        touching[s].append(key)
        if o != s:
            touching[o].append(key)
        pair = frozenset((s, o))
        lane = lanes[pair] = lanes.get(pair, -1) + 1
        d, mx, my = _edge_geometry(boxes[s], boxes[o], lane, hop[s] == hop[o])
        my = _free_spot(mx, my, NAME_CHAR * len(p) + 6, taken)
        tip = "\n".join([f"{label[s]} {p} {label[o]}"] + [_where(a) for a in e["assertions"]])
        parts.append(f'<g class="edge" id="{key}" tabindex="0" data-predicate="{escape(p)}">'
                     f'<title>{escape(tip)}</title><path d="{d}" marker-end="url(#arrow)"/>'
                     f'<text class="name" x="{mx:.1f}" y="{my:.1f}" text-anchor="middle">'
                     f'{escape(p)}</text></g>')
    for n in pic.nodes:
        b, (fill, border) = boxes[n["id"]], pic.colours[n["type"]]
        cls = " ".join(["node"] + [c for c in ("seed", "answer", "cut") if n[c]])
        tip = f"{n['label']} ({n['type']}, {n['id']})"
        if n["cut"]:
            tip += f"\nhub: {n['cut']} more edges cut by the hub cap"
        ring = (f'<rect class="ring" x="{b.x - 4}" y="{b.y - 4}" width="{b.w + 8}" '
                f'height="{b.h + 8}" rx="10"/>') if n["answer"] else ""
        badge = "" if not n["cut"] else (
            f'<text class="badge" x="{b.x + b.w / 2:.1f}" y="{b.y + b.h + 15:.1f}" '
            f'text-anchor="middle">hub: +{n["cut"]} edges not shown</text>')
        parts.append(
            f'<g class="{cls}" id="{keys[n["id"]]}" tabindex="0" data-id="{escape(n["id"])}">'
            + (f'<a href="{escape(href(n["id"]))}">' if href else "")
            + f'<title>{escape(tip)}</title>{ring}<rect class="box" x="{b.x}" y="{b.y}" '
            f'width="{b.w}" height="{b.h}" rx="7" fill="{fill}" stroke="{border}"/>'
            f'<text class="label" x="{b.x + b.w / 2:.1f}" y="{b.y + 19:.1f}" '
            f'text-anchor="middle">{escape(short(n["label"]))}</text>'
            f'<text class="type" x="{b.x + b.w / 2:.1f}" y="{b.y + 35:.1f}" '
            f'text-anchor="middle">{escape(n["type"])}</text>{badge}'
            + ("</a>" if href else "") + "</g>")
    if pic.abstain:
        parts.append(f'<text class="note" x="40" y="{height - 12:.1f}">'
                     f'{escape("No answer: " + pic.abstain)}</text>')
    return parts, width, height, keys, touching


def _svg_open(pic: Picture, width: float, height: float) -> str:
    fit = 'style="max-width:100%;height:auto" ' if width <= FIT_WIDTH else ""
    return (f'<svg id="graph" xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{height}" {fit}'
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(pic.title)}">'
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="11" '
            'markerHeight="11" markerUnits="userSpaceOnUse" orient="auto">'
            '<path d="M0,0 L10,5 L0,10 z" fill="#6b6b6b"/></marker></defs>\n')


def picture_svg(pic: Picture, href: Callable[[str], str] | None = None) -> str:
    """The picture as one inline ``<svg>`` element, no script (style it with
    :data:`SVG_CSS`); with ``href``, each node links to ``href(node ID)``."""
    parts, width, height, _, _ = _drawing(pic, href)
    return _svg_open(pic, width, height) + "\n".join(parts) + "\n</svg>"


def picture_html(pic: Picture) -> str:
    """The page for a :class:`~kgbuild.render.picture.Picture`."""
    parts, width, height, keys, touching = _drawing(pic)
    label = {n["id"]: n["label"] for n in pic.nodes}
    ekeys = [f"e{i}" for i in range(1, len(pic.edges) + 1)]
    data = {"nodes": {keys[n["id"]]: {**n, "edges": touching[n["id"]]} for n in pic.nodes},
            "edges": {k: {**e, "subject_label": label[e["subject"]],
                          "object_label": label[e["object"]]} for k, e in zip(ekeys, pic.edges)}}
    blob = json.dumps(data, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    blob = blob.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    legend = "".join(f'<span><i style="background:{f};border-color:{b}"></i>'
                     f'{escape(t or "?")}</span>' for t, (f, b) in pic.colours.items())
    legend += ('<span><i style="background:#fff;border:3px solid #555"></i>seed</span>'
               '<span><i style="background:#fff;border:4px double #1d1d1f"></i>answer</span>'
               '<span><i style="background:#fff;border:1.5px dashed #b3261e"></i>hub cut by the '
               'cap</span>')
    left = [f"{v} {k} not drawn" for k, v in pic.left_out.items() if v]
    answers = [n["label"] for n in pic.nodes if n["answer"]]
    summary = ((f"answers: {', '.join(answers)} · " if answers else "")
               + f"{len(pic.nodes)} nodes, {len(pic.edges)} edges"
               + (f" ({', '.join(left)})" if left else "")
               + " · arrows point in the stored direction · click a node or edge for its sources")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(pic.title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<header><h1>{escape(pic.title)}</h1><p>{escape(summary)}</p>"
        f'<div class="legend">{legend}</div></header>\n<main>\n<div id="canvas">'
        + _svg_open(pic, width, height) + "\n".join(parts)
        + '\n</svg></div>\n<aside id="details"><h2>Details</h2>Click a node or an edge to see '
        "its sources: file, line and the evidence quoted from it.</aside>\n</main>\n"
        f'<script type="application/json" id="kg-data">{blob}</script>\n'
        f"<script>{_JS}</script>\n</body>\n</html>\n")


def render_html(result: dict, known_types: Iterable[str] = ()) -> str:
    """A traversal result (``TraversalResult.to_dict()``, or the JSON of ``kgbuild traverse
    --format json``) as a self-contained HTML page; ``known_types`` (the schema's node types)
    fix the colours."""
    return picture_html(picture(result, known_types))
