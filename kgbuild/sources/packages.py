"""Pieces shared by the structured-source extractors (manifests, SBOM, compose, specs).

ID conventions used by these extractors:

* a package known to a registry: its version-less purl (see :mod:`.purl`);
* something with no global name (a private npm package, a CycloneDX ``bom-ref`` that is
  not a purl, an API spec file): a document-scoped ID ``<doc_id>#<local name>``;
* the Python project of a directory known only by its requirements files, or by a
  ``pyproject.toml`` without a name: ``<directory>#python`` (named projects carry it as
  an alias, so requirements files and ``pyproject.toml`` of one directory meet).
"""

from __future__ import annotations

import posixpath

from ..errors import InputError
from .base import EdgeRecord, Problem


def scoped_id(doc_id: str, local: str) -> str:
    """A document-scoped ID, ``<doc_id>#<local>``."""
    return f"{doc_id}#{local}"


def python_dir_id(doc_id: str) -> str:
    """ID of the Python project in the directory holding ``doc_id``."""
    return scoped_id(posixpath.dirname(doc_id) or ".", "python")


def json_pointer(*parts: object) -> str:
    """An RFC 6901 pointer to ``parts`` (``~`` and ``/`` escaped)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def input_problem(exc: InputError, code: str) -> Problem:
    """The located error for a file that cannot be read at all."""
    return Problem("error", code, exc.message, exc.file or "", exc.line)


def depends_on(subject: str, library: str, label: str, evidence: str, *,
               line: int | None = None, pointer: str | None = None,
               subject_type: str = "Component") -> EdgeRecord:
    """A ``dependsOn`` edge from a manifest's component to a Library it names."""
    return EdgeRecord(subject, "dependsOn", library, line=line, pointer=pointer,
                      evidence=evidence, subject_type=subject_type, object_type="Library",
                      object_label=label)
