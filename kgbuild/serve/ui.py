"""The browsable HTML pages of ``kgbuild serve`` (under ``/ui``): server-rendered, no script,
nothing fetched from elsewhere (the style is inline).

Every page has a search box over names and aliases and a link to the query form. An entity
page shows the node's type, label, aliases, attributes and documents, its edges both ways
(edge type, the other end, every assertion's evidence, file and line, extractor and
confidence) and a picture of its neighbourhood. The query form posts to ``/sparql``, which
answers a browser with :func:`results_page`. Every text from the graph is escaped.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from ..graph.model import id_from_iri, parse_literal
from ..render.html import SVG_CSS
from ..schema.namespaces import ID_BASE
from ..store.query import QueryResult

EXAMPLE_QUERY = ("SELECT ?service ?label WHERE {\n  ?service a sw:Service ;\n"
                 "           rdfs:label ?label .\n} ORDER BY ?label LIMIT 50")

_CSS = """
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
color:#1d1d1f;background:#fafafa}
header{display:flex;flex-wrap:wrap;align-items:center;gap:10px 24px;padding:10px 20px;
background:#fff;border-bottom:1px solid #ddd}
header a.home{font-weight:700;font-size:17px;color:#1d1d1f;text-decoration:none}
header form{display:flex;gap:6px}
input[type=search]{width:22em;padding:5px 8px;border:1px solid #bbb;border-radius:5px;font:inherit}
button{padding:5px 12px;border:1px solid #0b57d0;background:#0b57d0;color:#fff;border-radius:5px;
font:inherit;cursor:pointer}
main{padding:14px 20px;max-width:1200px}
h1{font-size:21px;margin:4px 0 2px}
h2{font-size:16px;margin:20px 0 6px}
.sub{color:#555;margin:0 0 10px}
a{color:#0b57d0}
table{border-collapse:collapse;background:#fff;margin:4px 0 10px}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f2f2f2;font-weight:600}
td.ev{color:#333;font-size:13px}
code{background:#f2f2f2;padding:0 3px;border-radius:3px;font-size:13px}
textarea{width:100%;max-width:900px;height:13em;font:13px/1.4 ui-monospace,"DejaVu Sans Mono",
monospace;padding:6px;border:1px solid #bbb;border-radius:5px}
.picture{background:#fff;border:1px solid #ddd;border-radius:6px;overflow:auto;padding:6px}
.note{color:#b3261e}
.muted{color:#666}
ul.hits li{margin:3px 0}
"""


def node_href(node_id: str) -> str:
    """The entity page of a node."""
    return "/ui/node?id=" + quote(node_id, safe="")


def page(title: str, body: str, query: str = "") -> str:
    """A whole page: header (home, search box, query form link), ``body`` (already HTML)."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)} · kgbuild</title>\n<style>{_CSS}{SVG_CSS}</style>\n"
        "</head>\n<body>\n<header><a class=\"home\" href=\"/ui\">kgbuild</a>"
        '<form method="get" action="/ui/search" role="search">'
        f'<input type="search" name="q" value="{escape(query)}" '
        'placeholder="Search names and aliases" aria-label="Search names and aliases">'
        '<button type="submit">Search</button></form>'
        '<a href="/ui/query">SPARQL query</a></header>\n'
        f"<main>\n{body}\n</main>\n</body>\n</html>\n")


def _node_link(n: dict) -> str:
    return (f'<a href="{escape(node_href(n["id"]))}">{escape(n["label"])}</a> '
            f'<span class="muted">{escape(n["type"])} · <code>{escape(n["id"])}</code></span>')


def home_page(stats: dict) -> str:
    """Counts of the visible graph, each node type a link to its listing."""
    rows = "".join(f'<tr><td><a href="/ui/nodes?type={escape(quote(t))}">{escape(t)}</a></td>'
                   f"<td>{n:,}</td></tr>" for t, n in stats["nodes_by_type"].items())
    edges = "".join(f"<tr><td>{escape(t)}</td><td>{n:,}</td></tr>"
                    for t, n in stats["edges_by_type"].items())
    body = (f"<h1>The graph</h1><p class=\"sub\">{stats['nodes']:,} entities, "
            f"{stats['edges']:,} edges from {stats['documents']:,} documents</p>"
            f"<h2>Entities by type</h2><table><tr><th>type</th><th>entities</th></tr>{rows}"
            f"</table><h2>Edges by type</h2><table><tr><th>edge</th><th>edges</th></tr>{edges}"
            "</table>")
    return page("The graph", body)


def listing_page(listing: dict) -> str:
    """The nodes of one type (``Browser.nodes``)."""
    items = "".join(f"<li>{_node_link(n)} <span class=\"muted\">degree {n['degree']}</span>"
                    f"</li>" for n in listing["nodes"])
    more = (f'<p class="muted">{listing["truncated"]:,} more not listed</p>'
            if listing["truncated"] else "")
    title = listing["type"] or "Entities"
    return page(title, f"<h1>{escape(title)}</h1><p class=\"sub\">{listing['total']:,} "
                       f"entities</p><ul class=\"hits\">{items}</ul>{more}")


def search_page(query: str, hits: list[dict]) -> str:
    """The nodes whose names or aliases match ``query``."""
    if not query:
        body = "<h1>Search</h1><p>Type a name, an alias or an ID.</p>"
    elif not hits:
        body = f"<h1>Search</h1><p>Nothing visible is named “{escape(query)}”.</p>"
    else:
        items = "".join(f"<li>{_node_link(h)}"
                        + (f' <span class="muted">({escape(h["why"])})</span>' if h.get("why")
                           else "") + "</li>" for h in hits)
        body = (f"<h1>Search</h1><p class=\"sub\">{len(hits)} entities for "
                f"“{escape(query)}”</p><ul class=\"hits\">{items}</ul>")
    return page(f"Search {query}" if query else "Search", body, query)


def _assertions(assertions: list[dict]) -> str:
    out = []
    for a in assertions:
        location = a.get("location") or ""
        where = a.get("source", "") + (f":{location[5:]}" if location.startswith("line ") else
                                       f" {location}" if location else "")
        meta = ", ".join(x for x in (a.get("extractor", ""),
                                     f"confidence {a['confidence']:g}"
                                     if isinstance(a.get("confidence"), (int, float)) else "",
                                     *a.get("qualifiers", [])) if x)
        evidence = f"“{escape(a['evidence'])}”<br>" if a.get("evidence") else ""
        out.append(f"{evidence}<code>{escape(where)}</code> <span class=\"muted\">"
                   f"{escape(meta)}</span>")
    return "<br>".join(out) or '<span class="muted">no recorded source</span>'


def _edge_rows(edges: list[dict], direction: str) -> str:
    rows = "".join(f"<tr><td>{escape(e['name'])}</td><td>{_node_link(e['node'])}</td>"
                   f'<td class="ev">{_assertions(e["assertions"])}</td></tr>' for e in edges)
    head = "other end" if direction == "out" else "from"
    return (f"<table><tr><th>edge</th><th>{head}</th><th>evidence · source:line · extractor, "
            f"confidence</th></tr>{rows}</table>")


def node_page(node: dict, picture: str | None, picture_note: str = "") -> str:
    """An entity page from ``Browser.node``'s summary and an inline SVG of the neighbourhood."""
    attrs = "".join(f"<tr><th>{escape(k)}</th><td>{escape(', '.join(v))}</td></tr>"
                    for k, v in node["attributes"].items())
    aliases = ", ".join(escape(a) for a in node["aliases"]) or '<span class="muted">none</span>'
    docs = "".join(f"<li><code>{escape(d)}</code></li>" for d in node["defined_in"])
    parts = [f"<h1>{escape(node['label'])}</h1>",
             f'<p class="sub">{escape(node["type"])} · <code>{escape(node["id"])}</code></p>',
             f"<p><b>Names:</b> {escape(node['label'])}; <b>aliases:</b> {aliases}</p>"]
    if attrs:
        parts.append(f"<h2>Attributes</h2><table>{attrs}</table>")
    if docs:
        parts.append(f"<h2>Defined in</h2><ul>{docs}</ul>")
    for key, title in (("out", "Edges out"), ("in", "Edges in")):
        counts = ", ".join(f"{escape(p)} {n}" for p, n in node[f"{key}_counts"].items())
        parts.append(f"<h2>{title}</h2>")
        if node[key]:
            parts.append(f'<p class="sub">{counts}</p>' + _edge_rows(node[key], key))
        else:
            parts.append('<p class="muted">none</p>')
        if node["truncated"].get(key):
            parts.append(f'<p class="muted">{node["truncated"][key]:,} more not listed</p>')
    parts.append("<h2>Neighbourhood</h2>")
    if picture:
        parts.append(f'<div class="picture">{picture}</div>')
    if picture_note:
        parts.append(f'<p class="muted">{escape(picture_note)}</p>')
    return page(node["label"], "\n".join(parts))


def query_page(query: str = EXAMPLE_QUERY, answer: str = "") -> str:
    """The query form (posts to ``/sparql``), and the answer below it when there is one."""
    body = ("<h1>SPARQL query</h1><p class=\"sub\">SELECT, ASK, CONSTRUCT or DESCRIBE over "
            "what you may see; the schema's prefixes (<code>sw:</code>, <code>kg:</code>, "
            "<code>rdfs:</code> …) are declared. Read-only.</p>"
            '<form method="post" action="/sparql" id="query-form">'
            f'<textarea name="query" aria-label="SPARQL query">{escape(query)}</textarea>'
            '<p><button type="submit">Run query</button></p></form>' + answer)
    return page("SPARQL query", body)


def _cell(term: str | None) -> str:
    if term is None:
        return ""
    if term.startswith("<"):
        iri = term[1:-1]
        if iri.startswith(ID_BASE):
            return (f'<a href="{escape(node_href(id_from_iri(iri)))}">'
                    f"{escape(id_from_iri(iri))}</a>")
        return f"<code>{escape(iri)}</code>"
    if term.startswith("_:"):
        return f"<code>{escape(term)}</code>"
    value, _, lang = parse_literal(term)
    return escape(value) + (f' <span class="muted">@{escape(lang)}</span>' if lang else "")


def results_page(query: str, result: QueryResult) -> str:
    """The query form with ``result`` as a table (an entity's IRI links to its page)."""
    if result.kind == "ask":
        table = f'<p id="answer">ASK: <b>{"true" if result.boolean else "false"}</b></p>'
    else:
        head = "".join(f"<th>{escape(v)}</th>" for v in result.variables)
        rows = "".join("<tr>" + "".join(f"<td>{_cell(t)}</td>" for t in row) + "</tr>"
                       for row in result.rows)
        table = (f'<p class="sub">{len(result.rows):,} row(s)'
                 + (" (truncated at the server's row limit)" if result.truncated else "")
                 + f'</p><table id="answer"><tr>{head}</tr>{rows}</table>')
    return query_page(query, "<h2>Answer</h2>" + table)


def error_page(status: int, message: str) -> str:
    """A refused request, for a browser."""
    return page(f"Error {status}", f"<h1>Error {status}</h1><p class=\"note\">"
                                   f"{escape(message)}</p>")
