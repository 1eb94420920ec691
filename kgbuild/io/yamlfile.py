"""Safe YAML reading: line numbers kept on every mapping and list, alias bombs refused.

The one YAML reader of kgbuild: catalog sources (:func:`load_yaml`) and the tool's own files
(schemas, ``access.yaml``, ``aliases.yaml``, retrieval cases: :func:`load_yaml_file`) all
go through it, so every YAML document read is bounded (a size cap on the file, a cap on the
values aliases expand to, recursive aliases refused) and every error names the file and line.
Duplicate mapping keys are an error, as in Backstage and Compose (PyYAML would silently keep
the last value); keys a ``<<`` merge brings in may be overridden, as YAML intends.

Numbers with an exponent are YAML 1.2's (``1e-06`` is a float, not the text PyYAML's YAML
1.1 makes of it), and so are lines (and editors'): only ``\\n`` ends one, where libyaml (YAML
1.1) also breaks at U+0085, U+2028, U+2029 and a lone ``\\r``. Every key and item keeps where
its text is (``spans``), so :meth:`YamlSource.evidence` can quote the one entry that states
something instead of a whole, possibly very long, line. A large stream is counted (parser
events, nothing built) before it is composed, so that no more than ``max_nodes`` values are
ever built in memory.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..errors import DuplicateKeyError, YamlError
from .text import MAX_EVIDENCE_CHARS, LineIndex, brief, decode_text, one_line, read_bytes

try:  # libyaml is much faster when present
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the platform build
    _Loader = yaml.SafeLoader


MAX_YAML_NODES = 1_000_000
MAX_YAML_DEPTH = 1_000  # deeper is refused before composing (libyaml's scanner has the same limit)
MAX_CONFIG_BYTES = 20 * 1024 * 1024  # the tool's own YAML files (schema, access, aliases, cases)
COUNT_FIRST_CHARS = 256 * 1024  # streams longer than this are counted before being composed
_scalars = yaml.constructor.SafeConstructor()


class YMap(dict):
    """A YAML mapping that remembers the line of each key (1-based) and its own line, and
    where each entry's text is (``spans``: key -> (key start, value start, value end) as
    character offsets; merged keys have none)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.line, self.lines, self.spans = 0, {}, {}

    def line_of(self, key: str) -> int:
        return self.lines.get(key, self.line)


class YList(list):
    """A YAML sequence that remembers the line of each item (1-based) and its own line, and
    where each item's text is (``spans``: (start, end) character offsets)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.line, self.lines, self.spans = 0, [], []

    def line_of(self, index: int) -> int:
        return self.lines[index] if 0 <= index < len(self.lines) else self.line


class YamlSource:
    """The text a stream was read from: line numbers of offsets, and the quote of an entry."""

    def __init__(self, text: str):
        self.text = text
        self.odd_breaks = _has_odd_breaks(text)
        self._index: LineIndex | None = None
        self.values_on: Counter[int] = Counter()  # line -> scalar values (not keys) touching it

    @property
    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index

    def line(self, mark) -> int:
        """The 1-based line of a libyaml mark, counting ``\\n`` only."""
        if not self.odd_breaks or getattr(mark, "index", None) is None:
            return mark.line + 1
        return self.index.line(mark.index)

    def evidence(self, container: YMap | YList, key: object,
                 limit: int = MAX_EVIDENCE_CHARS) -> str | None:
        """The quote of one entry of ``container`` (a mapping key and its value, a list item):
        its whole line, trimmed, when that line states nothing else (no other value on it)
        and fits in ``limit``; else the entry's own text on one line, clipped to ``limit``."""
        index = self.index
        if isinstance(container, YMap):
            span = container.spans.get(key)
            if span is None:  # a key no text states here (a merge brought it): its line, if any
                return one_line(index.line_text(container.lines[key]), limit) \
                    if key in container.lines else None
            start, end = span[0], span[2]
        else:
            if not isinstance(key, int) or not 0 <= key < len(container.spans):
                return None
            start, end = container.spans[key]
        first, last = index.line(start), index.line(max(end - 1, start))
        if first == last and self.values_on.get(first, 0) <= 1:
            whole = index.line_text(first).strip()
            if len(whole) <= limit:
                return whole
        return one_line(self.text[start:end], limit)


def _has_odd_breaks(text: str) -> bool:
    """Whether libyaml would count line breaks ``\\n`` does not: U+0085, U+2028, U+2029, a
    ``\\r`` not followed by ``\\n``."""
    if text.isascii():
        return "\r" in text and text.count("\r") != text.count("\r\n")
    return any(c in text for c in "\x85\u2028\u2029") or (
        "\r" in text and text.count("\r") != text.count("\r\n"))


@dataclass
class YamlDocument:
    data: object
    line: int  # line the document starts on (1-based)
    index: int  # position in a multi-document stream
    error: YamlError | None = None  # with ``per_document=True``: why this document was refused
    source: YamlSource | None = field(default=None, repr=False, compare=False)


def load_yaml(text: str, name: str, max_nodes: int = MAX_YAML_NODES, *,
              per_document: bool = False) -> list[YamlDocument]:
    """Parse every document of a YAML stream into :class:`YMap`/:class:`YList` values.

    A syntax error ends the stream (the parser cannot resynchronise) and raises. An error
    inside one well-formed document (alias bomb, duplicate key, ...) raises too, unless
    ``per_document``: then that document comes back with ``data=None`` and its ``error``,
    and the other documents are read as usual.
    """
    src = YamlSource(text)
    try:
        if len(text) > COUNT_FIRST_CHARS or text.count("[") + text.count("{") > MAX_YAML_DEPTH:
            _count_values(text, name, max_nodes, src)
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if "nesting depth" in problem:  # libyaml's scanner met its own limit first
            raise YamlError("YAML nested too deeply to read", name,
                            src.line(mark) if mark else None) from None
        raise YamlError(f"YAML syntax error: {problem}", name,
                        src.line(mark) if mark else None) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow
        char = exc.character if isinstance(exc.character, str) else chr(exc.character)
        line = src.index.line(exc.position) if isinstance(exc.position, int) else None
        raise YamlError(f"YAML does not allow the character U+{ord(char):04X}", name, line) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"YAML error: {one_line(str(exc))}", name) from None
    except RecursionError:
        raise YamlError("YAML nested too deeply to read", name, 1) from None
    docs = []
    for i, node in enumerate(nodes):
        if node is None:
            continue
        line = src.line(node.start_mark)
        try:
            _check_expansion(node, name, max_nodes, src)
            docs.append(YamlDocument(_convert(node, {}, name, src), line, i, source=src))
        except YamlError as exc:
            if not per_document:
                raise
            docs.append(YamlDocument(None, line, i, exc, src))
        except RecursionError:
            exc = YamlError("YAML nested too deeply to read", name, line)
            if not per_document:
                raise exc from None
            docs.append(YamlDocument(None, line, i, exc, src))
        nodes[i] = None  # the composed nodes of a document are not needed any more
    return docs


_VALUE_EVENTS = (yaml.ScalarEvent, yaml.AliasEvent, yaml.SequenceStartEvent,
                 yaml.MappingStartEvent)
_OPEN_EVENTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSE_EVENTS = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _count_values(text: str, name: str, max_nodes: int, src: YamlSource) -> None:
    """Raise before composing when the stream holds more than ``max_nodes`` values or nests
    deeper than :data:`MAX_YAML_DEPTH` (parser events only: nothing is built; libyaml's
    composer recurses in C, so a deep enough nesting would crash the process, not raise)."""
    count = depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, _VALUE_EVENTS):
            count += 1
            if count > max_nodes:
                raise YamlError(f"YAML stream has more than {max_nodes:,} values; not read",
                                name, src.line(event.start_mark))
            if isinstance(event, _OPEN_EVENTS):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise YamlError("YAML nested too deeply to read", name,
                                    src.line(event.start_mark))
        elif isinstance(event, _CLOSE_EVENTS):
            depth -= 1


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
    return decode_text(read_bytes(path, max_bytes, name, "a YAML file"), name)


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


def _check_expansion(root: yaml.Node, name: str, max_nodes: int, src: YamlSource) -> None:
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
                                    f"(an alias bomb?)", name, src.line(node.start_mark))
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in active:
            raise YamlError("recursive YAML alias", name, src.line(node.start_mark))
        active.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) not in sizes:
                if id(child) in active:
                    raise YamlError("recursive YAML alias", name, src.line(child.start_mark))
                stack.append((child, False))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return node.value
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    return []


def _convert(node: yaml.Node, memo: dict, name: str, src: YamlSource):
    key = id(node)
    if key in memo:
        return memo[key]
    line = src.line(node.start_mark)
    if isinstance(node, yaml.MappingNode):
        out = YMap()
        out.line = line
        memo[key] = out
        written: set = set()  # keys written in this mapping (merged ones may be overridden)
        for k, v in node.value:
            if k.tag == "tag:yaml.org,2002:merge":
                merged = _convert(v, memo, name, src)
                for m in merged if isinstance(merged, list) else [merged]:
                    if isinstance(m, dict):
                        for mk, mv in m.items():
                            out.setdefault(mk, mv)
                            out.lines.setdefault(mk, getattr(m, "lines", {}).get(mk, line))
                            if mk in getattr(m, "spans", {}):
                                out.spans.setdefault(mk, m.spans[mk])
                continue
            kv = _convert(k, memo, name, src)
            try:
                hash(kv)
            except TypeError:
                raise YamlError("unhashable mapping key", name, src.line(k.start_mark)) from None
            if kv in written:
                raise DuplicateKeyError(f"duplicate key {brief(kv)} (first at line {out.lines[kv]})",
                                        name, src.line(k.start_mark))
            written.add(kv)
            out[kv] = _convert(v, memo, name, src)
            out.lines[kv] = src.line(k.start_mark)
            out.spans[kv] = (k.start_mark.index, v.start_mark.index, v.end_mark.index)
            _count_value(v, src)
        return out
    if isinstance(node, yaml.SequenceNode):
        out = YList()
        out.line = line
        memo[key] = out
        for item in node.value:
            out.append(_convert(item, memo, name, src))
            out.lines.append(src.line(item.start_mark))
            out.spans.append((item.start_mark.index, item.end_mark.index))
            _count_value(item, src)
        return out
    try:
        value = _scalars.construct_object(node, deep=True)
    except yaml.constructor.ConstructorError as exc:
        raise YamlError(f"YAML value error: {exc.problem}", name, line) from None
    except (ValueError, OverflowError, TypeError, IndexError) as exc:
        # a plain scalar that looks like a number or date but is not one Python can hold
        # (over 4,300 digits, 2024-13-45): kept as the text it is, as YAML 1.2 parsers do;
        # (PyYAML's int constructor indexes an empty ``!!int`` value: IndexError)
        if isinstance(node, yaml.ScalarNode) and _plain(node, src):
            value = node.value
        else:
            raise YamlError(f"YAML value error: {one_line(str(exc), 120)}", name, line) from None
    finally:  # the constructor caches every node it built: keep nothing of one file for the next
        _scalars.constructed_objects.clear()
        _scalars.recursive_objects.clear()
    if isinstance(value, str) and _EXPONENT_FLOAT.fullmatch(value) and _plain(node, src):
        value = float(value)
    memo[key] = value
    return value


# YAML 1.2's floats with an exponent that YAML 1.1 (PyYAML) reads as text: ``1e-06``, ``2E3``,
# ``1.5e3`` (1.1 wants a dot and a signed exponent). Backstage, Compose and people read them
# as numbers.
_EXPONENT_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+")


def _plain(node: yaml.ScalarNode, src: YamlSource) -> bool:
    """Whether the scalar is written plain, neither quoted nor tagged (``!!int 12``): its type
    is the resolver's guess, not asked for. (libyaml gives a plain scalar the style ``""``,
    PyYAML ``None``.)"""
    start = node.start_mark.index
    return not node.style and isinstance(start, int) and src.text[start:start + 1] != "!"


def _count_value(node: yaml.Node, src: YamlSource) -> None:
    """Note the lines a scalar value's text touches (for :meth:`YamlSource.evidence`)."""
    if isinstance(node, yaml.ScalarNode) and node.end_mark.index > node.start_mark.index:
        first, last = src.line(node.start_mark), src.line(node.end_mark)
        src.values_on[first] += 1
        if last != first:
            src.values_on[last] += 1
