"""The optional rerank step of passage retrieval: a rerank endpoint reorders the best fused
candidates.

The API is the one llama.cpp's server, vLLM, Infinity, TEI, Jina and Cohere serve:
``POST {base}/rerank`` (a base ending in ``/v1`` gives ``.../v1/rerank``; a URL already
ending in ``/rerank`` is used as given) with ``{"model", "query", "documents", "top_n"}``,
answered ``{"results": [{"index", "relevance_score"}, ...]}`` (Cohere v1/v2, Jina, vLLM,
llama.cpp) or a list of ``{"index", "score"}`` (TEI). Documents the answer leaves out are
ranked after the scored ones, in the order they were sent.

Settings, first found: the arguments (``--rerank-url``, ``--rerank-model``,
``--rerank-top``), the environment (``$KGBUILD_RERANK_URL``, ``$KGBUILD_RERANK_MODEL``),
the project's ``[rerank]`` table (``base_url``, ``model``, ``top_n``, ``timeout``). The key
sent (``Authorization: Bearer``) is ``$KGBUILD_RERANK_API_KEY``, else ``$OPENAI_API_KEY``;
it is withheld from a URL taken from the project file (a checkout must not learn the key by
naming its own server) unless the user passes ``--trust-project-url``.

Every request goes through :mod:`kgbuild.io.http` (a total deadline, a size cap); every
failure is one :class:`KgbuildError` line (codes ``rerank``, ``rerank-answer``,
``rerank-too-large``) with the URL redacted.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Mapping

from ..errors import KgbuildError
from ..io.urls import check_http_url, redact_url, scrub, url_secrets

TOP_N = 30  # fused candidates reranked by default
TIMEOUT = 60.0  # seconds for a whole request
MAX_BYTES = 8 << 20  # the largest answer read (30 scores take a few hundred bytes)
MAX_TOP = 1000


@dataclass(frozen=True)
class RerankSettings:
    """Where and how many candidates are reranked (see the module docstring)."""

    base_url: str
    model: str = ""
    top_n: int = TOP_N
    timeout: float = TIMEOUT
    max_bytes: int = MAX_BYTES
    api_key: str | None = field(default=None, repr=False)
    warning: str | None = None  # why a key was withheld, for the output's notes

    @classmethod
    def resolve(cls, *, base_url: str | None = None, model: str | None = None,
                top_n: int | None = None, timeout: float | None = None,
                trust_project_url: bool = False, config: Mapping | None = None,
                env: Mapping[str, str] | None = None) -> "RerankSettings | None":
        """The settings from arguments, environment and ``config`` (a project's checked
        ``[rerank]`` table), or None when no rerank URL is named anywhere."""
        env = os.environ if env is None else env
        config = dict(config or {})
        url = base_url or env.get("KGBUILD_RERANK_URL") or None
        from_project = False
        if not url and config.get("base_url"):
            url, from_project = config["base_url"], True
        if not url:
            return None
        check_http_url(url, "the rerank URL", "http://localhost:8080/v1")
        key = env.get("KGBUILD_RERANK_API_KEY") or env.get("OPENAI_API_KEY") or None
        warning = None
        if key and from_project and not trust_project_url:
            key = None
            warning = (f"no API key sent to {redact_url(url)}, the project file's "
                       f"rerank.base_url (pass --trust-project-url to send it)")
        top = top_n if top_n is not None else int(config.get("top_n", TOP_N))
        if not 1 <= top <= MAX_TOP:
            raise KgbuildError(f"the rerank top must be between 1 and {MAX_TOP}", code="usage")
        return cls(url.rstrip("/"),
                   model or env.get("KGBUILD_RERANK_MODEL") or config.get("model") or "",
                   top, float(timeout if timeout is not None else config.get("timeout", TIMEOUT)),
                   MAX_BYTES, key, warning)

    @property
    def endpoint(self) -> str:
        """The URL asked: ``{base}/rerank`` unless the base already ends in ``/rerank``."""
        return self.base_url if self.base_url.endswith("/rerank") else self.base_url + "/rerank"

    def describe(self) -> str:
        return f"{self.model or '(server default)'} at {redact_url(self.endpoint)}"


class Reranker:
    """A rerank endpoint's client (one bounded HTTP client, reused across questions)."""

    def __init__(self, settings: RerankSettings):
        from ..io.http import Bounds, Client

        self.settings = settings
        self.url = redact_url(settings.endpoint)
        self.client = Client(Bounds(settings.timeout, settings.max_bytes), follow_redirects=False)

    def close(self) -> None:
        self.client.close()

    def scores(self, query: str, documents: list[str]) -> list[float | None]:
        """The endpoint's score of each document (None for one it left out)."""
        if not documents:
            return []
        import httpx2

        from ..io.http import ResponseTooLarge

        s = self.settings
        body: dict = {"query": query, "documents": documents, "top_n": len(documents)}
        if s.model:
            body["model"] = s.model
        headers = {"Authorization": f"Bearer {s.api_key}"} if s.api_key else {}
        try:
            response = self.client.post(s.endpoint, json=body, headers=headers)
        except ResponseTooLarge as exc:
            raise KgbuildError(exc.message, code="rerank-too-large") from None
        except httpx2.TimeoutException:
            raise self._error(f"no answer within {s.timeout:g} s") from None
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
        return KgbuildError(scrub(f"rerank endpoint {self.url}: {why}",
                                  url_secrets(self.settings.base_url)),
                            code=code)


def reorder(scores: list[float | None]) -> list[int]:
    """Positions by score, best first; ties and unscored documents keep the order sent."""
    return sorted(range(len(scores)), key=lambda i: (scores[i] is None,
                                                     -(scores[i] or 0.0), i))
