"""The on-disk response cache and the remembered capability of each endpoint.

Layout of a cache folder (``<store>/llm-cache/``)::

    ab/ab12....json   one answer: keyed by model, mode, the full prompt and the schema digest
    modes.json        per (endpoint, model): the structured-output mode that worked, and what
                      the endpoint rejected on the way

Every file is written atomically (temporary file, then rename): a killed run leaves whole
entries or none. Answers are not fsynced (that took 3 ms each, in the event loop, between
answers): after a power loss an entry may be empty, and a damaged entry is ignored (and
overwritten by the next answer), never trusted. The modes file is fsynced. A write may be
left to a background thread (``behind=True``; :meth:`ResponseCache.flush` waits for it): the
client's event loop then sends the next request instead of waiting for the disk (1-20 ms an
answer on a busy machine).
"""

from __future__ import annotations

import hashlib
import json
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from ..io.atomic import atomic_write

MODES_FILE = "modes.json"


def digest(value: object) -> str:
    """SHA-256 of a JSON-ready value, in a canonical form (sorted keys, no spaces)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"),
                                     ensure_ascii=False).encode("utf-8")).hexdigest()


def request_key(model: str, mode: str, messages: list[dict], schema_digest: str) -> str:
    """The cache key of one request: what the answer depends on, and nothing else (not the
    endpoint's URL, so a model served elsewhere reuses its answers)."""
    return digest({"model": model, "mode": mode, "messages": messages, "schema": schema_digest})


class ResponseCache:
    """Answers by request key; ``folder=None`` keeps them in memory for the run only."""

    def __init__(self, folder: str | Path | None):
        self.folder = Path(folder) if folder is not None else None
        self._memory: dict[str, dict] = {}
        self._writer: ThreadPoolExecutor | None = None  # the writes left behind, in order
        self._failed: BaseException | None = None  # the first of them that failed
        self._lock = threading.Lock()  # (the warm-up's thread and the caller's may write)

    def _file(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        if key in self._memory:
            return self._memory[key]
        if self.folder is None:
            return None
        try:
            entry = json.loads(self._file(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            return None
        self._memory[key] = entry
        return entry

    def put(self, key: str, entry: dict, *, behind: bool = False) -> None:
        """Keep ``entry`` under ``key`` (readable at once); ``behind``: write its file in the
        background (see :meth:`flush`)."""
        self._memory[key] = entry
        if self.folder is not None:
            self._write(lambda: atomic_write(
                self._file(key), json.dumps(entry, sort_keys=True, ensure_ascii=False),
                durable=False), behind)

    def flush(self) -> None:
        """Wait for the writes left behind; raise the first one's error, if any."""
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.shutdown(wait=True)
        failed, self._failed = self._failed, None
        if failed is not None:
            raise failed

    def _write(self, write: Callable[[], None], behind: bool) -> None:
        if not behind:
            write()
            return
        if self._failed is not None:  # (a cache that cannot be written stops the run, as before)
            self.flush()
        with self._lock:
            if self._writer is None:
                self._writer = ThreadPoolExecutor(1, thread_name_prefix="kgbuild-llm-cache")
            self._writer.submit(write).add_done_callback(self._note)

    def _note(self, done: Future) -> None:
        if done.exception() is not None and self._failed is None:
            self._failed = done.exception()

    # -- what each endpoint accepts ---------------------------------------------------------------
    def modes(self) -> dict[str, dict]:
        if self.folder is None:
            return dict(self._memory.get(MODES_FILE, {}))
        try:
            data = json.loads((self.folder / MODES_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def remembered_mode(self, endpoint: str, model: str) -> dict | None:
        entry = self.modes().get(f"{endpoint} {model}")
        return entry if isinstance(entry, dict) and isinstance(entry.get("mode"), str) else None

    def remember_mode(self, endpoint: str, model: str, mode: str, rejected: list[dict], *,
                      behind: bool = False) -> None:
        """Remember the mode an endpoint and model answered in (``behind``: see :meth:`put`)."""
        entry = {"mode": mode, "rejected": list(rejected)}

        def write() -> None:
            data = self.modes()
            data[f"{endpoint} {model}"] = entry
            if self.folder is None:
                self._memory[MODES_FILE] = data
            else:
                atomic_write(self.folder / MODES_FILE, json.dumps(data, sort_keys=True, indent=1))
        self._write(write, behind and self.folder is not None)
