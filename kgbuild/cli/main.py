"""The ``kgbuild`` group, the options every command shares, and the one error handler.

Each command parses options, calls one library function and renders its result as text or,
with ``--format json``, as JSON. A :class:`~kgbuild.errors.KgbuildError` raised anywhere below
becomes a one-line message with exit code 2 (:class:`KgbuildGroup`); exit code 1 means the
work ran and found violations (or abstained).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..build.project import Project, find_project
from ..errors import KgbuildError
from ..io.atomic import atomic_write


class UsageError(click.ClickException):
    """A bad input or argument: one line on stderr, exit code 2."""

    exit_code = 2


class KgbuildGroup(click.Group):
    """A click group whose commands' library errors become :class:`UsageError`."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KgbuildError as exc:
            raise UsageError(str(exc)) from None


def emit(data: dict, fmt: str, text: str) -> None:
    """Print ``data`` as sorted JSON, or ``text`` for people."""
    if fmt == "json":
        click.echo(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        click.echo(text)


def write_or_echo(text: str, output: str | None) -> None:
    """Write ``text`` atomically to ``output``, or print it."""
    if output:
        atomic_write(Path(output), text)
    else:
        click.echo(text, nl=False)


def project() -> Project:
    """The project of the working directory, found once per command line."""
    meta = click.get_current_context().find_root().meta
    if "kgbuild.project" not in meta:
        meta["kgbuild.project"] = find_project()
    return meta["kgbuild.project"]


FORMAT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                      show_default=True, help="Output for people (text) or machines (json).")
SCHEMA = click.option("--schema", "schema_name", default=lambda: project().schema_ref(),
                      show_default="the project's, else software", metavar="NAME|PATH",
                      help="Bundled schema name or path to a schema YAML file.")
STORE = click.option("--store", "store_path", default=lambda: str(project().store_path()),
                     show_default="the project's, else ./.kgbuild", type=click.Path(file_okay=False),
                     help="Store folder (the project's graph).")


@click.group(cls=KgbuildGroup,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="kgbuild")
def main() -> None:
    """Build, validate and serve typed, provenance-carrying knowledge graphs for retrieval.

    \b
    Typical session (the store lives in ./.kgbuild, the alias registry in ./aliases.yaml):
      kgbuild build fixtures/catalog -o graph.ttl     # extract (incrementally), check, write
      kgbuild validate graph.ttl                      # SHACL-check any graph file
      kgbuild schema show software                    # what types and edges exist
      kgbuild traverse -q "Who owns Payments API?" --path ownedBy
      kgbuild resolve review                          # names that need a decision
      kgbuild export --format trig -o graph.trig      # one named graph per source file
    """
