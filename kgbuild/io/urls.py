"""URLs a user gives for a server (LLM, embeddings, SPARQL endpoint): the one check, and the
one form fit to show or store (:func:`redact_url`)."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from ..errors import InputError

_SECRET_NAME = re.compile(r"pass|secret|token|key|auth|sig|session|cred", re.IGNORECASE)


def redact_url(url: str) -> str:
    """``url`` fit to show or store: the password of its user info replaced by ``***`` (a user
    info without one, which may be a token, entirely), and the values of query parameters
    named like secrets (``api_key``, ``token``, ``sig``, ...). Everything else is kept as
    given; the URL need not be valid."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    netloc, tail = rest[:end], rest[end:]
    userinfo, at, host = netloc.rpartition("@")
    if at:
        name, colon, _ = userinfo.partition(":")
        netloc = f"{name}:***@{host}" if colon and name else f"***@{host}"
    path, q, query = tail.partition("?")
    if q:
        query, hash_, fragment = query.partition("#")
        query = "&".join(_redact_param(p) for p in query.split("&")) + hash_ + fragment
    return f"{scheme}://{netloc}{path}{q}{query}"


def url_secrets(url: str) -> set[str]:
    """The secrets ``url`` carries: the password of its user info, as written and
    percent-decoded, or the user info itself when it has no password (it may be a token)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return set()
    found = {parts.password, unquote(parts.password or ""),
             parts.username if parts.password is None else None}
    return {s for s in found if s}


def scrub(text: str, secrets) -> str:
    """``text`` (an error, a server's words) with every one of ``secrets`` written ``***``
    (the longest first, so a secret inside another goes with it)."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def _redact_param(param: str) -> str:
    name, eq, value = param.partition("=")
    return f"{name}=***" if eq and value and _SECRET_NAME.search(name) else param


def check_http_url(url: str, what: str, example: str) -> str:
    """``url`` if it is an http(s) URL with a host and a valid port, printable and without
    spaces; else :class:`InputError` (code ``usage``) naming ``what`` and showing ``example``."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port or an unclosed IPv6 bracket
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        ok = False
    if not ok or any(c.isspace() or not c.isprintable() for c in url):
        raise InputError(f"{what} {redact_url(url)!r} is not an http(s) URL with a host, e.g. "
                         f"{example}", code="usage")
    return url
