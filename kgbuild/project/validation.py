"""``kgbuild validate``'s one call: a file or the store, in full or what the last build changed,
with SHACL (either engine) and the hygiene checks, near-duplicate names from the resolver."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..errors import InputError
from ..graph.rdf import from_rdf
from ..io.rdffile import load_graph
from ..resolve.review import possible_duplicates
from ..schema.model import Schema
from ..store.graphstore import GraphStore
from ..validate.hygiene import HygieneOptions
from ..validate.incremental import last_change, validate_changed
from ..validate.report import Finding, ValidationReport
from ..validate.validator import shapes_for, validate_file, validate_store


def validate_target(schema: Schema, graph: str | Path | None = None, *, store: str | Path | None = None,
                    changed: bool = False, engine: str = "fast", shapes: Sequence[str | Path] = (),
                    hygiene: HygieneOptions | None = HygieneOptions()) -> ValidationReport:
    """Validate ``graph`` (an RDF file) or else the ``store`` folder: everything, or with
    ``changed`` only what the last build changed (the focus nodes its documents touched).
    ``shapes``: extra SHACL files (Turtle) beside the schema's and the provenance shapes.
    ``hygiene``: which hygiene checks run (None: none); their findings never fail a graph."""
    shape_graph = shapes_for(schema, shapes)
    if graph is not None:
        if changed:
            raise InputError("--changed validates a store's last change, not a file", str(graph))
        report = validate_file(graph, schema, engine=engine, shapes=shape_graph, hygiene=hygiene)
        if hygiene is not None and "duplicates" in hygiene.checks:
            report.hygiene += _duplicates(lambda: from_rdf(load_graph(graph), schema))
        return report
    if store is None or not Path(store).is_dir():
        raise InputError("no graph file given and no store here: pass GRAPH or --store DIR",
                         str(store) if store else None)
    with GraphStore(store, schema, write=False) as gs:
        if changed:
            last = last_change(gs)
            report = validate_changed(gs, last["documents"], before=last["before"], engine=engine,
                                      shapes=shape_graph, hygiene=hygiene)
        else:
            report = validate_store(gs, engine=engine, shapes=shape_graph, hygiene=hygiene)
        if hygiene is not None and "duplicates" in hygiene.checks:
            report.hygiene += _duplicates(gs.knowledge_graph)
    return report


def _duplicates(graph) -> list[Finding]:
    """The resolver's near-duplicate names within a type, as hygiene warnings."""
    return [Finding("duplicates", "Warning", f"{d.a} and {d.b} ({d.type}) look like one entity "
                    f"({d.reason}, score {d.score:.0f})", d.a) for d in possible_duplicates(graph())]
