"""Safe YAML reading: line numbers kept on every mapping and list, alias bombs refused.

The one YAML reader of kgbuild: catalog sources (:func:`load_yaml`) and the tool's own files
(schemas, ``access.yaml``, ``aliases.yaml``, retrieval cases: :func:`load_yaml_file`) all
go through it, so every YAML document read is bounded (a size cap on the file, a cap on the
values aliases expand to, recursive aliases refused) and every error names the file and line.
Duplicate mapping keys are an error, as in Backstage and Compose (PyYAML would silently keep
the last value); keys a ``<<`` merge brings in may be overridden, as YAML intends.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import InputError
from .text import decode_text

try:  # libyaml is much faster when present
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the platform build
    _Loader = yaml.SafeLoader


MAX_YAML_NODES = 1_000_000
MAX_CONFIG_BYTES = 20 * 1024 * 1024  # the tool's own YAML files (schema, access, aliases, cases)
_scalars = yaml.constructor.SafeConstructor()


class YMap(dict):
    """A YAML mapping that remembers the line of each key (1-based) and its own line."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.line, self.lines = 0, {}

    def line_of(self, key: str) -> int:
        return self.lines.get(key, self.line)


class YList(list):
    """A YAML sequence that remembers the line of each item (1-based) and its own line."""

    def __init__(self, *args):
        super().__init__(*args)
        self.line, self.lines = 0, []

    def line_of(self, index: int) -> int:
        return self.lines[index] if 0 <= index < len(self.lines) else self.line


class YamlError(InputError):
    """The text is not acceptable YAML: syntax, alias bomb, duplicate or unhashable key, bad
    value, several documents where one is expected (reading problems are plain InputErrors)."""


class DuplicateKeyError(YamlError):
    """A mapping names one key twice."""


@dataclass
class YamlDocument:
    data: object
    line: int  # line the document starts on (1-based)
    index: int  # position in a multi-document stream
    error: YamlError | None = None  # with ``per_document=True``: why this document was refused


def load_yaml(text: str, name: str, max_nodes: int = MAX_YAML_NODES, *,
              per_document: bool = False) -> list[YamlDocument]:
    """Parse every document of a YAML stream into :class:`YMap`/:class:`YList` values.

    A syntax error ends the stream (the parser cannot resynchronise) and raises. An error
    inside one well-formed document (alias bomb, duplicate key, ...) raises too, unless
    ``per_document``: then that document comes back with ``data=None`` and its ``error``,
    and the other documents are read as usual.
    """
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        raise YamlError(f"YAML syntax error: {problem}", name,
                        mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"YAML error: {exc}", name) from None
    except RecursionError:
        raise YamlError("YAML nested too deeply to read", name, 1) from None
    docs = []
    for i, node in enumerate(nodes):
        if node is None:
            continue
        line = node.start_mark.line + 1
        try:
            _check_expansion(node, name, max_nodes)
            docs.append(YamlDocument(_convert(node, {}, name), line, i))
        except YamlError as exc:
            if not per_document:
                raise
            docs.append(YamlDocument(None, line, i, exc))
        except RecursionError:
            exc = YamlError("YAML nested too deeply to read", name, line)
            if not per_document:
                raise exc from None
            docs.append(YamlDocument(None, line, i, exc))
    return docs


@dataclass
class YamlFile:
    """One YAML file of the tool's own (a schema, ``access.yaml``, ...): its single document
    as :class:`YMap`/:class:`YList` values (``tree``), as plain dicts and lists (``data``), and
    the line of any key or item (:meth:`line_of`)."""

    name: str
    text: str
    tree: object = None  # None for an empty file

    @property
    def data(self) -> object:
        """The document as plain ``dict``/``list`` values (shared aliases stay shared)."""
        return plain(self.tree)

    def line_of(self, *path: object) -> int | None:
        """Line of the value at ``path`` (keys and list indices); the nearest enclosing
        mapping or list that exists when the path stops early; None for an empty file."""
        node, line = self.tree, getattr(self.tree, "line", None)
        for part in path:
            if isinstance(node, YMap) and part in node:
                line, node = node.line_of(part), node[part]
            elif isinstance(node, YList) and isinstance(part, int) and 0 <= part < len(node):
                line, node = node.line_of(part), node[part]
            else:
                break
        return line


def read_bounded(path: str | Path, max_bytes: int, name: str | None = None) -> str:
    """The UTF-8 text of ``path``, refusing more than ``max_bytes`` even where the size
    cannot be known beforehand (a pipe, a device, a file still growing)."""
    name = name or str(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", name) from None
    if len(data) > max_bytes:
        raise InputError(f"file is over the {max_bytes / 2**20:g} MiB limit for a YAML file",
                         name)
    return decode_text(data, name)


def load_yaml_file(path: str | Path, max_bytes: int = MAX_CONFIG_BYTES, name: str | None = None,
                   max_nodes: int = MAX_YAML_NODES) -> YamlFile:
    """Read a file holding at most one YAML document, bounded like every source.

    Raises :class:`InputError` (file unreadable, too large, binary, not UTF-8) or
    :class:`YamlError` (syntax, alias bomb, duplicate key, several documents), each with the
    file and, where there is one, the line.
    """
    name = name or str(path)
    text = read_bounded(path, max_bytes, name)
    docs = load_yaml(text, name, max_nodes)
    if len(docs) > 1:
        raise YamlError(f"expected one YAML document, found {len(docs)}", name, docs[1].line)
    return YamlFile(name, text, docs[0].data if docs else None)


def plain(value: object, memo: dict | None = None) -> object:
    """``value`` with every :class:`YMap`/:class:`YList` turned into a plain dict/list."""
    memo = {} if memo is None else memo
    if not isinstance(value, (YMap, YList)):
        return value
    key = id(value)
    if key in memo:
        return memo[key]
    if isinstance(value, YMap):
        out: dict | list = {}
        memo[key] = out
        for k, v in value.items():
            out[k] = plain(v, memo)
    else:
        out = []
        memo[key] = out
        for v in value:
            out.append(plain(v, memo))
    return out


def _check_expansion(root: yaml.Node, name: str, max_nodes: int) -> None:
    """Raise when the document would expand (through aliases) past ``max_nodes`` values."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    active: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            active.discard(key)
            total = 1
            for child in _children(node):
                total += sizes[id(child)]
                if total > max_nodes:
                    raise YamlError(f"YAML aliases expand to more than {max_nodes:,} values "
                                    f"(an alias bomb?)", name, node.start_mark.line + 1)
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in active:
            raise YamlError("recursive YAML alias", name, node.start_mark.line + 1)
        active.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) not in sizes:
                if id(child) in active:
                    raise YamlError("recursive YAML alias", name, child.start_mark.line + 1)
                stack.append((child, False))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return node.value
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    return []


def _convert(node: yaml.Node, memo: dict, name: str):
    key = id(node)
    if key in memo:
        return memo[key]
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out = YMap()
        out.line, out.lines = line, {}
        memo[key] = out
        written: set = set()  # keys written in this mapping (merged ones may be overridden)
        for k, v in node.value:
            if k.tag == "tag:yaml.org,2002:merge":
                merged = _convert(v, memo, name)
                for m in merged if isinstance(merged, list) else [merged]:
                    if isinstance(m, dict):
                        for mk, mv in m.items():
                            out.setdefault(mk, mv)
                            out.lines.setdefault(mk, getattr(m, "lines", {}).get(mk, line))
                continue
            kv = _convert(k, memo, name)
            try:
                hash(kv)
            except TypeError:
                raise YamlError("unhashable mapping key", name, k.start_mark.line + 1) from None
            if kv in written:
                raise DuplicateKeyError(f"duplicate key {kv!r} (first at line {out.lines[kv]})",
                                        name, k.start_mark.line + 1)
            written.add(kv)
            out[kv] = _convert(v, memo, name)
            out.lines[kv] = k.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        out = YList()
        out.line, out.lines = line, []
        memo[key] = out
        for item in node.value:
            out.append(_convert(item, memo, name))
            out.lines.append(item.start_mark.line + 1)
        return out
    try:
        value = _scalars.construct_object(node, deep=True)
    except yaml.constructor.ConstructorError as exc:
        raise YamlError(f"YAML value error: {exc.problem}", name, line) from None
    memo[key] = value
    return value
