"""A project: the settings a folder's builds share, from ``kgbuild.toml`` or ``[tool.kgbuild]``.

The configuration is found like ruff's: from the working directory upwards, the first
``kgbuild.toml``, or ``pyproject.toml`` with a ``[tool.kgbuild]`` table, wins; its folder is
the project root. Without one, the working directory is the root and everything has its
default. Relative paths in the file are relative to the root; flags given on the command line
override the file (and are relative to the working directory, as usual)::

    # kgbuild.toml (in pyproject.toml the same keys go under [tool.kgbuild])
    sources = ["catalog", "services"]      # what `kgbuild build` with no arguments builds
    schema = "software"                    # bundled name, or a path to a schema YAML
    store = ".kgbuild"
    exclude = ["tests/data/**", "**/fixtures/"]   # gitignore-style, matched against document IDs
    gitignore = true                       # honour .gitignore files of scanned folders
    access = "access.yaml"
    aliases = "aliases.yaml"
    max_file_size = 20                     # MiB

    [llm]                                  # `kgbuild extract` (text through an LLM); see LLM_KEYS
    model = "gpt-4o-mini"
    base_url = "http://localhost:11434/v1" # any OpenAI-compatible endpoint
    concurrency = 8
    timeout = 120                          # seconds for a whole request attempt
    max_response_size = 32                 # MiB: the largest answer read
    mode = "chunk"                         # or "document"
    price = {input = 0.15, output = 0.60}  # US dollars per million tokens (cost estimate)

    [backstage]                            # a running Backstage's catalog, also read by
    url = "http://localhost:7007"          # `kgbuild build` (the backend's base URL)
    token_env = "BACKSTAGE_TOKEN"          # the environment variable holding its token
    timeout = 600                          # seconds for the whole listing; see BACKSTAGE_KEYS

    [rerank]                               # `kgbuild retrieve`'s optional rerank step
    base_url = "http://localhost:8080/v1"  # POST {base_url}/rerank; see RERANK_KEYS
    top_n = 30                             # fused candidates reranked
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..io.suggest import did_you_mean

CONFIG_FILE = "kgbuild.toml"
_TYPES = {"sources": list, "schema": str, "store": str, "exclude": list, "gitignore": bool,
          "access": str, "aliases": str, "max_file_size": int, "llm": dict, "embeddings": dict,
          "backstage": dict, "rerank": dict}
# [embeddings]: passage retrieval's endpoint and models (kgbuild ingest, retrieve)
EMBEDDINGS_KEYS = ("base_url", "model", "query_model", "passage_prefix", "query_prefix")
# [llm]: key -> (type, low, high) for numbers, (str, allowed values or None) for text
LLM_KEYS: dict[str, tuple] = {
    "model": (str, None), "base_url": (str, None), "mode": (str, ("chunk", "document")),
    "structured_output": (str, ("auto", "json_schema", "json_object_schema", "json_object")),
    "concurrency": (int, 1, 256), "chunk_size": (int, 100, 1_000_000),
    "chunk_overlap": (int, 0, 500_000), "gleanings": (int, 0, 5), "max_retries": (int, 0, 10),
    "max_tokens": (int, 1, 1_000_000), "max_response_size": (int, 1, 1024),  # MiB
    "timeout": (float, 0.1, 3600.0), "temperature": (float, 0.0, 2.0), "price": (dict, None),
}
# [rerank]: passage retrieval's optional rerank endpoint (kgbuild retrieve; passages/rerank.py)
RERANK_KEYS: dict[str, tuple] = {
    "base_url": (str, None), "model": (str, None), "top_n": (int, 1, 1000),
    "timeout": (float, 0.1, 3600.0),
}
# [backstage]: a running Backstage's catalog API (kgbuild build; kgbuild.remote.backstage)
BACKSTAGE_KEYS: dict[str, tuple] = {
    "url": (str, None), "token_env": (str, None), "page_size": (int, 1, 10_000),
    "max_entities": (int, 1, 100_000_000), "max_page_size": (int, 1, 4096),  # MiB
    "timeout": (float, 1.0, 86_400.0), "request_timeout": (float, 0.1, 3600.0),
}


@dataclass(frozen=True)
class ProjectConfig:
    """Where a project is and the settings its builds use (see the module docstring)."""

    root: Path
    config: Path | None = None
    sources: tuple[str, ...] = ()
    schema: str = "software"
    store: str = ".kgbuild"
    exclude: tuple[str, ...] = ()
    gitignore: bool = True
    access: str | None = None
    aliases: str | None = None
    max_file_size: int = 20
    llm: dict = field(default_factory=dict, hash=False, compare=False)  # the [llm] table, checked
    embeddings: dict = field(default_factory=dict, hash=False, compare=False)  # [embeddings]
    backstage: dict = field(default_factory=dict, hash=False, compare=False)  # [backstage], checked
    rerank: dict = field(default_factory=dict, hash=False, compare=False)  # [rerank], checked

    def path(self, value: str) -> Path:
        """A path setting, relative to the project root."""
        return self.root / value

    def schema_ref(self) -> str:
        """The schema setting: a bundled name, or a path made relative to the root."""
        looks_like_path = self.schema.endswith((".yaml", ".yml")) or "/" in self.schema
        return str(self.path(self.schema)) if looks_like_path else self.schema

    def source_paths(self) -> list[Path]:
        return [self.path(s) for s in self.sources]

    def store_path(self) -> Path:
        return self.path(self.store)

    def access_path(self) -> Path | None:
        return self.path(self.access) if self.access else None

    def aliases_path(self) -> Path | None:
        return self.path(self.aliases) if self.aliases else None


def find_project(start: str | Path | None = None) -> ProjectConfig:
    """The project containing ``start`` (default: the working directory)."""
    here = Path(start or ".").resolve()
    for folder in (here, *here.parents):
        config = folder / CONFIG_FILE
        if config.is_file():
            return load_project(config)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and _has_tool_table(pyproject):
            return load_project(pyproject)
    return ProjectConfig(here)


def _has_tool_table(path: Path) -> bool:
    """Whether a ``pyproject.toml`` configures kgbuild: a ``tool.kgbuild`` table however
    written (``[tool.kgbuild]``, ``[tool.kgbuild.llm]``, dotted keys), or, in a file that is
    not valid TOML, anything that looks like one (so the syntax error is reported)."""
    try:
        text = _read(path)
    except (OSError, UnicodeDecodeError):
        return False
    try:
        tool = tomllib.loads(text).get("tool")
    except tomllib.TOMLDecodeError:
        return re.search(r"tool\s*\.\s*kgbuild\b|^\s*kgbuild\s*\.", text, re.M) is not None
    return isinstance(tool, dict) and "kgbuild" in tool


def _read(path: Path) -> str:
    """A TOML file's text; a UTF-8 byte order mark is allowed (and dropped)."""
    return path.read_text(encoding="utf-8-sig")


def load_project(path: str | Path) -> ProjectConfig:
    """Read one configuration file (``kgbuild.toml`` or a ``pyproject.toml``); raises
    :class:`InputError` naming the file, line and key for anything malformed (the line and
    column of a TOML syntax error)."""
    path = Path(path).resolve()
    try:
        text = _read(path)
        data = tomllib.loads(text)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8: {exc.reason}", str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise _syntax_error(exc, text, str(path)) from None
    prefix: tuple[str, ...] = ()
    if path.name == "pyproject.toml":
        prefix = ("tool", "kgbuild")
        table = data["tool"]["kgbuild"]  # there: found by _has_tool_table
        if not isinstance(table, dict):
            raise InputError("tool.kgbuild must be a table", str(path),
                             _line_of(text, prefix))
    else:
        table = data
    name = "tool.kgbuild." if prefix else ""  # keys named as the file names them
    values: dict = {}
    for key, value in table.items():
        line = _line_of(text, (*prefix, key))
        if key not in _TYPES:
            raise InputError(f"unknown setting {name + key!r}{did_you_mean(key, _TYPES)} (known: "
                             f"{', '.join(sorted(_TYPES))})", str(path), line)
        expected = _TYPES[key]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise InputError(f"{name}{key} must be a {expected.__name__}", str(path), line)
        if expected is list:
            if not all(isinstance(v, str) for v in value):
                raise InputError(f"{name}{key} must be a list of strings", str(path), line)
            value = tuple(value)
        if key == "max_file_size" and not 1 <= value <= 1 << 20:
            raise InputError(f"{name}max_file_size is in MiB, between 1 and 1048576", str(path),
                             line)
        if key == "llm":
            value = _llm_table(value, text, str(path), (*prefix, "llm"))
        if key == "embeddings":
            value = _embeddings_table(value, text, str(path))
        if key == "rerank":
            value = _llm_table(value, text, str(path), (*prefix, "rerank"), RERANK_KEYS)
        if key == "backstage":
            value = _llm_table(value, text, str(path), (*prefix, "backstage"), BACKSTAGE_KEYS)
            if "url" not in value:
                raise InputError(f"{name}backstage needs url (the backend's base URL)",
                                 str(path), line)
        values[key] = value
    return ProjectConfig(path.parent, path, **values)


def _embeddings_table(table: dict, text: str, name: str) -> dict:
    """The ``[embeddings]`` table (``kgbuild ingest``/``retrieve``): known keys, text values."""
    for key, value in table.items():
        match = re.search(rf"^\s*{re.escape(key)}\s*=", text, re.M)
        line = text.count("\n", 0, match.start()) + 1 if match else None
        if key not in EMBEDDINGS_KEYS:
            raise InputError(f"unknown setting embeddings.{key}{did_you_mean(key, EMBEDDINGS_KEYS)} "
                             f"(known: {', '.join(EMBEDDINGS_KEYS)})", name, line)
        if not isinstance(value, str) or (not value.strip() and not key.endswith("prefix")):
            raise InputError(f"embeddings.{key} must be a non-empty string", name, line)
    return dict(table)


def _syntax_error(exc: tomllib.TOMLDecodeError, text: str, name: str) -> InputError:
    """A TOML syntax error located at its line, with its column in the message."""
    message = str(exc)
    at = re.search(r" \(at line (\d+), column (\d+)\)$", message)
    if at:
        line, column = int(at.group(1)), int(at.group(2))
    else:  # "(at end of document)"
        line = text.count("\n") + 1
        column = len(text) - text.rfind("\n")
    reason = re.sub(r" \(at [^()]*\)$", "", message)
    return InputError(f"TOML syntax error at column {column}: {reason}", name, line)


def _llm_table(table: dict, text: str, name: str, where: tuple[str, ...],
               keys: dict[str, tuple] = LLM_KEYS) -> dict:
    """The ``[llm]`` table (or another of ``keys``' form: ``[backstage]``), every key and
    value checked (one located error otherwise)."""
    out: dict = {}
    for key, value in table.items():
        line = _line_of(text, (*where, key))
        full = ".".join((*where, key))  # as the file names it: llm.x, tool.kgbuild.llm.x
        if key not in keys:
            raise InputError(f"unknown setting {full}{did_you_mean(key, keys)} (known: "
                             f"{', '.join(sorted(keys))})", name, line)
        spec = keys[key]
        kind = spec[0]
        ok = isinstance(value, kind) and not isinstance(value, bool)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            raise InputError(f"{full} must be a {'number' if kind is float else kind.__name__}",
                             name, line)
        if kind in (int, float) and not spec[1] <= value <= spec[2]:
            raise InputError(f"{full} must be between {spec[1]:g} and {spec[2]:g}", name, line)
        if kind is str and spec[1] is not None and value not in spec[1]:
            raise InputError(f"{full} must be one of {', '.join(spec[1])}", name, line)
        if kind is str and not value.strip():
            raise InputError(f"{full} must not be empty", name, line)
        if key == "price":
            for k, v in value.items():
                if k not in ("input", "output") or isinstance(v, bool) or not isinstance(
                        v, (int, float)) or not 0 <= v < 1e6:
                    raise InputError(f"{full} takes input and output, US dollars per million "
                                     f"tokens (numbers >= 0)", name,
                                     _line_of(text, (*where, key, k)))
            value = {k: float(v) for k, v in value.items()}
        out[key] = value
    return out


_HEADER = re.compile(r"^\s*\[\[?([^\[\]]+)\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"
                  r"\"[^\"]*\"|'[^']*'))*)\s*=")


def _key_path(dotted: str) -> tuple[str, ...]:
    """``tool . "kgbuild".llm`` -> ``("tool", "kgbuild", "llm")``."""
    return tuple(p.strip("\"'") for p in re.findall(r"\"[^\"]*\"|'[^']*'|[^.\s]+", dotted))


def _line_of(text: str, path: tuple[str, ...]) -> int | None:
    """The line that sets the key ``path`` (a table header or a dotted key, under the table
    it is in); else the line of the nearest enclosing key set on one line (an inline table)."""
    table: tuple[str, ...] = ()
    best = None
    for number, line in enumerate(text.split("\n"), 1):
        header = _HEADER.match(line)
        key = None if header else _KEY.match(line)
        if header:
            table = _key_path(header.group(1))
            found = table
        elif key:
            found = table + _key_path(key.group(1))
        else:
            continue
        if found == path:
            return number
        if key and best is None and path[:len(found)] == found:
            best = number
    return best
