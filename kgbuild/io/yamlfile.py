"""Safe YAML reading: line numbers kept on every mapping and list, alias bombs refused."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from ..errors import InputError

try:  # libyaml is much faster when present
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the platform build
    _Loader = yaml.SafeLoader


MAX_YAML_NODES = 1_000_000
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


@dataclass
class YamlDocument:
    data: object
    line: int  # line the document starts on (1-based)
    index: int  # position in a multi-document stream


def load_yaml(text: str, name: str, max_nodes: int = MAX_YAML_NODES) -> list[YamlDocument]:
    """Parse every document of a YAML stream into :class:`YMap`/:class:`YList` values."""
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        raise InputError(f"YAML syntax error: {problem}", name,
                         mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise InputError(f"YAML error: {exc}", name) from None
    docs = []
    for i, node in enumerate(nodes):
        if node is None:
            continue
        _check_expansion(node, name, max_nodes)
        docs.append(YamlDocument(_convert(node, {}, name), node.start_mark.line + 1, i))
    return docs


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
                    raise InputError(f"YAML aliases expand to more than {max_nodes:,} values "
                                     f"(an alias bomb?)", name, node.start_mark.line + 1)
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in active:
            raise InputError("recursive YAML alias", name, node.start_mark.line + 1)
        active.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) not in sizes:
                if id(child) in active:
                    raise InputError("recursive YAML alias", name, child.start_mark.line + 1)
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
                raise InputError("unhashable mapping key", name, k.start_mark.line + 1) from None
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
        raise InputError(f"YAML value error: {exc.problem}", name, line) from None
    memo[key] = value
    return value
