"""The alias registry: curated aliases, pairs that must never merge, and review decisions.

It lives in ``aliases.yaml`` beside the sources::

    aliases:                      # per type: canonical ID -> aliases (matched exactly, per type)
      Library:
        pkg:pypi/pyyaml: [yaml, PyYAML]
        pkg:pypi/opencv-python: [cv2]
      API:
        api:default/payments: [Payments, payment-api]
    distinct:                     # ID pairs that are different things, however alike their names
      - [api:default/payments, api:default/payouts]
    decisions:                    # written by `kgbuild resolve accept|reject`
      - {mention: Paymnts API, type: API, id: api:default/payments, decision: accepted}
      - {mention: Payouts, type: API, id: api:default/payments, decision: rejected}

Aliases and mentions are compared case-folded (NFKC). An accepted decision acts as an alias;
a rejected one stops that mention from ever resolving to that ID. Every section is optional.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..errors import InputError, YamlError
from ..graph.model import KnowledgeGraph
from ..io.atomic import atomic_write
from ..io.suggest import did_you_mean
from ..io.yamlfile import load_yaml_file
from ..schema.model import Schema
from .normalize import fold

DECISIONS = ("accepted", "rejected")


@dataclass(frozen=True)
class Decision:
    """A reviewer's verdict on resolving ``mention`` (as a ``type``) to ``id``."""

    mention: str
    type: str
    id: str
    decision: str

    def to_dict(self) -> dict:
        return {"mention": self.mention, "type": self.type, "id": self.id, "decision": self.decision}


@dataclass
class AliasRegistry:
    """In-memory form of ``aliases.yaml``; see the module docstring for the file format."""

    aliases: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    distinct: set[frozenset[str]] = field(default_factory=set)
    decisions: list[Decision] = field(default_factory=list)

    # -- editing -------------------------------------------------------------------
    def add_alias(self, type_name: str, canonical_id: str, alias: str) -> None:
        names = self.aliases.setdefault(type_name, {}).setdefault(canonical_id, [])
        if fold(alias) not in {fold(a) for a in names}:
            names.append(alias)

    def add_distinct(self, a: str, b: str) -> None:
        if a == b:
            raise InputError(f"distinct pair needs two different IDs, got {a!r} twice")
        self.distinct.add(frozenset((a, b)))

    def decide(self, mention: str, type_name: str, canonical_id: str, decision: str) -> Decision:
        """Record a decision, replacing earlier ones on the same mention, type and ID.

        Accepting also drops any other accepted ID for that mention and type.
        """
        if decision not in DECISIONS:
            raise InputError(f"decision must be one of {', '.join(DECISIONS)}, got {decision!r}")
        if not fold(mention):
            raise InputError("mention is empty")
        if any(c in mention for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"):
            raise InputError(f"mention {mention[:80]!r} spans lines: a mention is one line")
        if not canonical_id or canonical_id != "".join(canonical_id.split()):
            raise InputError(f"entity ID {canonical_id[:80]!r} is empty or holds whitespace")
        key = (fold(mention), type_name)
        self.decisions = [
            d for d in self.decisions
            if (fold(d.mention), d.type) != key
            or not (d.id == canonical_id or (decision == "accepted" and d.decision == "accepted"))]
        new = Decision(mention, type_name, canonical_id, decision)
        self.decisions.append(new)
        return new

    # -- reading -------------------------------------------------------------------
    def is_distinct(self, a: str, b: str) -> bool:
        return frozenset((a, b)) in self.distinct

    def canonical_ids(self) -> dict[tuple[str, str], str]:
        """``(folded mention, type) -> canonical ID`` from the alias table and accepted
        decisions: what a build rewrites a mentioned (not defined) entity to."""
        out = {(fold(alias), t): cid for t, ids in self.aliases.items()
               for cid, names in ids.items() for alias in names}
        out.update({(fold(d.mention), d.type): d.id for d in self.decisions if d.decision == "accepted"})
        return out

    def rejected(self) -> set[tuple[str, str]]:
        """``(folded mention, id)`` pairs that must never resolve."""
        return {(fold(d.mention), d.id) for d in self.decisions if d.decision == "rejected"}

    def to_dict(self) -> dict:
        return {
            "aliases": {t: {i: sorted(a, key=fold) for i, a in sorted(ids.items())}
                        for t, ids in sorted(self.aliases.items()) if ids},
            "distinct": sorted(sorted(p) for p in self.distinct),
            "decisions": [d.to_dict() for d in sorted(
                self.decisions, key=lambda d: (d.type, fold(d.mention), d.id, d.decision))],
        }

    # -- files ---------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path, missing_ok: bool = False) -> "AliasRegistry":
        """Read ``aliases.yaml``; raises :class:`InputError` naming the file on bad content."""
        path = Path(path)
        try:
            path.stat()
        except FileNotFoundError:
            if missing_ok:
                return cls()
            raise InputError("alias registry not found", str(path)) from None
        except OSError:
            pass  # reported by the read below
        try:  # bounded: size cap, alias bombs and duplicate keys refused, errors at file:line
            raw = load_yaml_file(path).data
        except YamlError:
            raise
        except InputError as exc:
            raise InputError("cannot read alias registry: " + exc.message.removeprefix("cannot read: "),
                             str(path), exc.line) from None
        return cls.from_dict(raw or {}, str(path))

    @classmethod
    def from_dict(cls, raw: object, source: str = "<aliases>") -> "AliasRegistry":
        """Build a registry from parsed YAML, checking its shape."""
        def fail(msg: str) -> InputError:
            return InputError(msg, source)

        if not isinstance(raw, dict):
            raise fail("an alias registry must be a mapping")
        unknown = sorted(set(raw) - {"aliases", "distinct", "decisions"})
        if unknown:
            raise fail(f"unknown top-level key {unknown[0]!r} (allowed: aliases, distinct, decisions)")
        reg = cls()
        types = raw.get("aliases") or {}
        if not isinstance(types, dict):
            raise fail("aliases must map a type to {canonical ID: [aliases]}")
        for type_name, ids in types.items():
            if not isinstance(ids, dict):
                raise fail(f"aliases.{type_name} must map a canonical ID to a list of aliases")
            for cid, names in ids.items():
                names = [names] if isinstance(names, str) else names
                if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                    raise fail(f"aliases.{type_name}.{cid} must be a list of strings")
                for name in names:
                    reg.add_alias(str(type_name), str(cid), name)
        pairs = raw.get("distinct") or []
        if not isinstance(pairs, list):
            raise fail("distinct must be a list of [id, id] pairs")
        for pair in pairs:
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
                raise fail(f"distinct entry {pair!r} is not a pair of IDs")
            try:
                reg.add_distinct(*pair)
            except InputError as exc:
                raise fail(exc.message) from None
        decisions = raw.get("decisions") or []
        if not isinstance(decisions, list):
            raise fail("decisions must be a list")
        for d in decisions:
            if not isinstance(d, dict) or not all(isinstance(d.get(k), str)
                                                  for k in ("mention", "type", "id", "decision")):
                raise fail(f"decision {d!r} needs string mention, type, id and decision")
            try:
                reg.decide(d["mention"], d["type"], d["id"], d["decision"])
            except InputError as exc:
                raise fail(exc.message) from None
        return reg

    def save(self, path: str | Path) -> None:
        """Write atomically: a temporary file in the same folder, then ``os.replace``."""
        path = Path(path)
        text = ("# kgbuild alias registry: see `kgbuild resolve --help`\n"
                + yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True, width=100))
        atomic_write(path, text)


def accept(registry_path: str | Path, mention: str, type_name: str, canonical_id: str,
           schema: Schema | None = None, graph: KnowledgeGraph | None = None,
           new: bool = False) -> Decision:
    """Record in the registry file that ``mention`` (a ``type_name``) is ``canonical_id``.

    With ``schema``, the type name is checked and spelt as the schema spells it. With
    ``graph``, the ID must be an entity of it of a compatible type, or (``new``) one that
    some document is yet to define; otherwise :class:`InputError` says so and nothing is
    written. The mention must be one line, the ID free of whitespace.
    """
    return _decide(registry_path, mention, type_name, canonical_id, "accepted", schema, graph, new)


def reject(registry_path: str | Path, mention: str, type_name: str, canonical_id: str,
           schema: Schema | None = None, graph: KnowledgeGraph | None = None,
           new: bool = False) -> Decision:
    """Record in the registry file that ``mention`` (a ``type_name``) is never ``canonical_id``
    (checked as :func:`accept` checks)."""
    return _decide(registry_path, mention, type_name, canonical_id, "rejected", schema, graph, new)


def check_target(graph: KnowledgeGraph, type_name: str, cid: str, new: bool) -> bool:
    """Whether ``cid`` is an entity of ``graph``; raises :class:`InputError` when it is not
    (unless ``new``) or when its type is not compatible with ``type_name``."""
    node = graph.nodes.get(cid)
    if node is None:
        if new:
            return False
        raise InputError(f"{cid} is not an entity of the graph{did_you_mean(cid, graph.nodes)}: "
                         f"check the ID (`kgbuild resolve explain`), or pass --new to accept it "
                         f"as an entity yet to be defined", code="unknown-entity")
    if node.type not in graph.schema.compatible_types(graph.schema.node_type(type_name).name):
        raise InputError(f"{cid} is a {node.type}, not a {type_name} (nor a compatible type)",
                         code="unknown-entity")
    return True


def _decide(path: str | Path, mention: str, type_name: str, cid: str, decision: str,
            schema: Schema | None, graph: KnowledgeGraph | None = None,
            new: bool = False) -> Decision:
    if schema is not None:
        type_name = schema.node_type(type_name).name
    if graph is not None:
        check_target(graph, type_name, cid, new)
    reg = AliasRegistry.load(path, missing_ok=True)
    made = reg.decide(mention, type_name, cid, decision)
    reg.save(path)
    return made
