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
closed. A node is visible only through a visible document that defines or mentions it
(an entity only hidden documents mention does not exist for the principal). An edge is
visible when both its endpoints are and it has a visible assertion (edges without any
assertion, read from foreign RDF, only need visible endpoints); an assertion is visible when
its own labels and its source document's labels are. Visible evidence that names a hidden
entity is withheld (:func:`visible_graph`). The principal ``Principal.all_access()`` holds
every label (trusted, local use).
"""

from __future__ import annotations

import copy
import functools
import re
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable
from urllib.parse import unquote

from ..errors import InputError, InvalidValue
from .model import Assertion, KnowledgeGraph, Node, SourceDocument

LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/-]*$")


def parse_labels(value: str | Iterable[str]) -> frozenset[str]:
    """Labels from a comma-separated string or a list; raises :class:`InvalidValue` (a
    ValueError) on a bad one."""
    items = value.split(",") if isinstance(value, str) else list(value)
    out = set()
    for item in items:
        label = str(item).strip()
        if not label:
            continue
        if not LABEL.match(label):
            raise InvalidValue(f"invalid access label {label!r} (letters, digits, _ . : / -)",
                               code="bad-label")
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
    _patterns: object = field(default=None, repr=False, compare=False)  # a PatternList

    def __post_init__(self) -> None:
        if self._patterns is None:
            from ..io.globs import PatternList  # (RE2 and pathspec: only for access rules)

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
    from ..io.yamlfile import YamlError, load_yaml_file

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
    from ..io.globs import PatternList

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


WITHHELD = "[evidence withheld]"
"""What a visible assertion's evidence becomes when it names an entity the principal cannot see."""

MAX_FORM_TOKENS = 64  # a name is matched on at most this many leading words
_WORD = re.compile(r"[^\W_]+")
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _words(text: str) -> tuple[str, ...]:
    """The words of ``text`` for name matching: NFKC, split at camelCase humps, case-folded,
    split at everything that is not a letter or digit (``Zephyr Vault``, ``zephyr-vault``,
    ``zephyr_vault`` and ``ZephyrVault`` are alike)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    if not text.islower():  # (some capital letter, or no cased letter at all)
        text = _HUMP.sub(" ", text)
    return tuple(_WORD.findall(text.casefold()))


def _name_part(node_id: str) -> str:
    """The name in a reference-shaped ID: ``component:default/x`` -> ``x``, ``kind:x`` -> ``x``."""
    return node_id.rsplit("/", 1)[-1] if "/" in node_id else node_id.split(":", 1)[-1]


def name_forms(node: Node, free_text: bool = True) -> set[str]:
    """Every way a source may name ``node``: its ID (also percent-decoded), the ID's name part
    and ``kind:name`` / ``namespace/name`` short forms, its aliases and (``free_text``) its
    label and titles, which its sources may write as they like."""
    ids = {node.id, unquote(node.id)} if "%" in node.id else {node.id}
    forms = ids | set(node.aliases)
    if free_text:
        forms |= {node.label} | set(node.attributes.get("title", ()))
    for i in ids:
        forms.add(_name_part(i))
        kind, colon, rest = i.partition(":")
        if colon and "/" in rest:
            namespace, _, name = rest.rpartition("/")
            forms.update({f"{kind}:{name}", f"{namespace}/{name}"})
    return {f for f in forms if f}


def _node_words(node: Node, free_text: bool = True) -> tuple[set[tuple[str, ...]], set[str]]:
    """:func:`name_forms` as word sequences (each also run together: ``zephyrvault``), and the
    forms without a letter or digit (NFKC, case-folded)."""
    out: set[tuple[str, ...]] = set()
    bare: set[str] = set()
    for form in name_forms(node, free_text):
        words = _words(form)[:MAX_FORM_TOKENS]
        if not words:
            if len(form.strip()) > 1:  # (one punctuation mark would match any text)
                bare.add(unicodedata.normalize("NFKC", form.strip()).casefold())
            continue
        out.add(words)
        if len(words) > 1:
            out.add(("".join(words),))
    return out, bare


class NameScreen:
    """Tells whether a text names a hidden entity (any of its :func:`name_forms`).

    Texts and names are compared as word sequences (:func:`_words`), so a name matches only
    as whole words, whatever separates them. An occurrence of a hidden entity's name is a hit
    unless it lies inside an occurrence of a *visible* entity's name (``Zephyr Vault Client``
    does not name a hidden ``Zephyr Vault``) or a visible entity has that name too (then it
    reveals nothing). A visible entity's names here are its ID forms and aliases: its label and
    titles are free text, screened themselves (a label ``Payments DB Console`` names a hidden
    ``Payments DB``). Time is linear in the text (times the number of distinct name lengths,
    at most :data:`MAX_FORM_TOKENS`); nothing is built when nothing is hidden.
    """

    def __init__(self, hidden: Iterable[Node], visible: Iterable[Node]):
        self._forms: dict[tuple[str, ...], bool] = {}  # word sequence -> only hidden ones have it
        self._bare: set[str] = set()  # hidden names without a letter or digit: matched as text
        for node in hidden:
            words, bare = _node_words(node)
            self._forms.update(dict.fromkeys(words, True))
            self._bare |= bare
        self._hidden_words = {w for f in self._forms for w in f}
        if not self:
            return
        hidden_words = self._hidden_words
        for node in visible:  # only names sharing a word with a hidden one can matter
            words, bare = _node_words(node, free_text=False)
            self._bare -= bare
            for f in words:
                if not hidden_words.isdisjoint(f):
                    self._forms[f] = False
        self._hidden_words = {w for f, hidden in self._forms.items() if hidden for w in f}
        self._lengths: dict[str, list[int]] = {}  # first word -> lengths of the names it starts
        for f in self._forms:
            self._lengths.setdefault(f[0], []).append(len(f))
        for lengths in self._lengths.values():
            lengths[:] = sorted(set(lengths))

    def __bool__(self) -> bool:
        return bool(self._hidden_words or self._bare)

    def names_hidden(self, text: str | None) -> bool:
        """True when ``text`` names an entity only hidden entities are called."""
        if not text or not self:
            return False
        if self._bare:
            folded = unicodedata.normalize("NFKC", text).casefold()
            if any(b in folded for b in self._bare):
                return True
        words = _words(text)
        if self._hidden_words.isdisjoint(words):
            return False
        n, forms, starts = len(words), self._forms, self._lengths
        reach = [0] * n  # reach[i]: the furthest end of a visible name starting at <= i
        hits: list[tuple[int, int]] = []
        furthest = 0
        for i, word in enumerate(words):
            for length in starts.get(word, ()):
                if i + length > n:
                    break
                hidden = forms.get(words[i:i + length])
                if hidden:
                    hits.append((i, i + length))
                elif hidden is False and i + length > furthest:
                    furthest = i + length
            reach[i] = furthest
        return any(reach[start] < end for start, end in hits)


def visible_graph(kg: KnowledgeGraph, principal: Principal) -> KnowledgeGraph:
    """The part of ``kg`` the principal may see, as a new graph (``kg`` itself when all is).

    * A document is visible when the principal holds its labels.
    * A node is visible when the principal holds its labels *and* a visible document defines
      it or a visible assertion mentions it (a node no document defines and no assertion
      mentions, as in a foreign RDF graph, needs its labels only). So an entity only hidden
      documents mention (the dependency of a secret ``package.json``) does not exist for the
      principal: it is never a seed, a candidate, a count or an embedded text. A node seen
      only through a mention loses what hidden definitions said of it (its label becomes
      the name part of its ID; no attributes or aliases).
    * An assertion is visible when the principal holds its labels and its source document's,
      and both its endpoints are visible; an edge when one of its assertions is (edges read
      without assertions only need visible endpoints).
    * The evidence of a visible assertion that names a hidden entity (:class:`NameScreen`)
      becomes :data:`WITHHELD`; an attribute value naming one (a description, title, tag, any
      free text) is left out, and a label naming one becomes the name part of the node's ID.
    """
    if principal.everyone or _unlabelled(kg):
        return kg
    view = KnowledgeGraph(kg.schema)
    view.documents = {i: d for i, d in kg.documents.items() if principal.can_see(d.access)}
    allowed = {i for i, n in kg.nodes.items() if principal.sees_node(n)}

    nodes = kg.nodes

    def endpoints_allowed(s: str, o: str) -> bool:
        return (s in allowed or s not in nodes) and (o in allowed or o not in nodes)

    touched: set[str] = set()
    shown: dict[str, Assertion] = {}
    for key, a in kg.assertions.items():
        touched.update((a.subject, a.object))
        if endpoints_allowed(a.subject, a.object) and principal.sees_assertion(a, kg.documents):
            shown[key] = a
    mentioned = {x for a in shown.values() for x in (a.subject, a.object)}
    for node_id in sorted(allowed):
        n = kg.nodes[node_id]
        known = {d for d in n.defined_in if d in kg.documents}
        defining = known & view.documents.keys()
        if defining:
            view.nodes[node_id] = n if defining == known else replace(
                n, defined_in=(n.defined_in - known) | defining)
        elif node_id in mentioned:
            view.nodes[node_id] = n if not known else replace(
                n, label=_name_part(node_id), attributes={}, aliases=set(),
                defined_in=n.defined_in - known)
        elif not known and node_id not in touched:
            view.nodes[node_id] = n  # no provenance at all (a foreign graph): its labels decide
    screen = NameScreen([n for i, n in kg.nodes.items() if i not in view.nodes],
                        view.nodes.values())
    for key, a in shown.items():
        if screen.names_hidden(a.evidence):
            a = copy.copy(a)  # (the key does not depend on the evidence)
            object.__setattr__(a, "evidence", WITHHELD)
        view.assertions[key] = a
    if screen:
        names_hidden = functools.lru_cache(maxsize=None)(screen.names_hidden)  # values repeat
        for node_id, n in list(view.nodes.items()):
            named = {k: {v for v in values if isinstance(v, str) and names_hidden(v)}
                     for k, values in n.attributes.items()}
            label = _name_part(node_id) if names_hidden(n.label) else n.label
            if label != n.label or any(named.values()):
                attributes = {k: set(v) - named[k] for k, v in n.attributes.items()}
                view.nodes[node_id] = replace(
                    n, label=label, attributes={k: v for k, v in attributes.items() if v})
    view.untyped_edges = {e for e in kg.untyped_edges
                          if all(x in view.nodes or x not in kg.nodes for x in (e[0], e[2]))}
    view.passages = {k: p for k, p in kg.passages.items()  # text units: as their document, and
                     if p.document in view.documents and principal.can_see(p.access)
                     and not screen.names_hidden(p.text)}  # withheld when naming a hidden one
    _attribute_values(kg, view, principal, screen)
    return view


def _attribute_values(kg: KnowledgeGraph, view: KnowledgeGraph, principal: Principal,
                      screen: "NameScreen") -> None:
    """Attribute values asserted about visible nodes: visible as their assertions are; a value
    only hidden assertions state is taken off the node (also when a visible definition states
    the same value: rare, and the safe side)."""
    shown: dict[str, Assertion] = {}
    for key, a in kg.attribute_assertions.items():
        if a.subject in view.nodes and principal.sees_assertion(a, kg.documents):
            shown[key] = replace(a, evidence=WITHHELD) if screen.names_hidden(a.evidence) else a
    view.attribute_assertions = shown
    visible = {(a.subject, a.predicate, a.object) for a in shown.values()}
    for a in kg.attribute_assertions.values():
        node = view.nodes.get(a.subject)
        fact = (a.subject, a.predicate, a.object)
        if node is None or fact in visible or a.object not in node.attributes.get(a.predicate, ()):
            continue
        attributes = {k: set(v) for k, v in node.attributes.items()}
        attributes[a.predicate].discard(a.object)
        view.nodes[a.subject] = replace(node, attributes={k: v for k, v in attributes.items() if v})


def _unlabelled(kg: KnowledgeGraph) -> bool:
    return (not any(n.access for n in kg.nodes.values())
            and not any(a.access for a in kg.assertions.values())
            and not any(d.access for d in kg.documents.values()))
