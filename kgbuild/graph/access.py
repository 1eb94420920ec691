"""Access labels: where they come from, who may see what, and the visible part of a graph.

Labels come from Backstage metadata (``kgbuild.dev/access: "finance, pii"`` in
``metadata.labels`` or ``metadata.annotations``) or from an ``access.yaml`` that maps
source-path globs to labels::

    rules:
      - paths: ["finance/**", "**/payroll-*.yaml"]
        labels: [finance]
      - paths: ["hr/**"]
        labels: [hr, pii]
    default: []            # labels for documents no rule matches (optional)

A document gets the union of the labels of every rule that matches its path; documents no
rule matches get ``default``. Patterns are gitignore patterns (:mod:`kgbuild.io.globs`):
``*`` and ``?`` stay inside one path segment, ``**`` spans any number of segments, ``[a-z]``
is a class; a pattern without a ``/`` (other than a trailing one) matches at any depth
(``*.yaml``, ``payroll``), one with a ``/`` is anchored at the top (``hr/*.yaml``); a
pattern naming a folder covers everything below it, and a trailing ``/`` matches folders
only. ``!`` is refused: rules only ever add labels.

**Visibility rule.** Every label is a restriction: a principal sees an item (node, assertion,
source document) only when it holds *all* of the item's labels; an item without labels is
public. Adding a label never widens visibility, so merging labels from several sources fails
closed. An edge is visible when both its endpoints are and it has a visible assertion (edges
without any assertion, read from foreign RDF, only need visible endpoints); an assertion
is visible when its own labels and its source document's labels are. The principal
``Principal.everyone()`` holds every label (trusted, local use).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable

from ..errors import InputError
from ..io.globs import PatternList
from ..io.yamlfile import YamlError, load_yaml_file
from .model import Assertion, KnowledgeGraph, Node, SourceDocument

LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/-]*$")


def parse_labels(value: str | Iterable[str]) -> frozenset[str]:
    """Labels from a comma-separated string or a list; raises ``ValueError`` on a bad one."""
    items = value.split(",") if isinstance(value, str) else list(value)
    out = set()
    for item in items:
        label = str(item).strip()
        if not label:
            continue
        if not LABEL.match(label):
            raise ValueError(f"invalid access label {label!r} (letters, digits, _ . : / -)")
        out.add(label)
    return frozenset(out)


@dataclass(frozen=True)
class Principal:
    """Who is asking: the access labels they hold (``everyone`` holds them all)."""

    labels: frozenset[str] = frozenset()
    everyone: bool = False

    @classmethod
    def of(cls, labels: str | Iterable[str] = ()) -> "Principal":
        """A principal holding ``labels`` (comma-separated string or iterable)."""
        return cls(parse_labels(labels))

    @classmethod
    def all_access(cls) -> "Principal":
        """A principal that sees everything."""
        return cls(frozenset(), True)

    def can_see(self, labels: Iterable[str]) -> bool:
        """True when the principal holds every one of ``labels``."""
        return self.everyone or self.labels.issuperset(labels)

    def sees_node(self, node: Node) -> bool:
        return self.can_see(node.access)

    def sees_assertion(self, a: Assertion, documents: dict[str, SourceDocument]) -> bool:
        doc = documents.get(a.source)
        return self.can_see(a.access) and (doc is None or self.can_see(doc.access))


@dataclass
class AccessRules:
    """Path rules from an ``access.yaml``; :meth:`labels_for` maps a document path.

    ``rules`` are ``(pattern, labels)`` in file order; patterns are gitignore patterns
    (:mod:`kgbuild.io.globs`), matched in time linear in the path.
    """

    rules: list[tuple[str, frozenset[str]]]
    default: frozenset[str] = frozenset()
    _patterns: PatternList | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._patterns is None:
            self._patterns = PatternList([p for p, _ in self.rules], "access rules")

    def labels_for(self, *doc_paths: str) -> frozenset[str]:
        """Union of the labels of all rules matching any of ``doc_paths`` (POSIX, relative:
        a build passes the document ID and the path below the scanned folder), else default."""
        paths = [p.replace("\\", "/").lstrip("/") for p in doc_paths]
        hits = {i for p in paths if p for i in self._patterns.matching(p)}
        return frozenset().union(*(self.rules[i][1] for i in hits)) if hits else self.default


def load_access(path: str | Path) -> AccessRules:
    """Read and check an ``access.yaml``; raises :class:`InputError` naming file, line and
    problem (the file is read bounded: size cap, alias bombs and duplicate keys refused)."""
    name = str(path)
    try:
        doc = load_yaml_file(path, name=name)
    except YamlError as exc:
        raise InputError(f"not a readable YAML file: {exc.message}", name, exc.line) from None
    return parse_access(doc.data, name, doc.line_of)


def parse_access(raw: object, name: str = "access.yaml",
                 line_of: Callable[..., int | None] | None = None) -> AccessRules:
    """Build :class:`AccessRules` from parsed YAML (see the module docstring for the format);
    ``line_of(*path)`` (e.g. :meth:`~kgbuild.io.yamlfile.YamlFile.line_of`) locates errors."""
    def fail(message: str, *path: object) -> InputError:
        return InputError(message, name, line_of(*path) if line_of else None)

    if raw is None:
        return AccessRules([])
    unknown = sorted(map(str, set(raw) - {"rules", "default"})) if isinstance(raw, dict) else []
    if not isinstance(raw, dict) or unknown:
        raise fail("expected a mapping with 'rules' and optional 'default'", *unknown[:1])
    rules, lines = [], []
    entries = raw.get("rules") or []
    if not isinstance(entries, list):
        raise fail("'rules' must be a list", "rules")
    for i, rule in enumerate(entries):
        if not isinstance(rule, dict) or set(rule) != {"paths", "labels"}:
            raise fail(f"rule {i + 1}: needs exactly 'paths' and 'labels'", "rules", i)
        paths = [rule["paths"]] if isinstance(rule["paths"], str) else rule["paths"]
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p for p in paths):
            raise fail(f"rule {i + 1}: 'paths' must be a glob or a list of globs", "rules", i, "paths")
        labels = _labels(rule["labels"], f"rule {i + 1}", fail, "rules", i, "labels")
        for j, p in enumerate(paths):
            line = line_of("rules", i, "paths", *(() if isinstance(rule["paths"], str) else (j,))) \
                if line_of else None
            if p.startswith("!"):
                raise InputError(f"rule {i + 1}: pattern {p!r}: '!' cannot take labels away (every "
                                 f"matching rule adds its labels)", name, line)
            rules.append((p, labels))
            lines.append(line)
    patterns = PatternList([p for p, _ in rules], name, lines)  # refuses bad patterns, located
    return AccessRules(rules, _labels(raw.get("default") or [], "default", fail, "default"),
                       patterns)


def _labels(value: object, where: str, fail: Callable[..., InputError], *path: object
            ) -> frozenset[str]:
    if not isinstance(value, (str, list)):
        raise fail(f"{where}: 'labels' must be a string or a list", *path)
    try:
        return parse_labels(value)
    except ValueError as exc:
        raise fail(f"{where}: {exc}", *path) from None


def visible_graph(kg: KnowledgeGraph, principal: Principal) -> KnowledgeGraph:
    """The part of ``kg`` the principal may see, as a new graph (``kg`` itself when all is)."""
    if principal.everyone or _unlabelled(kg):
        return kg
    view = KnowledgeGraph(kg.schema)
    view.nodes = {i: n for i, n in kg.nodes.items() if principal.sees_node(n)}
    view.documents = {i: d for i, d in kg.documents.items() if principal.can_see(d.access)}
    for n in list(view.nodes.values()):
        hidden = {d for d in n.defined_in if d in kg.documents and d not in view.documents}
        if hidden:
            view.nodes[n.id] = replace(n, defined_in=n.defined_in - hidden)

    def endpoints_visible(s: str, o: str) -> bool:
        return all(x in view.nodes or x not in kg.nodes for x in (s, o))

    for key, a in kg.assertions.items():
        if endpoints_visible(a.subject, a.object) and principal.sees_assertion(a, kg.documents):
            view.assertions[key] = a
    view.untyped_edges = {e for e in kg.untyped_edges if endpoints_visible(e[0], e[2])}
    return view


def _unlabelled(kg: KnowledgeGraph) -> bool:
    return (not any(n.access for n in kg.nodes.values())
            and not any(a.access for a in kg.assertions.values())
            and not any(d.access for d in kg.documents.values()))
