"""Records every extractor yields, and the extractor protocol.

Extractors never touch RDF or the graph: they read one source file and return plain
records (nodes, edges in any declared direction, problems) with their location. The build
pipeline resolves IDs, canonicalises edge direction through the schema and turns each edge
record into an :class:`~kgbuild.graph.model.Assertion`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..errors import Problem
from ..schema.model import Schema


@dataclass
class NodeRecord:
    """An entity a source defines (not merely mentions)."""

    id: str
    type: str
    label: str
    line: int | None = None
    pointer: str | None = None
    attributes: dict[str, list[str] | str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    access: frozenset[str] = frozenset()


@dataclass
class EdgeRecord:
    """A relation a source asserts; ``predicate`` may be a stored or an inverse edge name.

    ``subject_type``/``object_type`` type the endpoints when the source does not define them
    (e.g. a Backstage ref's kind); the label defaults to the ID's name part.
    """

    subject: str
    predicate: str
    object: str
    line: int | None = None
    pointer: str | None = None
    evidence: str | None = None
    confidence: float = 1.0
    subject_type: str | None = None
    object_type: str | None = None
    subject_label: str | None = None
    object_label: str | None = None
    span: tuple[int, int] | None = None
    access: frozenset[str] = frozenset()
    source: str | None = None  # document ID of another file that asserted this (e.g. CODEOWNERS)
    qualifiers: tuple[str, ...] = ()  # e.g. "dev", "optional:docs", "build", "indirect"
    chunk: str | None = None  # the passage (text chunk ID) an LLM read the relation in
    literal: bool = False  # an attribute value: ``predicate`` names an attribute, ``object`` is the value


@dataclass(frozen=True)
class PassageRecord:
    """A text unit of a document (a chunk an LLM read): ``<doc_id>#c<n>``, its character
    span, text, the document's title and the chunk's section path."""

    id: str
    start: int
    end: int
    text: str
    title: str = ""
    section: tuple[str, ...] = ()


@dataclass
class SourceFile:
    """A file to extract from: absolute path, stable document ID, the root it was found under
    (nothing outside it is read) and the folder document IDs are relative to (``base``: the
    project root, or the scanned folder's parent for sources outside the project)."""

    path: Path
    doc_id: str
    root: Path
    stat: str = ""  # "size:mtime_ns" when discovered, to skip re-reading unchanged files
    base: Path | None = None  # default: root.parent

    def read_bytes(self) -> bytes:
        return self.path.read_bytes()

    def doc_id_of(self, path: Path) -> str:
        """The document ID another file under the same base gets."""
        base = self.base if self.base is not None else self.root.parent
        return escape_name(path.resolve().relative_to(base.resolve()).as_posix())


def escape_name(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (kept by Python as lone surrogates) are
    written ``\\xNN``, so every document ID encodes; valid names are unchanged."""
    return os.fsencode(name).decode("utf-8", "backslashreplace") if _SURROGATE.search(name) else name


_SURROGATE = re.compile("[\ud800-\udfff]")


MAX_RECORDS = 50_000  # entities and relations one source file may yield (real files: far fewer)


@dataclass
class Extraction:
    """What one extractor found in one file."""

    nodes: list[NodeRecord] = field(default_factory=list)
    edges: list[EdgeRecord] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    follow: list[Path] = field(default_factory=list)  # further files to read (e.g. Location targets)
    depends: list[Path] = field(default_factory=list)  # other files whose content shaped this result
    # False when other documents also record assertions derived from this file (CODEOWNERS):
    # then the file cannot declare how many assertions it is the source of
    exhaustive: bool = True
    passages: list[PassageRecord] = field(default_factory=list)  # text units (LLM extraction)
    complete: bool = True  # False: part of the file could not be read (an LLM call failed),
    # so the store must re-extract it next time even though its content is unchanged
    capped: bool = False  # the file reached :data:`MAX_RECORDS` (see :meth:`full`)

    def full(self, doc_id: str, line: int | None = None, limit: int | None = None) -> bool:
        """Whether this extraction holds as many records as one file may yield; the first
        time, an error ``too-many-records`` is added (at ``line``, where the rest starts).
        Extractors ask before each record they add, so that a hostile file costs bounded
        work; :func:`~kgbuild.extract.assemble.document_triples` enforces it again."""
        limit = MAX_RECORDS if limit is None else limit
        if len(self.nodes) + len(self.edges) < limit:
            return False
        if not self.capped:
            self.capped = True
            self.problems.append(Problem("error", "too-many-records",
                                         f"the file yields more than {limit:,} entities and "
                                         f"relations; the rest is not read", doc_id, line))
        return True


@dataclass
class Context:
    """What extractors may know about the run: schema, roots and limits."""

    schema: Schema
    roots: list[Path]
    max_file_bytes: int = 20 * 1024 * 1024


class Extractor(Protocol):
    """What every registered extractor declares about itself (checked by
    :func:`~kgbuild.extract.registry.register`), so that nothing matches extractors by name:

    * ``name``: unique; recorded on every assertion it makes;
    * ``version``: bumped whenever its output for the same input changes (the CODEOWNERS
      fallback edges included, for an ``ownable`` extractor), so a store re-extracts the
      documents an older version read;
    * ``emits``: the node types it defines and the edge names it asserts, as the bundled
      ``software`` schema names them (an edge may be an inverse name, e.g. ``parentOf``);
    * ``ownable``: whether the components it defines are the repository's own and name no
      owner, so CODEOWNERS may own them (a Backstage entity names its owner; an SBOM lists
      mostly third-party components).
    """

    name: str
    version: int | str
    emits: frozenset[str]
    ownable: bool

    def claims(self, path: Path, head: bytes) -> bool:
        """Whether this extractor reads the file (by name, and the first bytes if needed)."""

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        """Read one file; never raises for bad input, reports :class:`Problem` instead."""
