"""The one check of a URL a user gives for a server (LLM, embeddings, SPARQL endpoint)."""

from __future__ import annotations

from urllib.parse import urlsplit

from ..errors import InputError


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
        raise InputError(f"{what} {url!r} is not an http(s) URL with a host, e.g. {example}",
                         code="usage")
    return url
