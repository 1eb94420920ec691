"""The optional rerank step of passage retrieval: a rerank endpoint
(:class:`kgbuild.llm.rerank.Reranker`: the API, its bounds and errors) reorders the best
fused candidates. Documents the answer leaves out are ranked after the scored ones, in the
order they were sent.

Settings, first found: the arguments (``--rerank-url``, ``--rerank-model``,
``--rerank-top``), the environment (``$KGBUILD_RERANK_URL``, ``$KGBUILD_RERANK_MODEL``),
the project's ``[rerank]`` table (``base_url``, ``model``, ``top_n``, ``timeout``). The key
sent (``Authorization: Bearer``) is ``$KGBUILD_RERANK_API_KEY``, else ``$OPENAI_API_KEY``;
it is withheld from a URL taken from the project file (a checkout must not learn the key by
naming its own server) unless the user passes ``--trust-project-url``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

from ..errors import KgbuildError
from ..io.urls import check_http_url, redact_url
from ..llm.rerank import MAX_BYTES, TIMEOUT, Reranker, rerank_url

TOP_N = 30  # fused candidates reranked by default
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
        """The URL asked (:func:`~kgbuild.llm.rerank.rerank_url`)."""
        return rerank_url(self.base_url)

    def describe(self) -> str:
        return f"{self.model or '(server default)'} at {redact_url(self.endpoint)}"

    def client(self) -> Reranker:
        """The endpoint's client (close it when done)."""
        return Reranker(self.base_url, self.model, self.api_key, self.timeout, self.max_bytes)


def reorder(scores: list[float | None]) -> list[int]:
    """Positions by score, best first; ties and unscored documents keep the order sent."""
    return sorted(range(len(scores)), key=lambda i: (scores[i] is None,
                                                     -(scores[i] or 0.0), i))
