"""The one place clients for model servers (chat, embeddings, rerank) are made, and what
they share.

Every client sits on a :mod:`kgbuild.io.http` client: an attempt ends ``timeout`` seconds
after it starts, whatever the server sends, and an answer larger than ``max_bytes``
(received or decompressed) raises :class:`~kgbuild.io.http.ResponseTooLarge`. The ``openai``
clients (:func:`openai_client`, sync or async) follow redirects, take the ``openai``
package's connection limits and retry ``max_retries`` times (HTTP 408, 409, 429, 5xx and
timeouts: :func:`transient`; exponential backoff, ``Retry-After`` honoured); the plain JSON
client of an endpoint that is not OpenAI's API (:func:`json_client`) follows no redirect and
never retries. What a server said is one short line, the secrets of its URL (a password,
a token) written ``***`` (:func:`short`, :func:`kgbuild.io.urls.scrub`). ``openai`` and
``httpx2`` are imported when a client is made, never when this module is.
"""

from __future__ import annotations

import json

from ..io.urls import scrub


def openai_client(base_url: str | None, api_key: str | None, *, timeout: float,
                  max_retries: int, max_bytes: int, asynchronous: bool = False,
                  event_hooks: dict | None = None):
    """An ``openai.OpenAI`` (``asynchronous``: ``openai.AsyncOpenAI``) client for
    ``base_url`` (None: ``$OPENAI_BASE_URL``, else OpenAI's) on a bounded HTTP client;
    ``api_key`` None sends a placeholder (local servers need none)."""
    import openai

    from ..io.http import AsyncClient, Bounds, Client

    http = (AsyncClient if asynchronous else Client)(
        Bounds(timeout, max_bytes), follow_redirects=True,
        limits=openai.DEFAULT_CONNECTION_LIMITS, event_hooks=event_hooks)
    make = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    return make(api_key=api_key or "unused", base_url=base_url, timeout=timeout,
                max_retries=max_retries, http_client=http)


def json_client(timeout: float, max_bytes: int):
    """A bounded :class:`kgbuild.io.http.Client` for an endpoint that is not OpenAI's API
    (e.g. ``/rerank``)."""
    from ..io.http import Bounds, Client

    return Client(Bounds(timeout, max_bytes), follow_redirects=False)


def transient(exc: Exception) -> bool:
    """Whether the ``openai`` client retries ``exc``: a timeout, no connection, or HTTP 408,
    409, 429 or 5xx."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError)  # (timeouts included)


def says(exc: Exception) -> str:
    """Everything an API error says: its message and the body the server sent."""
    body = getattr(exc, "body", None)
    return f"{exc} {json.dumps(body) if isinstance(body, (dict, list)) else body or ''}"


def short(exc: Exception, secrets=(), limit: int = 300) -> str:
    """An error's message on one line of at most ``limit`` characters, ``secrets`` (a
    server URL's: :func:`kgbuild.io.urls.url_secrets`) written ``***``."""
    text = " ".join(scrub(str(exc), secrets).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
