"""The server's config file: bearer tokens mapped to access labels, and request limits.

::

    tokens:                      # no token: public items only; an unknown token: 401
      - name: risk-bot           # for people (never compared)
        sha256: 9f86d0...        # SHA-256 (hex) of the token: the file never holds a secret
        labels: [pci, risk]
      - name: admin
        sha256: 2c26b4...
        all_access: true         # sees everything; the only principal that may run SPARQL
    aliases: aliases.yaml        # alias registry for /resolve (optional; relative to this file)
    hosts: [kg.example.com]      # Host names answered (default: the bind address, localhost,
                                 # 127.0.0.1, ::1; "*": any); others get 421 (DNS rebinding)
    embeddings:                  # for semantic seeds (optional; the key: $OPENAI_API_KEY)
      model: text-embedding-3-small
      url: http://localhost:11434/v1
    limits:                      # every key optional; the defaults are below (LIMITS)
      max_body_bytes: 65536
      ...
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import InputError
from ..graph.access import Principal, parse_labels
from ..io.urls import redact_url
from ..io.yamlfile import YamlError, load_yaml_file

_HEX = re.compile(r"[0-9a-f]{64}")
_HOST = re.compile(r"\*|[a-z0-9.-]+|[0-9a-f.]*:[0-9a-f.]*:[0-9a-f:.]*")  # name, IPv4, IPv6
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True)
class Limits:
    """Bounds on one request and on the server's work (numbers, seconds)."""

    max_body_bytes: int = 65_536  # a traverse or query request body
    max_query_chars: int = 10_000  # one SPARQL query
    max_rows: int = 10_000  # SPARQL solutions (or triples) returned
    query_timeout: float = 10.0  # seconds a SPARQL query may run (then its process is killed)
    request_timeout: float = 30.0  # seconds a traverse, resolve or node request may take
    workers: int = 4  # threads working on requests (more wait for a turn; 503 past their time)
    queries: int = 2  # SPARQL queries run at once
    reload_interval: float = 1.0  # seconds between checks of the store's generation
    header_timeout: float = 10.0  # seconds a client has to send a request's header (408)
    body_timeout: float = 10.0  # seconds a client has to send a request's body (408)
    keep_alive: float = 5.0  # seconds an idle connection is kept open between requests
    max_connections: int = 100  # connections open at once (one more: 503, closed)

    def check(self, fail) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            kind = int if f.type in (int, "int") else float
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                    kind is int and not isinstance(value, int)):
                raise fail(f"limits: {f.name} must be a{'n integer' if kind is int else ' number'}, "
                           f"got {value!r}", "limits", f.name)
            if not 0 < value <= 10**9:
                raise fail(f"limits: {f.name} must be above 0 and at most 10^9, got {value!r}",
                           "limits", f.name)


@dataclass(frozen=True)
class Token:
    name: str
    sha256: bytes
    principal: Principal


@dataclass(frozen=True)
class ServeConfig:
    """Tokens, the alias registry for ``/resolve`` and the limits; :meth:`principal` maps an
    ``Authorization`` header to a :class:`~kgbuild.graph.access.Principal`."""

    tokens: tuple[Token, ...] = ()
    aliases: Path | None = None
    limits: Limits = field(default_factory=Limits)
    embeddings: tuple[str, str] | None = None  # (model, OpenAI-compatible endpoint URL)
    hosts: tuple[str, ...] = ()  # Host names answered (empty: the bind address and localhost)

    def allowed_hosts(self, bind: str | None) -> frozenset[str] | None:
        """The Host names a server bound to ``bind`` answers; None: any (``"*"``, or neither
        ``hosts`` nor a bind address: an app served by other means)."""
        if "*" in self.hosts or not (self.hosts or bind):
            return None
        return frozenset(self.hosts or (bind.lower(), *LOCAL_HOSTS))

    def principal(self, authorization: str | None) -> Principal | None:
        """The principal of a request: public without a header, None for a bad token.

        Every configured digest is compared (in constant time, none skipped), so the time taken
        tells nothing about which token, or how much of one, matched."""
        if authorization is None:
            return Principal()
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        digest = hashlib.sha256(token.strip().encode("utf-8", "surrogateescape")).digest()
        found = None
        for t in self.tokens:
            if hmac.compare_digest(digest, t.sha256) and found is None:
                found = t.principal
        return found

    def principals(self) -> list[Principal]:
        """Every principal a request can be: public, then each token's (distinct)."""
        return list(dict.fromkeys([Principal(), *(t.principal for t in self.tokens)]))


def load_serve_config(path: str | Path | None) -> ServeConfig:
    """Read and check a server config file (None: no tokens, default limits); raises
    :class:`InputError` naming the file and line of the first problem."""
    if path is None:
        return ServeConfig()
    name = str(path)
    try:
        doc = load_yaml_file(path, name=name)
    except YamlError as exc:
        raise InputError(f"not a readable YAML file: {exc.message}", name, exc.line) from None

    def fail(message: str, *where: object) -> InputError:
        return InputError(message, name, doc.line_of(*where))

    raw = doc.data if doc.data is not None else {}
    if not isinstance(raw, dict):
        raise fail("expected a mapping with 'tokens', 'aliases', 'hosts', 'embeddings' and "
                   "'limits'")
    for key in raw:
        if key not in ("tokens", "aliases", "hosts", "embeddings", "limits"):
            raise fail(f"unknown key {key!r} (known: tokens, aliases, hosts, embeddings, "
                       f"limits)", key)
    entries = raw.get("tokens") or []
    if not isinstance(entries, list):
        raise fail("'tokens' must be a list", "tokens")
    tokens, seen = [], set()
    for i, entry in enumerate(entries):
        where = ("tokens", i)
        if not isinstance(entry, dict):
            raise fail(f"token {i + 1}: expected a mapping with name, sha256 and labels", *where)
        unknown = sorted(map(str, set(entry) - {"name", "sha256", "labels", "all_access"}))
        if unknown:
            raise fail(f"token {i + 1}: unknown key {unknown[0]!r} (known: name, sha256, labels, "
                       f"all_access)", *where, unknown[0])
        label = entry.get("name")
        if not isinstance(label, str) or not label.strip():
            raise fail(f"token {i + 1}: 'name' must be a text", *where)
        digest = entry.get("sha256")
        if not isinstance(digest, str) or not _HEX.fullmatch(digest.lower()):
            raise fail(f"token {label!r}: 'sha256' must be the 64 hex digits of the token's "
                       f"SHA-256 (printf %s \"$TOKEN\" | sha256sum)", *where, "sha256")
        if digest.lower() in seen:
            raise fail(f"token {label!r}: the same sha256 as an earlier token", *where, "sha256")
        seen.add(digest.lower())
        everyone = entry.get("all_access", False)
        if not isinstance(everyone, bool):
            raise fail(f"token {label!r}: 'all_access' must be true or false", *where, "all_access")
        labels = entry.get("labels", [])
        if everyone and labels:
            raise fail(f"token {label!r}: give either labels or all_access", *where, "labels")
        try:
            if not isinstance(labels, (str, list)):
                raise ValueError("'labels' must be a label or a list of labels")
            principal = Principal.all_access() if everyone else Principal(parse_labels(labels))
        except ValueError as exc:
            raise fail(f"token {label!r}: {exc}", *where, "labels") from None
        tokens.append(Token(label, bytes.fromhex(digest), principal))
    aliases = raw.get("aliases")
    if aliases is not None:
        if not isinstance(aliases, str) or not aliases.strip():
            raise fail("'aliases' must be the path of an alias registry", "aliases")
        aliases = Path(path).parent / aliases
    limits = raw.get("limits") or {}
    if not isinstance(limits, dict):
        raise fail("'limits' must be a mapping", "limits")
    known = {f.name for f in fields(Limits)}
    for key in limits:
        if key not in known:
            raise fail(f"limits: unknown key {key!r} (known: {', '.join(sorted(known))})",
                       "limits", key)
    made = Limits(**limits)
    made.check(fail)
    return ServeConfig(tuple(tokens), aliases, made, _embeddings(raw.get("embeddings"), fail),
                       _hosts(raw.get("hosts"), fail))


def _hosts(raw: object, fail) -> tuple[str, ...]:
    if raw is None:
        return ()
    names = [raw] if isinstance(raw, str) else raw
    if not isinstance(names, list) or not names or not all(
            isinstance(n, str) and _HOST.fullmatch(n.lower().removesuffix(".")) for n in names):
        raise fail("'hosts' must be a list of host names or addresses without a port (e.g. "
                   "[kg.example.com, 10.0.0.5]), or \"*\" for any", "hosts")
    return tuple(sorted({n.lower().removesuffix(".") for n in names}))


def _embeddings(raw: object, fail) -> tuple[str, str] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != {"model", "url"}:
        raise fail("'embeddings' needs exactly 'model' and 'url'", "embeddings")
    model, url = raw["model"], raw["url"]
    if not isinstance(model, str) or not model.strip():
        raise fail("embeddings: 'model' must be a model name", "embeddings", "model")
    try:
        parts = urlsplit(url) if isinstance(url, str) else None
        parts and parts.port  # noqa: B018 - raises ValueError for a bad port
        ok = parts is not None and parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        ok = False
    if not ok or any(c.isspace() or not c.isprintable() for c in url):
        raise fail(f"embeddings: 'url' {redact_url(str(url))!r} is not an http(s) URL with a "
                   f"host, e.g. http://localhost:11434/v1", "embeddings", "url")
    return model, url
