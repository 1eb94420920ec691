"""A plain HTTP client for SPARQL 1.1 servers: Query, Update and the Graph Store Protocol.

Requests carry explicit ``Content-Type``/``Accept`` headers and nothing else a server could
read as a dataset: never ``default-graph-uri``, never ``CREATE GRAPH`` (rdflib's client sends
both; Oxigraph then answers ``GRAPH`` queries with 0 rows and Virtuoso rejects the second).
Queries and updates are POSTed form-encoded, which Oxigraph, Virtuoso and Fuseki all accept
(Virtuoso hangs on ``application/sparql-query``). 5xx answers and connection errors are
retried with exponential backoff; 401/403 is one :class:`RemoteError` line. Every attempt
is bounded (:mod:`kgbuild.io.http`): ``timeout`` seconds in all, its answer at most
``max_response_bytes`` (1 GiB) received and decompressed. Messages and ``query_url`` (what
push and pull show and store) carry the endpoint with its credentials redacted.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import urlencode, urlsplit, urlunsplit

import httpx2

from ..errors import KgbuildError
from ..graph.sparqlcheck import refuse_service
from ..io.http import Bounds, Client, ResponseTooLarge, mib
from ..io.urls import check_http_url, redact_url, scrub, url_secrets

NQ = "application/n-quads"
RDF_ACCEPT = "application/n-triples, text/plain;q=0.9, text/turtle;q=0.8"
JSON_RESULTS = "application/sparql-results+json"
FORM = "application/x-www-form-urlencoded"
MAX_RESPONSE_BYTES = 1 << 30  # one answer read into memory at most (received, decompressed)


class Answer(NamedTuple):
    """A server's answer, read in full (bounded)."""

    status_code: int
    ctype: str
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


class RemoteError(KgbuildError):
    """A SPARQL or graph server refused, failed or could not be reached."""

    code = "remote"


@dataclass(frozen=True)
class Auth:
    """Credentials: a bearer ``token``, or ``user``/``password`` (``digest`` for Virtuoso's
    ``/sparql-auth``, else basic)."""

    user: str | None = None
    password: str | None = None
    token: str | None = None
    digest: bool = False

    def httpx(self):
        if self.user is None:
            return None
        cls = httpx2.DigestAuth if self.digest else httpx2.BasicAuth
        return cls(self.user, self.password or "")

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


def service_urls(endpoint: str) -> tuple[str, str, str | None]:
    """Query, update and graph-store URLs for a server known by one URL.

    ``.../query`` (Oxigraph, Fuseki) pairs with ``.../update`` and, Oxigraph's layout,
    ``.../store``; ``.../sparql`` and ``.../sparql-auth`` (Virtuoso) take updates at the same
    URL and have no graph store here (uploads use SPARQL Update); any other URL is used for
    both, with no graph store."""
    parts = urlsplit(check_http_url(endpoint, "the endpoint", "http://127.0.0.1:7878/query"))
    path = parts.path.rstrip("/")
    if path.endswith("/query"):
        base = path[: -len("query")]
        return (endpoint, urlunsplit(parts._replace(path=base + "update")),
                urlunsplit(parts._replace(path=base + "store")))
    return endpoint, endpoint, None


class SparqlClient:
    """One server: ``select``/``construct`` queries, ``update``, graph-store ``post_quads``.
    Counts the bytes it sends (``sent``) and the requests (``requests``). ``query_url``,
    ``update_url`` and ``store_url`` are the URLs as shown (credentials redacted)."""

    def __init__(self, endpoint: str, *, update_url: str | None = None,
                 store_url: str | None = None, auth: Auth | None = None, timeout: float = 60.0,
                 retries: int = 3, backoff: float = 0.5,
                 max_response_bytes: int = MAX_RESPONSE_BYTES):
        query, update, store = service_urls(endpoint)
        for given, flag in ((update_url, "--update-url"), (store_url, "--gsp-url")):
            if given:
                check_http_url(given, flag, "http://127.0.0.1:7878/update")
        self._urls = {"query": query, "update": update_url or update,
                      "store": store_url if store_url is not None else store}
        self.query_url, self.update_url, self.store_url = (
            redact_url(u) if u else u for u in self._urls.values())
        self.auth = auth or Auth()
        self.retries = retries
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self.backoff = backoff
        self.sent = 0
        self.requests = 0
        self._secrets = {self.auth.password, self.auth.token}.union(
            *(url_secrets(u) for u in self._urls.values() if u))
        self._http = Client(Bounds(timeout, max_response_bytes), auth=self.auth.httpx(),
                            headers=self.auth.headers(), follow_redirects=False)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "SparqlClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- requests -------------------------------------------------------------------------------
    def _send(self, method: str, which: str, *, what: str, ok=(200, 201, 204), **kwargs):
        """One request to the ``which`` URL (query, update, store), retried as the module doc
        says; each attempt has its own deadline."""
        url, shown = self._urls[which], redact_url(self._urls[which])
        body = kwargs.get("content") or b""
        for attempt in range(self.retries + 1):
            self.requests += 1
            self.sent += len(body)
            try:
                resp = self._http.request(method, url, **kwargs)
            except httpx2.TimeoutException:
                failure = f"{what}: no complete answer from {shown} within {self.timeout:g} s"
            except ResponseTooLarge:
                raise RemoteError(f"{what}: {shown} answered more than "
                                  f"{mib(self.max_response_bytes)} (the limit)",
                                  code="remote-too-large") from None
            except httpx2.RequestError as exc:  # connection errors, an undecodable answer
                how = ("cannot reach" if isinstance(exc, httpx2.TransportError)
                       else "bad answer from")
                failure = f"{what}: {how} {shown} ({type(exc).__name__}: {self._scrub(exc)})"
            else:
                answer = Answer(resp.status_code, resp.headers.get("content-type", ""),
                                resp.content)
                if resp.status_code in ok:
                    return answer
                if resp.status_code in (401, 403):
                    how = ("the server refused the credentials" if self.auth.user or
                           self.auth.token or "@" in shown else "the server wants credentials: "
                           "pass --user and --password, or --token")
                    raise RemoteError(f"{what}: {shown} answered {resp.status_code} "
                                      f"({how})", code="remote-auth")
                failure = (f"{what}: {shown} answered {resp.status_code}: "
                           f"{self._scrub(_excerpt(answer.text))}")
                if resp.status_code < 500:
                    raise RemoteError(failure)
            if attempt < self.retries:
                time.sleep(self.backoff * 2 ** attempt)
        raise RemoteError(f"{failure} (after {self.retries + 1} attempts)")

    def _scrub(self, text: object) -> str:
        """``text`` (a server's words, an error) without this client's passwords and token."""
        return scrub(str(text), self._secrets)

    def select(self, query: str) -> list[dict[str, dict]]:
        """The bindings of a SELECT query (SPARQL JSON results: ``{var: {type, value}}``); a
        query with ``SERVICE`` is refused before it is sent (as every query kgbuild runs)."""
        resp = self._send("POST", "query", what="SPARQL query",
                          content=_form(query=refuse_service(query)),
                          headers={"Accept": JSON_RESULTS, "Content-Type": FORM}, ok=(200,))
        try:
            return json.loads(resp.content)["results"]["bindings"]
        except (ValueError, KeyError, TypeError):
            raise RemoteError(f"SPARQL query: {self.query_url} did not answer with SPARQL JSON "
                              f"results: {self._scrub(_excerpt(resp.text))}") from None

    def construct(self, query: str) -> tuple[bytes, str]:
        """The body and content type of a CONSTRUCT query's answer."""
        resp = self._send("POST", "query", what="SPARQL query",
                          content=_form(query=refuse_service(query)),
                          headers={"Accept": RDF_ACCEPT, "Content-Type": FORM}, ok=(200,))
        return resp.content, resp.ctype

    def update(self, update: str) -> None:
        """Run a SPARQL 1.1 Update (one request, one transaction where the server has them)."""
        self._send("POST", "update", what="SPARQL update", content=_form(update=update),
                   headers={"Accept": "*/*", "Content-Type": FORM})

    def post_quads(self, nquads: bytes) -> None:
        """Graph store: add N-Quads to the dataset (each to its named graph)."""
        if not self.store_url:
            raise RemoteError(f"{self.query_url} has no graph store URL (pass --gsp-url)",
                              code="usage")
        self._send("POST", "store", what="graph store POST", content=nquads,
                   headers={"Content-Type": NQ})


def _form(**fields: str) -> bytes:
    return urlencode(fields).encode("ascii")


def _excerpt(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
