"""``kgbuild serve``: the HTTP JSON API for retrievers."""

from __future__ import annotations

import click

from ..schema.loader import load_schema
from .main import SCHEMA, STORE, FileArg, count, echo, main


@main.command()
@STORE
@SCHEMA
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface; put TLS in front, and list "
                   "the names clients use in the config's 'hosts').")
@click.option("--port", **count(8000, 1, 65535), help="TCP port.")
@click.option("--config", "config_path", type=FileArg(), metavar="FILE",
              help="YAML: bearer tokens (their SHA-256) mapped to access labels, the Host names "
                   "answered, limits.")
def serve(store_path, schema_name, host, port, config_path):
    """Serve the store to retrievers over HTTP (JSON) until interrupted.

    Endpoints: POST /traverse (the spec and answer of `traverse --format json`), GET
    /resolve?mention=M[&type=T] (as `resolve explain`), GET /node?id=ID, POST /query
    (read-only SPARQL, all_access tokens only), GET/POST /sparql (a SPARQL 1.1 Protocol
    endpoint over what the caller may see), GET /ui (pages for a browser: entities, search,
    a query form), GET /health, GET /openapi.json. The graph is held in memory and follows
    the store: a new build is picked up within a second, without a restart. Without a token a
    request sees public items only; an unknown token gets 401.

    \b
    Exit codes: 0 stopped (Ctrl-C); 2 usage or input error (no store, a bad config file).

    \b
    Examples:
      kgbuild serve --port 8080 --config serve.yaml
      curl -s localhost:8080/traverse -d '{"seeds": ["api:default/payments-api"],
        "path": "ownedBy/ownerOf"}'
      curl -s -H "Authorization: Bearer $TOKEN" 'localhost:8080/node?id=resource:default/payments-db'
      curl -s -G localhost:8080/sparql -H 'Accept: text/csv' \\
        --data-urlencode 'query=SELECT ?s WHERE { ?s a sw:Service }'
    """
    import uvicorn

    from ..serve.app import create_app
    from ..serve.config import load_serve_config
    from ..serve.server import server_config

    config = load_serve_config(config_path)
    app = create_app(store_path, load_schema(schema_name), config, bind=host)
    echo(f"serving {store_path} ({len(config.tokens)} token(s)) on http://{host}:{port} "
         f"(API description: /openapi.json); Ctrl-C stops", err=True)
    if not config.hosts and host in ("0.0.0.0", "::"):
        echo("note: requests naming this server by anything but localhost, 127.0.0.1 or ::1 "
             "get 421 until the config's 'hosts' lists its names", err=True)
    server = uvicorn.Server(server_config(app, config.limits, host, port))
    try:
        server.run()
    except KeyboardInterrupt:  # (uvicorn raises the signal again once stopped)
        pass
