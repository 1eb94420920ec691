"""Verification of extracted relations against the schema, the source text and the known
entities, before anything enters the graph.

:func:`verify_relations` checks each :class:`~kgbuild.extract.text.contract.Relation` read
from one chunk of a document and returns the accepted ones as :class:`VerifiedEdge` (in the
schema's stored direction, both endpoints with stable IDs, the evidence's character span and
a confidence from how exactly everything matched) and the others as :class:`Rejected` with a
reason code (:data:`REASONS`). The checks, in order:

1. ``malformed``: not a relation of the contract (missing subject, predicate or object).
2. ``unknown-predicate``: the predicate is no edge type, inverse or attribute of the schema
   by name, IRI local name or short description, compared without case, spaces, underscores,
   hyphens or camelCase humps (``birth_place``, ``Birth Place`` and ``birthPlace`` are one).
   An inverse name (``ownerOf``) is turned into its stored edge with the endpoints swapped.
3. ``evidence-not-found``: the quote is not in the chunk (tolerant to case, whitespace,
   typographic quotes; an ellipsis may stand for omitted words); its span is recorded. An
   edge or attribute value whose quote names neither end (a small model's ``"a"`` or
   ``"1"``, found in any text) is rejected for the same reason after grounding.
4. ``subject-not-grounded`` / ``object-not-grounded``: the name is mentioned neither in the
   evidence nor elsewhere in the chunk (tolerant to case, accents, punctuation, underscores
   and camelCase, a parenthetical disambiguator, number and date spellings, and the known
   names of the entity the resolver finds).
5. ``invalid-literal``: an attribute's value is not a valid literal of its datatype.
6. ``ambiguous-entity``: the resolver cannot decide which known entity a name is (review,
   ambiguous): queued for review, never merged; the candidates are in the detail.
7. ``type-mismatch``: a declared or known endpoint type contradicts the predicate's domain or
   range. When the relation fits with subject and object swapped the detail starts with
   ``reversed``; such relations are rejected, not flipped: a model that reversed an edge got
   the sentence wrong, and rejecting keeps precision (see bench/README.md).

A name with no type and no known entity gets the predicate's domain (subject) or range
(object) type; an unknown entity gets the stable ID of :func:`kgbuild.graph.ids.entity_id`
(``type:default/slug``), the one the resolver suggests.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Protocol

from ...errors import InvalidValue
from ...graph.ids import entity_id
from ...schema.model import Attribute, EdgeType, Schema
from ..records import EdgeRecord
from .contract import Relation, relation_from_dict
from .chunking import section_at
from .cues import (Cue, cues_in, has_cue, lexicon_roots, predicate_roots, same_root,
                   shipped_lexicon, type_roots)
from .endpoints import (antecedent, proper_names, referring, referring_in, sentence_break,
                        sentence_span, sentence_starts)
from .grounding import (
    Match,
    Quantity,
    find_name,
    find_quote,
    literal,
    quantity,
    stated_date,
    stated_quantity,
)

__all__ = ["REASONS", "Chunk", "TextChunk", "VerifiedEdge", "Rejected", "VerifyResult",
           "VerifyOptions", "PredicateIndex", "verify_relations"]

REASONS = {
    "malformed": "not a relation of the output contract (missing or mistyped fields)",
    "unknown-predicate": "the predicate is no edge type, inverse or attribute of the schema",
    "evidence-not-found": "the evidence is not a quote of the chunk, or names neither end",
    "subject-not-grounded": "the subject is mentioned neither in the evidence nor in the chunk",
    "object-not-grounded": "the object is mentioned neither in the evidence nor in the chunk",
    "invalid-literal": "the attribute value is not a valid literal of its datatype",
    "anaphoric-endpoint": "an end is a pronoun or a noun phrase with no proper name ('the film') "
                          "that nothing in the chunk or its context header resolves",
    "no-relation-cue": "the quote's sentence has no word expressing the predicate (its name, "
                       "inverse, description or cues, in any word form), or the words joining "
                       "its ends express another relation (see VerifyOptions.relation_cues)",
    "both-directions": "the chunk reads the relation both ways between the same two ends: its "
                       "direction is not stated",
    "ambiguous-entity": "a name matches several known entities: queued for review, not merged",
    "type-mismatch": "an endpoint's type contradicts the predicate's domain or range "
                     "(detail 'reversed ...' when the swapped relation fits)",
}


MAX_NAME = 10_000  # characters of a subject or object (an attribute value may be long text)
NUMERIC = ("integer", "decimal")  # datatypes whose values may carry a unit


class Chunk(Protocol):
    """What verification needs of a chunk: its text, absolute start offset in the document,
    the document's ID and its own ID."""

    text: str
    start: int
    doc_id: str
    id: str


@dataclass(frozen=True)
class VerifyOptions:
    """How strictly relations are checked where a project may choose.

    ``relation_cues``: what happens to a relation whose quote's sentence carries no cue of
    its predicate (see :mod:`.cues`): ``reject`` (reason ``no-relation-cue``); ``lower``
    (kept, confidence lowered by ``cue_penalty``, a note says so); ``contrast`` (the default:
    rejected when the words between its two ends express another predicate whose domain and
    range fit them, "produced by X" read as a cast member; when another name stands between
    the ends or they are in different sentences; or when the chunk reads the same two ends
    as another relation too; else as ``lower``; a relation whose cue is elsewhere in the
    sentence loses to another predicate's cue governing its later end); or ``off``.
    Chosen by the leave-one-ontology-out replay (bench/README.md): ``reject`` keeps too few
    correct edges. ``lexicon``: expression roots per root of a predicate's own words
    (``birth`` -> ``born``); None for the shipped ``cue_lexicon.json``."""

    relation_cues: str = "contrast"
    lexicon: tuple[tuple[str, tuple[str, ...]], ...] | None = None  # None: the shipped one
    cue_penalty: float = 0.2  # confidence taken off a relation without a cue ("lower")

    def __post_init__(self) -> None:
        if self.relation_cues not in ("reject", "lower", "off", "contrast"):
            raise InvalidValue(f"relation_cues must be contrast, reject, lower or off, not "
                               f"{self.relation_cues!r}", code="usage")


DEFAULT_OPTIONS = VerifyOptions()


@dataclass(frozen=True)
class TextChunk:
    """A plain chunk (any object with these attributes will do); ``title`` and ``section``
    are its context header (the document's title, the section path where the text starts),
    when it has one; ``marks`` the headings inside the text (see
    :mod:`~kgbuild.extract.text.chunking`): the header of a quote is the one in effect where
    the quote is."""

    text: str
    doc_id: str
    id: str = ""
    start: int = 0
    title: str = ""
    section: tuple[str, ...] = ()
    marks: tuple[tuple[int, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class VerifiedEdge:
    """An accepted relation in the schema's stored direction.

    For an edge type ``object_id`` is set; for an attribute ``object_literal`` holds the
    normalised value (``object_id`` and ``object_type`` are None). ``span`` is the
    evidence's absolute character span in the document."""

    subject_id: str
    subject_type: str
    predicate: str
    object_id: str | None
    object_literal: str | None
    object_type: str | None
    evidence: str
    span: tuple[int, int]
    confidence: float
    subject_label: str
    object_label: str | None
    relation: Relation
    doc_id: str = ""
    chunk_id: str = ""
    subject_status: str = "new"  # resolved (a known entity) or new
    object_status: str | None = "new"  # None for a literal
    notes: tuple[str, ...] = ()  # what was tolerated or inferred
    # where each end was found: "quote" (in the quote's sentence), "chunk" (a referring
    # expression of that sentence, resolved to a name earlier in the chunk) or "header"
    grounding: tuple[str, str] = ("quote", "quote")
    header: str = ""  # the context header that grounded an end ("Title > Section")
    unit: str = ""  # a value's unit as the text states it (its key in grounding.UNITS)
    # where a word expressing the predicate was found: "between" (among the words joining the
    # two ends), "sentence" (elsewhere in the quote's sentence) or "" (none, or none asked)
    cue: str = ""

    @property
    def qualifiers(self) -> tuple[str, ...]:
        """What the assertion records beside the evidence: how its ends were grounded
        (``grounding:header``, ``header:<text>``) and a value's unit (``unit:km``)."""
        out = ("grounding:header", f"header:{self.header}") if "header" in self.grounding else ()
        return out + ((f"unit:{self.unit}",) if self.unit else ())

    @property
    def is_attribute(self) -> bool:
        return self.object_literal is not None

    def to_edge_record(self) -> EdgeRecord | None:
        """The extraction record of an edge (None for an attribute value)."""
        if self.object_id is None:
            return None
        return EdgeRecord(self.subject_id, self.predicate, self.object_id,
                          evidence=self.evidence, confidence=self.confidence,
                          subject_type=self.subject_type, object_type=self.object_type,
                          subject_label=self.subject_label, object_label=self.object_label,
                          span=self.span)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["span"] = list(self.span)
        out["notes"] = list(self.notes)
        out["grounding"] = list(self.grounding)
        return out


@dataclass(frozen=True)
class Rejected:
    """A relation left out, with its reason code (:data:`REASONS`) and a readable detail."""

    relation: Relation | Any
    reason: str
    detail: str
    candidates: tuple[tuple[str, str, float], ...] = ()  # for ambiguous-entity
    mention: str = ""  # for ambiguous-entity: the name that matches several entities
    evidence: str = ""  # for ambiguous-entity: the quote as the source writes it

    def to_dict(self) -> dict:
        rel = self.relation.to_dict() if isinstance(self.relation, Relation) else self.relation
        out = {"relation": rel, "reason": self.reason, "detail": self.detail}
        if self.candidates:
            out["candidates"] = [list(c) for c in self.candidates]
        if self.mention:
            out["mention"] = self.mention
            out["evidence"] = self.evidence
        return out


@dataclass
class VerifyResult:
    """What :func:`verify_relations` decided for one chunk: the accepted relations and the
    rejected ones, each with its reason."""

    accepted: list[VerifiedEdge] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Accepted and rejected counts, the rejected ones by reason."""
        out = {"accepted": len(self.accepted), "rejected": len(self.rejected)}
        for r in self.rejected:
            out[r.reason] = out.get(r.reason, 0) + 1
        return out

    def extend(self, other: "VerifyResult") -> None:
        self.accepted.extend(other.accepted)
        self.rejected.extend(other.rejected)


# -- predicates ---------------------------------------------------------------------------------

def _key(name: str) -> str:
    text = unicodedata.normalize("NFKD", name)
    return "".join(c for c in text if c.isalnum() and not unicodedata.combining(c)).casefold()


def _local(iri: str) -> str:
    return re.split(r"[#/:]", iri.rstrip("#/"))[-1]


@dataclass(frozen=True)
class Predicate:
    """A predicate name as found: an edge type (``inverted`` for its inverse name) or an
    attribute; ``loose`` when matched by local name or description rather than name."""

    edge: EdgeType | None
    attribute: Attribute | None
    inverted: bool = False
    loose: bool = False

    @property
    def name(self) -> str:
        return self.edge.name if self.edge else self.attribute.name  # type: ignore[union-attr]


class PredicateIndex:
    """Every name a schema's predicates go by, compared as keys (no case, separators or
    camelCase): names first, then IRI local names and inverse IRIs, then short descriptions."""

    def __init__(self, schema: Schema):
        self.schema = schema
        self._exact: dict[str, list[Predicate]] = {}
        self._loose: dict[str, list[Predicate]] = {}
        for et in schema.edge_types.values():
            self._put(self._exact, et.name, Predicate(et, None))
            self._put(self._loose, _local(et.iri), Predicate(et, None, loose=True))
            if et.inverse:
                self._put(self._exact, et.inverse, Predicate(et, None, True))
                if et.inverse_iri:
                    self._put(self._loose, _local(et.inverse_iri), Predicate(et, None, True, True))
            self._label(et.description, Predicate(et, None, loose=True))
            for cue in et.cues:  # labels and alternative labels are names, however long
                self._put(self._loose, cue, Predicate(et, None, loose=True))
        for at in schema.attributes.values():
            self._put(self._exact, at.name, Predicate(None, at))
            self._put(self._loose, _local(at.iri), Predicate(None, at, loose=True))
            self._label(at.description, Predicate(None, at, loose=True))
            for cue in at.cues:
                self._put(self._loose, cue, Predicate(None, at, loose=True))

    def _label(self, description: str, pred: Predicate) -> None:
        label = description.split(":", 1)[0].strip()
        if label and len(label.split()) <= 4 and len(label) <= 40:
            self._put(self._loose, label, pred)

    @staticmethod
    def _put(table: dict, name: str, pred: Predicate) -> None:
        key = _key(name)
        if key:
            found = table.setdefault(key, [])
            if all((p.name, p.inverted) != (pred.name, pred.inverted) for p in found):
                found.append(pred)

    def lookup(self, name: str) -> tuple[Predicate | None, str]:
        """The predicate ``name`` denotes, or None and why not."""
        key = _key(name)
        if not key:
            return None, "empty predicate"
        for table in (self._exact, self._loose):
            found = table.get(key)
            if found and len(found) == 1:
                return found[0], ""
            if found:
                return None, (f"{name!r} could be any of "
                              f"{', '.join(sorted(p.name for p in found))}")
        return None, f"{name!r} is no edge type, inverse or attribute of schema {self.schema.name!r}"


_INDEXES: dict[int, tuple[Schema, PredicateIndex]] = {}


def _index(schema: Schema) -> PredicateIndex:
    hit = _INDEXES.get(id(schema))
    if hit is None or hit[0] is not schema:
        if len(_INDEXES) > 64:
            _INDEXES.clear()
        hit = _INDEXES[id(schema)] = (schema, PredicateIndex(schema))
    return hit[1]


# -- verification -------------------------------------------------------------------------------

def verify_relations(relations: Iterable[Relation | dict], chunk: Chunk, schema: Schema,
                     resolver=None, options: VerifyOptions | None = None) -> VerifyResult:
    """Verify relations read from ``chunk`` (see the module docstring); never raises for bad
    relations. ``resolver`` (a :class:`kgbuild.resolve.resolver.Resolver`) maps names onto the
    known entities' IDs; without one every entity is new. ``options``: see
    :class:`VerifyOptions`."""
    options = options or DEFAULT_OPTIONS
    result = VerifyResult()
    index = _index(schema)
    accepted = []
    for rel in relations:
        out = _verify(rel, chunk, schema, index, resolver, options)
        if isinstance(out, Rejected):
            result.rejected.append(out)
        else:
            accepted.append(out)
    if options.relation_cues == "contrast":
        accepted = _unchosen(accepted, result)
    for edge in accepted:
        contradiction = _outvoted(edge, accepted, schema)
        if contradiction:
            result.rejected.append(Rejected(edge.relation, "type-mismatch", contradiction))
        else:
            result.accepted.append(edge)
    return result


def _pair_key(edge: VerifiedEdge) -> frozenset[str]:
    other = edge.object_label if edge.object_id is not None else edge.object_literal
    return frozenset((_name_key(edge.subject_label), _name_key(str(other or ""))))


def _unchosen(edges: list[VerifiedEdge], result: VerifyResult) -> list[VerifiedEdge]:
    """The edges left when the readings of a pair its sentence does not choose are rejected,
    where the chunk reads the same two ends as more than one relation.

    One sentence rarely states two relations between the same two names; when a model
    offers several ("X directed Y" read as director, writer and producer), the sentence's
    words are what chooses among them (``no-relation-cue``): a reading with no cue in the
    sentence is rejected, and so is one whose cue lies outside the words joining the two
    ends when a rival's cue lies among them ("X, born in A, died in B": *died* joins X and
    B). A lone reading without a cue stays, at the lower confidence :func:`_cue_check`
    notes. A relation read both ways between the same two ends (X p Y and Y p X) has no
    stated direction: both are rejected (``both-directions``; a schema's edge types are
    directed, none is its own inverse)."""
    keys = [_pair_key(e) for e in edges]
    readings: dict[frozenset[str], dict[str, str]] = {}
    subjects: dict[tuple[frozenset[str], str], set[str]] = {}
    for e, key in zip(edges, keys):
        seen = readings.setdefault(key, {})
        seen[e.predicate] = max(seen.get(e.predicate, ""), e.cue, key=_CUE_RANK.index)
        subjects.setdefault((key, e.predicate), set()).add(_name_key(e.subject_label))
    kept = []
    for e, key in zip(edges, keys):
        rivals = {p: c for p, c in readings[key].items() if p != e.predicate}
        pair = f"{e.subject_label!r} and {e.object_label or e.object_literal!r}"
        if len(key) == 2 and len(subjects[(key, e.predicate)]) > 1:
            result.rejected.append(Rejected(
                e.relation, "both-directions",
                f"the chunk reads {e.predicate} both ways between {pair}: its direction is "
                "not stated"))
            continue
        if rivals and _penalty(list(e.notes)):
            why = (f"{pair} are also read as {', '.join(sorted(rivals))} in this chunk, and no "
                   f"word of the sentence expresses {e.predicate}: the sentence's words must "
                   "choose between the readings")
        elif e.cue == "sentence" and "between" in rivals.values():
            closer = sorted(p for p, c in rivals.items() if c == "between")
            why = (f"{pair} are also read as {', '.join(closer)}, which the words joining them "
                   f"express; {e.predicate}'s cue is elsewhere in the sentence")
        else:
            kept.append(e)
            continue
        result.rejected.append(Rejected(e.relation, "no-relation-cue", why))
    return kept


_CUE_RANK = ("", "sentence", "between")


def _balanced(name: str) -> bool:
    """Whether every bracket of ``name`` is closed (a truncated name is not)."""
    pairs = {")": "(", "]": "["}
    stack = []
    for ch in name:
        if ch in "([":
            stack.append(ch)
        elif ch in ")]":
            if not stack or stack.pop() != pairs[ch]:
                return False
    return not stack


def _name_key(name: str) -> str:
    return _key(re.sub(r"\s*\([^()]*\)", "", name)) or _key(name)


def _outvoted(edge: VerifiedEdge, edges: list[VerifiedEdge], schema: Schema) -> str:
    """Why the types the chunk's other relations give an endpoint contradict this edge.

    An endpoint whose type was only inferred (no declared type, no known entity) takes the
    type each relation's domain or range gives it; when the other accepted relations of the
    chunk type the same name incompatibly, more often than this one and those agreeing with
    it, the edge is the odd one out (a predicate the model misapplied, or a reversal)."""
    if edge.object_id is None:
        return ""
    votes: dict[str, dict[str, int]] = {}
    for e in edges:
        if e.object_id is None:
            continue
        for name, typ in ((e.subject_label, e.subject_type), (e.object_label, e.object_type)):
            bucket = votes.setdefault(_name_key(name), {})
            bucket[typ] = bucket.get(typ, 0) + 1
    stored = [(edge.subject_label, edge.subject_type, edge.subject_status),
              (edge.object_label, edge.object_type, edge.object_status)]
    for (name, typ, status), role in zip(stored, ("subject", "object")):
        if status != "new" or _declared(edge, role, schema):
            continue
        bucket = votes.get(_name_key(name), {})
        agree = sum(n for t, n in bucket.items() if schema.more_specific(t, typ) is not None)
        other = {t: n for t, n in bucket.items() if schema.more_specific(t, typ) is None}
        if other and max(other.values()) > agree:
            best = max(sorted(other), key=lambda t: other[t])
            et = schema.edge_types[edge.predicate]
            s_t, o_t = edge.subject_type, edge.object_type
            if role == "subject":
                s_t = best
            else:
                o_t = best
            reversed_fits = (any(schema.is_a(o_t, d) for d in et.domain)
                             and any(schema.is_a(s_t, r) for r in et.range))
            return (("reversed: " if reversed_fits else "")
                    + f"{role} {name!r} is a {best} in {other[best]} other relation(s) of the "
                    f"chunk; {edge.predicate} needs a "
                    f"{'/'.join(et.domain if role == 'subject' else et.range)}")
    return ""


def _declared(edge: VerifiedEdge, role: str, schema: Schema) -> bool:
    rel = edge.relation
    pred = _index(schema).lookup(rel.predicate)[0]
    inverted = bool(pred and pred.inverted)  # then the stored subject is the stated object
    declared = rel.subject_type if (role == "subject") != inverted else rel.object_type
    return _schema_type(schema, declared) is not None


@dataclass
class _End:
    name: str
    declared: str | None
    match: Match
    in_evidence: bool
    grounding: str = "quote"  # quote, chunk or header
    id: str | None = None
    type: str | None = None
    status: str = "new"
    stage: str = ""
    score: float = 100.0

    @property
    def mask(self) -> tuple[int, int] | None:
        """The span another end may not be found in (none for a header-grounded end)."""
        return None if self.grounding == "header" else (self.match.start, self.match.end)


def _verify(rel: Relation | dict, chunk: Chunk, schema: Schema, index: PredicateIndex,
            resolver, options: VerifyOptions = DEFAULT_OPTIONS) -> VerifiedEdge | Rejected:
    if isinstance(rel, dict):
        parsed, err = relation_from_dict(rel)
        if err:
            return Rejected(rel, "malformed", err)
        rel = parsed
    if not isinstance(rel, Relation):
        return Rejected(rel, "malformed", f"expected a relation, got {type(rel).__name__}")
    if not (rel.subject.strip() and rel.predicate.strip() and rel.object.strip()):
        return Rejected(rel, "malformed", "subject, predicate and object must be non-empty")
    for role, name in (("subject", rel.subject), ("object", rel.object)):
        if len(name) > MAX_NAME:
            return Rejected(rel, "malformed", f"the {role} is longer than {MAX_NAME} characters")
        if not _balanced(name):
            return Rejected(rel, "malformed", f"the {role} {_short(name)!r} has unbalanced "
                            "brackets: a truncated name")
    notes: list[str] = []
    pred, why = index.lookup(rel.predicate)
    if pred is None:
        return Rejected(rel, "unknown-predicate", why)
    if pred.loose:
        notes.append(f"predicate {rel.predicate!r} read as {pred.name!r}")
    text = chunk.text
    if not rel.evidence.strip():
        return Rejected(rel, "evidence-not-found", "no evidence given")
    quote = find_quote(rel.evidence, text)
    if quote is None:
        return Rejected(rel, "evidence-not-found",
                        f"{_short(rel.evidence)!r} is not in chunk {chunk.id or chunk.doc_id}")
    if not quote.exact:
        notes.append(f"evidence found {quote.how}")
    if pred.attribute is not None:
        s_allowed = tuple(t for t in schema.node_types if schema.node_types[t].parent is None)
        o_allowed: tuple[str, ...] = ()
    else:
        assert pred.edge is not None
        s_allowed, o_allowed = ((pred.edge.range, pred.edge.domain) if pred.inverted
                                else (pred.edge.domain, pred.edge.range))
    # a quote found several times in the chunk: the first occurrence whose sentence states
    # both ends is the evidence
    first: Rejected | None = None
    for quote in _occurrences(rel.evidence, text, quote):
        found = _ends(rel, pred, quote, chunk, schema, resolver, s_allowed, o_allowed)
        if not isinstance(found, Rejected):
            break
        first = first or found
    else:
        assert first is not None
        return first
    subject, obj, scope = found
    o_name = rel.object
    evidence = text[quote.start:quote.end]
    if pred.attribute is not None:
        return _attribute(rel, pred, subject, evidence, quote, chunk, schema, resolver, notes,
                          scope, options)
    et = pred.edge
    assert et is not None
    if pred.inverted:
        subject, obj = obj, subject
        notes.append(f"inverse {rel.predicate!r} stored as {et.name!r}")
    for end, allowed, role in ((subject, et.domain, "subject"), (obj, et.range, "object")):
        bad = _resolve(end, allowed, schema, resolver, role, notes)
        if bad is not None:
            return Rejected(rel, *bad, evidence)
    if subject.id == obj.id or _name_key(subject.name) == _name_key(obj.name):
        return Rejected(rel, "object-not-grounded",
                        f"{_short(o_name)!r} is the subject itself ({subject.id}): an edge needs "
                        "two entities")
    mismatch = _type_check(et, subject, obj, schema)
    if mismatch:
        return Rejected(rel, "type-mismatch", mismatch)
    cue, where = _cue_check(et.name, scope, schema, options, notes, (subject, obj))
    if cue:
        return Rejected(rel, "no-relation-cue", cue)
    return VerifiedEdge(subject.id, subject.type, et.name, obj.id, None, obj.type, evidence,
                        (chunk.start + quote.start, chunk.start + quote.end),
                        _confidence(quote, pred, [subject, obj], notes), subject.name, obj.name,
                        rel, chunk.doc_id, chunk.id, subject.status, obj.status, tuple(notes),
                        (subject.grounding, obj.grounding), scope.header_text(subject, obj),
                        cue=where)


def _occurrences(evidence: str, text: str, first: Match, limit: int = 20):
    """``first`` and the later places ``evidence`` is found in ``text`` (at most ``limit``)."""
    quote: Match | None = first
    for _ in range(limit):
        if quote is None:
            return
        yield quote
        rest = find_quote(evidence, text[quote.end:])
        quote = None if rest is None else Match(rest.start + quote.end, rest.end + quote.end,
                                                rest.exact, rest.how)


def _ends(rel: Relation, pred: Predicate, quote: Match, chunk: Chunk, schema: Schema, resolver,
          s_allowed: tuple[str, ...], o_allowed: tuple[str, ...]):
    """Both ends of a relation located for one occurrence of its quote: (subject, object or
    None for an attribute, scope), or the rejection."""
    text = chunk.text
    scope = _Scope.of(chunk, quote, schema, resolver)
    s_name, s_decl, o_name, o_decl = rel.subject, rel.subject_type, rel.object, rel.object_type
    subject = _locate(s_name, s_decl, s_allowed, "subject", scope)
    if isinstance(subject, Rejected):
        quoted = text[quote.start:quote.end]
        value = literal(o_name, pred.attribute.datatype) if pred.attribute is not None else None
        if subject.reason == "subject-not-grounded" and find_name(o_name, quoted) is None \
                and (not value or find_name(value, quoted) is None) \
                and find_name(s_name, text) is not None:  # named, but not where the quote is
            return Rejected(rel, "evidence-not-found",  # "a", "1", a bare word: no evidence
                            f"{_short(rel.evidence)!r} names neither {_short(s_name)!r} nor "
                            f"{_short(o_name)!r}")
        return Rejected(rel, subject.reason, subject.detail)
    placeholder = _placeholder(s_name, rel.predicate, schema)
    if placeholder:
        return Rejected(rel, "subject-not-grounded", placeholder)
    if pred.attribute is not None:
        return subject, None, scope
    obj = _locate(o_name, o_decl, o_allowed, "object", scope, subject.mask)
    if isinstance(obj, Rejected):
        return Rejected(rel, obj.reason, obj.detail)
    placeholder = _placeholder(o_name, rel.predicate, schema)
    if placeholder:
        return Rejected(rel, "object-not-grounded", placeholder)
    if not (subject.in_evidence or obj.in_evidence):  # "a", "1", a word: quoted, yet no evidence
        return Rejected(rel, "evidence-not-found",
                        f"{_short(rel.evidence)!r} names neither {_short(s_name)!r} nor "
                        f"{_short(o_name)!r}")
    return subject, obj, scope


def _attribute(rel: Relation, pred: Predicate, subject: _End, evidence: str, quote: Match,
               chunk: Chunk, schema: Schema, resolver, notes: list[str],
               scope: "_Scope", options: VerifyOptions = DEFAULT_OPTIONS
               ) -> VerifiedEdge | Rejected:
    at = pred.attribute
    assert at is not None
    amount = quantity(rel.object) if at.datatype in NUMERIC else None
    if amount is not None and not amount.bare:  # "120 km", "$4 billion": as the text states it
        stated = _stated_amount(amount, scope, subject.mask)
        if stated is None:
            return Rejected(rel, "object-not-grounded",
                            f"{_short(rel.object)!r}: the quote's sentence does not state "
                            f"{amount.number}{' ' + amount.scale if amount.scale else ''} with "
                            "that unit (a value is kept as stated, never converted)")
        value_end, said = stated
        value = said.written
    else:
        value = literal(rel.object, at.datatype)
        if value is None:
            return Rejected(rel, "invalid-literal",
                            f"{_short(rel.object)!r} is not a valid {at.datatype} for {at.name!r}")
        also = (value,) if value != rel.object else ()
        value_end = _in_scope(rel.object, scope, (subject.mask,), also)
        if value_end is not None and amount is not None:
            said = _unit_beside(amount, value_end, scope)
            if said is not None:  # the number with a unit: is it stated bare elsewhere too?
                skip = (subject.mask, (value_end.match.start, value_end.match.end))
                bare = _in_scope(rel.object, scope, skip, also)
                if bare is not None and _unit_beside(amount, bare, scope) is None:
                    value_end, said = bare, None  # "42 metres tall, 42 floors": the bare 42
            if said is not None:  # the text gives the number a unit or scale: it is kept
                value = said.written
    if amount is not None and value != literal(rel.object, at.datatype):
        notes.append(f"value {rel.object!r} stated as {value!r}: kept as written, number and "
                     "unit, never converted")
    if not subject.in_evidence and (value_end is None or not value_end.in_evidence):
        return Rejected(rel, "evidence-not-found",
                        f"{_short(rel.evidence)!r} names neither {_short(subject.name)!r} nor "
                        f"{_short(rel.object)!r}")
    if value_end is None:
        return Rejected(rel, "object-not-grounded",
                        f"{_short(rel.object)!r} is not mentioned in the quote's sentence"
                        + _apart(rel.object, scope.text[scope.sa:scope.sb], chunk.text))
    if value_end.match.how == "date-stated":
        said = stated_date(scope.text[value_end.match.start:value_end.match.end])
        if said and said != value:
            notes.append(f"value {rel.object!r} stated as {said}: the quote gives "
                         f"{'the year' if len(said) == 4 else 'the month'} only, which is all "
                         "that is stored")
            value = said
    if not (subject.in_evidence or value_end.in_evidence):
        return Rejected(rel, "evidence-not-found",
                        f"{_short(rel.evidence)!r} names neither {_short(subject.name)!r} nor "
                        f"{_short(rel.object)!r}")
    roots = tuple(t for t in schema.node_types if schema.node_types[t].parent is None)
    bad = _resolve(subject, roots, schema, resolver, "subject", notes)
    if bad is not None:
        return Rejected(rel, *bad, evidence)
    cue, where = _cue_check(at.name, scope, schema, options, notes, (subject, value_end))
    if cue:
        return Rejected(rel, "no-relation-cue", cue)
    unit = quantity(value) if amount is not None else None
    return VerifiedEdge(subject.id, subject.type, at.name, None, value, None, evidence,
                        (chunk.start + quote.start, chunk.start + quote.end),
                        _confidence(quote, pred, [subject, value_end], notes), subject.name, None,
                        rel, chunk.doc_id, chunk.id, subject.status, None, tuple(notes),
                        (subject.grounding, "quote"), scope.header_text(subject),
                        unit.unit if unit else "", where)


def _stated_amount(amount: Quantity, scope: "_Scope", mask: tuple[int, int] | None
                   ) -> tuple[_End, Quantity] | None:
    """Where the quote (else its sentence) states ``amount``'s number with its unit, outside
    ``mask``."""
    for a, b, inside in ((scope.qa, scope.qb, True), (scope.sa, scope.sb, False)):
        found = stated_quantity(amount, scope.text[a:b])
        if found is not None:
            m, said = found
            span = (m.start + a, m.end + a)
            if mask is None or not (mask[0] < span[1] and span[0] < mask[1]):
                return _End(said.written, None, Match(*span, False, "quantity"), inside), said
    return None


def _unit_beside(amount: Quantity, end: _End, scope: "_Scope") -> Quantity | None:
    """The quantity the text writes where a bare number was found, when it has a unit or a
    scale there ("120" in "120 km", "3500000" as "3.5 million")."""
    a, b = end.match.start, end.match.end
    line_end = scope.text.find("\n", b)
    window = scope.text[max(0, a - 4):line_end if line_end >= 0 else len(scope.text)]
    found = stated_quantity(quantity(scope.text[a:b]) or amount, window)
    if found is not None and not found[1].bare:
        return found[1]
    return None


def _in_scope(name: str, scope: "_Scope", masks: tuple, also: tuple[str, ...] = ()
              ) -> _End | None:
    """A literal value in the quote, else in the quote's sentence, outside the spans of
    ``masks`` (None items are no span)."""
    skip = tuple(m for m in masks if m is not None)
    for a, b, inside in ((scope.qa, scope.qb, True), (scope.sa, scope.sb, False)):
        part = scope.text[a:b]
        local = tuple((x - a, y - a) for x, y in skip)
        for candidate in (name, *also):
            m = find_name(candidate, part, (), local)
            if m is not None:
                return _End(name, None, Match(m.start + a, m.end + a, m.exact, m.how), inside)
    return None


# -- relation cues ------------------------------------------------------------------------------

_CUES: dict[tuple, tuple[Schema, dict[str, tuple[frozenset[str], bool]]]] = {}


def _cue_table(schema: Schema, lexicon) -> dict[str, tuple[frozenset[str], bool]]:
    """Each predicate's cue roots (the lexicon's expressions added) and whether it is
    *type-named*: its words are only those of its range or domain types (``country`` with
    range Country, ``club``), a relation English states by the object alone ("a film from
    Italy", "an American film", "plays in Serie A"), so no cue word can be asked for."""
    key = (id(schema), id(lexicon))
    hit = _CUES.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    table: dict[str, tuple[frozenset[str], bool]] = {}
    lex = dict(lexicon)
    for et in schema.edge_types.values():
        own = predicate_roots(_bare(et.name), _bare(et.inverse or ""), et.description,
                              getattr(et, "cues", ()))
        kinds = type_roots([*et.range, *et.domain])
        named = bool(own) and all(any(same_root(r, k) for k in kinds) for r in own)
        table[et.name] = (lexicon_roots(own, lex), named)
    for at in schema.attributes.values():
        own = predicate_roots(_bare(at.name), None, at.description, getattr(at, "cues", ()))
        table[at.name] = (lexicon_roots(own, lex), False)
    if len(_CUES) > 64:
        _CUES.clear()
    _CUES[key] = (schema, table)
    return table


def _bare(name: str) -> str:
    """A predicate name without the ``_2`` a schema import adds when a type took the name."""
    return re.sub(r"_\d+$", "", name)


def _link(ends: tuple, text: str) -> tuple[int, int] | None:
    """The span of the words joining two ends found in one sentence of the quote (None when
    an end is not there: grounded by the header, in another sentence, or no end given)."""
    if not _both_quoted(ends):
        return None
    a, b = sorted([(ends[0].match.start, ends[0].match.end),
                   (ends[1].match.start, ends[1].match.end)])
    if sentence_break(text, a[0], b[0]):
        return None
    return a[1], max(a[1], b[0])


def _both_quoted(ends: tuple) -> bool:
    """Whether both ends were found as written in the quote's text (not through a referring
    expression's antecedent or the header)."""
    return len(ends) == 2 and all(e.grounding == "quote" for e in ends)


def _joins(text: str, link: tuple[int, int] | None, roots: frozenset[str]) -> Cue | None:
    """The cue word among the words joining two ends that governs the later end: no other
    proper name stands between it and that end ("X, born in A, died in B": *born* governs
    A, not B). None when there is none."""
    if link is None:
        return None
    a, b = link
    return next((c for c in cues_in(text[a:b], roots, common=True)
                 if not proper_names(text, a + c.end, b)), None)


def _rival(predicate: str, scope: "_Scope", link: tuple[int, int], ends: tuple, schema: Schema,
           table: dict, governs: bool) -> tuple[str, Cue] | None:
    """Another predicate that may relate the ends and whose cue is among the words joining
    them (with ``governs``: one that governs the later end). It may relate them when their
    types fit its domain and range; for a relation without a cue of its own (not
    ``governs``), an end with no type of its own (neither declared nor known: only the
    predicate being checked gave it one) fits any."""
    for other, (o_roots, o_named) in table.items():
        et = schema.edge_types.get(other)
        if other == predicate or o_named or et is None:
            continue
        if not all(_may_be(e, kinds, schema, untyped=not governs)
                   for e, kinds in zip(ends, (et.domain, et.range))):
            continue
        cue = (_joins(scope.text, link, o_roots) if governs
               else has_cue(scope.text[link[0]:link[1]], o_roots, common=True))
        if cue is not None:
            return other, cue
    return None


def _may_be(end: "_End", kinds: tuple[str, ...], schema: Schema, untyped: bool) -> bool:
    """Whether an end may be one of ``kinds``: its type is, or (with ``untyped``) it has no
    type of its own."""
    if untyped and end.status != "resolved" and not end.declared:
        return True
    return any(schema.is_a(end.type, k) for k in kinds)


def _cue_check(predicate: str, scope: "_Scope", schema: Schema, options: VerifyOptions,
               notes: list[str], ends: tuple = ()) -> tuple[str, str]:
    """Why the quote's sentence does not express ``predicate`` (empty when it does, or when
    the options keep such relations at a lower confidence, noted), and where its cue is
    (see :attr:`VerifiedEdge.cue`).

    With ``contrast``, the words joining the two ends decide against the predicate when
    they express another one that fits the ends: when the sentence has no cue of the
    predicate at all ("produced by X" read as a cast member), and when its cue is elsewhere
    in the sentence while the other's governs the later end ("Funny Lady, starring Barbra
    Streisand, was produced by Ray Stark" read as Ray Stark a cast member). A relation with
    no cue in the sentence rests on the two ends' nearness alone, so it is also rejected
    when another proper name stands between them or they are in different sentences ("Funny
    Lady opened with Barbra Streisand beside James Caan" read as James Caan its composer);
    else it is kept at a lower confidence, noted."""
    if options.relation_cues == "off":
        return "", ""
    lexicon = options.lexicon if options.lexicon is not None else shipped_lexicon()
    table = _cue_table(schema, lexicon)
    roots, type_named = table.get(predicate, (frozenset(), False))
    if type_named or not roots:
        return "", ""
    span = _link(ends, scope.text)
    contrast = options.relation_cues == "contrast" and span is not None
    rivals = contrast and schema.edge_types.get(predicate) is not None
    own = has_cue(scope.text[scope.sa:scope.sb], roots)
    if own is not None:
        if _joins(scope.text, span, roots) is not None:
            return "", "between"
        rival = _rival(predicate, scope, span, ends, schema, table, True) if rivals else None
        if rival is not None:
            return (f"the words joining the ends express {rival[0]} ({rival[1].word!r}), "
                    f"which governs the later end; {predicate}'s cue ({own.word!r}) is "
                    "elsewhere in the sentence"), ""
        return "", "sentence"
    words = ", ".join(sorted(roots)[:8])
    why = (f"no word of the quote's sentence expresses {predicate} (cue roots: {words}): "
           "both ends are named, but the sentence may state another relation between them")
    if options.relation_cues == "reject":
        return why, ""
    rival = _rival(predicate, scope, span, ends, schema, table, False) if rivals else None
    if rival is not None:
        return (f"the words between the ends express {rival[0]} ({rival[1].word!r}), and "
                f"none of the sentence expresses {predicate} (cue roots: {words})"), ""
    if options.relation_cues == "contrast" and span is None and _both_quoted(ends):
        return (f"no word of the quote's sentence expresses {predicate} (cue roots: {words}), "
                "and its two ends are in different sentences: with no word for the relation, "
                "nearness is its only evidence"), ""
    between = proper_names(scope.text, *span) if contrast else []
    if between:
        x, y = between[0]
        return (f"no word of the quote's sentence expresses {predicate} (cue roots: {words}), "
                f"and {scope.text[x:y]!r} stands between the two ends: with no word for the "
                "relation, nearness is its only evidence, and another name is nearer"), ""
    notes.append(f"no relation cue (confidence -{options.cue_penalty}): {why}")
    return "", ""


def _penalty(notes: list[str]) -> float:
    for n in notes:
        m = re.match(r"no relation cue \(confidence -([\d.]+)\)", n)
        if m:
            return float(m.group(1))
    return 0.0


@dataclass
class _Scope:
    """Where a relation's ends may be found: the quote (``qa:qb`` in the chunk's text), its
    sentence (``sa:sb``), the chunk before it (for a referring expression's antecedent) and
    the chunk's context header."""

    text: str
    qa: int
    qb: int
    sa: int
    sb: int
    limit: int  # where antecedents may start: two sentences before the quote's
    title: str
    section: tuple[str, ...]
    schema: Schema
    resolver: Any

    @classmethod
    def of(cls, chunk: Chunk, quote: Match, schema: Schema, resolver) -> "_Scope":
        text = chunk.text
        sa, sb = sentence_span(text, quote.start, quote.end)
        starts = [b for b in sentence_starts(text) if b < sa]
        limit = starts[-2] if len(starts) >= 2 else 0
        title = getattr(chunk, "title", "") or ""
        if title and title == chunk.doc_id.rsplit("/", 1)[-1]:
            title = ""  # the file name stands in for a missing heading: it names a file
        marks = tuple(getattr(chunk, "marks", ()) or ())
        section = section_at(quote.start, tuple(getattr(chunk, "section", ()) or ()), marks)
        # a heading opens a new stretch of discourse: what a sentence after it refers back to
        # is in that section (or its header), never in the section before, nor the heading
        heads = [at for at, _ in marks if at <= quote.start]
        if heads:
            line_end = text.find("\n", heads[-1])
            limit = max(limit, line_end if 0 <= line_end <= sa else sa)
        if title and section and section[0] == title:
            section = section[1:]  # the path starts at the title's own heading
        return cls(text, quote.start, quote.end, sa, max(sb, quote.end), limit, title, section,
                   schema, resolver)

    @property
    def headers(self) -> list[str]:
        """The header's parts that may name what the chunk is about: the section path, deepest
        first, then the title."""
        return [p for p in (*reversed(self.section), self.title) if p and p.strip()]

    def header_text(self, *ends: "_End") -> str:
        if not any(e.grounding == "header" for e in ends):
            return ""
        return " > ".join(p for p in (self.title, *self.section) if p)

    def fits(self, noun: str, allowed: tuple[str, ...], named: bool = False) -> bool:
        """Whether a referring expression's head noun may stand for an end of one of the
        ``allowed`` types: a pronoun may; a noun that names a schema type only for a type on
        the allowed types' branch ("the company" is no Person). With ``named`` (the model
        wrote a name the sentence lacks, and the expression would stand in for it), a noun
        that names no schema type may not: "the card" describes a thing the schema does not
        model, not the Payments system a heading names."""
        if noun == "pronoun" or not allowed:
            return True
        typ = _schema_type(self.schema, noun) or _schema_type(self.schema, _singular(noun))
        if typ is None:
            return not named
        return any(self.schema.more_specific(typ, a) is not None for a in allowed)


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _locate(name: str, declared: str | None, allowed: tuple[str, ...], role: str,
            scope: _Scope, mask: tuple[int, int] | None = None) -> _End | Rejected:
    """Where an entity end is stated (see :mod:`.endpoints`): in the quote's sentence; or,
    when the model wrote a referring expression, the name it refers to; or, when the quote's
    sentence refers to it, a name of the chunk before it or of the context header."""
    text = scope.text
    skip = (mask,) if mask is not None else ()
    ref = referring(name)
    if ref is not None:
        return _resolve_reference(name, ref, declared, allowed, role, scope, skip)
    aliases = _known_names(name, declared, scope.resolver)
    quote = text[scope.qa:scope.qb]
    local = tuple((a - scope.qa, b - scope.qa) for a, b in skip)
    m = find_name(name, quote, aliases, local)
    if m is not None:
        return _End(name, declared, Match(m.start + scope.qa, m.end + scope.qa, m.exact, m.how),
                    True)
    sentence = text[scope.sa:scope.sb]
    local = tuple((a - scope.sa, b - scope.sa) for a, b in skip)
    m = find_name(name, sentence, aliases, local)
    if m is not None:
        return _End(name, declared, Match(m.start + scope.sa, m.end + scope.sa, m.exact, m.how),
                    False)
    # not in the quote's sentence: what a referring expression there stands for
    refs = [r for r in referring_in(text, scope.sa, scope.sb)
            if _clear_of(r, skip) and scope.fits(r[2], allowed, named=True)]
    if refs:
        for part in scope.headers:
            if _names_whole(name, part, aliases):
                return _End(name, declared, Match(refs[0][0], refs[0][1], False, "header"),
                            scope.qa <= refs[0][0] < scope.qb, "header")
        for r in refs:
            ant = antecedent(text, scope.sa, scope.limit, skip)
            if ant is not None and find_name(name, text[ant[0]:ant[1]], aliases) is not None:
                return _End(name, declared, Match(ant[0], ant[1], False, "antecedent"),
                            scope.qa <= r[0] < scope.qb, "chunk")
    where = _inside_longer(name, text, scope.sa, scope.sb)
    if where:
        pass
    elif find_name(name, text, aliases, skip) is not None:
        where = (": it is named elsewhere in the chunk, not in the quote's sentence (the quote "
                 "states a relation between other entities)")
    elif find_name(name, text) is not None:
        where = " apart from the subject's own mention"
    return Rejected(None, f"{role}-not-grounded",
                    f"{_short(name)!r} is not mentioned in the quote's sentence{where}")


def _inside_longer(name: str, text: str, a: int, b: int) -> str:
    """Why a name written in the sentence is no mention of its own: it occurs only inside a
    longer proper name ("Rio de Janeiro" in "the Rio de Janeiro Military Police", "Japan" in
    "Technos Japan Corp."). The rule: a proper name is one name; the words inside it name
    the whole (a police force, a company), not the place or country they also spell, so an
    edge to the shorter name would rest on a mention of something else."""
    words = name.strip().split()
    if not words:
        return ""
    pattern = r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)"
    for m in re.finditer(pattern, text[a:b]):
        start, end = a + m.start(), a + m.end()
        for x, y in proper_names(text, a, b):
            if x <= start and end <= y and (x, y) != (start, end):
                return (f": it occurs only inside the longer name {text[x:y]!r}, which names "
                        "another thing (a name inside a proper name is part of that name, not "
                        "a mention of its own)")
    return ""


def _clear_of(span: tuple, skip: tuple[tuple[int, int], ...]) -> bool:
    return not any(a < span[1] and span[0] < b for a, b in skip)


def _names_whole(name: str, part: str, aliases: tuple[str, ...]) -> bool:
    """Whether a header part is the name (give or take an article and punctuation)."""
    m = find_name(name, part, aliases)
    if m is None:
        return False
    rest = (part[:m.start] + part[m.end:]).strip(" \t-:,.()\"'")
    return not rest or rest.casefold() in ("the", "a", "an")


def _resolve_reference(name: str, ref: str, declared: str | None, allowed: tuple[str, ...],
                       role: str, scope: _Scope, skip) -> _End | Rejected:
    """The model wrote a referring expression ("the film", "it"): the name it stands for, or
    the ``anaphoric-endpoint`` rejection."""
    text = scope.text
    what = "a pronoun" if ref == "pronoun" else f"a noun phrase with no proper name ({ref!r})"
    m = find_name(name, text[scope.sa:scope.sb])
    if m is None:
        return Rejected(None, f"{role}-not-grounded",
                        f"{_short(name)!r} is not mentioned in the quote's sentence")
    pos = (scope.sa + m.start, scope.sa + m.end)
    if not scope.fits(ref, allowed):
        return Rejected(None, "anaphoric-endpoint",
                        f"{role} {_short(name)!r} is {what}, which points back to something it "
                        f"does not name, and cannot stand for a {'/'.join(allowed)}")
    # the name before the quote's sentence (a model that wrote "it" for a name of the same
    # sentence misread it: the name is what it should have written)
    ant = antecedent(text, scope.sa, scope.limit, skip)
    if ant is not None:
        found = text[ant[0]:ant[1]]
        return _End(found, declared, Match(ant[0], ant[1], False, "antecedent"),
                    scope.qa <= pos[0] < scope.qb, "chunk")
    if scope.headers and scope.title:
        return _End(scope.title, declared, Match(pos[0], pos[1], False, "header"),
                    scope.qa <= pos[0] < scope.qb, "header")
    return Rejected(None, "anaphoric-endpoint",
                    f"{role} {_short(name)!r} is {what}: it points back to something it does not "
                    "name, and neither the chunk before it nor a context header names it; a "
                    "node for it would merge every such mention")


def _ground(name: str, declared: str | None, evidence: str, offset: int, text: str,
            resolver, mask: tuple[int, int] | None = None, also: tuple[str, ...] = ()) -> _End | None:
    """Where ``name`` (or one of ``also``) is mentioned: in the evidence (which starts at
    ``offset`` in ``text``) first, else anywhere in the chunk; never inside ``mask`` (the
    other endpoint's mention: an object must be mentioned apart from its subject)."""
    aliases = _known_names(name, declared, resolver)
    skip = (mask,) if mask is not None else ()
    local = tuple((a - offset, b - offset) for a, b in skip)  # in evidence coordinates
    for candidate in (name, *also):
        m = find_name(candidate, evidence, aliases, local)
        if m is not None:
            return _End(name, declared, Match(m.start + offset, m.end + offset, m.exact, m.how), True)
    for candidate in (name, *also):
        m = find_name(candidate, text, aliases, skip)
        if m is not None:
            return _End(name, declared, m, False)
    return None


def _apart(name: str, evidence: str, text: str) -> str:
    if find_name(name, evidence) or find_name(name, text):
        return " apart from the subject's own mention"
    return ""


def _known_names(name: str, declared: str | None, resolver) -> tuple[str, ...]:
    """Other names of the entity ``name`` resolves to, so that an alias in the text grounds
    the canonical name the model wrote (and the other way round)."""
    if resolver is None:
        return ()
    try:
        res = resolver.resolve(name, declared)
    except Exception:  # an unknown declared type: no aliases
        return ()
    if res.status != "resolved" or not res.id:
        return ()
    names = {resolver.label_of(res.id)}
    names_of = getattr(resolver, "names_of", None)
    if callable(names_of):
        names.update(names_of(res.id))
    return tuple(sorted(n for n in names if n and n != name))


def _placeholder(name: str, predicate: str, schema: Schema) -> str:
    """Why ``name`` is no entity but a stand-in: the name of a schema type (``Person``,
    ``City``) or of the predicate itself (``currency`` for ``currency``)."""
    key = _name_key(name)
    if _schema_type(schema, name) is not None:
        return f"{name!r} names the type {_schema_type(schema, name)}, not an entity"
    if key and key == _key(predicate):
        return f"{name!r} repeats the predicate's name, not an entity"
    return ""


def _schema_type(schema: Schema, name: str | None) -> str | None:
    if not name:
        return None
    if name in schema.node_types:
        return name
    key = _key(name)
    for t in schema.node_types:
        if _key(t) == key:
            return t
    return None


def _resolve(end: _End, allowed: tuple[str, ...], schema: Schema, resolver, role: str,
             notes: list[str]):
    """Fill in the endpoint's ID and type; a rejection tuple (reason, detail, candidates,
    mention)."""
    declared = _schema_type(schema, end.declared)
    if end.declared and declared is None:
        notes.append(f"{role} type {end.declared!r} is not in the schema: ignored")
    if resolver is not None:
        res = resolver.resolve(end.name, declared)
        if res.status in ("review", "ambiguous") and declared is None:
            # the predicate's side narrows the search: one compatible entity decides
            tries = [resolver.resolve(end.name, t) for t in allowed]
            hits = {r.id for r in tries if r.status == "resolved"}
            if len(hits) == 1:
                res = next(r for r in tries if r.status == "resolved")
        if res.status in ("review", "ambiguous"):
            cands = tuple((i, t, float(s)) for i, t, s in res.candidates)
            listed = ", ".join(f"{i} ({t})" for i, t, _ in cands[:5])
            return ("ambiguous-entity", f"{role} {end.name!r} ({res.status}): {listed}", cands,
                    end.name)
        if res.status == "resolved" and res.id:
            end.id, end.status, end.stage, end.score = res.id, "resolved", res.stage, res.score
            end.type = resolver.type_of(res.id) or declared
            if declared and end.type and schema.more_specific(declared, end.type) is None:
                end.type = declared  # the type check reports the conflict
            return None
    typ = declared or _infer(allowed, schema, role, notes)
    end.type = typ
    end.status = "new"
    end.id = entity_id(typ, end.name)
    return None


def _infer(allowed: tuple[str, ...], schema: Schema, role: str, notes: list[str]) -> str:
    """The type of an untyped new endpoint from the predicate's domain or range."""
    if len(allowed) == 1:
        return allowed[0]
    notes.append(f"{role} type chosen among {', '.join(allowed)}")
    return allowed[0]


def _type_check(et: EdgeType, subject: _End, obj: _End, schema: Schema) -> str:
    s_ok = any(schema.is_a(subject.type, d) for d in et.domain)
    o_ok = any(schema.is_a(obj.type, r) for r in et.range)
    if s_ok and o_ok:
        return ""
    rev = (any(schema.is_a(obj.type, d) for d in et.domain)
           and any(schema.is_a(subject.type, r) for r in et.range))
    which = []
    if not s_ok:
        which.append(f"subject {subject.name!r} is a {subject.type}, {et.name} needs "
                     f"{'/'.join(et.domain)}")
    if not o_ok:
        which.append(f"object {obj.name!r} is a {obj.type}, {et.name} needs {'/'.join(et.range)}")
    return ("reversed: " if rev else "") + "; ".join(which)


def _confidence(quote: Match, pred: Predicate, ends: list[_End], notes: list[str]) -> float:
    for end, role in zip(ends, ("subject", "object")):
        if not end.match.exact:
            notes.append(f"{role} {end.name!r} found by {end.match.how}"
                         + ("" if end.in_evidence else " outside the evidence"))
    c = 1.0
    if not quote.exact:
        c -= 0.05
    if pred.loose:
        c -= 0.05
    for end in ends:
        if not end.in_evidence:
            c -= 0.1
        if end.match.how == "alias":
            c -= 0.1
        elif not end.match.exact:
            c -= 0.05
        if end.stage == "fuzzy":
            c -= 0.15
    if any("chosen among" in n for n in notes):
        c -= 0.1
    if any("not in the schema" in n for n in notes):
        c -= 0.05
    if any(n.startswith("no relation cue") for n in notes):
        c -= _penalty(notes)
    return round(min(1.0, max(0.05, c)), 3)


def _short(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."
