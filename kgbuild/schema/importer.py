"""Schemas from elsewhere: import an RDFS/OWL ontology, or infer one from what a graph uses.

Both give a :class:`SchemaDraft`: a schema mapping in the YAML format :mod:`.loader` reads
(already checked by it), plus *notes* on every decision a person may want to review, written
as comments by :meth:`SchemaDraft.to_yaml`. The same input always gives the same text.

Names are the terms' IRI local names, sanitised to ``[A-Za-z][A-Za-z0-9_]*`` and made unique
case-insensitively (node types first, then edge types, then attributes; within a kind the
terms of the main namespace first, then by IRI; a taken name gets ``_2``, ``_3``, ...). The
namespace is the one most terms share; a term whose IRI is not ``namespace + name`` keeps its
IRI in an explicit ``iri:``, so the schema types the nodes of the original graph.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, OWL, RDF, RDFS, SKOS, XSD

from ..errors import InputError
from ..io.rdffile import (
    FORMATS,
    OXIGRAPH,
    add_quads,
    bind_file_prefixes,
    load_graph,
    read_quads,
    triple_term_error,
)
from ..vocab import CATCH_ALL, SCHEMA_BASE
from .loader import NAME, NAMESPACE, OWN_IRIS, RESERVED_PREDICATES, parse_schema
from .model import Schema
from .namespaces import ASSERTION_BASE, KG, SOURCE_BASE
from .writer import schema_yaml

_BUILTIN = (str(RDF), str(RDFS), str(OWL), str(XSD))
_EVERY = {OWL.Thing, RDFS.Resource}  # as a domain or range: any type
_LITERALS = {RDFS.Literal, RDF.langString, RDF.PlainLiteral, RDF.XMLLiteral, RDF.HTML, RDF.JSON}
_OBJECT_KINDS = (OWL.ObjectProperty, OWL.TransitiveProperty, OWL.SymmetricProperty,
                 OWL.AsymmetricProperty, OWL.ReflexiveProperty, OWL.IrreflexiveProperty,
                 OWL.InverseFunctionalProperty)
# XSD datatypes by local name -> schema datatype (anything else is read as string)
_XSD = {**dict.fromkeys(("string", "normalizedString", "token", "language", "Name", "NCName",
                         "NMTOKEN"), "string"),
        **dict.fromkeys(("integer", "int", "long", "short", "byte", "nonNegativeInteger",
                         "positiveInteger", "nonPositiveInteger", "negativeInteger",
                         "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte"), "integer"),
        **dict.fromkeys(("decimal", "float", "double"), "decimal"),
        "boolean": "boolean", "date": "date", "dateTime": "dateTime", "dateTimeStamp": "dateTime",
        "anyURI": "anyURI"}
# an undeclared "class" with one of these local names (any case) is a datatype in disguise
# (names like Language or Name are left alone: they are often real classes)
_DATATYPE_NAMES = {"string": "string", "text": "string", "literal": "string", "number": "decimal",
                   "integer": "integer", "int": "integer", "decimal": "decimal", "float": "decimal",
                   "double": "decimal", "boolean": "boolean", "date": "date", "datetime": "dateTime",
                   "time": "string", "year": "string", "gyear": "string", "anyuri": "anyURI"}
# prefixes every serialisation binds itself (namespaces.prefixes, shapes)
_FIXED_PREFIXES = {"kg", "prov", "dcterms", "rdf", "rdfs", "owl", "skos", "xsd", "id",
                   "assertion", "src", "sh", "shape"}
_FORMATS = ("turtle", "xml", "json-ld", "nt", "n3", "trig", "nquads")


@dataclass
class SchemaDraft:
    """A schema mapping written from another vocabulary, and the notes on how."""

    data: dict
    notes: dict[str, list[str]] = field(default_factory=dict)  # "" or "<section>.<name>"
    header: list[str] = field(default_factory=list)

    def schema(self) -> Schema:
        """The draft loaded as a :class:`Schema` (raises :class:`SchemaError` if it is not one)."""
        return parse_schema(self.data, source=f"<schema {self.data.get('name')}>")

    def to_yaml(self) -> str:
        """The schema YAML, notes as comments."""
        return schema_yaml(self.data, self.notes, self.header)

    def warnings(self) -> list[str]:
        """Every note as one line, naming the term it concerns."""
        return [f"{where}: {n}" if where else n
                for where, ns in sorted(self.notes.items()) for n in ns]


# -- reading and naming ---------------------------------------------------------------------------
def read_rdf(source: str | Path | Graph) -> tuple[Graph, str]:
    """An RDF file (any format :func:`~kgbuild.io.rdffile.load_graph` reads; the suffix's
    format is tried first, then the others) or a graph."""
    if isinstance(source, Graph):
        return source, "graph"
    path = Path(source)
    return _parsed(path, lambda fmt: load_graph(path, fmt, Graph(bind_namespaces="none"))), path.name


def _parsed(path: Path, parse):
    """What ``parse(fmt)`` reads of the file at ``path``: the suffix's format first, then the
    others; a file no format reads, or that has no triples, is an :class:`InputError`."""
    if not path.is_file():
        raise InputError("file not found", str(path))
    guessed = FORMATS.get(path.suffix.lower())
    errors = []
    for fmt in ([guessed] if guessed else []) + [f for f in _FORMATS if f != guessed]:
        try:
            read = parse(fmt)
        except InputError as exc:
            if exc.code != InputError.code:  # not a syntax error: refused whatever the format
                raise
            errors.append(f"{fmt}: {exc.message[:160]}")
            continue
        if not len(read):
            raise InputError(f"no RDF triples read (as {fmt})", str(path))
        return read
    raise InputError(f"not readable as RDF ({errors[0]})", str(path))


def local_name(iri: str) -> str:
    """The part of an IRI after its last ``#``, else ``/``, else ``:`` (trailing ones dropped)."""
    s = iri.rstrip("#/")
    for sep in "#/:":
        if sep in s:
            return s[s.rfind(sep) + 1:]
    return s


def _namespace_of(iri: str) -> str:
    cut = max(iri.rfind("#"), iri.rfind("/"))
    return iri[:cut + 1] if cut >= 0 else iri


def sanitise(text: str) -> str:
    """``text`` as a schema name: accents dropped, other characters ``_``, a letter first."""
    s = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    s = re.sub(r"[^A-Za-z0-9_]+", "_", s).strip("_")
    if s and not s[0].isalpha():
        s = "x" + s
    return s


class _Names:
    """Schema names, unique case-insensitively, claimed in a deterministic order."""

    def __init__(self) -> None:
        self.taken: dict[str, str] = {}

    def claim(self, base: str, what: str) -> tuple[str, str | None]:
        name, n = base, 1
        while name.lower() in self.taken:
            n += 1
            name = f"{base}_{n}"
        note = None if name == base else f"named {name}: {base!r} is taken by {self.taken[base.lower()]}"
        self.taken[name.lower()] = f"{what} {name}"
        return name, note


def _text(g: Graph, term, pred) -> str:
    """One value of ``pred`` on ``term``: English or untagged first, then by text."""
    values = [o for o in g.objects(term, pred) if isinstance(o, Literal)]
    if not values:
        return ""
    best = min(values, key=lambda v: (v.language not in (None, "", "en"), v.language or "", str(v)))
    return " ".join(str(best).split())


def _describe(g: Graph, term, name: str = "") -> str:
    """``label: comment``; a label that only repeats the name or the IRI's local name is left
    out."""
    label, comment = _text(g, term, RDFS.label), _text(g, term, RDFS.comment)

    def key(x: str) -> str:
        return re.sub(r"[\W_]", "", x).lower()

    if label and key(label) in {key(name), key(local_name(str(term)))}:
        label = ""
    return f"{label}: {comment}" if label and comment else label or comment


def _cues(g: Graph, term, name: str) -> list[str] | None:
    """The words a text uses for a property: its ``rdfs:label`` and ``skos:altLabel`` values
    (English or untagged), those that say more than the name itself; its ``rdfs:comment``
    is in the description, which relation verification reads too."""
    def key(x: str) -> str:
        return re.sub(r"[\W_]", "", x).lower()

    out: list[str] = []
    for pred in (RDFS.label, SKOS.altLabel):
        for v in sorted(str(o) for o in g.objects(term, pred) if isinstance(o, Literal)
                        and o.language in (None, "", "en")):
            v = " ".join(v.split())
            if v and len(v) <= 200 and v.isprintable() and key(v) not in (
                    key(name), key(local_name(str(term)))) and v not in out:
                out.append(v)
    return out[:100] or None


class _Reach:
    """Reachability over ``succ`` (node -> direct successors) without ancestor sets per node.

    Tarjan's algorithm numbers the strongly connected components so that a component's
    successors come first; ``lo`` is the smallest number a component reaches. ``y`` is then
    reachable from ``x`` only if ``lo[x] <= lo[y]`` and ``comp[y] <= comp[x]``: a search
    from ``x`` skips every node failing that test (on a chain, it stops at once)."""

    def __init__(self, succ: dict) -> None:
        self.succ, self.comp, self.lo = succ, {}, {}
        index: dict = {}
        low: dict = {}
        stack: list = []
        for start in succ:
            if start in index:
                continue
            index[start] = low[start] = len(index)
            stack.append(start)
            work = [(start, iter(succ[start]))]
            while work:
                v, it = work[-1]
                for w in it:
                    if w not in index:
                        index[w] = low[w] = len(index)
                        stack.append(w)
                        work.append((w, iter(succ[w])))
                        break
                    if w not in self.comp:  # still on the stack
                        low[v] = min(low[v], index[w])
                else:
                    work.pop()
                    if work:
                        low[work[-1][0]] = min(low[work[-1][0]], low[v])
                    if low[v] == index[v]:  # v roots a component: pop it off the stack
                        members = [stack.pop()]
                        while members[-1] != v:
                            members.append(stack.pop())
                        self._emit(members)

    def _emit(self, members: list) -> None:
        k = len(self.lo)
        for m in members:
            self.comp[m] = k
        self.lo[k] = min([k] + [self.lo[self.comp[y]] for m in members for y in self.succ[m]
                                if self.comp[y] != k])

    def cyclic(self, x, y) -> bool:
        """Whether ``x`` and ``y`` reach each other."""
        return self.comp[x] == self.comp[y]

    def reaches(self, x, y) -> bool:
        """Whether ``y`` is reachable from ``x`` in one step or more (``x != y``)."""
        ky = self.comp[y]

        def may(z) -> bool:
            return self.lo[self.comp[z]] <= self.lo[ky] and ky <= self.comp[z]

        seen, todo = {x}, [x] if may(x) else []
        while todo:
            for z in self.succ[todo.pop()]:
                if self.comp[z] == ky:
                    return True
                if z not in seen and may(z):
                    seen.add(z)
                    todo.append(z)
        return False


class _Builder:
    """Names, namespace, parents and notes shared by import and inference."""

    def __init__(self, g: Graph, name: str | None, prefix: str | None, origin: str):
        self.g, self.origin = g, origin
        self.name = name or sanitise(Path(origin).stem).lower() or "imported"
        self.prefix_wanted = prefix
        self.notes: dict[str, list[str]] = {}
        self.names = _Names()
        self.name_of: dict[URIRef, str] = {}
        self.namespace = ""

    def note(self, where: str, text: str) -> None:
        notes = self.notes.setdefault(where, [])
        if text not in notes:
            notes.append(text)

    def choose_namespace(self, terms) -> None:
        counts = Counter(_namespace_of(str(t)) for t in terms)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        fallback = f"{SCHEMA_BASE}{self.name}#"
        self.namespace = next((ns for ns, _ in ranked if NAMESPACE.match(ns)), fallback)
        if ranked and ranked[0][0] != self.namespace:
            self.note("", f"namespace {self.namespace}: {ranked[0][0]!r} is not an IRI ending in "
                      f"'#' or '/'")

    def prefix(self) -> str:
        if self.prefix_wanted:
            return self.prefix_wanted
        bound = sorted(p for p, ns in self.g.namespaces() if str(ns) == self.namespace and p)
        for p in [*bound, self.name, sanitise(self.name).lower()]:
            if NAME.match(p) and p not in _FIXED_PREFIXES:
                return p
        return "ns"

    def claim_all(self, section: str, what: str, terms) -> None:
        """Name ``terms``: the main namespace's first, then by IRI."""
        for t in sorted(terms, key=lambda t: (not str(t).startswith(self.namespace), str(t))):
            base = sanitise(local_name(str(t))) or sanitise(_text(self.g, t, RDFS.label)) or "term"
            name, note = self.names.claim(base, what)
            self.name_of[t] = name
            if note:
                self.note(f"{section}.{name}", f"{note} (IRI {t})")

    def iri_field(self, term: URIRef) -> str | None:
        return None if str(term) == self.namespace + self.name_of[term] else str(term)

    def parents(self, classes: set[URIRef]) -> dict[URIRef, URIRef]:
        """One parent per class from ``rdfs:subClassOf``: redundant ones (an ancestor of another)
        dropped, then the first by name that makes no cycle."""
        supers = {c: {s for s in self.g.objects(c, RDFS.subClassOf) if s in classes and s != c}
                  for c in classes}
        above = _Reach(supers)
        rep = {c: c for c in classes}  # union-find over the chosen parents' trees

        def tree(x: URIRef) -> URIRef:
            while rep[x] != x:
                rep[x] = x = rep[rep[x]]
            return x

        chosen: dict[URIRef, URIRef] = {}
        for c in sorted(classes, key=self.name_of.__getitem__):
            direct = supers[c]
            cands = sorted((s for s in direct if not any(not above.cyclic(c, s) and above.reaches(o, s)
                                                         for o in direct if o != s)),
                           key=self.name_of.__getitem__)
            where = f"node_types.{self.name_of[c]}"
            for s in cands:
                if tree(s) == tree(c):  # c has no parent yet: it is the top of s's tree
                    self.note(where, f"rdfs:subClassOf {self.name_of[s]} dropped: it would make a "
                              f"parent cycle")
                    continue
                chosen[c] = s
                rep[tree(c)] = tree(s)
                break
            if len(cands) > 1 and c in chosen:
                others = ", ".join(self.name_of[s] for s in cands if s != chosen[c])
                self.note(where, f"also rdfs:subClassOf {others}; kgbuild keeps one parent, the "
                          f"first by name: {self.name_of[chosen[c]]}")
        return chosen

    def finish(self, node_types: dict, edge_types: dict, attributes: dict, description: str,
               header: list[str]) -> SchemaDraft:
        def clean(terms: dict) -> dict:
            return {n: {k: v for k, v in spec.items() if v is not None}
                    for n, spec in sorted(terms.items())}

        data = {"name": self.name, "version": 1, "namespace": self.namespace,
                "prefix": self.prefix(), "description": description,
                "node_types": clean(node_types), "edge_types": clean(edge_types),
                "attributes": clean(attributes)}
        if not description:
            del data["description"]
        notes = {k: sorted(v) if k == "" else v for k, v in sorted(self.notes.items())}
        draft = SchemaDraft(data, notes, header)
        draft.schema()  # the loader's checks: a draft that fails them is a bug here
        return draft

    def roots(self, node_types: dict) -> list[str]:
        return sorted(n for n, spec in node_types.items() if not spec.get("parent"))


def _types_field(names) -> str | list[str]:
    names = sorted(set(names))
    return names[0] if len(names) == 1 else names


def _is_builtin(term) -> bool:
    return str(term).startswith(_BUILTIN)


# -- import -----------------------------------------------------------------------------------------
def import_ontology(source: str | Path | Graph, name: str | None = None,
                    prefix: str | None = None) -> SchemaDraft:
    """A kgbuild schema from an RDFS/OWL ontology (a file in any RDF format, or a graph).

    * ``owl:Class``/``rdfs:Class`` (and IRIs used as a class: in ``rdfs:subClassOf``, a
      domain or a range) become node types; ``rdfs:subClassOf`` a named class, the parent.
    * ``owl:ObjectProperty`` (and the other object property kinds, ``rdf:Property`` with a
      class range) become edge types with ``rdfs:domain``/``rdfs:range`` (``owl:unionOf``
      lists too; none, ``owl:Thing`` or ``rdfs:Resource``: every type, i.e. the root types);
      ``owl:inverseOf`` pairs become one edge type and its inverse; ``owl:TransitiveProperty``
      sets ``transitive``.
    * ``owl:DatatypeProperty`` (and properties with a literal range) become attributes, the
      XSD range mapped to the schema datatypes (else ``string``), ``multiple`` unless
      ``owl:FunctionalProperty``.
    * ``rdfs:label``/``rdfs:comment`` become descriptions.
    """
    g, origin = read_rdf(source)
    b = _Builder(g, name, prefix, origin)

    def kinds(*types) -> set:
        return {s for t in types for s in g.subjects(RDF.type, t) if isinstance(s, URIRef)}

    def datatype_of(term) -> str | None:
        """The schema datatype a range stands for, or None when it is a class."""
        if isinstance(term, URIRef) and str(term).startswith(str(XSD)):
            return _XSD.get(local_name(str(term)), "string")
        if term in _LITERALS or (term, RDF.type, RDFS.Datatype) in g:
            return "string"
        if isinstance(term, URIRef) and term not in known:
            return _DATATYPE_NAMES.get(local_name(str(term)).lower())
        return None

    def usable(term, what: str) -> bool:
        if _is_builtin(term):
            return False
        if str(term).startswith(OWN_IRIS) or (what != "class" and str(term) in RESERVED_PREDICATES):
            b.note("", f"{what} {term} skipped: kgbuild's graph layout defines it")
            return False
        return True

    declared_classes = {c for c in kinds(OWL.Class, RDFS.Class)
                        if (c, RDF.type, RDFS.Datatype) not in g and usable(c, "class")}
    # IRIs used as classes are classes (RDFS: rdfs:subClassOf links classes; the objects of
    # rdfs:domain and rdfs:range are classes, unless they name datatypes)
    referenced: dict[URIRef, set[str]] = {}

    def refer(t, how: str) -> None:
        if isinstance(t, URIRef) and t not in declared_classes and not _is_builtin(t) \
                and usable(t, "class"):
            referenced.setdefault(t, set()).add(how)

    for c, sup in g.subject_objects(RDFS.subClassOf):
        refer(c, "has an rdfs:subClassOf")
        refer(sup, "is the object of an rdfs:subClassOf")
    known = declared_classes | set(referenced)
    objects = kinds(*_OBJECT_KINDS) | {t for s, o in g.subject_objects(OWL.inverseOf)
                                       for t in (s, o) if isinstance(t, URIRef)}
    datatypes = kinds(OWL.DatatypeProperty)
    plain = kinds(RDF.Property) - objects - datatypes
    objects = {p for p in objects if usable(p, "property")}
    datatypes = {p for p in datatypes if usable(p, "property")}
    plain = {p for p in plain if usable(p, "property")}

    edges, attrs, attr_notes = set(), set(), {}
    for p in objects | datatypes | plain:
        ranges = list(g.objects(p, RDFS.range))
        literal = bool(ranges) and all(datatype_of(r) is not None for r in ranges)
        paired = (p, OWL.inverseOf, None) in g or (None, OWL.inverseOf, p) in g
        if p in objects and p in datatypes:
            edges.add(p)
            attr_notes[p] = "declared both an object and a datatype property: read as an edge type"
        elif p in objects:
            if literal and not paired:
                attrs.add(p)
                shown = ", ".join(sorted(local_name(str(r)) for r in ranges))
                attr_notes[p] = (f"an object property whose range ({shown}) is a datatype, or named like "
                                 f"one and not a declared class: read as an attribute")
            else:
                edges.add(p)
        elif p in datatypes or literal:
            attrs.add(p)
        else:
            edges.add(p)
            if not ranges:
                attr_notes[p] = "rdf:Property without rdfs:range: read as an edge type"

    expressions: dict[tuple[URIRef, URIRef], list | None] = {}
    for p in edges | attrs:
        for rel in (RDFS.domain, RDFS.range):
            if rel == RDFS.range and p in attrs:
                continue
            members = _members(g, list(g.objects(p, rel)))
            expressions[(p, rel)] = members
            for t in members or ():
                if datatype_of(t) is None:
                    refer(t, f"is the {local_name(str(rel))} of {local_name(str(p))}")
    classes = declared_classes | set(referenced)

    b.choose_namespace(classes | edges | attrs)
    b.claim_all("node_types", "node type", classes)
    b.claim_all("edge_types", "edge type", edges)
    b.claim_all("attributes", "attribute", attrs)
    for t, hows in referenced.items():
        b.note(f"node_types.{b.name_of[t]}", f"not declared as a class; it {min(hows)}")

    parents = b.parents(classes)
    node_types: dict[str, dict] = {}
    for c in classes:
        n = b.name_of[c]
        node_types[n] = {"parent": b.name_of[parents[c]] if c in parents else None,
                         "description": _describe(g, c, n) or None, "iri": b.iri_field(c)}
    if not node_types:
        node_types["Node"] = {"iri": CATCH_ALL}
        b.names.claim("Node", "node type")
        b.note("node_types.Node", "the ontology declares no class: one type for every node "
                                  "(rdfs:Resource)")
    roots = b.roots(node_types)

    def side(p: URIRef, rel: URIRef, where: str) -> list[str]:
        members = expressions.get((p, rel))
        what = local_name(str(rel))
        if members is None:
            given = list(g.objects(p, rel))
            why = (f"no rdfs:{what}" if not given else f"rdfs:{what} is any resource" if
                   set(given) & _EVERY else f"rdfs:{what} is a class expression other than a union")
            b.note(where, f"{why} on {local_name(str(p))}: every type (the root types)")
            return roots
        if len(list(g.objects(p, rel))) > 1:
            b.note(where, f"several rdfs:{what} values (RDFS reads them as an intersection): "
                          f"kgbuild allows any of them")
        names = [b.name_of[t] for t in members if t in b.name_of and t in classes]
        if len(names) < len(members):
            b.note(where, f"rdfs:{what} of {local_name(str(p))} names a datatype or a skipped "
                          f"term: ignored")
        return names or roots

    pairs = _inverse_pairs(g, edges, b)
    edge_types: dict[str, dict] = {}
    for p in sorted(edges, key=b.name_of.__getitem__):
        if p in pairs and pairs[p][1]:  # the inverse side of a pair: declared with its partner
            continue
        n = b.name_of[p]
        where = f"edge_types.{n}"
        q = pairs.get(p, (None, False))[0]
        own = {rel: any(True for _ in g.objects(p, rel)) for rel in (RDFS.domain, RDFS.range)}
        dom = side(p, RDFS.domain, where) if own[RDFS.domain] or q is None else side(q, RDFS.range, where)
        rng = side(p, RDFS.range, where) if own[RDFS.range] or q is None else side(q, RDFS.domain, where)
        if p in attr_notes:
            b.note(where, attr_notes[p])
        transitive = any((t, RDF.type, OWL.TransitiveProperty) in g for t in (p, q) if t is not None)
        edge_types[n] = {"domain": _types_field(dom), "range": _types_field(rng),
                         "inverse": b.name_of[q] if q is not None else None,
                         "transitive": True if transitive else None,
                         "description": _describe(g, p, n) or None, "cues": _cues(g, p, n),
                         "iri": b.iri_field(p),
                         "inverse_iri": (str(q) if q is not None and str(q) != b.namespace + b.name_of[q]
                                         else None)}
    if not edge_types:
        _see_also(b, edge_types, roots, "the ontology declares no object property")

    attributes: dict[str, dict] = {}
    for p in attrs:
        n = b.name_of[p]
        where = f"attributes.{n}"
        if p in attr_notes:
            b.note(where, attr_notes[p])
        dts = sorted({datatype_of(r) or "string" for r in g.objects(p, RDFS.range)}) or ["string"]
        unmapped = sorted(local_name(str(r)) for r in g.objects(p, RDFS.range)
                          if str(r).startswith(str(XSD)) and local_name(str(r)) not in _XSD)
        if unmapped:
            b.note(where, f"xsd:{', xsd:'.join(unmapped)} has no schema datatype: read as string")
        if len(dts) > 1:
            b.note(where, f"several ranges ({', '.join(dts)}): read as string")
        functional = (p, RDF.type, OWL.FunctionalProperty) in g
        attributes[n] = {"datatype": dts[0] if len(dts) == 1 else "string",
                         "multiple": None if functional else True,
                         "description": _describe(g, p, n) or None, "cues": _cues(g, p, n),
                         "iri": b.iri_field(p)}

    ontologies = sorted(s for s in g.subjects(RDF.type, OWL.Ontology) if isinstance(s, URIRef))
    description = _describe(g, ontologies[0]) if ontologies else ""
    header = [f"Imported from {origin} by `kgbuild schema import`: names are the terms' local "
              "names,", "an explicit iri: where a term's IRI is not namespace + name. Review the "
              "notes."]
    return b.finish(node_types, edge_types, attributes, description, header)


def _rdf_list(g: Graph, head) -> list | None:
    """The members of an RDF list (None when it is not a well-formed, finite list)."""
    out, seen = [], set()
    while head != RDF.nil:
        if head in seen or head is None:
            return None
        seen.add(head)
        first = g.value(head, RDF.first)
        if first is None:
            return None
        out.append(first)
        head = g.value(head, RDF.rest)
    return out


def _members(g: Graph, expressions: list) -> list | None:
    """The named classes a domain or range allows; None for every type (none given,
    ``owl:Thing``, ``rdfs:Resource``, or a class expression other than ``owl:unionOf``)."""
    if not expressions:
        return None
    out: list = []
    for e in expressions:
        if e in _EVERY:
            return None
        if isinstance(e, URIRef):
            out.append(e)
            continue
        union = g.value(e, OWL.unionOf) if isinstance(e, BNode) else None
        items = _rdf_list(g, union) if union is not None else None
        if items is None:
            return None
        inner = _members(g, items)
        if inner is None:
            return None
        out += inner
    return sorted(set(out), key=str)


def _inverse_pairs(g: Graph, edges: set, b: _Builder) -> dict[URIRef, tuple[URIRef, bool]]:
    """Edge -> (its partner, whether it is the inverse side) for ``owl:inverseOf`` pairs.
    The stored side has a domain or range of its own, else comes first by name."""
    partners: dict[URIRef, set] = {}
    for s, o in g.subject_objects(OWL.inverseOf):
        if s in edges and o in edges and s != o:
            partners.setdefault(s, set()).add(o)
            partners.setdefault(o, set()).add(s)
    out: dict[URIRef, tuple[URIRef, bool]] = {}

    def explicit(p) -> bool:
        return any(True for _ in g.objects(p, RDFS.domain)) or any(True for _ in g.objects(p, RDFS.range))

    for p in sorted(partners, key=b.name_of.__getitem__):
        if p in out:
            continue
        free = sorted((q for q in partners[p] if q not in out), key=b.name_of.__getitem__)
        if not free:
            continue
        q = free[0]
        if len(free) > 1:
            b.note(f"edge_types.{b.name_of[p]}", f"owl:inverseOf several properties "
                   f"({', '.join(b.name_of[x] for x in free)}): paired with {b.name_of[q]}")
        stored, inverse = (p, q) if explicit(p) or not explicit(q) else (q, p)
        out[stored], out[inverse] = (inverse, False), (stored, True)
    return out


# -- inference --------------------------------------------------------------------------------------
_SKIP_PREDICATES = {str(RDFS.subClassOf), str(RDFS.subPropertyOf), str(RDFS.domain),
                    str(RDFS.range)} | RESERVED_PREDICATES


def infer_schema(source: str | Path | Graph, name: str | None = None,
                 prefix: str | None = None) -> SchemaDraft:
    """A kgbuild schema from what a graph uses (a file in any RDF format, or a graph).

    Node types are the graph's ``rdf:type`` classes (parents from ``rdfs:subClassOf`` between
    them, when the graph states it); when some node has none, a type ``Node`` with the IRI
    ``rdfs:Resource`` types it. Every predicate between two nodes is an edge type, its domain
    and range the types of the subjects and objects seen; every predicate with literal values
    only is an attribute, its datatype the literals' (``multiple`` when a node has several).
    kgbuild's own bookkeeping (assertions, source documents, labels, IDs) is not schema.
    """
    rows, g, origin = _inference_input(source)
    statement_types = {str(KG.Assertion), str(RDF.Statement)}
    rdf_type, ident = str(RDF.type), str(DCTERMS.identifier)
    statements = {s for s, _, p, o, _, _ in rows() if p == rdf_type and o in statement_types}
    identified = {s for s, blank, p, *_ in rows() if blank and p == ident}

    def is_node(key: str, kind: str) -> bool:
        return (kind == "i" or (kind == "b" and key in identified)) and key not in statements \
            and not key.startswith((ASSERTION_BASE, SOURCE_BASE))

    def skipped(p: str) -> bool:
        return p in _SKIP_PREDICATES or p.startswith((str(KG), str(RDF), str(OWL)))

    node_classes: dict[str, set[str]] = {}  # node key (an IRI, or "_:" and a blank node's label)
    nodes: set[str] = set()
    edge_uses: dict[str, list] = {}
    literal_uses: dict[str, list] = {}  # predicate -> (subject, datatype IRI or None)
    for s, blank, p, o, kind, dt in rows():
        if not is_node(s, "b" if blank else "i"):
            continue
        nodes.add(s)
        if p == rdf_type:
            if kind == "i" and not _is_builtin(o) and not o.startswith(OWN_IRIS):
                node_classes.setdefault(s, set()).add(o)
            continue
        if skipped(p):
            continue
        if kind == "l":
            literal_uses.setdefault(p, []).append((s, dt))
        elif is_node(o, kind):
            edge_uses.setdefault(p, []).append((s, o))
            nodes.add(o)
    edge_uses = {URIRef(p): uses for p, uses in edge_uses.items()}
    literal_uses = {URIRef(p): uses for p, uses in literal_uses.items()}
    node_classes = {n: {URIRef(c) for c in cs} for n, cs in node_classes.items()}
    classes = set().union(*node_classes.values()) if node_classes else set()
    attrs = set(literal_uses) - set(edge_uses)
    if g is None:  # (a file: only what describes the schema's terms is read into a graph)
        g = _described(rows.quads, classes | set(edge_uses) | attrs, rows.prefixes)
    b = _Builder(g, name, prefix, origin)
    b.choose_namespace(classes | set(edge_uses) | attrs)
    b.claim_all("node_types", "node type", classes)
    b.claim_all("edge_types", "edge type", edge_uses)
    b.claim_all("attributes", "attribute", attrs)
    parents = b.parents(classes)
    node_types: dict[str, dict] = {
        b.name_of[c]: {"parent": b.name_of[parents[c]] if c in parents else None,
                       "description": _describe(g, c, b.name_of[c]) or None,
                       "iri": b.iri_field(c)} for c in classes}
    parent_of = {b.name_of[c]: b.name_of[p] for c, p in parents.items()}
    untyped = sorted(n.removeprefix("_:") for n in nodes if n not in node_classes)
    catch_all = None
    if untyped:
        catch_all, _ = b.names.claim("Node", "node type")
        node_types[catch_all] = {"iri": CATCH_ALL, "description": "Any node without another type."}
        b.note(f"node_types.{catch_all}", f"{len(untyped)} node(s) have no rdf:type (e.g. "
               f"{untyped[0]}): this type, IRI rdfs:Resource, types them")

    def type_of(n) -> str:
        names = node_classes.get(n)
        return catch_all if not names else _most_specific({b.name_of[c] for c in names}, parent_of)

    edge_types: dict[str, dict] = {}
    for p, uses in edge_uses.items():
        n = b.name_of[p]
        edge_types[n] = {"domain": _types_field(type_of(s) for s, _ in uses),
                         "range": _types_field(type_of(o) for _, o in uses),
                         "description": _describe(g, p, n) or None, "iri": b.iri_field(p)}
        if p in literal_uses:
            b.note(f"edge_types.{n}", f"also has {len(literal_uses[p])} literal value(s), which are "
                                      f"not edges and are not read")
    roots = b.roots(node_types) if node_types else []
    if not node_types:
        node_types["Node"] = {"iri": CATCH_ALL}
        b.names.claim("Node", "node type")
        roots = ["Node"]
        b.note("node_types.Node", "the graph has no nodes")
    if not edge_types:
        _see_also(b, edge_types, roots, "no predicate links two nodes")

    attributes: dict[str, dict] = {}
    for p in attrs:
        n = b.name_of[p]
        uses = literal_uses[p]
        kinds = {_datatype_name(dt) for _, dt in uses}
        dt = kinds.pop() if len(kinds) == 1 else ("decimal" if kinds == {"integer", "decimal"}
                                                  else "string")
        per_node = Counter(s for s, _ in uses)
        attributes[n] = {"datatype": dt, "multiple": True if max(per_node.values()) > 1 else None,
                         "description": _describe(g, p, n) or None, "iri": b.iri_field(p)}
    header = [f"Inferred from {origin} by `kgbuild schema infer`: the types, edges and attributes "
              "it uses.", "Domains and ranges are the types seen; review the notes."]
    return b.finish(node_types, edge_types, attributes, "", header)


def _most_specific(names: set[str], parent_of: dict[str, str]) -> str:
    """The type :func:`kgbuild.graph.rdf.from_quads` reads a node with these types as: the most
    specific on one branch, else the first by name."""
    def is_a(a: str, b: str) -> bool:
        while a is not None:
            if a == b:
                return True
            a = parent_of.get(a)
        return False

    ordered = sorted(names)
    best = ordered[0]
    for t in ordered[1:]:
        if is_a(t, best):
            best = t
    return best


def _datatype_name(datatype: str | None) -> str:
    """The schema datatype of a literal's datatype IRI (None: a plain or language literal)."""
    if datatype is None or not datatype.startswith(str(XSD)):
        return "string"
    return _XSD.get(local_name(datatype), "string")


class _Rows:
    """A graph's triples as plain rows, read again on each call: ``(subject key, subject is
    a blank node, predicate IRI, object key, object kind, literal datatype)``, a key being an
    IRI or ``_:`` and a blank node's label, a kind ``i`` (IRI), ``b`` (blank) or ``l``
    (literal, the key its lexical form; the datatype None for a plain or language literal)."""

    def __init__(self, graph: Graph | None = None, quads: list | None = None,
                 prefixes: dict | None = None):
        self.graph, self.quads, self.prefixes = graph, quads, prefixes or {}

    def __len__(self) -> int:
        return len(self.graph if self.graph is not None else self.quads)

    def __call__(self):
        if self.graph is not None:
            for s, p, o in self.graph:
                if not isinstance(s, (URIRef, BNode)):  # (an N3 formula)
                    continue
                kind = "l" if isinstance(o, Literal) else "b" if isinstance(o, BNode) \
                    else "i" if isinstance(o, URIRef) else "x"
                yield (f"_:{s}" if isinstance(s, BNode) else str(s), isinstance(s, BNode), str(p),
                       f"_:{o}" if kind == "b" else str(o), kind,
                       str(o.datatype) if kind == "l" and o.datatype is not None else None)
            return
        iri, blank = ox.NamedNode, ox.BlankNode
        plain = {str(XSD.string), str(RDF.langString)}
        for q in self.quads:
            s, o = q.subject, q.object
            if type(o) is iri:
                kind, key, dt = "i", o.value, None
            elif type(o) is blank:
                kind, key, dt = "b", f"_:{o.value}", None
            else:
                kind, key, dt = "l", o.value, o.datatype.value
                dt = None if dt in plain else dt
            yield ((s.value, False) if type(s) is iri else (f"_:{s.value}", True)) + (
                q.predicate.value, key, kind, dt)


def _inference_input(source) -> tuple[_Rows, Graph | None, str]:
    """The rows of ``source`` (a graph, or a file parsed by pyoxigraph without an rdflib graph
    of its data), the graph when one was given or read (N3), and a name for it."""
    if isinstance(source, Graph):
        return _Rows(source), source, "graph"
    path = Path(source)

    def parse(fmt: str):
        if fmt not in OXIGRAPH:
            return load_graph(path, fmt, Graph(bind_namespaces="none"))
        quads: list = []
        prefixes = read_quads(path, lambda parser: quads.extend(_no_triple_terms(parser)), fmt)
        return _Rows(quads=quads, prefixes=prefixes)

    read = _parsed(path, parse)
    return (_Rows(read), read, path.name) if isinstance(read, Graph) else (read, None, path.name)


def _no_triple_terms(quads):
    for q in quads:
        for term in (q.subject, q.object):
            if type(term) is ox.Triple:
                raise triple_term_error(term)
        yield q


def _described(quads: list, terms: set, prefixes: dict) -> Graph:
    """An rdflib graph of the triples about ``terms`` (their labels, comments, parents) and
    the file's prefixes: what naming and describing the schema's terms reads."""
    g = Graph(bind_namespaces="none")
    wanted = {str(t) for t in terms}
    add_quads(g, (q for q in quads if type(q.subject) is ox.NamedNode
                  and q.subject.value in wanted))
    bind_file_prefixes(g, prefixes)
    return g


def _see_also(b, edge_types: dict, roots: list[str], why: str) -> None:
    """kgbuild needs an edge type: without one, rdfs:seeAlso between any types."""
    n, _ = b.names.claim("seeAlso", "edge type")
    edge_types[n] = {"domain": _types_field(roots), "range": _types_field(roots),
                     "iri": str(RDFS.seeAlso)}
    b.note(f"edge_types.{n}", f"{why}; kgbuild needs an edge type: rdfs:seeAlso between any types")
