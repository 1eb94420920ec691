"""Validation reports: grouped text for people, JSON, and a SHACL validation report graph."""

from __future__ import annotations

from dataclasses import dataclass, field

from rdflib import BNode, Graph, Literal
from rdflib.namespace import RDF, SH, XSD

from .engine import Result


@dataclass(frozen=True)
class Violation:
    """One SHACL result: the node, the rule it breaks, the message, and where it came from
    (``where``: the source file and line of the offending assertion, when known)."""

    focus: str
    rule: str
    message: str
    severity: str
    path: str | None = None
    value: str | None = None
    focus_type: str | None = None
    component: str | None = None
    where: str | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class Finding:
    """One graph-hygiene finding (a warning or a note, never a violation)."""

    check: str
    severity: str
    message: str
    node: str | None = None
    where: str | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class ValidationReport:
    """What validation found. ``conforms`` counts only results of severity Violation;
    ``scope`` says what was validated when it was not the whole graph; ``hygiene`` holds the
    hygiene findings; ``results`` the raw SHACL terms (for :meth:`to_shacl`)."""

    conforms: bool
    violations: list[Violation] = field(default_factory=list)
    engine: str = "fast"
    note: str | None = None
    scope: str | None = None
    hygiene: list[Finding] = field(default_factory=list)
    results: list[Result] = field(default_factory=list, repr=False, compare=False)

    def groups(self) -> dict[str, list[Violation]]:
        """Violations grouped by rule message, largest group first, then by message."""
        out: dict[str, list[Violation]] = {}
        for v in self.violations:
            out.setdefault(f"{v.rule}: {v.message}", []).append(v)
        return dict(sorted(out.items(), key=lambda kv: (-len(kv[1]), kv[0])))

    def to_dict(self) -> dict:
        return {"conforms": self.conforms, "violations": len(self.violations), "engine": self.engine,
                "note": self.note, "scope": self.scope,
                "groups": [{"problem": k, "count": len(vs), "results": [v.to_dict() for v in vs]}
                           for k, vs in self.groups().items()],
                "hygiene": [f.to_dict() for f in self.hygiene]}

    def render(self, limit: int = 10) -> str:
        """Text report: one block per problem, listing up to ``limit`` nodes each, with the
        file and line of the offending assertion; then the hygiene findings."""
        head = [line for line in (self.note, self.scope) if line]
        if not self.violations:
            lines = head + ["conforms: the graph satisfies every shape"]
        else:
            lines = head + [f"does not conform: {len(self.violations)} violation(s) "
                            f"in {len(self.groups())} group(s)"]
        for problem, vs in self.groups().items():
            lines.append(f"\n{problem}  ({len(vs)})")
            for v in vs[:limit]:
                extra = f" {v.path}" if v.path else ""
                extra += f" -> {v.value}" if v.value and v.value != v.focus else ""
                typ = f" (a {v.focus_type})" if v.focus_type else ""
                at = f"  [{v.where}]" if v.where else ""
                lines.append(f"  - {v.focus}{typ}{extra}{at}")
            if len(vs) > limit:
                lines.append(f"  ... and {len(vs) - limit} more")
        checks: dict[str, list[Finding]] = {}
        for f in self.hygiene:
            checks.setdefault(f.check, []).append(f)
        for check, fs in sorted(checks.items()):
            worst = "Warning" if any(f.severity == "Warning" for f in fs) else fs[0].severity
            lines.append(f"\nhygiene {check} ({worst.lower()}, {len(fs)})")
            lines += [f"  - {f.message}" + (f"  [{f.where}]" if f.where else "") for f in fs[:limit]]
            if len(fs) > limit:
                lines.append(f"  ... and {len(fs) - limit} more")
        return "\n".join(lines)

    def to_shacl(self) -> str:
        """The standard ``sh:ValidationReport`` graph in Turtle, readable by any SHACL tool."""
        g = Graph()
        g.bind("sh", SH)
        report = BNode("report")
        g.add((report, RDF.type, SH.ValidationReport))
        g.add((report, SH.conforms, Literal(self.conforms, datatype=XSD.boolean)))
        for i, r in enumerate(self.results):
            node = BNode(f"r{i}")
            g.add((report, SH.result, node))
            g.add((node, RDF.type, SH.ValidationResult))
            g.add((node, SH.focusNode, r.focus))
            g.add((node, SH.resultSeverity, r.severity))
            g.add((node, SH.sourceConstraintComponent, r.component))
            g.add((node, SH.sourceShape, r.shape if not isinstance(r.shape, BNode) else BNode(f"s{i}")))
            g.add((node, SH.resultMessage, r.message))
            if r.path is not None:
                g.add((node, SH.resultPath, r.path))
            if r.value is not None:
                g.add((node, SH.value, r.value))
        return g.serialize(format="turtle")
