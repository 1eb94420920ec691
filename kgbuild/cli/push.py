"""``kgbuild push`` and ``kgbuild pull``: the store on SPARQL and property-graph servers."""

from __future__ import annotations

from pathlib import Path

import click

from ..io.urls import redact_url
from .main import FORMAT, SCHEMA, STORE, UsageError, check_output, count, emit, main, open_project
from .output import plural


def remote_options(f):
    """The options that reach a SPARQL server (shared by push, pull and traverse)."""
    for option in reversed([
        click.option("--update-url", metavar="URL",
                     help="SPARQL Update URL (default: .../update beside .../query, else the "
                          "endpoint)."),
        click.option("--gsp-url", metavar="URL",
                     help="Graph Store Protocol URL (default: .../store beside .../query, "
                          "Oxigraph's; else uploads use SPARQL Update)."),
        click.option("--user", metavar="NAME", help="User for basic (or --digest) auth."),
        click.option("--password", envvar="KGBUILD_REMOTE_PASSWORD", metavar="SECRET",
                     help="Password ($KGBUILD_REMOTE_PASSWORD)."),
        click.option("--digest", is_flag=True,
                     help="Digest auth instead of basic (Virtuoso's /sparql-auth)."),
        click.option("--token", envvar="KGBUILD_REMOTE_TOKEN", metavar="TOKEN",
                     help="Bearer token ($KGBUILD_REMOTE_TOKEN)."),
        click.option("--timeout", type=click.FloatRange(0.1, 86400), default=60.0,
                     show_default=True, help="Seconds for a whole SPARQL request "
                                             "(connection and answer; each retry has its own)."),
        click.option("--retries", **count(3, 0, 20),
                     help="Retries of a request after a 5xx answer, a timeout or a connection "
                          "error."),
        click.option("--max-response-size", "max_response_mib", **count(1024, 1, 1 << 20),
                     metavar="MIB", help="Largest answer read, in MiB (received and "
                                         "decompressed each)."),
    ]):
        f = option(f)
    return f


def sparql_client(endpoint, update_url, gsp_url, user, password, digest, token, timeout,
                  retries, max_response_mib):
    """The client the remote options describe."""
    from ..remote.sparql import Auth, SparqlClient

    if token and user:
        raise UsageError("give either --user/--password or --token, not both")
    if password and not user:
        raise UsageError("--password needs --user")
    return SparqlClient(endpoint, update_url=update_url, store_url=gsp_url,
                        auth=Auth(user, password, token, digest), timeout=timeout,
                        retries=retries, max_response_bytes=max_response_mib << 20)


@main.command()
@click.option("--endpoint", metavar="URL",
              help="SPARQL query URL, e.g. http://127.0.0.1:7878/query (Oxigraph) or "
                   "http://127.0.0.1:8890/sparql-auth (Virtuoso).")
@click.option("--falkordb", metavar="redis://HOST:PORT",
              help="Push the property graph to FalkorDB instead (Cypher MERGE).")
@click.option("--neo4j", metavar="bolt://HOST:PORT",
              help="Push the property graph over Bolt instead (Neo4j; Cypher MERGE, one "
                   "transaction; --user/--password, else $NEO4J_USERNAME/$NEO4J_PASSWORD).")
@click.option("--graph-name", default="kgbuild", show_default=True,
              help="FalkorDB graph to write.")
@click.option("--database", envvar="NEO4J_DATABASE", metavar="NAME",
              help="Neo4j database to write ($NEO4J_DATABASE; default: the server's).")
@STORE
@SCHEMA
@click.option("--graph-iri", metavar="IRI",
              help="Send the whole graph as this one named graph instead of one per document.")
@click.option("--full", is_flag=True, help="Send every graph, whatever was pushed before, and "
                                          "drop the server's other kgbuild graphs.")
@click.option("--batch-bytes", **count(4 << 20, 1024, 1 << 30),
              help="Most bytes of quads in one upload request.")
@click.option("--bulk-dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Virtuoso: load the graphs it lacks with its bulk loader from N-Quads "
                   "files written here (a folder in its DirsAllowed, the same path for "
                   "Virtuoso; run through its isql with --user/--password).")
@click.option("--isql", "isql_address", default="127.0.0.1:1111", show_default=True,
              metavar="HOST:PORT", help="Virtuoso's SQL port, for --bulk-dir.")
@click.option("--bulk-batch-bytes", **count(8 << 30, 1, 1 << 42),
              help="Most bytes of N-Quads in --bulk-dir at once: written, loaded and removed "
                   "in turn (a batch's graphs count as sent once it is loaded).")
@remote_options
@FORMAT
def push(endpoint, falkordb, neo4j, graph_name, database, store_path, schema_name, graph_iri,
         full, batch_bytes, bulk_dir, isql_address, bulk_batch_bytes, update_url, gsp_url, user,
         password, digest, token, timeout, retries, max_response_mib, fmt):
    """Send the store to a SPARQL 1.1 server (one named graph per document), FalkorDB or Neo4j.

    Only the graphs of documents changed since the last push to that endpoint are sent
    (remembered in the store folder), graphs of removed documents are dropped, and each graph
    is replaced atomically (uploaded to a temporary graph, then MOVEd; a graph the server
    lacks appears whole, in one request): a second push sends nothing. With --bulk-dir,
    the graphs Virtuoso lacks (a first push: all) go through its bulk loader, many times
    faster and not atomic (a failed load is repaired by the next push). FalkorDB and Neo4j
    (Bolt) get the property graph (see `kgbuild export --format cypher`); nodes and edges no
    longer in the store are deleted there (on Neo4j in the same transaction).

    \b
    Examples:
      kgbuild push --endpoint http://127.0.0.1:7878/query
      kgbuild push --endpoint http://127.0.0.1:8890/sparql-auth --digest --user dba \\
        --password dba
      kgbuild push --endpoint http://127.0.0.1:8890/sparql-auth --digest --user dba \\
        --password dba --bulk-dir /var/lib/virtuoso-opensource-7/db/load
      kgbuild push --falkordb redis://127.0.0.1:6379 --graph-name catalog
      NEO4J_PASSWORD=... kgbuild push --neo4j bolt://127.0.0.1:7687 --user neo4j

    \b
    Exit codes: 0 pushed; 2 usage, input or server error.
    """
    if sum(map(bool, (endpoint, falkordb, neo4j))) != 1:
        raise UsageError("give one of --endpoint URL, --falkordb redis://HOST:PORT or "
                         "--neo4j bolt://HOST:PORT")
    if bulk_dir and not endpoint:
        raise UsageError("--bulk-dir loads into Virtuoso: give its --endpoint")
    if bulk_dir and not (user and password):
        raise UsageError("--bulk-dir runs Virtuoso's isql: give --user and --password")
    front = open_project(schema=schema_name, store=store_path)
    if neo4j:
        report = front.push_neo4j(neo4j, database=database, user=user, password=password,
                                  token=token, timeout=timeout)
        emit(report, fmt, f"Neo4j {report['url']} database {report['database'] or '(default)'}: "
                          + _counts(report))
        return
    if falkordb:
        report = front.push_falkordb(falkordb, graph_name, timeout=timeout)
        report["url"] = redact_url(falkordb)
        emit(report, fmt, f"FalkorDB {report['url']} graph {graph_name}: " + _counts(report))
        return
    with sparql_client(endpoint, update_url, gsp_url, user, password, digest, token, timeout,
                       retries, max_response_mib) as client:
        bulk = None
        if bulk_dir:
            from ..remote.virtuoso import BulkLoader

            bulk = BulkLoader(Path(bulk_dir), user, password, isql_address,
                              batch_bytes=bulk_batch_bytes)
        report = front.push(client, graph_iri=graph_iri, full=full, batch_bytes=batch_bytes,
                            bulk=bulk)
    emit(report.to_dict(), fmt, report.render())


def _counts(report: dict) -> str:
    """A property-graph push's nodes and edges, written and deleted."""
    return (f"{plural(report['nodes'], 'node')}, {plural(report['edges'], 'edge')}; deleted "
            f"{plural(report['deleted_nodes'], 'node')}, {plural(report['deleted_edges'], 'edge')}")


@main.command()
@click.option("--endpoint", metavar="URL", required=True, help="SPARQL query URL.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True,
              help="File to write: .nq (default), .trig, or .nt (graph names dropped).")
@click.option("--graph-iri", metavar="IRI", help="Read only this named graph.")
@remote_options
@FORMAT
def pull(endpoint, output, graph_iri, update_url, gsp_url, user, password, digest, token,
         timeout, retries, max_response_mib, fmt):
    """Read kgbuild's named graphs (IRIs under https://kgbuild.dev/) back from a SPARQL server.

    \b
    Examples:
      kgbuild pull --endpoint http://127.0.0.1:7878/query -o remote.nq
      kgbuild pull --endpoint http://127.0.0.1:7878/query -o one.nt --graph-iri IRI

    \b
    Exit codes: 0 written; 2 usage, input or server error.
    """
    from ..remote.push import pull_store

    check_output(output)
    with sparql_client(endpoint, update_url, gsp_url, user, password, digest, token, timeout,
                       retries, max_response_mib) as client:
        report = pull_store(client, output, graph_iri=graph_iri)
    emit(report, fmt, f"wrote {report['output']}: {report['quads']} quads from "
                      f"{report['graphs']} graph(s) of {report['endpoint']}")
