"""What a traversal asks for: :class:`TraversalSpec`, its step syntax, every default and bound,
and the rules by which a caller's settings become a spec.

The CLI's options, the server's JSON fields and an evaluation case's keys are all read here:

* every numeric setting has one range (:data:`BOUNDS`; a hub cap or budget beyond any graph
  would overflow the index's int32 arrays, a longer path the walk enumeration's recursion);
* :func:`request_spec`: a hub cap of 0 means no cap, and ``shortest_path``, when not given,
  is on for a question with ``types`` and neither ``path`` nor ``follow``.

A step is ``PRED[:out|:in|:both]``: a stored edge name or its inverse name (``ownerOf:out`` ==
``ownedBy:in``), no suffix meaning ``:out``; a path is steps joined by ``/``.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Mapping, Sequence

from ..errors import KgbuildError
from ..io.suggest import did_you_mean

if TYPE_CHECKING:
    from ..schema.model import Schema

MAX_COUNT = 10**9  # a hub cap or budget
MAX_HOPS = 10**6
MAX_PATH_STEPS = 100
MAX_QUESTION_CHARS = 10_000  # a question, not a document: its mentions, seeds and output stay small
MAX_NAME_CHARS = 2_000  # one ID or name
SHORTEST_PATH_HOPS = 3  # shortest_path: a path found has at most this many steps ...
SHORTEST_PATH_WALKS = 1000  # ... and at most this many steps are tried to find it
# the range of every numeric setting, for every caller alike (the CLI's options, the server's
# fields and /openapi.json, evaluation cases)
BOUNDS: dict[str, tuple[float, float]] = {
    "hops": (1, MAX_HOPS), "cap": (0, MAX_COUNT), "max_nodes": (0, MAX_COUNT),
    "max_edges": (0, MAX_COUNT), "max_paths": (0, MAX_COUNT), "max_chars": (0, MAX_COUNT),
    "semantic": (0, MAX_COUNT), "semantic_min": (-1.0, 1.0), "min_confidence": (0.0, 1.0)}
_DIRS = {"out": (0,), "in": (1,), "both": (0, 1)}


@dataclass(frozen=True)
class Step:
    """One walkable edge spec: stored edge type, directions (0 out, 1 in), as written."""

    edge: str
    dirs: tuple[int, ...]
    text: str


def parse_step(text: str, schema: Schema) -> Step:
    """Parse ``PRED[:out|:in|:both]`` (stored or inverse edge name) into a :class:`Step`."""
    name, _, direction = text.strip().partition(":")
    direction = direction or "out"
    if direction not in _DIRS:
        raise KgbuildError(f"bad direction {direction!r} in {text!r}: use out, in or both")
    try:
        et, inverted = schema.predicate(name)
    except KgbuildError:
        names = sorted({n for e in schema.edge_types.values() for n in (e.name, e.inverse) if n})
        hint = did_you_mean(name, names) or f" (known: {', '.join(names)})"
        raise KgbuildError(f"unknown edge type {name!r}{hint}") from None
    dirs = tuple(sorted(1 - d for d in _DIRS[direction])) if inverted else _DIRS[direction]
    return Step(et.name, dirs, f"{name}:{direction}")


def parse_path(text: str, schema: Schema) -> list[Step]:
    """Parse ``"a:out/b:in/..."`` into steps."""
    parts = [p for p in text.split("/")]
    if not text.strip() or any(not p.strip() for p in parts):
        raise KgbuildError(f"bad path {text!r}: write steps as PRED[:out|:in|:both] joined by '/'")
    return [parse_step(p, schema) for p in parts]


def check_range(name: str, value: float) -> None:
    """Raise unless ``value`` is within the :data:`BOUNDS` of setting ``name`` (NaN and
    infinities never are)."""
    low, high = BOUNDS[name]
    if (isinstance(value, float) and not math.isfinite(value)) or not low <= value <= high:
        kind = "an integer" if isinstance(low, int) else "a number"
        raise KgbuildError(f"{name} must be {kind} from {low} to {high}, got {value!r}")


@dataclass
class TraversalSpec:
    """What to retrieve. Seeds: ``seeds`` (IDs), ``names`` (resolved), ``question`` (mentions).

    With neither ``path`` nor ``follow``, every edge type is followed both ways.
    """

    seeds: Sequence[str] = ()
    names: Sequence[str] = ()
    question: str | None = None
    follow: Sequence[str] = ()
    hops: int = 2
    path: str | None = None
    cap: int | None = 50
    types: Sequence[str] = ()
    max_nodes: int | None = 200
    max_edges: int | None = 400
    max_paths: int = 100
    max_chars: int | None = 12000
    include_seeds: bool = False  # path mode: may a seed be among the answers?
    semantic: int = 0  # with a question: also seed the N nodes most similar by embeddings
    semantic_min: float = 0.5  # ... whose cosine similarity reaches this
    # assertion filters, applied before the walk (an edge no assertion is left for is not walked)
    exclude_qualifiers: Sequence[str] = ()  # e.g. dev, test, docs or "dev,test" (qualifier_excluded)
    extractors: Sequence[str] = ()  # only assertions of these extractors
    min_confidence: float | None = None  # only assertions at least this confident
    shortest_path: bool = False  # no path/follow: walk the shortest typed path to ``types``

    def check(self, schema: Schema | None = None) -> None:
        """Every setting within its bound; with ``schema`` also the path and follow syntax and
        the type names (so the CLI and the server refuse the same specs, before any work)."""
        if self.path and self.follow:
            raise KgbuildError("give either a path or follow specs, not both")
        if self.shortest_path and (self.path or self.follow or not self.types):
            raise KgbuildError("shortest_path needs a target type and neither path nor follow")
        if self.min_confidence is not None and (
                isinstance(self.min_confidence, bool) or not isinstance(self.min_confidence, (int, float))
                or not 0.0 <= self.min_confidence <= 1.0):
            raise KgbuildError(f"min_confidence must be from 0 to 1, got {self.min_confidence!r}")
        for what, values in (("qualifier", self.exclude_qualifiers), ("extractor", self.extractors)):
            if any(not isinstance(v, str) or not v.strip() or len(v) > MAX_NAME_CHARS for v in values):
                raise KgbuildError(f"an {what} is a non-empty name of at most {MAX_NAME_CHARS:,} "
                                   f"characters")
        for name in ("hops", "cap", "max_nodes", "max_edges", "max_paths", "max_chars"):
            value = getattr(self, name)
            low, high = BOUNDS[name]
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not low <= value <= high):
                raise KgbuildError(f"{name} must be an integer from {low} to {high}, got {value!r}")
        if self.question is not None and len(self.question) > MAX_QUESTION_CHARS:
            raise KgbuildError(f"a question has at most {MAX_QUESTION_CHARS:,} characters, this "
                               f"one {len(self.question):,}")
        for what, values in (("seed", self.seeds), ("name", self.names)):
            if any(len(v) > MAX_NAME_CHARS for v in values):
                raise KgbuildError(f"a {what} has at most {MAX_NAME_CHARS:,} characters")
        if self.path and self.path.count("/") >= MAX_PATH_STEPS:
            raise KgbuildError(f"a path has at most {MAX_PATH_STEPS} steps, this one "
                               f"{self.path.count('/') + 1}")
        if schema is None:
            return
        if self.path is not None and not self.path.strip():
            raise KgbuildError("path is empty: write steps as PRED[:out|:in|:both] joined by '/'",
                               code="usage")
        if self.path:
            parse_path(self.path, schema)
        for f in self.follow:
            parse_step(f, schema)
        for t in self.types:
            schema.node_type(t)

    def to_dict(self) -> dict:
        """The settings, without the seeds (the result lists what they resolved to)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()
                if k not in ("seeds", "names", "question")}

    def filter_key(self) -> tuple:
        """The assertion filters, normalised; empty when there are none."""
        if not (self.exclude_qualifiers or self.extractors or self.min_confidence is not None):
            return ()
        return (tuple(sorted({_word(w) for q in self.exclude_qualifiers for w in q.split(",")
                              if w.strip()})),
                tuple(sorted(set(self.extractors))), self.min_confidence)


FIELDS = {f.name: f for f in fields(TraversalSpec)}
DEFAULTS = {f.name: f.default for f in FIELDS.values()}


def may_be_none(name: str) -> bool:
    """Whether the spec takes None for setting ``name`` (no limit, no value)."""
    return str(FIELDS[name].type).endswith("| None")


def no_cap(cap: int | None) -> int | None:
    """A caller's hub cap: 0 means no cap."""
    return None if cap == 0 else cap


def request_spec(values: Mapping) -> TraversalSpec:
    """The spec a caller's settings ask for (any subset of the fields): a hub cap of 0 means
    no cap, and ``shortest_path``, unless given, is on for a question with ``types`` and
    neither ``path`` nor ``follow``."""
    values = dict(values)
    if "shortest_path" not in values:
        values["shortest_path"] = bool(values.get("question") and values.get("types")
                                       and not (values.get("path") or values.get("follow")))
    if "cap" in values:
        values["cap"] = no_cap(values["cap"])
    return TraversalSpec(**values)


def _word(text: str) -> str:
    from ..resolve.normalize import singular  # (the CLI reads this module at start)

    return singular(text.strip().lower())


def qualifier_excluded(qualifier: str, excluded: set[str]) -> bool:
    """Whether an assertion qualifier falls under an excluded name: any of its words (split at
    ``:``, ``-``, ``_``, ``.``, singular) is one, so ``docs`` excludes ``group:docs`` and
    ``optional:docs-auto``, ``test`` excludes ``group:tests``, ``dev`` excludes ``dev``."""
    return any(_word(w) in excluded for w in re.split(r"[:\-_.]+", qualifier) if w)
