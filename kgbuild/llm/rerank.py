"""A rerank endpoint's client: the score of each document for a query.

The API is the one llama.cpp's server, vLLM, Infinity, TEI, Jina and Cohere serve:
``POST {base}/rerank`` (a base ending in ``/v1`` gives ``.../v1/rerank``; a URL already
ending in ``/rerank`` is used as given: :func:`rerank_url`) with ``{"model", "query",
"documents", "top_n"}``, answered ``{"results": [{"index", "relevance_score"}, ...]}``
(Cohere v1/v2, Jina, vLLM, llama.cpp) or a list of ``{"index", "score"}`` (TEI). The key,
if any, is sent as ``Authorization: Bearer``.

Every request goes through :func:`kgbuild.llm.connect.json_client` (a total deadline, a size
cap, no redirect followed, no retry); every failure is one :class:`KgbuildError` line (codes
``rerank``, ``rerank-answer``, ``rerank-too-large``) with the URL's secrets redacted.
"""

from __future__ import annotations

import json
import math

from ..errors import KgbuildError
from ..io.urls import redact_url, scrub, url_secrets
from .connect import json_client

TIMEOUT = 60.0  # seconds for a whole request
MAX_BYTES = 8 << 20  # the largest answer read (30 scores take a few hundred bytes)


def rerank_url(base_url: str) -> str:
    """The URL asked: ``{base}/rerank`` unless the base already ends in ``/rerank``."""
    return base_url if base_url.endswith("/rerank") else base_url + "/rerank"


class Reranker:
    """A rerank endpoint's client (one bounded HTTP client, reused across questions);
    ``model`` empty: the server's."""

    def __init__(self, base_url: str, model: str = "", api_key: str | None = None,
                 timeout: float = TIMEOUT, max_bytes: int = MAX_BYTES):
        self.endpoint = rerank_url(base_url)
        self.model, self.api_key, self.timeout = model, api_key, timeout
        self.url = redact_url(self.endpoint)
        self.secrets = url_secrets(base_url)
        self.client = json_client(timeout, max_bytes)

    def close(self) -> None:
        self.client.close()

    def scores(self, query: str, documents: list[str]) -> list[float | None]:
        """The endpoint's score of each document (None for one it left out)."""
        if not documents:
            return []
        import httpx2

        from ..io.http import ResponseTooLarge

        body: dict = {"query": query, "documents": documents, "top_n": len(documents)}
        if self.model:
            body["model"] = self.model
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            response = self.client.post(self.endpoint, json=body, headers=headers)
        except ResponseTooLarge as exc:
            raise KgbuildError(exc.message, code="rerank-too-large") from None
        except httpx2.TimeoutException:
            raise self._error(f"no answer within {self.timeout:g} s") from None
        except (httpx2.HTTPError, httpx2.StreamError) as exc:
            raise self._error(f"{type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            text = " ".join(response.text.split())[:200]
            raise self._error(f"HTTP {response.status_code}" + (f": {text}" if text else ""))
        try:
            answer = json.loads(response.content)
        except (ValueError, UnicodeDecodeError):
            raise self._error("the answer is not JSON", "rerank-answer") from None
        return self._read(answer, len(documents))

    def _read(self, answer, n: int) -> list[float | None]:
        items = answer.get("results") if isinstance(answer, dict) else answer
        if not isinstance(items, list):
            raise self._error("the answer has no results list", "rerank-answer")
        out: list[float | None] = [None] * n
        for item in items:
            index = item.get("index") if isinstance(item, dict) else None
            score = (item.get("relevance_score", item.get("score"))
                     if isinstance(item, dict) else None)
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < n:
                raise self._error(f"a result's index is not one of the {n} documents sent",
                                  "rerank-answer")
            if isinstance(score, bool) or not isinstance(score, (int, float)) or \
                    not math.isfinite(score):
                raise self._error(f"document {index} has no finite score", "rerank-answer")
            if out[index] is not None:
                raise self._error(f"document {index} is scored twice", "rerank-answer")
            out[index] = float(score)
        return out

    def _error(self, why: str, code: str = "rerank") -> KgbuildError:
        return KgbuildError(scrub(f"rerank endpoint {self.url}: {why}", self.secrets), code=code)
