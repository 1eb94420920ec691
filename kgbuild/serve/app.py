"""The HTTP API (Starlette): traverse, resolve, node, SPARQL query, health, OpenAPI, and the
routes of :mod:`kgbuild.serve.browse` (``/sparql``, the ``/ui`` pages).

Every answer of the JSON routes is JSON. ``POST /traverse`` takes the fields of
:class:`~kgbuild.retrieve.spec.TraversalSpec` and answers exactly what ``kgbuild traverse
--format json`` prints for the same spec and principal. Errors are ``{"error": one line,
"code": ...}`` with a 4xx status (5xx: the server's own failure), never a traceback. A request's
principal comes from its bearer token (:mod:`kgbuild.serve.config`); without one it sees public
items only. Work runs in a pool of ``limits.workers`` threads (SPARQL: ``limits.queries``); a
request is answered 503 at ``limits.request_timeout`` (``query_timeout``), waiting included,
and work that outlives its request keeps its thread until it ends (a traversal cannot be
stopped part-way; a query's process is killed at the deadline), so timed-out work never piles
up beyond the pool. A body is read up to ``limits.max_body_bytes`` within
``limits.body_timeout``; a client gone mid-request is one log line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Callable

import anyio
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import KgbuildError
from ..graph.access import Principal
from ..graph.model import safe_text
from ..retrieve.spec import MAX_NAME_CHARS
from ..schema.model import Schema
from ..store.adjacency import DIRECTIONS
from ..store.query import query_store
from .browse import QUERY_GRACE, Context, html, routes, wants_html
from .config import ServeConfig
from .live import LiveIndex
from .openapi import openapi
from .spec import ApiError, parse_spec
from .ui import error_page

MAX_ERROR = 2000  # characters of one error message
log = logging.getLogger("uvicorn.error")  # (uvicorn's: printed where its own warnings are)


class JSON(Response):
    """Sorted JSON, as ``--format json`` prints it (a lone surrogate as its escape)."""

    media_type = "application/json"

    def render(self, content) -> bytes:
        return safe_text(json.dumps(content, sort_keys=True, ensure_ascii=False)).encode()


def _one_line(text: str) -> str:
    text = " ".join(safe_text(text[:MAX_ERROR + 1]).split())
    return text if len(text) <= MAX_ERROR else text[:MAX_ERROR - 1] + "…"


def error(status: int, message: str, code: str) -> JSON:
    return JSON({"error": _one_line(message), "code": code}, status)


async def read_body(request: Request, limit: int, timeout: float) -> bytes:
    """The request's body, read up to ``limit`` bytes (413 beyond) within ``timeout`` seconds
    (408 after)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise ApiError(413, f"the body is larger than {limit} bytes", "too-large")
    chunks, size = [], 0
    with anyio.move_on_after(timeout) as waited:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise ApiError(413, f"the body is larger than {limit} bytes", "too-large")
            chunks.append(chunk)
    if waited.cancelled_caught:
        raise ApiError(408, f"the body was not received within {timeout:g} s", "body-timeout")
    return b"".join(chunks)


async def read_json(request: Request, limit: int, timeout: float) -> object:
    """The request's body as JSON (see :func:`read_body`)."""
    body = await read_body(request, limit, timeout)
    try:
        return json.loads(body.decode("utf-8"), parse_constant=_not_json)
    except UnicodeDecodeError:
        raise ApiError(400, "the body is not UTF-8", "bad-json") from None
    except (ValueError, RecursionError) as exc:
        raise ApiError(400, f"the body is not JSON: {exc}", "bad-json") from None


def _not_json(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _param(request: Request, name: str, required: bool = True) -> str | None:
    value = request.query_params.get(name)
    if value is None and required:
        raise ApiError(400, f"the query parameter {name!r} is required", "usage")
    if value is not None and len(value) > MAX_NAME_CHARS:
        raise ApiError(400, f"{name} has at most {MAX_NAME_CHARS:,} characters", "usage")
    return value


def hostname(header: str) -> str:
    """The host of a ``Host`` header: no port, no brackets, lower case, no final dot."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    name, colon, port = header.rpartition(":")
    return (name if colon and port.isdigit() and ":" not in name else header).removesuffix(".")


class HostCheck:
    """ASGI: a request whose ``Host`` is not one of ``hosts`` is answered 421 (a web page's
    script reaching a server on this machine through a name of its own: DNS rebinding)."""

    def __init__(self, app, hosts: frozenset[str]):
        self.app, self.hosts = app, hosts

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            host = hostname(Headers(scope=scope).get("host", ""))
            if host not in self.hosts:
                answer = error(421, f"this server does not answer for the host {host[:100]!r} "
                               f"(the config's 'hosts' lists the names it answers)", "bad-host")
                return await answer(scope, receive, send)
        await self.app(scope, receive, send)


class Pool:
    """At most ``size`` calls at once, each in a thread of its own; :meth:`run` answers 503 at
    the caller's deadline, but a call already running keeps its thread until it returns."""

    def __init__(self, size: int, name: str):
        self.size, self.name = size, name
        self._threads: ThreadPoolExecutor | None = None

    async def run(self, call: Callable, timeout: float, what: str):
        if self._threads is None:
            self._threads = ThreadPoolExecutor(self.size, thread_name_prefix=self.name)
        future = self._threads.submit(call)
        try:
            with anyio.fail_after(timeout):
                return await asyncio.wrap_future(future)
        except TimeoutError:
            future.cancel()  # (one still waiting for a thread never runs)
            raise ApiError(503, f"the {what} took longer than {timeout:g} s", "timeout") from None

    def close(self) -> None:
        """Let the threads end (work running goes on to its end; waiting work is dropped)."""
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
            self._threads = None


# -- the application ---------------------------------------------------------------------------
def node_record(view, node_id: str) -> dict | None:
    """A visible node: ID, label, type, aliases, attributes, the visible documents defining
    it, and its visible edges counted by edge type and direction (stored names)."""
    model = view.model
    node = model.node(node_id)
    if node is None:
        return None
    index = model.index
    pos = index.position(node_id)
    edges: dict[str, dict[str, int]] = {}
    for (code, d), csr in sorted(index.lists.items()):
        n = int(csr.indptr[pos + 1] - csr.indptr[pos])
        if n:
            edges.setdefault(index.edge_types[code], {})[DIRECTIONS[d]] = n
    return {"id": node.id, "label": node.label, "type": node.type,
            "aliases": sorted(node.aliases),
            "attributes": {k: sorted(v, key=str) for k, v in sorted(node.attributes.items())},
            "documents": sorted(d for d in node.defined_in if d in model.documents),
            "edges": edges}


def create_app(store: str | Path, schema: Schema, config: ServeConfig | None = None, *,
               watch: bool = True, bind: str | None = None) -> Starlette:
    """The API over the store at ``store`` (loaded now: a missing or damaged store raises
    :class:`~kgbuild.errors.KgbuildError`). With ``watch``, new generations of the store are
    picked up while the app runs (see :mod:`kgbuild.serve.live`). ``bind``, the address the
    server listens on, sets the default ``Host`` names answered (see
    :meth:`ServeConfig.allowed_hosts`)."""
    config = config or ServeConfig()
    hosts = config.allowed_hosts(bind)
    limits = config.limits
    live = LiveIndex(store, schema, config.principals(), config.aliases, limits.reload_interval,
                     config.embeddings)
    workers = Pool(limits.workers, "kgbuild-serve")
    queries = Pool(limits.queries, "kgbuild-query")

    def principal(request: Request) -> Principal:
        found = config.principal(request.headers.get("authorization"))
        if found is None:
            raise ApiError(401, "unknown bearer token", "unauthorized")
        return found

    async def work(call: Callable, pool: Pool = workers, timeout: float = limits.request_timeout,
                   what: str = "request"):
        """``call()`` in a thread of ``pool``; a dict result is rendered there too, as a response
        whose ``Server-Timing`` header says how long the work and the rendering took."""
        def timed():
            start = time.perf_counter()
            out = call()
            if isinstance(out, dict):
                out = JSON(out)
                out.headers["server-timing"] = f"app;dur={1000 * (time.perf_counter() - start):.2f}"
            return out

        return await pool.run(timed, timeout, what)

    async def health(request: Request):
        snap = live.current
        if not principal(request).everyone:  # (a bad token is refused everywhere)
            return JSON({"status": "ok", "generation": snap.generation})  # up; what it serves
        return JSON({"status": "ok" if live.last_error is None else "stale",
                     "store": str(live.path), "store_id": snap.store_id,
                     "generation": snap.generation, "loaded_at": snap.loaded_at,
                     "reloads": live.reloads, "last_error": live.last_error,
                     "nodes": snap.nodes, "edges": snap.edges})

    async def traverse(request: Request):
        who = principal(request)
        spec = parse_spec(await read_json(request, limits.max_body_bytes, limits.body_timeout),
                          schema, semantic=live.matcher is not None)
        snap = live.current
        response = await work(lambda: snap.view(who).traverser.run(spec).to_dict())
        response.headers["x-kgbuild-generation"] = snap.generation
        return response

    async def resolve(request: Request):
        who = principal(request)
        mention, type_name = _param(request, "mention"), _param(request, "type", False)
        if type_name:
            schema.node_type(type_name)
        snap = live.current
        response = await work(lambda: snap.view(who).resolver.resolve(mention, type_name).explain())
        response.headers["x-kgbuild-generation"] = snap.generation
        return response

    async def node(request: Request):
        who = principal(request)
        node_id = _param(request, "id")
        snap = live.current
        response = await work(lambda: node_record(snap.view(who), node_id))
        if response is None:
            raise ApiError(404, f"no node {node_id!r} in the graph", "unknown-node")
        response.headers["x-kgbuild-generation"] = snap.generation
        return response

    async def query(request: Request):
        if not principal(request).everyone:
            raise ApiError(403, "SPARQL reads every item of the store: only an all_access "
                                "token may query", "forbidden")
        body = await read_json(request, limits.max_body_bytes, limits.body_timeout)
        if not isinstance(body, dict) or set(body) != {"query"} or not isinstance(
                body["query"], str) or not body["query"].strip():
            raise ApiError(400, 'the body must be {"query": "SPARQL text"}', "usage")
        if len(body["query"]) > limits.max_query_chars:
            raise ApiError(400, f"a query has at most {limits.max_query_chars:,} characters",
                           "usage")
        deadline = time.monotonic() + limits.query_timeout  # (waiting for a turn included)
        return await work(lambda: query_store(
            live.path, schema, body["query"], limit=limits.max_rows,
            timeout=max(deadline - time.monotonic(), 0.01)).to_dict(),
            queries, limits.query_timeout + QUERY_GRACE, "query")

    async def retrieve_passages(request: Request):  # POST /retrieve: passage retrieval
        from ..passages.retrieve import answer_request

        who = principal(request)
        body = await read_json(request, limits.max_body_bytes, limits.body_timeout)
        return await work(lambda: answer_request(live.path, body, who))

    async def spec(request: Request):
        return JSON(openapi())

    def refuse(request: Request, status: int, message: str, code: str) -> Response:
        """The error as JSON, or as a page for a browser (:func:`wants_html`)."""
        if wants_html(request):
            return html(error_page(status, _one_line(message)), status)
        return error(status, message, code)

    async def on_api_error(request: Request, exc: ApiError):
        response = refuse(request, exc.status, str(exc), exc.code)
        if exc.status == 408:  # the rest of the body is not awaited
            response.headers["connection"] = "close"
        return response

    async def on_disconnect(request: Request, exc: ClientDisconnect):
        client = f"{request.client.host}:{request.client.port}" if request.client else "a client"
        log.warning("%s went away before its request was read: %s %s", client, request.method,
                    request.url.path)
        return Response(status_code=499)  # (nobody receives it)

    async def on_kgbuild_error(request: Request, exc: KgbuildError):
        status = 503 if exc.code in ("query-timeout", "store-changed", "store-damaged") else 400
        return refuse(request, status, str(exc), exc.code)

    async def on_http_error(request: Request, exc: HTTPException):
        names = {404: "not-found", 405: "method-not-allowed"}
        response = refuse(request, exc.status_code,
                          f"{request.method} {request.url.path}: {exc.detail}",
                          names.get(exc.status_code, "http"))
        if exc.headers:  # (405: Allow)
            response.headers.update(exc.headers)
        return response

    async def on_internal(request: Request, exc: Exception):
        return error(500, f"internal error: {type(exc).__name__}: {exc} (please report)",
                     "internal")

    @asynccontextmanager
    async def lifespan(app):
        if watch:
            live.start()
        try:
            yield
        finally:
            live.stop()
            workers.close()
            queries.close()

    app = Starlette(
        routes=[Route("/health", health), Route("/openapi.json", spec),
                Route("/traverse", traverse, methods=["POST"]), Route("/resolve", resolve),
                Route("/node", node), Route("/query", query, methods=["POST"]),
                Route("/retrieve", retrieve_passages, methods=["POST"]),
                *routes(Context(live, schema, limits, principal, work, queries, read_body))],
        exception_handlers={ApiError: on_api_error, KgbuildError: on_kgbuild_error,
                            ClientDisconnect: on_disconnect, HTTPException: on_http_error,
                            Exception: on_internal},
        middleware=[Middleware(HostCheck, hosts=hosts)] if hosts is not None else [],
        lifespan=lifespan)
    app.state.live = live
    return app
