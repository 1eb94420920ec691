"""A loopback Backstage catalog API for tests, serving catalog files the way Backstage does.

:func:`load_entities` reads a folder's catalog files (those kgbuild's Backstage extractor
claims) with kgbuild's YAML reader and processes each entity as Backstage's catalog would
before serving it: ``metadata.namespace`` defaulted, ``metadata.uid`` and ``metadata.etag``
added (the etag a hash of the entity, so it changes with it), the
``backstage.io/managed-by-location`` and ``managed-by-origin-location`` annotations set to
``file:<path>`` (a Location's targets inherit its origin), placeholders resolved (``$text``
and friends to the file's text, or to the URL itself for a URL: Backstage would fetch it;
``$json``/``$yaml`` to an object), local Location targets read too, the first entity of a ref
kept (Backstage's conflict rule), YAML documents Backstage could not parse left out.

:class:`CatalogApi` serves them on 127.0.0.1 (a threaded ``http.server``):
``GET /api/catalog/entities/by-query`` with ``limit`` and ``cursor`` (an opaque base64 cursor,
``pageInfo.nextCursor`` while more remain, ``totalItems``), the older
``GET /api/catalog/entities`` with ``offset``/``limit``, and ``by-name``; every route answers
401 (Backstage's JSON error) without the bearer token. ``entities`` may be changed between
requests (:meth:`CatalogApi.put`, :meth:`CatalogApi.remove`); ``hook(path, query)`` may answer
a request instead (hostile servers); ``requests`` records each path and query.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath
from urllib.parse import parse_qs, urlsplit

from kgbuild.extract.manifests.backstage import BackstageExtractor
from kgbuild.io.yamlfile import load_yaml, plain

TOKEN = "kgbuild-test-token-5f0c"  # the bearer token the server wants (never printed)
_CLAIMS = BackstageExtractor()


def catalog_files(folder: Path) -> list[Path]:
    """The files under ``folder`` kgbuild's Backstage extractor reads."""
    out = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in (".yaml", ".yml"):
            with path.open("rb") as f:
                head = f.read(4096)
            if _CLAIMS.claims(path, head):
                out.append(path)
    return out


def etag_of(entity: dict) -> str:
    body = {k: v for k, v in entity.items()}
    body["metadata"] = {k: v for k, v in entity["metadata"].items() if k not in ("etag", "uid")}
    text = json.dumps(body, sort_keys=True, default=str)
    return hashlib.sha1(text.encode()).hexdigest()


def processed(entity: dict, location: str, origin: str) -> dict:
    """``entity`` as Backstage's catalog serves it (see the module doc)."""
    entity = json.loads(json.dumps(entity, default=str))
    meta = entity.setdefault("metadata", {})
    if isinstance(meta, dict):
        meta.setdefault("namespace", "default")
        annotations = meta.setdefault("annotations", {})
        if isinstance(annotations, dict):
            annotations.setdefault("backstage.io/managed-by-location", location)
            annotations.setdefault("backstage.io/managed-by-origin-location", origin)
        ref = f"{entity.get('kind')}:{meta.get('namespace')}/{meta.get('name')}".lower()
        meta["uid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, ref))
        meta["etag"] = etag_of(entity)
    entity["relations"] = []
    return entity


def _resolve(value: object, base: Path) -> bool:
    """Resolve placeholders in place as Backstage's PlaceholderProcessor would; False when
    one cannot be (a missing file: Backstage refuses the entity)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list) else ()
    for key, child in list(items):
        if isinstance(child, dict) and len(child) == 1 and str(next(iter(child))).startswith("$"):
            placeholder, target = next(iter(child.items()))
            if not isinstance(target, str):
                return False
            if "://" in target:
                text = target  # (fetched by Backstage: its content is not known here)
            else:
                path = base / PurePosixPath(target.removeprefix("file:"))
                if not path.is_file():
                    return False
                text = path.read_text(errors="replace")
            value[key] = {"resolved": True} if placeholder in ("$json", "$yaml") else text
        elif not _resolve(child, base):
            return False
    return True


def load_entities(folder: Path) -> dict[str, dict]:
    """Every entity of the catalog files under ``folder`` as Backstage serves them, by ref."""
    out: dict[str, dict] = {}
    queue = [(p, f"file:{p}") for p in catalog_files(folder)]
    read: set[Path] = set()
    while queue:
        path, origin = queue.pop(0)
        if path in read:
            continue
        read.add(path)
        for doc in load_yaml(path.read_text(errors="replace"), str(path), per_document=True):
            data = doc.data
            if doc.error is not None or not isinstance(data, dict):
                continue
            entity = plain(data)
            if not _resolve(entity.get("spec") or {}, path.parent):
                continue
            meta = entity.get("metadata") if isinstance(entity.get("metadata"), dict) else {}
            ref = f"{entity.get('kind')}:{meta.get('namespace', 'default')}/{meta.get('name')}"
            if ref.lower() in out:
                continue  # Backstage: the first location to claim a ref keeps it
            out[ref.lower()] = processed(entity, f"file:{path}", origin)
            spec = entity.get("spec") if isinstance(entity.get("spec"), dict) else {}
            if entity.get("kind") == "Location":
                targets = [spec.get("target")] + list(spec.get("targets") or [])
                for target in targets:
                    if isinstance(target, str) and "://" not in target:
                        t = (path.parent / target.removeprefix("file:")).resolve()
                        if t.is_file() and folder.resolve() in t.parents:
                            queue.append((t, origin))
    return out


class CatalogApi:
    """The catalog API on 127.0.0.1 (see the module doc); ``url`` is the backend's base."""

    def __init__(self, entities: dict[str, dict], token: str | None = TOKEN, *,
                 by_query: bool = True):
        self.entities = dict(entities)
        self.token = token
        self.by_query = by_query
        self.hook: Callable[[str, dict], tuple[int, bytes] | None] | None = None
        self.requests: list[tuple[str, dict]] = []
        self.auth_headers: list[str | None] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                api.requests.append((parts.path, query))
                api.auth_headers.append(self.headers.get("Authorization"))
                status, body = api.answer(parts.path, query, self.headers.get("Authorization"))
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    # -- the catalog ----------------------------------------------------------------------
    def put(self, entity: dict) -> None:
        """Add or change an entity (its etag recomputed, as Backstage does)."""
        meta = entity["metadata"]
        ref = f"{entity['kind']}:{meta.get('namespace', 'default')}/{meta['name']}".lower()
        meta.setdefault("namespace", "default")
        meta["uid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, ref))
        meta["etag"] = etag_of(entity)
        self.entities[ref] = entity

    def remove(self, ref: str) -> None:
        del self.entities[ref]

    def _sorted(self) -> list[dict]:
        def uid(ref: str) -> str:
            meta = self.entities[ref].get("metadata")
            return str(meta.get("uid", ref)) if isinstance(meta, dict) else ref
        return [self.entities[r] for r in sorted(self.entities, key=uid)]

    # -- requests ---------------------------------------------------------------------------
    def answer(self, path: str, query: dict, auth: str | None) -> tuple[int, bytes]:
        if self.token is not None and auth != f"Bearer {self.token}":
            return _error(401, "AuthenticationError",
                          "Missing credentials" if auth is None else "Invalid token", path)
        if self.hook is not None:
            hooked = self.hook(path, query)
            if hooked is not None:
                return hooked
        if path == "/api/catalog/entities/by-query" and self.by_query:
            return self._by_query(query)
        if path == "/api/catalog/entities":
            items = self._sorted()
            offset = int(query.get("offset", 0))
            limit = int(query["limit"]) if "limit" in query else len(items)
            return 200, json.dumps(items[offset:offset + limit]).encode()
        if path.startswith("/api/catalog/entities/by-name/"):
            kind, ns, name = path.rsplit("/", 3)[1:]
            entity = self.entities.get(f"{kind}:{ns}/{name}".lower())
            if entity is not None:
                return 200, json.dumps(entity).encode()
        return _error(404, "NotFoundError", f"No route {path}", path)

    def _by_query(self, query: dict) -> tuple[int, bytes]:
        items = self._sorted()
        limit = int(query.get("limit", 20))
        offset = 0
        if "cursor" in query:
            offset = json.loads(base64.b64decode(query["cursor"]))["offset"]
        page = items[offset:offset + limit]
        info = {}
        if offset + limit < len(items):
            cursor = {"offset": offset + limit, "totalItems": len(items)}
            info["nextCursor"] = base64.b64encode(json.dumps(cursor).encode()).decode()
        if offset:
            cursor = {"offset": max(offset - limit, 0), "isPrevious": True}
            info["prevCursor"] = base64.b64encode(json.dumps(cursor).encode()).decode()
        return 200, json.dumps({"items": page, "totalItems": len(items),
                                "pageInfo": info}).encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> CatalogApi:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _error(status: int, name: str, message: str, path: str) -> tuple[int, bytes]:
    """Backstage's JSON error body."""
    return status, json.dumps({"error": {"name": name, "message": message},
                               "request": {"method": "GET", "url": path},
                               "response": {"statusCode": status}}).encode()
