"""``kgbuild init``: a commented kgbuild.toml in the working directory."""

from __future__ import annotations

import click

from ..project.init import init_project
from .main import echo, main


@main.command()
@click.option("--force", is_flag=True, help="Replace an existing kgbuild.toml.")
@click.option("--source", "sources", multiple=True, metavar="PATH",
              help="What `kgbuild build` reads, relative to this folder (repeatable; default: "
                   "the whole folder, '.').")
def init(force, sources):
    """Write a commented kgbuild.toml into the working directory.

    Every setting the project file takes is in it, with what it does and its default: the
    ones a build needs are set (sources, schema, store, exclude, gitignore, max_file_size),
    the others ([llm], [embeddings], [rerank], [backstage], access, aliases) are comments to
    uncomment. It works as written: `kgbuild init && kgbuild build` builds the folder.

    \b
    Examples:
      kgbuild init && kgbuild build
      kgbuild init --source catalog --source services
      kgbuild init --force                 # replace the kgbuild.toml here

    \b
    Exit codes: 0 written; 2 a kgbuild.toml is already here (without --force), or it
    cannot be written.
    """
    path = init_project(".", force=force, sources=tuple(sources) or (".",))
    echo(f"wrote {path}: edit it, then run `kgbuild build`")
