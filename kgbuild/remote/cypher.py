"""The graph as a property graph: parameterised Cypher ``MERGE`` statements, and FalkorDB.

Mapping (also in the README):

* a node is ``(:Entity:<Type> {id, label, aliases, access, <attribute>...})``: the common
  label ``Entity`` plus its schema type's name; an attribute declared ``multiple`` is a
  sorted list, any other one its (least) value;
* an edge is one relationship ``(subject)-[:<edgeType>]->(object)`` in the stored
  direction (``ownedBy``, never ``ownerOf``), whose properties are lists with one entry per
  assertion, sorted by source: ``sources``, ``locations`` (``line 12``, a JSON pointer or a
  character span), ``evidence``, ``extractors``, ``confidence``, ``generated_at``, and the
  union of their ``access`` labels; an edge with no assertion has empty lists.

Statements come in batches of ``UNWIND $rows AS row MERGE ...``, deterministic for a given
graph. Applying them again changes nothing; :func:`sync` also deletes first the nodes and
relationships the graph no longer has, so a push is idempotent and complete. Every
property-graph push runs :func:`sync` through its own client: :func:`push_falkordb` here,
:func:`kgbuild.remote.neo4j.push_neo4j` over Bolt.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import InvalidValue
from ..graph.model import KnowledgeGraph
from ..io.urls import redact_url, scrub, url_secrets
from ..schema.model import Schema
from ..store.graphstore import GraphStore
from .sparql import RemoteError

BATCH = 500  # rows per UNWIND statement
SEP = "\u001f"  # joins subject and object IDs in an edge key


def _name(text: str) -> str:
    return "`" + text.replace("`", "``") + "`"


def node_rows(kg: KnowledgeGraph) -> dict[str, list[dict]]:
    """Schema type -> ``{id, props}`` rows of its nodes, sorted by ID."""
    out: dict[str, list[dict]] = {}
    schema = kg.schema
    for nid in sorted(kg.nodes):
        n = kg.nodes[nid]
        props: dict = {"id": n.id, "label": n.label, "aliases": sorted(n.aliases),
                       "access": sorted(n.access)}
        for attr, values in sorted(n.attributes.items()):
            multiple = schema.attributes[attr].multiple if attr in schema.attributes else True
            props[attr] = sorted(values) if multiple else min(values)
        out.setdefault(n.type, []).append({"id": n.id, "props": props})
    return dict(sorted(out.items()))


def edge_rows(kg: KnowledgeGraph) -> dict[str, list[dict]]:
    """Edge type -> ``{s, o, props}`` rows, sorted by subject and object."""
    out: dict[str, list[dict]] = {}
    for (s, p, o), assertions in kg.edges().items():
        if s not in kg.nodes or o not in kg.nodes:
            continue
        found = sorted(assertions, key=lambda a: (a.source, a.location, a.extractor, a.key))
        props = {"sources": [a.source for a in found],
                 "locations": [a.location for a in found],
                 "evidence": [a.evidence or "" for a in found],
                 "extractors": [a.extractor for a in found],
                 "confidence": [float(a.confidence) for a in found],
                 "generated_at": [a.generated_at for a in found],
                 "access": sorted({x for a in found for x in a.access})}
        out.setdefault(p, []).append({"s": s, "o": o, "props": props})
    return {p: sorted(rows, key=lambda r: (r["s"], r["o"])) for p, rows in sorted(out.items())}


def node_statement(type_name: str) -> str:
    return (f"UNWIND $rows AS row MERGE (n:Entity {{id: row.id}}) SET n:{_name(type_name)} "
            f"SET n = row.props")


def edge_statement(edge_type: str) -> str:
    return (f"UNWIND $rows AS row MATCH (a:Entity {{id: row.s}}) MATCH (b:Entity {{id: row.o}}) "
            f"MERGE (a)-[r:{_name(edge_type)}]->(b) SET r = row.props")


def statements(kg: KnowledgeGraph) -> list[tuple[str, dict]]:
    """``(cypher, parameters)`` pairs that write the graph: nodes first, then edges."""
    return write_statements(node_rows(kg), edge_rows(kg))


def write_statements(nodes: dict[str, list[dict]],
                     edges: dict[str, list[dict]]) -> list[tuple[str, dict]]:
    """The MERGE statements of :func:`node_rows` and :func:`edge_rows`, :data:`BATCH` rows
    each: nodes first, then edges."""
    out = []
    for t, rows in nodes.items():
        out += [(node_statement(t), {"rows": rows[i:i + BATCH]}) for i in range(0, len(rows), BATCH)]
    for p, rows in edges.items():
        out += [(edge_statement(p), {"rows": rows[i:i + BATCH]}) for i in range(0, len(rows), BATCH)]
    return out


def delete_statements(nodes: dict[str, list[dict]], edges: dict[str, list[dict]],
                      labels: Iterable[str] = (),
                      relationship_types: Iterable[str] = ()) -> list[tuple[str, dict]]:
    """The statements that delete what the rows no longer hold: per relationship type (the
    rows' and the server's ``relationship_types``) the relationships between ``Entity`` nodes
    that are not an edge, then per type (the rows' and the server's ``labels``) the
    ``Entity`` nodes that are not a node of that type, with their relationships (a retyped
    node is written anew). Nodes and relationships without the ``Entity`` label are left
    alone."""
    out = []
    for p in sorted(set(edges) | set(relationship_types)):
        keys = [r["s"] + SEP + r["o"] for r in edges.get(p, [])]
        out.append((f"MATCH (a:Entity)-[r:{_name(p)}]->(b:Entity) WHERE NOT (a.id + $sep + b.id) "
                    f"IN $keys DELETE r", {"keys": keys, "sep": SEP}))
    for t in sorted((set(nodes) | set(labels)) - {"Entity"}):
        ids = [r["id"] for r in nodes.get(t, [])]
        out.append((f"MATCH (n:Entity:{_name(t)}) WHERE NOT n.id IN $ids DETACH DELETE n",
                    {"ids": ids}))
    return out


def sync(kg: KnowledgeGraph, run: Callable[[str, dict], tuple[int, int]],
         labels: Iterable[str] = (), relationship_types: Iterable[str] = ()) -> dict:
    """Make a property graph hold ``kg`` (see the module doc): ``run(cypher, parameters)``
    runs one statement and returns how many nodes and relationships it deleted; ``labels``
    and ``relationship_types`` are those the server has. First the deletions, then the
    MERGE statements. Returns the counts: nodes, edges, deleted_nodes, deleted_edges."""
    nodes, edges = node_rows(kg), edge_rows(kg)
    deleted_nodes = deleted_edges = 0
    for query, params in delete_statements(nodes, edges, labels, relationship_types):
        n, r = run(query, params)
        deleted_nodes += n
        deleted_edges += r
    for query, params in write_statements(nodes, edges):
        run(query, params)
    return {"nodes": sum(map(len, nodes.values())), "edges": sum(map(len, edges.values())),
            "deleted_nodes": deleted_nodes, "deleted_edges": deleted_edges}


def literal(value) -> str:
    """A Cypher literal for a parameter value (strings, numbers, booleans, lists, maps)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidValue(f"{value} has no Cypher literal")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("'", "\\'")[1:-1].join("''")
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_name(k)}: {literal(v)}" for k, v in value.items()) + "}"
    raise InvalidValue(f"{type(value).__name__} has no Cypher literal")


def cypher_script(kg: KnowledgeGraph) -> str:
    """The statements as a cypher-shell script: ``:param rows => [...];`` before each one."""
    lines = ["// kgbuild property graph: (:Entity:<Type> {id, label, ...})-[:<edgeType> "
             "{sources, locations, ...}]->(:Entity)",
             "CREATE INDEX FOR (n:Entity) ON (n.id);"]
    for query, params in statements(kg):
        lines.append(f":param rows => {literal(params['rows'])};")
        lines.append(query + ";")
    return "\n".join(lines) + "\n"


def push_falkordb(store_path: str | Path, schema: Schema, url: str, graph_name: str, *,
                  timeout: float = 60.0) -> dict:
    """Write the store's graph to FalkorDB graph ``graph_name`` at ``redis://HOST:PORT``: MERGE
    every node and edge, then delete those the store no longer has."""
    try:
        from falkordb import FalkorDB
    except ImportError:
        raise RemoteError("the FalkorDB client is not installed: pip install 'kgbuild[servers]' "
                          "(or falkordb)",
                          code="usage") from None
    with GraphStore(store_path, schema, write=False) as store:
        kg = store.knowledge_graph()
    try:
        graph = FalkorDB.from_url(url, socket_timeout=timeout).select_graph(graph_name)
        try:
            graph.query("CREATE INDEX FOR (n:Entity) ON (n.id)")
        except Exception as exc:  # the index exists already (FalkorDB has no IF NOT EXISTS)
            if "already indexed" not in str(exc):
                raise

        def run(query: str, params: dict) -> tuple[int, int]:
            res = graph.query(query, params)
            return res.nodes_deleted, res.relationships_deleted

        counts = sync(kg, run, _column(graph, "CALL db.labels()"),
                      _column(graph, "CALL db.relationshipTypes()"))
    except RemoteError:
        raise
    except Exception as exc:  # redis/falkordb errors: connection refused, auth, Cypher
        raise RemoteError(f"FalkorDB {redact_url(url)}: {type(exc).__name__}: "
                          f"{scrub(str(exc), url_secrets(url))}") from None
    return {"url": redact_url(url), "graph": graph_name, **counts}


def _column(graph, query: str) -> list[str]:
    return [row[0] for row in graph.query(query).result_set]
