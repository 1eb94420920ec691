"""The routes that speak the standards: ``/sparql`` (the SPARQL 1.1 Protocol's query
operation) and the HTML pages under ``/ui`` (:mod:`kgbuild.serve.ui`).

Both answer as the caller's principal. A query runs where ``kgbuild query`` runs it
(:func:`~kgbuild.store.query.query_store`: a child process, read-only, killed at
``limits.query_timeout``, at most ``limits.max_rows`` rows): over the store itself for a
principal who sees all of it, else over the store of their view
(:meth:`~kgbuild.serve.live.Generation.sparql_store`), so a query never sees a hidden triple.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..errors import KgbuildError
from ..graph.access import Principal
from ..render.html import picture_svg
from ..render.picture import picture
from ..retrieve.spec import MAX_NAME_CHARS
from ..schema.model import Schema
from ..schema.namespaces import prefixes
from ..store.query import query_store
from . import ui
from .config import Limits
from .live import LiveIndex
from .sparql import answer_type, check_accept, content_type, negotiate, query_text, write_result
from .spec import ApiError

QUERY_GRACE = 5.0  # seconds past a query's deadline for its process to be killed and reaped
MAX_HITS = 50  # search results listed
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")  # no script runs, whatever a page holds


@dataclass
class Context:
    """What the routes share with the rest of the app."""

    live: LiveIndex
    schema: Schema
    limits: Limits
    principal: Callable[[Request], Principal]
    work: Callable  # (call, pool=..., timeout=..., what=...) -> awaitable result
    queries: object  # the pool of SPARQL queries
    read_body: Callable


def wants_html(request: Request) -> bool:
    """Whether a refusal goes to a browser: a page under ``/ui``, or ``/sparql`` asked for
    HTML before JSON."""
    path = request.url.path
    return path == "/ui" or path.startswith("/ui/") or (
        path == "/sparql" and negotiate(request.headers.get("accept"),
                                        ["application/json", "text/html"]) == "text/html")


def html(text: str, status: int = 200) -> HTMLResponse:
    response = HTMLResponse(text, status)
    response.headers["content-security-policy"] = CSP
    return response


def routes(ctx: Context) -> list[Route]:
    """``/sparql`` and the ``/ui`` pages."""
    live, schema, limits = ctx.live, ctx.schema, ctx.limits
    declared = prefixes(schema)

    async def sparql(request: Request):
        who = ctx.principal(request)
        accept = request.headers.get("accept")
        check_accept(accept)
        body = b""
        if request.method == "POST":
            body = await ctx.read_body(request, limits.max_body_bytes, limits.body_timeout)
        text = query_text(request.method, request.headers.get("content-type"),
                          list(request.query_params.multi_items()), body)
        if len(text) > limits.max_query_chars:
            raise ApiError(400, f"a query has at most {limits.max_query_chars:,} characters",
                           "usage")
        snap = live.current
        path = live.path if who.everyone else await ctx.work(
            lambda: snap.sparql_store(who), what="view of the store")
        deadline = time.monotonic() + limits.query_timeout  # (waiting for a turn included)

        def run() -> Response:
            result = query_store(path, schema, text, limit=limits.max_rows,
                                 timeout=max(deadline - time.monotonic(), 0.01))
            media = answer_type(accept, result.kind)
            if media is None:
                raise ApiError(406, f"a {result.kind.upper()} result is not served in any of "
                                    f"the accepted types", "not-acceptable")
            if media == "text/html":
                out = html(ui.results_page(text, result))
            else:
                out = Response(write_result(result, media, declared),
                               media_type=content_type(media))
            if path != live.path:  # (the store itself is read at its newest)
                out.headers["x-kgbuild-generation"] = snap.generation
            if result.truncated:
                out.headers["x-kgbuild-truncated"] = str(limits.max_rows)
            return out

        return await ctx.work(run, ctx.queries, limits.query_timeout + QUERY_GRACE, "query")

    def view(request: Request):
        return live.current.view(ctx.principal(request))

    def param(request: Request, name: str) -> str:
        value = request.query_params.get(name, "")
        if len(value) > MAX_NAME_CHARS:
            raise ApiError(400, f"{name} has at most {MAX_NAME_CHARS:,} characters", "usage")
        return value

    async def home(request: Request):
        v = view(request)
        return html(await ctx.work(lambda: ui.home_page(counts(v))))

    async def nodes(request: Request):
        v, type_name = view(request), param(request, "type") or None
        return html(await ctx.work(lambda: ui.listing_page(v.browser.nodes(type_name, 500))))

    async def search(request: Request):
        v, q = view(request), param(request, "q").strip()
        return html(await ctx.work(lambda: ui.search_page(q, find(v, q) if q else [])))

    async def node(request: Request):
        v, node_id = view(request), param(request, "id")

        def render() -> str:
            try:
                summary = v.browser.node(node_id, max_edges=100)
            except KgbuildError as exc:
                if exc.code == "unknown-node":
                    raise ApiError(404, str(exc), exc.code) from None
                raise
            around = v.browser.neighbourhood(summary["id"], hops=1, cap=12, max_nodes=30,
                                             max_edges=40)
            svg = picture_svg(picture(around, schema.node_types), href=ui.node_href)
            left = around.get("truncated") or {}
            note = ("the nearest neighbours only: hubs are cut at 12 edges"
                    if any(left.values()) else "")
            return ui.node_page(summary, svg, note)

        return html(await ctx.work(render))

    async def query_form(request: Request):
        ctx.principal(request)  # (a bad token is refused everywhere)
        text = request.query_params.get("query", ui.EXAMPLE_QUERY)[:limits.max_query_chars]
        return html(ui.query_page(text))

    return [Route("/sparql", sparql, methods=["GET", "POST"]), Route("/ui", home),
            Route("/ui/nodes", nodes), Route("/ui/search", search), Route("/ui/node", node),
            Route("/ui/query", query_form)]


def counts(view) -> dict:
    """Entities and edges of a view by type, and its documents (read from its index)."""
    ix = view.model.index
    untyped = ix.type_names.index("")
    types = Counter(ix.type_names[t] for t in ix.node_type.tolist() if t != untyped)
    edges = Counter(ix.edge_types[t] for t in ix.etype.tolist())
    return {"nodes": sum(types.values()), "edges": len(ix.src),
            "documents": len(view.model.documents),
            "nodes_by_type": dict(sorted(types.items())), "edges_by_type": dict(sorted(edges.items()))}


def find(view, text: str) -> list[dict]:
    """Visible nodes ``text`` names: the node it denotes as traversal reads a name (an ID
    written any way, else entity resolution's pick and candidates), then every node with a
    name or alias containing it (case-insensitive), at most :data:`MAX_HITS`."""
    hits: dict[str, str] = {}
    try:
        hits[view.browser.find(text)] = "ID"
    except KgbuildError:
        pass
    r = view.resolver.resolve(text)
    if r.id:
        hits.setdefault(r.id, f"resolved: {r.stage}")
    for candidate in r.candidates:
        hits.setdefault(candidate[0], "candidate")
    needle = text.casefold()
    for node_id, _, label, names in view.model.entities():
        if len(hits) >= MAX_HITS:
            break
        if node_id not in hits and any(needle in n.casefold() for n in (label, *names)):
            hits[node_id] = "name"
    out = []
    for node_id, why in list(hits.items())[:MAX_HITS]:
        brief = view.model.brief(node_id)
        if brief is not None:
            out.append({"id": node_id, "label": brief[0], "type": brief[1], "why": why})
    return out
