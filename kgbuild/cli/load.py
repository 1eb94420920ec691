"""``kgbuild load``."""

from __future__ import annotations

import click

from .main import FORMAT, SCHEMA, STORE, FileArg, emit, main, open_project


@main.command()
@click.argument("files", nargs=-1, required=True, type=FileArg())
@STORE
@SCHEMA
@FORMAT
def load(files, store_path, schema_name, fmt):
    """Load graph files (Turtle, N-Triples, N-Quads, TriG, JSON-LD, RDF/XML) into the store.

    Each file becomes one document of the store, named by its resolved path, its quads kept
    whatever their vocabulary (a TriG or N-Quads file's named graphs merged into it), parsed
    by pyoxigraph into the database in bulk; the store's read model is then made as a
    build's is, so `traverse`, `show`, `ls` and `stats` read the store as they read the file
    with --graph. A file whose content the store already holds is not read again; a changed
    one replaces its document. A file that cannot be read leaves the store as it was.

    \b
    Exit codes: 0 loaded (or nothing changed); 2 usage or input error.

    \b
    Examples:
      kgbuild load movies.nt --schema movies.yaml --store movies.store
      kgbuild traverse --store movies.store --schema movies.yaml \\
        --seed http://example.org/movie/movie1 --hops 2
      kgbuild load a.ttl b.trig --format json
    """
    result = open_project(schema=schema_name, store=store_path).load(files)
    emit(result.to_dict(), fmt, result.render())
