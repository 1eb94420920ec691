"""``push --neo4j``: the property graph (:mod:`kgbuild.remote.cypher`) written over Bolt with
the official ``neo4j`` driver: Neo4j (4.1 and later: ``CREATE INDEX ... IF NOT EXISTS``,
``db.labels()``, explicit transactions) and servers that follow it there, such as ArcadeDB.

The same statements as ``push --falkordb`` (:func:`~kgbuild.remote.cypher.sync`): the
deletions of what the store no longer has, then the ``MERGE`` batches, all in one
transaction, so a reader sees the graph before the push or after it and a failed push
changes nothing (the server's transaction memory must hold the whole graph's writes);
re-running changes nothing. The ``Entity.id`` index is made first (``IF NOT
EXISTS``). Nodes and relationships without the ``Entity`` label are never touched.

Credentials, first found: the arguments (``--user``/``--password``, ``--token`` for a
bearer token), ``$NEO4J_USERNAME``/``$NEO4J_PASSWORD`` (the variables Neo4j's own tools
read), the URL's user info; none: no auth. The database: the argument, ``$NEO4J_DATABASE``,
else the server's default. The URL is shown and reported with its password redacted, and
an error's text never holds it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from ..errors import InputError
from ..io.urls import redact_url, scrub, url_secrets
from ..schema.model import Schema
from ..store.graphstore import GraphStore
from .cypher import sync
from .sparql import RemoteError

SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
INDEX = "CREATE INDEX kgbuild_entity_id IF NOT EXISTS FOR (n:Entity) ON (n.id)"


def bolt_target(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without its user info, and the user and password it held; an
    :class:`~kgbuild.errors.InputError` (``usage``) unless it is a Bolt URL with a host."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
        ok = parts.scheme in SCHEMES and bool(parts.hostname) and parts.path in ("", "/")
    except ValueError:
        ok = False
    if not ok or any(c.isspace() or not c.isprintable() for c in url):
        raise InputError(f"--neo4j {redact_url(url)!r} is not a Bolt URL with a host, e.g. "
                         f"bolt://127.0.0.1:7687 or neo4j+s://host ({', '.join(SCHEMES)})",
                         code="usage")
    netloc = parts.netloc.rpartition("@")[2]
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password is not None else None
    return urlunsplit((parts.scheme, netloc, "", parts.query, "")), user, password


def neo4j_auth(url: str, user: str | None = None, password: str | None = None,
               token: str | None = None, environ: Mapping[str, str] = os.environ):
    """The driver's auth (see the module doc for the order), or None."""
    import neo4j

    _, url_user, url_password = bolt_target(url)
    if token:
        return neo4j.bearer_auth(token)
    user = user or environ.get("NEO4J_USERNAME") or url_user
    if user is None:
        return None
    password = password or environ.get("NEO4J_PASSWORD") or url_password or ""
    return neo4j.basic_auth(user, password)


def push_neo4j(store_path: str | Path, schema: Schema, url: str, *, database: str | None = None,
               user: str | None = None, password: str | None = None, token: str | None = None,
               timeout: float = 60.0, environ: Mapping[str, str] = os.environ) -> dict:
    """Write the store's graph to the Bolt server at ``url`` (database ``database``): MERGE
    every node and edge, delete those the store no longer has, in one transaction. Returns
    ``{url (redacted), database, nodes, edges, deleted_nodes, deleted_edges}``."""
    target, _, _ = bolt_target(url)
    try:
        import neo4j
        from neo4j import GraphDatabase
    except ImportError:
        raise RemoteError("the Neo4j driver is not installed: pip install 'kgbuild[servers]' "
                          "(or neo4j)", code="missing-extra") from None
    auth = neo4j_auth(url, user, password, token, environ)
    database = database or environ.get("NEO4J_DATABASE") or None
    secrets = url_secrets(url) | {s for s in (password, token, environ.get("NEO4J_PASSWORD"))
                                  if s}
    shown = redact_url(url)
    with GraphStore(store_path, schema, write=False) as store:
        kg = store.knowledge_graph()
    try:
        with GraphDatabase.driver(target, auth=auth, connection_timeout=timeout,
                                  connection_acquisition_timeout=timeout) as driver, \
                driver.session(database=database) as session:
            session.run(INDEX).consume()
            labels = [r[0] for r in session.run("CALL db.labels()")]
            types = [r[0] for r in session.run("CALL db.relationshipTypes()")]
            with session.begin_transaction() as tx:

                def run(query: str, params: dict) -> tuple[int, int]:
                    counters = tx.run(query, params).consume().counters
                    return counters.nodes_deleted, counters.relationships_deleted

                counts = sync(kg, run, labels, types)
                tx.commit()
    except neo4j.exceptions.AuthError as exc:
        raise RemoteError(f"Neo4j {shown} refused the credentials: "
                          f"{scrub(exc.message or str(exc), secrets)}", code="remote-auth") from None
    except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError, OSError) as exc:
        text = getattr(exc, "message", None) or str(exc)
        raise RemoteError(f"Neo4j {shown}: {type(exc).__name__}: "
                          f"{' '.join(scrub(text, secrets).split())}") from None
    return {"url": shown, "database": database, **counts}
