"""A running Backstage's software catalog, read through its REST API.

:func:`read_catalog` pages through ``GET /api/catalog/entities/by-query`` (cursor paging:
``limit``, then ``cursor`` = the previous page's ``pageInfo.nextCursor`` until there is none;
Backstage 1.12 and later), or, where a backend has no such route (404), through the older
``GET /api/catalog/entities`` with ``offset``/``limit``. A bearer token, when given, is sent
on every request and never shown: messages carry the URL redacted and the server's words
scrubbed of it. Redirects are not followed (a token must not travel to another host).

Everything is bounded: the whole listing by a deadline (each request by what is left of it
and by ``request_timeout``), each page's body by ``max_page_bytes`` (received and decoded:
:mod:`kgbuild.io.http`), the entities by ``max_entities`` (counting every item received, so
a server repeating pages cannot go on for ever); a cursor seen before, an empty page naming
a next one, an answer that is not the catalog's JSON or an item that is not an entity is an
error. Any error stops the listing: a partial listing is never returned, since an entity
missing from it would be taken as removed from the catalog.

Each entity is returned with what a build keeps of it: its ref (``kind:namespace/name``,
lowercased as Backstage stores refs), its document ID (the API URL that serves it,
``<base>/api/catalog/entities/by-name/<kind>/<namespace>/<name>``), its ``metadata.etag``
and ``metadata.uid``, its origin (the ``backstage.io/managed-by-origin-location``
annotation, else ``managed-by-location``) and a digest of what the extractor reads of it
(the entity without the fields Backstage computes: ``relations``, ``status``, the etag).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import httpx2

from ..errors import KgbuildError
from ..io.http import DEADLINE, Bounds, Client, ResponseTooLarge, mib
from ..io.text import clip, one_line
from ..io.urls import check_http_url, redact_url, scrub, url_secrets

TOKEN_ENV = "BACKSTAGE_TOKEN"  # the environment variable the token is read from by default
ORIGIN = "backstage.io/managed-by-origin-location"
LOCATION = "backstage.io/managed-by-location"
BY_NAME = "/api/catalog/entities/by-name/"  # + kind/namespace/name: one entity's API URL
PAGE_SIZE = 500
MAX_ENTITIES = 200_000
MAX_PAGE_BYTES = 64 << 20
TIMEOUT = 600.0  # seconds for the whole listing
REQUEST_TIMEOUT = 120.0  # seconds for one page
RETRIES = 2  # of a page after a 5xx answer or a connection error (within the deadline)
BACKOFF = 0.5  # seconds before the first retry, doubled for the next
HINT = "is it a Backstage backend's base URL, e.g. http://localhost:7007?"
VOLATILE = ("relations", "status")  # fields Backstage computes: not read by the extractor


class CatalogError(KgbuildError):
    """A Backstage catalog API refused, failed, could not be reached or answered something
    that is not its catalog; ``backstage-auth`` (401, 403) and ``backstage-limit`` (a bound
    was reached) are more specific codes."""

    code = "backstage-api"


@dataclass(frozen=True)
class CatalogSource:
    """What to read: a Backstage backend's base URL (``http://localhost:7007``; a URL ending
    in ``/api/catalog`` is taken as its base), the bearer token (None: none sent) and the
    bounds of the listing."""

    url: str
    token: str | None = field(default=None, repr=False)
    token_env: str | None = TOKEN_ENV  # where the token came from (named in messages)
    page_size: int = PAGE_SIZE
    max_entities: int = MAX_ENTITIES
    max_page_bytes: int = MAX_PAGE_BYTES
    timeout: float = TIMEOUT
    request_timeout: float = REQUEST_TIMEOUT

    @property
    def base(self) -> str:
        """The backend's base URL as shown and stored: no user info, query or fragment, no
        trailing slash nor ``/api/catalog``."""
        return catalog_base(self.url)


def catalog_base(url: str) -> str:
    """``url`` checked (an http(s) URL with a host) and reduced to the backend's base URL:
    without user info, query, fragment, trailing ``/``, ``/api/catalog`` or ``/api``."""
    check_http_url(url, "the Backstage URL", "http://localhost:7007")
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    path = parts.path.rstrip("/")
    for tail in ("/api/catalog", "/api"):
        if path.endswith(tail):
            path = path[: -len(tail)]
            break
    return urlunsplit((parts.scheme, host, path, "", ""))


def documents_prefix(base: str) -> str:
    """The start of every document ID of the catalog at ``base``."""
    return base + BY_NAME


@dataclass(frozen=True)
class CatalogEntity:
    """One entity as served, with what a build keeps of it (see the module doc)."""

    ref: str
    doc_id: str
    data: dict = field(repr=False)
    etag: str
    uid: str
    origin: str
    digest: str
    size: int = 0  # bytes of its canonical JSON (as a file's size)


@dataclass
class Catalog:
    """Every entity of one catalog, read in full."""

    base: str
    entities: list[CatalogEntity]
    read_at: float  # seconds since the epoch, when the listing ended
    pages: int = 0
    endpoint: str = "by-query"  # or "entities" (the older offset/limit route)

    @property
    def prefix(self) -> str:
        return documents_prefix(self.base)


def entity_digest(entity: dict) -> tuple[str, int]:
    """SHA-256 of what the extractor reads of ``entity`` (its canonical JSON without the
    fields Backstage computes, ``relations`` and ``status``, and without ``metadata.etag``),
    and that JSON's size in bytes."""
    data = {k: v for k, v in entity.items() if k not in VOLATILE}
    meta = data.get("metadata")
    if isinstance(meta, dict):
        data["metadata"] = {k: v for k, v in meta.items() if k != "etag"}
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    data = text.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest(), len(data)


def entity_doc_id(base: str, kind: str, namespace: str, name: str) -> str:
    """The document ID of an entity: the API URL serving it (lowercased ref parts)."""
    parts = (quote(p.lower(), safe="") for p in (kind, namespace, name))
    return documents_prefix(base) + "/".join(parts)


def read_catalog(source: CatalogSource) -> Catalog:
    """Every entity of the catalog at ``source.url``; :class:`CatalogError` (one line) for
    anything that stops the listing (see the module doc)."""
    return _Reader(source).read()


class _Reader:
    def __init__(self, source: CatalogSource):
        self.source = source
        self.base = source.base
        self.api = self._api_base(source.url)
        self.secrets = {source.token, urlsplit(source.url).username} | url_secrets(source.url)
        self.deadline = time.monotonic() + source.timeout
        self.received = 0
        self.pages = 0
        self.entities: dict[str, CatalogEntity] = {}

    @staticmethod
    def _api_base(url: str) -> str:
        """The base as requests use it (credentials in the URL kept: httpx sends them as
        basic auth, as the user asked)."""
        parts = urlsplit(url)
        path = parts.path.rstrip("/")
        for tail in ("/api/catalog", "/api"):
            if path.endswith(tail):
                path = path[: -len(tail)]
                break
        return urlunsplit((parts.scheme, parts.netloc, path, "", ""))

    def read(self) -> Catalog:
        headers = {"Accept": "application/json"}
        if self.source.token:
            headers["Authorization"] = f"Bearer {self.source.token}"
        bounds = Bounds(min(self.source.request_timeout, self.source.timeout),
                        self.source.max_page_bytes)
        with Client(bounds, headers=headers, follow_redirects=False) as http:
            self.http = http
            first = self._get("/api/catalog/entities/by-query",
                              {"limit": self.source.page_size}, missing_ok=True)
            if first is None:  # a backend older than Backstage 1.12
                self._offset_pages()
                endpoint = "entities"
            else:
                self._cursor_pages(first)
                endpoint = "by-query"
        return Catalog(self.base, sorted(self.entities.values(), key=lambda e: e.doc_id),
                       time.time(), self.pages, endpoint)

    # -- paging -------------------------------------------------------------------------------
    def _cursor_pages(self, page: object) -> None:
        seen: set[str] = set()
        while True:
            if not isinstance(page, dict) or not isinstance(page.get("items"), list):
                raise self._error("did not answer with the catalog's JSON (an object with an "
                                  "items array)")
            info = page.get("pageInfo")
            cursor = info.get("nextCursor") if isinstance(info, dict) else None
            self._take(page["items"])
            if cursor is None:
                return
            if not isinstance(cursor, str) or not cursor:
                raise self._error(f"named a next page by a cursor that is not a string: "
                                  f"{clip(repr(cursor), 80)}")
            if not page["items"]:
                raise self._error("answered an empty page that names a next page")
            if cursor in seen:
                raise self._error(f"named a next page already read (page {self.pages}): the "
                                  f"paging loops", code="backstage-limit")
            seen.add(cursor)
            page = self._get("/api/catalog/entities/by-query",
                             {"cursor": cursor, "limit": self.source.page_size})

    def _offset_pages(self) -> None:
        offset, size = 0, self.source.page_size
        while True:
            page = self._get("/api/catalog/entities", {"offset": offset, "limit": size})
            if not isinstance(page, list):
                raise self._error("did not answer with the catalog's JSON (an array of "
                                  "entities)", path="/api/catalog/entities")
            self._take(page)
            if len(page) < size or len(page) > size:  # the end (or no paging at all: all)
                return
            offset += size

    def _take(self, items: list) -> None:
        self.received += len(items)
        if self.received > self.source.max_entities:
            raise self._error(f"lists more than {self.source.max_entities:,} entities (the "
                              f"limit; nothing was read)", code="backstage-limit")
        for i, item in enumerate(items):
            entity = self._entity(item, i)
            self.entities[entity.doc_id] = entity  # listed twice (a changing catalog): the last

    def _entity(self, item: object, index: int) -> CatalogEntity:
        meta = item.get("metadata") if isinstance(item, dict) else None
        kind = item.get("kind") if isinstance(item, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        namespace = meta.get("namespace", "default") if isinstance(meta, dict) else None
        if not all(isinstance(v, str) and v for v in (kind, name, namespace)):
            raise self._error(f"served an item that is no catalog entity (item {index + 1} of "
                              f"page {self.pages}: no kind, metadata.name and namespace)")
        annotations = meta.get("annotations")
        annotations = annotations if isinstance(annotations, dict) else {}
        origin = annotations.get(ORIGIN) or annotations.get(LOCATION)
        doc_id = entity_doc_id(self.base, kind, namespace, name)
        etag, uid = meta.get("etag"), meta.get("uid")
        return CatalogEntity(f"{kind}:{namespace}/{name}".lower(), doc_id, item,
                             etag if isinstance(etag, str) else "",
                             uid if isinstance(uid, str) else "",
                             origin if isinstance(origin, str) and origin else doc_id,
                             *entity_digest(item))

    # -- requests -----------------------------------------------------------------------------
    def _get(self, path: str, params: dict, missing_ok: bool = False) -> object:
        """One page, parsed; None for a 404 when ``missing_ok``. 5xx answers and connection
        errors are retried (twice, within the deadline)."""
        url = f"{self.api}{path}?{urlencode(params)}"
        failure = ""
        for attempt in range(RETRIES + 1):
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise self._error(f"did not serve the whole catalog within "
                                  f"{self.source.timeout:g} s ({self.pages} pages, "
                                  f"{self.received:,} entities read; the limit)",
                                  code="backstage-limit", path=path)
            deadline = time.monotonic() + min(left, self.source.request_timeout)
            try:
                resp = self.http.get(url, extensions={DEADLINE: deadline})
                body = resp.content
            except httpx2.TimeoutException:
                failure = (f"no complete answer within "
                           f"{min(left, self.source.request_timeout):g} s")
            except ResponseTooLarge:
                raise self._error(f"answered a page larger than "
                                  f"{mib(self.source.max_page_bytes)} (the limit; a smaller "
                                  f"page size may help)", code="backstage-limit",
                                  path=path) from None
            except httpx2.RequestError as exc:
                how = "cannot be reached" if isinstance(exc, httpx2.TransportError) \
                    else "gave a bad answer"
                failure = f"{how} ({type(exc).__name__}: {self._scrub(exc)})"
            else:
                if resp.status_code == 200:
                    self.pages += 1
                    return self._json(body, path)
                if resp.status_code == 404 and missing_ok:
                    return None
                if resp.status_code in (401, 403):
                    raise self._error(self._refused(resp.status_code), code="backstage-auth",
                                      path=path)
                if 300 <= resp.status_code < 400:
                    where = redact_url(resp.headers.get("location", ""))
                    raise self._error(f"answered {resp.status_code}, a redirect"
                                      f"{' to ' + clip(where, 120) if where else ''}: give the "
                                      f"backend's own URL (redirects are not followed)",
                                      path=path)
                failure = f"answered {resp.status_code}: {self._scrub(_excerpt(body))}"
                if resp.status_code == 404:
                    failure += f" ({HINT})"
                if resp.status_code < 500:
                    raise self._error(failure, path=path)
            if attempt < RETRIES:
                time.sleep(min(BACKOFF * 2 ** attempt, max(self.deadline - time.monotonic(), 0)))
        raise self._error(f"{failure} (after {RETRIES + 1} attempts)", path=path)

    def _refused(self, status: int) -> str:
        env = f"${self.source.token_env}" if self.source.token_env else "the token"
        if self.source.token:
            return f"answered {status}: the catalog refused the token in {env}"
        return f"answered {status}: the catalog wants a token: set {env}"

    def _json(self, body: bytes, path: str) -> object:
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            raise self._error(f"did not answer with JSON: {self._scrub(_excerpt(body))} "
                              f"({HINT})", path=path) from None

    def _scrub(self, text: object) -> str:
        return scrub(str(text), self.secrets)

    def _error(self, what: str, code: str | None = None,
               path: str = "/api/catalog/entities/by-query") -> CatalogError:
        return CatalogError(one_line(f"Backstage catalog {self.base}{path} {what}", 500),
                            code=code)


def _excerpt(body: bytes, limit: int = 160) -> str:
    """The start of a server's answer on one line (the ``message`` of Backstage's JSON
    errors when there is one)."""
    text = body[:4096].decode("utf-8", "replace")
    try:
        error = json.loads(body).get("error") if len(body) < 1 << 16 else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = error["message"]
    except (ValueError, AttributeError, RecursionError):
        pass
    return one_line(text, limit) if text.strip() else "(an empty answer)"
