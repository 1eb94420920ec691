"""The ``kgbuild`` group, the options every command shares, and the one error handler.

Each command parses options, calls one library function and renders its result as text or,
with ``--format json``, as JSON. A :class:`~kgbuild.errors.KgbuildError` raised anywhere below
becomes a one-line message with exit code 2 (:class:`KgbuildGroup`); exit code 1 means the
work ran and found violations (or abstained).
"""

from __future__ import annotations

import importlib
import json
import os
import stat
import tempfile
from pathlib import Path

import click

from ..project.config import ProjectConfig, find_project
from ..errors import KgbuildError
from ..io.atomic import atomic_write
from ..io.text import safe_text
from ..retrieve.spec import BOUNDS, MAX_COUNT
from ..vocab import BASE

MAX_MESSAGE = 2000  # characters of one error line; a longer message is cut with an ellipsis


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` as one bounded line: line breaks and other control characters escaped."""
    text = safe_text(text[:limit + 1])
    out = "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)
    return out if len(out) <= limit else out[:limit - 1] + "…"


class UsageError(click.ClickException):
    """A bad input or argument: one line ``message [code]`` on stderr, exit code 2."""

    exit_code = 2

    def __init__(self, message: str, code: str = "usage"):
        super().__init__(one_line(message))
        self.code = code

    def format_message(self) -> str:
        return f"{self.message} [{self.code}]"


# Each command's module and short help: the group imports a command's module only when the
# command runs (or its own help is asked for), so ``kgbuild --help`` loads no library code.
# tests/test_cli_lazy.py checks this table against the commands themselves.
COMMANDS = {
    "build": ("build", "Extract a typed graph from SOURCES (files or folders) into the store; "
                       "optionally Turtle."),
    "eval": ("traverse", "Measure retrieval quality on curated cases."),
    "export": ("build", "Write the store's graph as Turtle, N-Triples, JSON-LD, TriG, N-Quads "
                        "or Cypher."),
    "extract": ("extract", "Extract relations from prose (Markdown, text, reStructuredText) "
                           "through an LLM."),
    "ingest": ("passages", "Ingest passage corpora (JSONL: id, title, text; other keys kept as "
                           "metadata) into the store: indexed for BM25, linked to the names they "
                           "mention (other passages' titles; the store's entities, when `kgbuild "
                           "build` made a graph there), embedded."),
    "init": ("init", "Write a commented kgbuild.toml into the working directory."),
    "load": ("load", "Load graph files (Turtle, N-Triples, N-Quads, TriG, JSON-LD, RDF/XML) "
                     "into the store."),
    "ls": ("show", "List nodes (label, type, ID, degree), of one type or all, sorted by ID."),
    "paths": ("paths", "List the typed paths from node type TYPE to node type TYPE the schema "
                       "allows."),
    "pull": ("push", f"Read kgbuild's named graphs (IRIs under {BASE}) back from a "
                     "SPARQL server."),
    "push": ("push", "Send the store to a SPARQL 1.1 server (one named graph per document), "
                     "FalkorDB or Neo4j."),
    "query": ("query", "Run a SPARQL 1.1 query (SELECT, ASK, CONSTRUCT, DESCRIBE) over the "
                       "store."),
    "resolve": ("resolve", "Entity resolution: explain a mention, review the queue, accept or "
                           "reject a match."),
    "retrieve": ("passages", "Rank the store's passages for questions: lexical, dense and graph "
                             "search, fused, with abstention when the evidence is weak."),
    "schema": ("schema", "Inspect a schema and what kgbuild derives from it."),
    "serve": ("serve", "Serve the store to retrievers over HTTP (JSON) until interrupted."),
    "show": ("show", "Show one node: type, label, attributes, edges both ways (counts by type, "
                     "each edge's source), the documents behind it; or draw its neighbourhood "
                     "or a saved traversal."),
    "stats": ("show", "Statistics: nodes and edges by type, assertions, the degree "
                      "distribution, the top hubs, documents by assertions, extractors (the "
                      "principal's visible graph only)."),
    "traverse": ("traverse", "Walk the graph from seeds and print nodes, edges, paths, evidence "
                             "and a context pack."),
    "validate": ("validate", "Check GRAPH (Turtle, N-Triples, JSON-LD, ...), or else the store, "
                             "against the SHACL shapes."),
    "verify": ("verify", "Check relations another extractor produced against their source "
                         "documents."),
}


class KgbuildGroup(click.Group):
    """The root group: every error below it becomes one line with exit code 2.

    A :class:`~kgbuild.errors.KgbuildError` (located at ``file:line``) keeps its code; a click
    usage error (an option's bad value, a missing argument) gets ``[usage]``; an error of the
    file system ``[os-error]``. Anything else is a bug: as a last resort it is one line too,
    ``internal error: ... (please report) [internal]``, never a traceback (the CLI fuzz test
    fails on that code, so this net is never the fix).
    """

    def list_commands(self, ctx) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx, name: str):
        if name not in self.commands and name in COMMANDS:
            importlib.import_module(f"{__package__}.{COMMANDS[name][0]}")  # registers it
        return self.commands.get(name)

    def format_commands(self, ctx, formatter) -> None:
        """The command list of ``--help``, from :data:`COMMANDS` (nothing imported)."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = [(n, (self.commands[n] if n in self.commands else click.Command(
            n, help=COMMANDS[n][1])).get_short_help_str(limit)) for n in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            raise _usage(exc) from None

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KgbuildError as exc:
            raise UsageError(str(exc), exc.code) from None
        except (click.exceptions.NoArgsIsHelpError, click.exceptions.Exit, click.Abort):
            raise
        except UsageError:
            raise
        except click.UsageError as exc:
            raise _usage(exc) from None
        except click.ClickException:
            raise
        except OSError as exc:
            where = f"{os.fsdecode(exc.filename)}: " if exc.filename is not None else ""
            raise UsageError(f"{where}{exc.strerror or exc}", "os-error") from None
        except Exception as exc:  # the safety net: see the class docstring
            raise UsageError(f"internal error: {type(exc).__name__}: {exc} (please report)",
                             "internal") from None


def _usage(exc: click.UsageError) -> UsageError:
    """A click usage error as one line naming the command and where its help is."""
    cmd = exc.ctx.command_path if exc.ctx is not None else "kgbuild"
    return UsageError(f"{cmd}: {exc.format_message()} (see '{cmd} -h')")


def echo(text: str = "", **kwargs) -> None:
    """``click.echo`` for any text: a lone surrogate (from a hostile input) is printed as its
    escape ``\\udXXX`` (in JSON output that is the JSON escape of the same code unit)."""
    click.echo(safe_text(text), **kwargs)


def emit(data: dict, fmt: str, text: str) -> None:
    """Print ``data`` as sorted JSON, or ``text`` for people (``fmt`` text: every line within
    100 columns, see :func:`~kgbuild.cli.output.fit`)."""
    from .output import fit  # (not loaded for --help)

    if fmt == "json":
        echo(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        echo(fit(text) if fmt == "text" else text)


def write_or_echo(text: str, output: str | None) -> None:
    """Write ``text`` atomically to ``output``, or print it."""
    if output:
        atomic_write(Path(output), safe_text(text))
    else:
        echo(text, nl=False)


def check_output(path: str | os.PathLike | None, option: str = "-o") -> None:
    """Fail before any work is done when ``path`` cannot be written as a file: it is a folder
    or something other than a regular file (a device, a FIFO: never replaced), a part of its
    folder is a file, or the nearest existing folder is not writable. Missing folders are
    fine: the atomic write creates them."""
    if path is None:
        return
    shown = os.fsdecode(path)

    def fail(why: str) -> UsageError:
        return UsageError(f"{shown}: cannot write {option} here: {why}", "output")

    if not shown.strip():
        raise fail("the path is empty")
    try:
        p = Path(os.path.abspath(path))
        if p.is_symlink() or p.exists():
            if p.is_dir():
                raise fail("it is a folder")
            if p.exists() and not p.is_file():
                raise fail("not a regular file (a device, FIFO or socket is never replaced)")
        folder = p.parent
        while not folder.exists():
            if folder.is_symlink():
                raise fail(f"{folder} is a dangling symlink")
            folder = folder.parent
        if not folder.is_dir():
            raise fail(f"{folder} is not a folder")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise fail(f"the folder {folder} is not writable")
        with tempfile.TemporaryFile(dir=folder):  # root passes access(); a read-only mount does not
            pass
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte, a loop of symlinks
        raise fail(getattr(exc, "strerror", None) or str(exc)) from None


def _checked(convert, value, param, ctx, kind: click.ParamType):
    """click's own path check, with a name no file system takes (a NUL byte, from a project
    file) as a bad value like any other."""
    try:
        return convert(value, param, ctx)
    except ValueError as exc:
        kind.fail(f"{os.fsdecode(value)!r}: {exc}", param, ctx)


class FileArg(click.Path):
    """A file to read: a regular file (a FIFO could block forever, a device never end; a folder,
    a socket cannot be read), and existing unless ``exists=False`` (then only when present)."""

    def __init__(self, exists: bool = True):
        super().__init__(exists=exists, dir_okay=False)

    def convert(self, value, param, ctx):
        path = _checked(super().convert, value, param, ctx, self)
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            return path  # allowed to be missing (``exists=False``)
        except (OSError, ValueError) as exc:
            self.fail(f"{os.fsdecode(value)!r}: {getattr(exc, 'strerror', None) or exc}", param, ctx)
        if not stat.S_ISREG(mode):
            self.fail(f"{os.fsdecode(value)!r} is not a regular file (a FIFO, device or socket is "
                      f"never read)", param, ctx)
        return path


class FolderArg(click.Path):
    """A folder (a store): when the path exists, it is a folder, never a file, FIFO or device."""

    def __init__(self):
        super().__init__(file_okay=False)

    def convert(self, value, param, ctx):
        path = _checked(super().convert, value, param, ctx, self)
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            return path
        except (OSError, ValueError) as exc:
            self.fail(f"{os.fsdecode(value)!r}: {getattr(exc, 'strerror', None) or exc}", param, ctx)
        if not stat.S_ISDIR(mode):
            self.fail(f"{os.fsdecode(value)!r} is not a folder", param, ctx)
        return path


# Every integer option has an explicit range (in its --help): nothing a user types can overflow
# an index type further down or make a date that does not exist.
MAX_EPOCH = 253402300799  # 9999-12-31T23:59:59Z, the last second xsd:dateTime writes in 4 digits
EPOCH = click.IntRange(0, MAX_EPOCH)


class _Cosine(click.FloatRange):
    """A cosine similarity: a number in [-1, 1] (not NaN)."""

    def convert(self, value, param, ctx):
        out = super().convert(value, param, ctx)
        if out != out:
            self.fail(f"{value!r} is not a number in [-1, 1]", param, ctx)
        return out


COSINE = _Cosine(*BOUNDS["semantic_min"])


def count(default: int, low: int = 0, high: int = MAX_COUNT) -> dict:
    """``type``/``default`` of a bounded integer option."""
    return {"type": click.IntRange(low, high), "default": default, "show_default": True}


def project() -> ProjectConfig:
    """The settings of the working directory's project, found once per command line (the
    options' defaults)."""
    meta = click.get_current_context().find_root().meta
    if "kgbuild.project" not in meta:
        meta["kgbuild.project"] = find_project()
    return meta["kgbuild.project"]


def open_project(**overrides):
    """The working directory's :class:`~kgbuild.project.front.Project`, with the command's
    flags as ``overrides`` (None keeps the project's setting): what every command calls."""
    from ..project.front import Project

    return Project(project()).using(**overrides)


FORMAT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                      show_default=True, help="Output for people (text) or machines (json).")
SCHEMA = click.option("--schema", "schema_name", default=lambda: project().schema_ref(),
                      show_default="the project's, else software", metavar="NAME|PATH",
                      help="Bundled schema name or path to a schema YAML file.")
STORE = click.option("--store", "store_path", default=lambda: str(project().store_path()),
                     show_default="the project's, else ./.kgbuild", type=FolderArg(),
                     help="Store folder (the project's graph).")
# the options of the commands that read SOURCES into the store (build, extract)
EXCLUDE = click.option("--exclude", "excludes", multiple=True, metavar="GLOB",
                       help="Skip files and folders matching this gitignore-style pattern "
                            "(matched against paths relative to the project root; repeatable; "
                            "adds to the project's exclude list).")
NO_GITIGNORE = click.option("--no-gitignore", is_flag=True,
                            help="Read files that .gitignore files ignore.")
ACCESS = click.option("--access", "access_file", type=FileArg(),
                      help="access.yaml mapping source path globs to access labels (default: "
                           "the project's access setting).")
VALIDATE = click.option("--validate/--no-validate", default=None,
                        help="Validate the whole graph, or skip validation (default: only what "
                             "the changed documents touched; the whole graph when the store was "
                             "rebuilt).")
TIMESTAMP = click.option("--timestamp", type=EPOCH, metavar="EPOCH",
                         help="Fix prov:generatedAtTime, in seconds since 1970 up to 9999-12-31 "
                              "(default: $SOURCE_DATE_EPOCH, else the last commit touching the file "
                              "when git tracks it unmodified, else its mtime).")


@click.group(cls=KgbuildGroup,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="kgbuild")
def main() -> None:
    """Build, validate and serve typed, provenance-carrying knowledge graphs for retrieval.

    \b
    Examples (a session; the store lives in ./.kgbuild, the alias registry in ./aliases.yaml):
      kgbuild init                                    # a commented kgbuild.toml here
      kgbuild build fixtures/catalog -o graph.ttl     # extract (incrementally), check, write
      kgbuild validate graph.ttl                      # SHACL-check any graph file
      kgbuild schema show software                    # what types and edges exist
      kgbuild traverse -q "Who owns Payments API?" --path ownedBy
      kgbuild resolve review                          # names that need a decision
      kgbuild export --format trig -o graph.trig      # one named graph per source file

    \b
    Exit codes (every command): 0 done; 1 the work ran and found something (violations, an
    abstention, a failed case, an ASK answered false); 2 usage or input error (one line).
    """
