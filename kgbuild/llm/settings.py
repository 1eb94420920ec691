"""Where an LLM run's settings come from: arguments, then the environment, then the project.

``model``: ``--model``, else ``$KGBUILD_MODEL``, else the project's ``[llm] model``;
``base_url``: ``--base-url``, else ``$OPENAI_BASE_URL``, else ``[llm] base_url``, else the
``openai`` client's default (OpenAI itself); ``max_tokens`` (completion tokens per answer,
default 4096) bounds how long a model that repeats itself keeps a request busy; ``timeout``
bounds each request attempt as a whole and ``max_response_bytes`` its answer (received and
decompressed). The key only from ``$OPENAI_API_KEY`` (never a file in the project; local
servers need none), and sent to a ``base_url`` the project file chose only when it is
OpenAI's own or the user opts in (``trust_project_url``): a checkout must not learn the key
by naming its own host. The price table is US dollars per million input and output tokens,
for the cost estimate only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping
from urllib.parse import urlsplit

from ..errors import InputError
from ..io.urls import check_http_url, redact_url

OPENAI_URL = "https://api.openai.com/v1"
MAX_RESPONSE_MIB = 32  # an answer of max_tokens (at most 1M tokens) is a few MiB of JSON
MODES = ("json_schema", "json_object_schema", "json_object")
"""Structured-output modes, best first: a strict JSON schema (OpenAI, vLLM, Ollama); JSON mode
with the schema attached (llama.cpp's server constrains by grammar); plain JSON mode, the
answer validated and repaired once."""


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float = 0.0
    output: float = 0.0

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000


@dataclass(frozen=True)
class LLMSettings:
    """Everything a :class:`~kgbuild.llm.client.LLMClient` needs to know."""

    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    concurrency: int = 4
    timeout: float = 120.0
    max_retries: int = 2
    max_tokens: int = 4096  # completion tokens per answer: a model that loops stops here
    temperature: float = 0.0
    structured_output: str = "auto"  # or one of MODES: start there (and never go higher)
    price: Price | None = None
    max_response_bytes: int = MAX_RESPONSE_MIB << 20  # of one answer, received and decompressed
    warning: str | None = field(default=None, compare=False)  # e.g. the key was withheld

    @property
    def endpoint(self) -> str:
        """The base URL (or OpenAI's) as shown and remembered: credentials redacted."""
        return redact_url((self.base_url or OPENAI_URL).rstrip("/"))

    @classmethod
    def resolve(cls, *, model: str | None = None, base_url: str | None = None,
                concurrency: int | None = None, timeout: float | None = None,
                max_retries: int | None = None, structured_output: str | None = None,
                max_tokens: int | None = None, max_response_mib: int | None = None,
                trust_project_url: bool = False, config: Mapping | None = None,
                env: Mapping[str, str] | None = None) -> "LLMSettings":
        """Arguments first, then the environment, then ``config`` (a project's ``[llm]``
        table, already checked); raises :class:`InputError` when no model is named.
        ``$OPENAI_API_KEY`` is withheld from a ``base_url`` taken from ``config`` (see the
        module doc), with a ``warning``, unless ``trust_project_url``."""
        env = os.environ if env is None else env
        config = config or {}
        model = model or env.get("KGBUILD_MODEL") or config.get("model")
        if not model:
            raise InputError("no model given: pass --model, set $KGBUILD_MODEL or the project's "
                             "[llm] model")
        so = structured_output or config.get("structured_output") or "auto"
        if so != "auto" and so not in MODES:
            raise InputError(f"structured_output must be auto or one of {', '.join(MODES)}, not {so!r}")
        price = config.get("price")
        base_url = base_url or env.get("OPENAI_BASE_URL") or None
        api_key, warning = env.get("OPENAI_API_KEY") or None, None
        if base_url is None and config.get("base_url"):
            base_url = config["base_url"]
            if api_key and not trust_project_url and _origin(base_url) != _origin(OPENAI_URL):
                api_key = None
                warning = (f"$OPENAI_API_KEY not sent to {redact_url(base_url)}, the project "
                           f"file's llm.base_url (pass --trust-project-url to send it)")
        if base_url is not None:
            check_http_url(base_url, "the LLM base URL", "http://localhost:11434/v1")
        mib = max_response_mib or config.get("max_response_size", MAX_RESPONSE_MIB)
        return cls(
            model=model,
            base_url=base_url,
            api_key=api_key,
            warning=warning,
            max_response_bytes=int(mib * (1 << 20)),
            concurrency=concurrency or int(config.get("concurrency", 4)),
            timeout=float(timeout if timeout is not None else config.get("timeout", 120.0)),
            max_retries=int(max_retries if max_retries is not None else config.get("max_retries", 2)),
            max_tokens=int(max_tokens or config.get("max_tokens", 4096)),
            temperature=float(config.get("temperature", 0.0)),
            structured_output=so,
            price=Price(float(price.get("input", 0.0)), float(price.get("output", 0.0)))
            if isinstance(price, Mapping) else None,
        )


def _origin(url: str) -> tuple | None:
    """A URL's scheme, host and port (None for a malformed URL)."""
    try:
        p = urlsplit(url)
        return p.scheme, p.hostname, p.port or {"http": 80, "https": 443}.get(p.scheme)
    except ValueError:
        return None
