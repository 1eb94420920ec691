"""SHACL validation (pyshacl) of a graph against its schema's shapes, with readable reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pyshacl import validate as shacl_validate
from rdflib import Graph, URIRef
from rdflib.namespace import RDF, SH

from ..errors import InputError
from ..graph.model import doc_from_iri, id_from_iri
from ..schema.model import Schema
from ..schema.namespaces import SOURCE_BASE
from ..schema.shapes import all_shapes
from ..schema.vocabulary import vocabulary

FORMATS = {".ttl": "turtle", ".nt": "nt", ".nq": "nquads", ".trig": "trig", ".jsonld": "json-ld",
           ".json": "json-ld", ".rdf": "xml", ".owl": "xml", ".n3": "n3"}


@dataclass(frozen=True)
class Violation:
    """One SHACL result: the node, the rule it breaks, and the message."""

    focus: str
    rule: str
    message: str
    severity: str
    path: str | None = None
    value: str | None = None
    focus_type: str | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class ValidationReport:
    conforms: bool
    violations: list[Violation] = field(default_factory=list)

    def groups(self) -> dict[str, list[Violation]]:
        """Violations grouped by rule message, largest group first, then by message."""
        out: dict[str, list[Violation]] = {}
        for v in self.violations:
            out.setdefault(f"{v.rule}: {v.message}", []).append(v)
        return dict(sorted(out.items(), key=lambda kv: (-len(kv[1]), kv[0])))

    def to_dict(self) -> dict:
        return {"conforms": self.conforms, "violations": len(self.violations),
                "groups": [{"problem": k, "count": len(vs), "results": [v.to_dict() for v in vs]}
                           for k, vs in self.groups().items()]}

    def render(self, limit: int = 10) -> str:
        """Text report: one block per problem, listing up to ``limit`` nodes each."""
        if self.conforms:
            return "conforms: the graph satisfies every shape"
        lines = [f"does not conform: {len(self.violations)} violation(s) "
                 f"in {len(self.groups())} group(s)"]
        for problem, vs in self.groups().items():
            lines.append(f"\n{problem}  ({len(vs)})")
            for v in vs[:limit]:
                extra = f" {v.path}" if v.path else ""
                extra += f" -> {v.value}" if v.value and v.value != v.focus else ""
                typ = f" (a {v.focus_type})" if v.focus_type else ""
                lines.append(f"  - {v.focus}{typ}{extra}")
            if len(vs) > limit:
                lines.append(f"  ... and {len(vs) - limit} more")
        return "\n".join(lines)


def load_graph(path: str | Path) -> Graph:
    """Parse an RDF file (format from its extension); raises :class:`InputError` with the line."""
    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(f"unknown RDF file extension {path.suffix!r} "
                         f"(one of {', '.join(sorted(FORMATS))})", str(path))
    if not path.is_file():
        raise InputError("no such file", str(path))
    g = Graph()
    try:
        g.parse(path, format=fmt)
    except Exception as exc:  # rdflib raises many parser-specific types
        msg = str(exc).strip().splitlines()
        line = getattr(exc, "lines", None)
        raise InputError(f"cannot parse as {fmt}: {msg[0] if msg else type(exc).__name__}",
                         str(path), line if isinstance(line, int) else None) from None
    return g


def validate_graph(data: Graph, schema: Schema) -> ValidationReport:
    """Validate ``data`` against the schema's shapes and the provenance shapes."""
    vocab = vocabulary(schema)
    conforms, results, _ = shacl_validate(
        data, shacl_graph=all_shapes(schema), ont_graph=vocab, inference="none",
        abort_on_first=False, allow_warnings=True, advanced=True)
    violations = []
    types = {URIRef(iri): name for iri, name in schema.type_by_iri.items()}
    short = {**_SHORT, schema.namespace: f"{schema.prefix}:"}

    def _show(term) -> str:
        return show(term, short)

    for r in results.subjects(RDF.type, SH.ValidationResult):
        focus = results.value(r, SH.focusNode)
        shape = results.value(r, SH.sourceShape)
        comp = results.value(r, SH.sourceConstraintComponent)
        path = results.value(r, SH.resultPath)
        value = results.value(r, SH.value)
        msg = results.value(r, SH.resultMessage)
        sev = results.value(r, SH.resultSeverity)
        focus_types = [types[t] for t in data.objects(focus, RDF.type) if t in types]
        violations.append(Violation(
            focus=_show(focus),
            rule=_show(shape) if isinstance(shape, URIRef) else _show(comp),
            message=str(msg) if msg is not None else _show(comp),
            severity=str(sev).rsplit("#", 1)[-1] if sev is not None else "Violation",
            path=_show(path) if path is not None else None,
            value=_show(value) if value is not None else None,
            focus_type="/".join(sorted(focus_types)) or None))
    violations.sort(key=lambda v: (v.rule, v.message, v.focus, v.path or "", v.value or ""))
    return ValidationReport(bool(conforms), violations)


def validate_file(path: str | Path, schema: Schema) -> ValidationReport:
    """Load an RDF file and validate it; see :func:`validate_graph`."""
    return validate_graph(load_graph(path), schema)


_SHORT = {"http://www.w3.org/ns/shacl#": "sh:", "http://www.w3.org/2001/XMLSchema#": "xsd:",
          "http://www.w3.org/1999/02/22-rdf-syntax-ns#": "rdf:",
          "http://www.w3.org/2000/01/rdf-schema#": "rdfs:", "https://kgbuild.dev/ns#": "kg:",
          "http://www.w3.org/ns/prov#": "prov:", "http://purl.org/dc/terms/": "dcterms:"}


def show(term, short: dict[str, str] = _SHORT) -> str:
    """A readable name: node IDs for kgbuild nodes, local names for shapes, short prefixes."""
    s = str(term)
    if isinstance(term, URIRef):
        ident = id_from_iri(s)
        if ident != s:
            return ident
        if s.startswith(SOURCE_BASE):
            return doc_from_iri(s)
        if "/shapes#" in s:
            return s.rsplit("#", 1)[1]
        for ns, prefix in short.items():
            if s.startswith(ns):
                return prefix + s[len(ns):]
    return s
