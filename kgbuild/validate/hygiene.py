"""Graph hygiene: findings that are not SHACL violations but usually mean a mistake.

``undefined``: an edge points at an entity no document defines (a store records which
documents define a node; a file does not, so there the check is skipped with a note).
External packages (purls, container images, Helm charts, Terraform modules: what manifests,
lock files and SBOMs depend on, defined elsewhere by nature) are only counted in one note,
unless :attr:`HygieneOptions.external` asks for them.
``hubs``: nodes with more edges than a threshold. ``weak``: edges whose every assertion has a
confidence below a threshold. Near-duplicate names come from the resolver (see
:func:`kgbuild.project.validation.validate_target`). Findings are warnings (``undefined``,
``weak``) or notes (``hubs``); they never make a graph fail to conform.
"""

from __future__ import annotations

from dataclasses import dataclass

from rdflib.namespace import RDF

from ..graph.model import DECLARED_LABEL, MENTION_LABEL, id_from_iri, node_iri
from ..schema.namespaces import KG
from ..vocab import PROV_DERIVED_FROM
from .engine import Data
from .report import Finding

CHECKS = ("undefined", "duplicates", "hubs", "weak")
_LIMIT = 1000  # findings per check
# ID prefixes of nodes that stand for something outside the project: never defined here
EXTERNAL_PREFIXES = ("pkg:", "image:", "helm:", "terraform-module:")


@dataclass(frozen=True)
class HygieneOptions:
    """Which checks run, and their thresholds."""

    checks: tuple[str, ...] = CHECKS
    hub_degree: int = 200
    min_confidence: float = 0.5
    external: bool = False  # undefined: list external packages too (see EXTERNAL_PREFIXES)


def hygiene(data: Data, options: HygieneOptions) -> list[Finding]:
    """The ``undefined``, ``hubs`` and ``weak`` findings on ``data`` (restricted to
    ``data.focus`` when set), at most 1,000 per check."""
    out: list[Finding] = []
    focus = f"VALUES ?s {{ {' '.join(data.focus)} }}" if data.focus is not None else ""
    props = " ".join(f"<{p}>" for p in data.object_properties)
    if "undefined" in options.checks:
        out += _undefined(data, props, options.external)
    if "hubs" in options.checks and props:
        query = (f"SELECT ?s (COUNT(*) AS ?n) WHERE {{ {focus} {{ SELECT DISTINCT ?s ?p ?o WHERE {{ "
                 f"{{ ?s ?p ?o }} UNION {{ ?o ?p ?s }} VALUES ?p {{ {props} }} }} }} }} GROUP BY ?s "
                 f"HAVING (COUNT(*) > {options.hub_degree}) ORDER BY DESC(?n) ?s LIMIT {_LIMIT}")
        out += [Finding("hubs", "Info", f"{id_from_iri(r['s'].value)} has {r['n'].value} edges "
                        f"(more than {options.hub_degree})", id_from_iri(r["s"].value))
                for r in data.rows(query)]
    if "weak" in options.checks:
        query = (f"SELECT ?s ?p ?o (MAX(?c) AS ?best) WHERE {{ {focus} ?a <{RDF.subject}> ?s ; "
                 f"<{RDF.predicate}> ?p ; <{RDF.object}> ?o ; <{KG.confidence}> ?c . FILTER(isIRI(?o)) }} "
                 f"GROUP BY ?s ?p ?o HAVING (MAX(?c) < {float(options.min_confidence)}) "
                 f"ORDER BY ?s ?p ?o LIMIT {_LIMIT}")
        out += [Finding("weak", "Warning", f"{id_from_iri(r['s'].value)} {_local(r['p'].value)} "
                        f"{id_from_iri(r['o'].value)}: every assertion has confidence below "
                        f"{options.min_confidence} (best {r['best'].value})", id_from_iri(r["s"].value))
                for r in data.rows(query)]
    return out


def _local(iri: str) -> str:
    return iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _undefined(data: Data, props: str, external: bool) -> list[Finding]:
    declared, mention = DECLARED_LABEL, MENTION_LABEL  # N-Triples IRIs
    if not bool(data.rows(f"ASK {{ ?x {declared} ?l }}")):
        return [Finding("undefined", "Info", "skipped: the graph does not record which documents "
                        "define a node (a store does; an exported file does not)")]
    focus_o = ""
    if data.focus is not None:  # only the focus nodes mentioned and declared nowhere: joining
        # every focus node first made pyoxigraph evaluate the MINUS over the whole store
        found = [o for o in data.focus if bool(data.rows(f"ASK {{ {o} {mention} ?m }}"))
                 and not bool(data.rows(f"ASK {{ {o} {declared} ?l }}"))]
        if not found:
            return []
        focus_o = f"VALUES ?o {{ {' '.join(found)} }}"
    is_external = " || ".join(f'STRSTARTS(STR(?o), "{node_iri(p)}")' for p in EXTERNAL_PREFIXES)
    keep = "" if external else f"FILTER(!({is_external}))"
    query = (f"SELECT ?o (SAMPLE(?src) AS ?doc) (MIN(?ln) AS ?line) WHERE {{ {focus_o} "
             f"?a <{RDF.object}> ?o ; <{RDF.predicate}> ?p ; <{PROV_DERIVED_FROM}> ?d . "
             f"VALUES ?p {{ {props} }} ?o {mention} ?m . {keep} OPTIONAL {{ ?a <{KG.line}> ?ln }} "
             f"OPTIONAL {{ ?d <{KG.path}> ?src }} MINUS {{ ?o {declared} ?l }} }} GROUP BY ?o "
             f"ORDER BY ?o LIMIT {_LIMIT}")
    out = []
    if not external:
        query_n = (f"SELECT (COUNT(DISTINCT ?o) AS ?n) WHERE {{ {focus_o} ?a <{RDF.object}> ?o ; "
                   f"<{RDF.predicate}> ?p . VALUES ?p {{ {props} }} ?o {mention} ?m . "
                   f"FILTER({is_external}) MINUS {{ ?o {declared} ?l }} }}")
        n = int(next(iter(data.rows(query_n)))["n"].value)
        if n:
            out.append(Finding("undefined", "Info", f"{n} external package node(s) (purls, images, "
                               f"charts, modules) defined by no document, as expected: not listed "
                               f"(--undefined-external lists them)"))
    for r in data.rows(query):
        doc = r["doc"].value if r["doc"] is not None else None
        where = f"{doc}:{r['line'].value}" if doc and r["line"] is not None else doc
        out.append(Finding("undefined", "Warning", f"{id_from_iri(r['o'].value)} is referenced but "
                           f"defined by no document", id_from_iri(r["o"].value), where))
    return out

