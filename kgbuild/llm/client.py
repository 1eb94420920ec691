"""An OpenAI-compatible chat client for structured extraction, on the real ``openai`` package.

* **Concurrency**: at most ``concurrency`` requests in flight (an asyncio semaphore over one
  ``AsyncOpenAI`` client per run); the client's own retries (``max_retries``, exponential
  backoff, ``Retry-After`` honoured) cover 408/409/429/5xx and timeouts.
* **Bounds** (:mod:`kgbuild.llm.connect`): an attempt ends ``timeout`` seconds after it starts,
  whatever the server sends; a request is tried at most ``1 + max_retries`` times (the first
  request's mode probe included). An answer larger than ``max_response_bytes`` (received or
  decompressed) stops the run with one error (code ``llm-too-large``).
* **Structured output**, best first (:data:`~kgbuild.llm.settings.MODES`): ``json_schema``
  (strict), then ``json_object`` with the schema attached (llama.cpp's server turns it into a
  grammar), then plain ``json_object``. A server that rejects a mode (HTTP 400/422/500, or
  501, whose message names ``response_format``, ``json_schema``, ...) is asked in the next
  one. Until a mode has worked for an endpoint and model, requests go one at a time, and the
  first one is sent without retries, so a rejection costs one request, not one per chunk or
  retry; the mode that worked is remembered for the run and in the cache folder.
* **Validation**: every answer is checked (by default: a JSON object with the schema's
  required keys and types; callers pass their own check); a malformed answer gets ONE
  repair request showing the model its answer and the error.
* **Cache**: answers are kept under their request key (model, mode, full prompt, schema
  digest); a cached answer in any mode is reused, so a re-run makes no request at all.
* **Usage**: HTTP requests (retries included), cache hits, prompt/completion/cached tokens
  from the responses' ``usage``, repairs, failures, the mode used; cost from a price table.
* **Refusals**: an endpoint that refuses the key (401, 403) or the model (404), or cannot be
  reached at all before any answer, stops the run: nothing more is sent and :meth:`run`
  raises :class:`KgbuildError` (one line in the CLI), rather than failing every chunk.
* **Warm-up** (:meth:`LLMClient.warm_up`): requests sent in a background thread while this
  one reads the answers as they come; a request in flight there is waited for, never sent
  twice.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ..errors import KgbuildError
from ..io.http import ResponseTooLarge, mib
from ..io.urls import url_secrets
from .cache import ResponseCache, digest, request_key
from .connect import openai_client, says, short, transient
from .settings import MODES, LLMSettings

Check = Callable[[str], "str | None"]  # an answer -> why it must be repaired, or None
Progress = Callable[[int, int], None]  # (done, total)

REPAIR_PROMPT = ("Your previous answer could not be used: {error}. Answer again with only the "
                 "corrected JSON object, in exactly the requested format, and nothing else.")

# what servers say when they do not support a response_format (OpenAI, vLLM, Ollama, llama.cpp)
_CAPABILITY = re.compile(r"response_format|json_schema|json[ _-]?schema|json_object|"
                         r"structured output|'text'|grammar|guided", re.I)
_REJECTING_STATUS = {400, 422, 500, 501}


@dataclass(frozen=True)
class Request:
    """One chat request: the messages and the JSON schema its answer must follow. ``tag``
    names it in errors (e.g. a chunk ID)."""

    messages: tuple[dict, ...]
    schema: dict
    schema_name: str = "kgbuild_extraction"
    tag: str = ""

    @property
    def schema_digest(self) -> str:
        return digest(self.schema)


@dataclass
class Completion:
    """The answer to a :class:`Request` (or why there is none)."""

    text: str | None
    mode: str | None = None
    cached: bool = False
    repaired: bool = False
    invalid: str | None = None  # still failing the check after the repair
    error: str | None = None  # no answer: the request failed (after retries)
    usage: dict = field(default_factory=dict)


@dataclass
class Usage:
    """What a run cost: HTTP requests, cache hits, tokens, failures."""

    requests: int = 0  # HTTP requests sent (retries and repairs included)
    completions: int = 0  # answers obtained from the endpoint
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # prompt tokens the provider reported as prefix-cached
    repairs: int = 0
    failures: int = 0
    modes: dict[str, int] = field(default_factory=dict)  # answers obtained per mode
    rejected_modes: list[dict] = field(default_factory=list)

    def add_tokens(self, usage: dict) -> None:
        self.prompt_tokens += usage.get("prompt_tokens", 0)
        self.completion_tokens += usage.get("completion_tokens", 0)
        self.cached_prompt_tokens += usage.get("cached_tokens", 0)

    def to_dict(self, settings: LLMSettings | None = None) -> dict:
        out = asdict(self)
        price = settings.price if settings else None
        out["estimated_cost_usd"] = (round(price.cost(self.prompt_tokens, self.completion_tokens), 6)
                                     if price else None)
        return out


class LLMClient:
    """Runs :class:`Request` batches against one endpoint and model (see the module doc)."""

    def __init__(self, settings: LLMSettings, cache_dir: str | Path | None = None):
        if settings.concurrency < 1:
            raise KgbuildError("concurrency must be at least 1")
        self.settings = settings
        self.cache = ResponseCache(cache_dir)
        self.usage = Usage()
        remembered = self.cache.remembered_mode(settings.endpoint, settings.model)
        start = settings.structured_output
        if start == "auto":
            self.mode = remembered["mode"] if remembered and remembered["mode"] in MODES else MODES[0]
            self.confirmed = remembered is not None and remembered["mode"] in MODES
        else:
            self.mode, self.confirmed = start, False
        if remembered and self.confirmed:
            self.usage.rejected_modes = list(remembered.get("rejected", []))
        self._fresh: set[str] = set()  # keys answered by the endpoint during this run
        self._fatal: str | None = None  # the endpoint refuses us (key, model, address): stop
        self._fatal_code = "llm"
        self._secrets = url_secrets(settings.base_url or "")  # kept out of what servers say
        self._flight: dict[str, threading.Event] = {}  # requests being sent, set once answered
        self._warming: threading.Thread | None = None
        self._warm_sent = threading.Event()  # the warm-up's first batch is in flight
        self._warm_error: BaseException | None = None

    # -- the public, synchronous API --------------------------------------------------------------
    def run(self, requests: Sequence[Request], check: Check | None = None,
            progress: Progress | None = None) -> list[Completion]:
        """Answer every request (cached answers first, the rest concurrently); the results are
        in request order. Never raises for a failed request: its Completion has ``error``."""
        results: list[Completion | None] = [self._cached(r) for r in requests]
        todo = [i for i, c in enumerate(results) if c is None]
        warming = self._warming
        if todo and warming is not None and warming is not threading.current_thread():
            results, todo = self._from_warm_up(requests, results, todo)
        done = len(requests) - len(todo)
        if progress and requests:
            progress(done, len(requests))
        if todo:
            flight = {i: self._flight.setdefault(_flight_key(requests[i]), threading.Event())
                      for i in todo}
            if warming is threading.current_thread():
                self._warm_sent.set()
            try:
                fresh = asyncio.run(self._run_all([requests[i] for i in todo], check, progress,
                                                  done, len(requests), [flight[i] for i in todo]))
            finally:
                for i, event in flight.items():
                    event.set()
                    self._flight.pop(_flight_key(requests[i]), None)
                self.cache.flush()
            for i, c in zip(todo, fresh):
                results[i] = c
        if self._fatal:
            raise KgbuildError(f"LLM endpoint {self.settings.endpoint} (model "
                               f"{self.settings.model!r}): {self._fatal}", code=self._fatal_code)
        return [c for c in results if c is not None]

    def warm_up(self, send: Callable[[], None]) -> None:
        """Call ``send`` (which runs requests through this client) in a background thread
        and return once its first requests are out (or it ended). Until :meth:`finish_warm_up`,
        a :meth:`run` here takes the answer of a request in flight there when it comes, and
        waits for the whole warm-up before sending one it did not ask."""
        def warm() -> None:
            try:
                send()
            except BaseException as exc:  # raised by finish_warm_up
                self._warm_error = exc
            finally:
                self._warm_sent.set()

        self._warm_sent.clear()
        self._warming = threading.Thread(target=warm, name="kgbuild-llm-warm-up", daemon=True)
        self._warming.start()
        self._warm_sent.wait()

    def finish_warm_up(self) -> None:
        """Wait for the warm-up to end; raise its error, if any."""
        if self._warming is not None:
            self._warming.join()
            self._warming = None
        error, self._warm_error = self._warm_error, None
        if error is not None:
            raise error

    def _from_warm_up(self, requests: Sequence[Request], results: list, todo: list[int]
                      ) -> tuple[list, list[int]]:
        """The warm-up's answers to ``todo``: each request in flight there waited for, then
        (any still missing) the whole warm-up."""
        for i in todo:
            event = self._flight.get(_flight_key(requests[i]))
            if event is not None:
                event.wait()
        results = [c if c is not None else self._cached(r) for r, c in zip(requests, results)]
        if None in results:
            self.finish_warm_up()
            results = [c if c is not None else self._cached(r) for r, c in zip(requests, results)]
        return results, [i for i, c in enumerate(results) if c is None]

    def cached(self, request: Request) -> bool:
        """Whether an answer to ``request`` is in the cache (no request needed)."""
        return self._lookup(request) is not None

    def mode_report(self) -> dict:
        """The mode requests were driven in, whether the endpoint confirmed it, and what it
        rejected on the way."""
        return {"endpoint": self.settings.endpoint, "model": self.settings.model,
                "mode": self.mode, "confirmed": self.confirmed,
                "rejected": list(self.usage.rejected_modes)}

    # -- cache ------------------------------------------------------------------------------------
    def _keys(self, request: Request) -> list[tuple[str, str]]:
        order = [self.mode] + [m for m in MODES if m != self.mode]
        sd = request.schema_digest
        return [(m, request_key(self.settings.model, m, list(request.messages), sd)) for m in order]

    def _lookup(self, request: Request) -> tuple[str, dict] | None:
        for mode, key in self._keys(request):
            entry = self.cache.get(key)
            if entry is not None:
                return mode, {**entry, "_key": key}
        return None

    def _cached(self, request: Request) -> Completion | None:
        found = self._lookup(request)
        if found is None:
            return None
        mode, entry = found
        if entry.get("_key") not in self._fresh:  # not an answer this very run just obtained
            self.usage.cache_hits += 1
        return Completion(entry["text"], mode, True, bool(entry.get("repaired")),
                          entry.get("invalid"), None, dict(entry.get("usage") or {}))

    # -- sending ----------------------------------------------------------------------------------
    async def _run_all(self, requests: list[Request], check: Check | None,
                       progress: Progress | None, done: int, total: int,
                       answered: list[threading.Event]) -> list[Completion]:
        async def count(_request) -> None:
            self.usage.requests += 1

        s = self.settings
        client = openai_client(s.base_url, s.api_key, timeout=s.timeout,
                               max_retries=s.max_retries, max_bytes=s.max_response_bytes,
                               asynchronous=True, event_hooks={"request": [count]})
        sem = asyncio.Semaphore(self.settings.concurrency)
        probe = asyncio.Lock()
        finished = [done]
        inflight: dict[str, asyncio.Future] = {}

        async def one(request: Request, answered: threading.Event) -> Completion:
            key = self._keys(request)[0][1]
            if key in inflight:  # the same prompt twice in one batch: ask once
                return await asyncio.shield(inflight[key])
            future = asyncio.get_running_loop().create_future()
            inflight[key] = future
            async with sem:
                if self._fatal:  # nothing more is sent once the endpoint refused us
                    result = Completion(None, self.mode, error=self._fatal)
                else:
                    result = await self._complete(client, request, check, probe)
            future.set_result(result)
            answered.set()
            finished[0] += 1
            if progress:
                progress(finished[0], total)
            return result

        try:
            return list(await asyncio.gather(*(one(r, a) for r, a in zip(requests, answered))))
        finally:
            await client.close()

    async def _complete(self, client, request: Request, check: Check | None,
                        probe: asyncio.Lock) -> Completion:
        messages = list(request.messages)
        try:
            probed = None
            if not self.confirmed:
                async with probe:  # one request at a time until a mode has worked
                    if self._fatal:
                        return Completion(None, self.mode, error=self._fatal)
                    if not self.confirmed:
                        probed = await self._probe(client, request, messages)
            if probed is not None:
                text, usage, mode = probed
            else:  # (sent outside the lock: the others waiting for it go concurrently)
                mode = self.mode
                text, usage = await self._send(client, request, messages, mode)
        except Exception as exc:  # the client raises many transport and API error types
            return self._failed(request, exc)
        tokens = dict(usage)
        problem = (check or default_check(request.schema))(text)
        repaired = False
        if problem:
            repair = messages + [{"role": "assistant", "content": text},
                                 {"role": "user", "content": REPAIR_PROMPT.format(error=problem)}]
            try:
                text, more = await self._send(client, request, repair, mode)
            except Exception as exc:
                return self._failed(request, exc)
            self.usage.repairs += 1
            repaired = True
            for k, v in more.items():
                tokens[k] = tokens.get(k, 0) + v
            problem = (check or default_check(request.schema))(text)
        entry = {"text": text, "usage": tokens, "repaired": repaired, "invalid": problem,
                 "model": self.settings.model, "mode": mode}
        key = request_key(self.settings.model, mode, messages, request.schema_digest)
        self._fresh.add(key)
        self.cache.put(key, entry, behind=True)  # (on disk before run returns)
        return Completion(text, mode, False, repaired, problem, None, tokens)

    async def _probe(self, client, request: Request, messages: list[dict]
                     ) -> tuple[str, dict, str]:
        """The first request to an endpoint whose mode is not known yet: each mode, best first,
        sent once without retries; a rejection moves on to the next mode, anything else is
        retried as usual, this first attempt counted. The mode that answers is remembered."""
        import openai

        modes = list(MODES[MODES.index(self.mode):])
        rest = client.with_options(max_retries=max(self.settings.max_retries - 1, 0))
        for i, mode in enumerate(modes):
            self.mode = mode
            try:
                text, usage = await self._send(client.with_options(max_retries=0), request,
                                               messages, mode)
            except openai.APIError as exc:
                if rejects_format(exc) and i + 1 < len(modes):
                    self.usage.rejected_modes.append(
                        {"mode": mode, "status": exc.status_code,
                         "message": short(exc, self._secrets)})
                    continue
                if not self.settings.max_retries or not transient(exc):
                    raise
                text, usage = await self._send(rest, request, messages, mode)
            self.confirmed = True
            self.cache.remember_mode(self.settings.endpoint, self.settings.model, mode,
                                     self.usage.rejected_modes, behind=True)
            return text, usage, mode
        raise KgbuildError("no structured-output mode left to try")  # pragma: no cover

    async def _send(self, client, request: Request, messages: list[dict], mode: str
                    ) -> tuple[str, dict]:
        # posted as it is: the same JSON on the wire as chat.completions.create sends, without
        # its typed transform walking the body (the schema took 4 ms of CPU per request, the
        # messages 0.3 ms, measured), with the client's retries and errors
        from openai.types.chat import ChatCompletion

        response = await client.post("/chat/completions", cast_to=ChatCompletion,
                                     body=chat_body(self.settings, request, mode, messages))
        self.usage.completions += 1
        self.usage.modes[mode] = self.usage.modes.get(mode, 0) + 1
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content if choice and choice.message else None) or ""
        usage = _usage(response)
        self.usage.add_tokens(usage)
        return text, usage

    def _failed(self, request: Request, exc: Exception) -> Completion:
        import openai

        self.usage.failures += 1
        if isinstance(exc, ResponseTooLarge):  # a server that floods us once will again: stop
            message = (f"an answer was larger than {mib(self.settings.max_response_bytes)} "
                       f"(the limit; --max-response-size)")
            if not self._fatal:
                self._fatal, self._fatal_code = message, "llm-too-large"
            return Completion(None, self.mode, error=message)
        message = f"{type(exc).__name__}: {short(exc, self._secrets)}"
        refused = isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError,
                                   openai.NotFoundError))
        unreachable = not self.confirmed and isinstance(exc, openai.APIConnectionError) \
            and not isinstance(exc, openai.APITimeoutError)
        if (refused or unreachable) and not self._fatal:
            hint = " (is $OPENAI_API_KEY set for this endpoint?)" if isinstance(
                exc, openai.AuthenticationError) else " (is the server running?)" if unreachable \
                else ""
            self._fatal = message + hint
        return Completion(None, self.mode, error=message)


def _flight_key(request: Request) -> str:
    """A request whatever the mode it is sent in (the mode may change on the way)."""
    return request_key("", "", list(request.messages), request.schema_digest)


def chat_body(settings: LLMSettings, request: Request, mode: str,
              messages: Sequence[dict] | None = None) -> dict:
    """The JSON body of the chat request for ``request`` in ``mode`` (``messages``: a repair's
    instead of the request's): what the live client sends, and what a batch line carries."""
    return {"model": settings.model,
            "messages": list(request.messages if messages is None else messages),
            "temperature": settings.temperature, "max_tokens": settings.max_tokens,
            "response_format": response_format(mode, request.schema, request.schema_name)}


def response_format(mode: str, schema: dict, name: str) -> dict:
    """The ``response_format`` parameter of a mode."""
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_object"}


def rejects_format(exc) -> bool:
    """Whether an API error says the server does not support the requested response_format."""
    status = getattr(exc, "status_code", None)
    if status not in _REJECTING_STATUS:
        return False
    return bool(_CAPABILITY.search(says(exc)))


def _usage(response) -> dict:
    u = getattr(response, "usage", None)
    if u is None:
        return {}
    out = {"prompt_tokens": int(getattr(u, "prompt_tokens", 0) or 0),
           "completion_tokens": int(getattr(u, "completion_tokens", 0) or 0)}
    details = getattr(u, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if cached:
        out["cached_tokens"] = int(cached)
    return out


# -- answer checks --------------------------------------------------------------------------------
_FENCED = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n?(.*?)```\s*$", re.S)


def load_json(text: str) -> object:
    """The JSON value of an answer (a whole-answer code fence is allowed); raises ValueError."""
    m = _FENCED.match(text)
    return json.loads(m.group(1) if m else text)


def default_check(schema: dict) -> Check:
    """A check: the answer is JSON whose shape follows ``schema`` (types, required keys, array
    items, ``anyOf``). Enums are not checked here: a value outside one is the verifier's call
    (it has a reason code for it), not a reason to pay for a repair."""
    def check(text: str) -> str | None:
        try:
            value = load_json(text)
        except (ValueError, RecursionError) as exc:
            return f"not valid JSON ({exc})"
        return shape_error(value, schema)
    return check


_JSON_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def shape_error(value: object, schema: dict, where: str = "$") -> str | None:
    """The first way ``value`` breaks ``schema``'s shape, or None (``$.relations[0].subject
    must be string``)."""
    if not isinstance(schema, dict):
        return None
    if "anyOf" in schema:
        if any(shape_error(value, s, where) is None for s in schema["anyOf"]):
            return None
        return f"{where} matches none of the allowed forms"
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is(value, t) for t in names):
            return f"{where} must be {' or '.join(names)}"
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                return f"{where} lacks the required key {key!r}"
        for key, sub in (schema.get("properties") or {}).items():
            if key in value:
                err = shape_error(value[key], sub, f"{where}.{key}")
                if err:
                    return err
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            err = shape_error(item, schema["items"], f"{where}[{i}]")
            if err:
                return err
    return None


def _is(value: object, type_name: str) -> bool:
    if type_name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if type_name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    t = _JSON_TYPES.get(type_name)
    return t is None or isinstance(value, t)


def estimate_tokens(text: str) -> int:
    """A rough token count for ``--dry-run``: characters / 4 (no tokenizer is loaded)."""
    return (len(text) + 3) // 4
