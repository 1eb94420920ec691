"""Identity rules: which entities may be one package, per ecosystem (and one service).

An entity's *ecosystem* comes from its ID: a purl's type (``pkg:pypi/...`` -> ``pypi``,
``pkg:npm/...``, ``pkg:golang/...``, ``pkg:maven/...``), or the ID shapes the manifest
extractors give unpublished projects (``<dir>#python`` -> ``pypi``, ``<dir>/package.json#<name>``
-> ``npm``, ``<dir>/go.mod#<name>`` -> ``golang``); anything else (a Backstage entity, a
person) has none. The resolver reads an SBOM entry whose bom-ref is no purl as the purl
among its aliases (:meth:`~kgbuild.resolve.resolver.Resolver.package_of`). Two entities can be one package only when:

* their ecosystems are equal or one is unknown: nothing is matched across ecosystems;
* they are not two different purls of one ecosystem: those are distinct published
  packages (``pymssql`` and ``pymysql``, ``debug`` and ``@types/debug``) unless a curated
  alias says otherwise; nor two unpublished projects of one ecosystem (two folders, two
  projects, whatever their names: private npm names are not unique);
* they agree on npm's scope, ``@types/`` stubs included: ``@types/debug`` types ``debug``
  but is not it, ``@vitejs/devtools`` is not ``devtools``;
* neither is known only by its folder's name (an unnamed ``<dir>#python`` or
  ``<dir>/package.json#<dir>`` labelled ``docs``, ``types``, ``django``: examples and docs
  builds, not the packages of that name), unless that name carries a version
  (``requests-2.32.3``, an unpacked sdist);
* they are not services of two Compose projects (``compose:<project>/<service>``): Compose
  scopes a service's name to its project, so two projects' ``db`` are two databases
  (unless a curated alias links them).

A registry package's name is exact: it matches by ID, alias, equal normalised name or
version suffix, never by a fuzzy look-alike (``type-is`` is not ``types``).

A name may carry a version (``requests-2.32.3``, ``debug@4.3.7``, ``flask 3.0``): that is
the package at that version; :func:`split_version` separates them (two or more dotted
numbers: ``payments 2`` is a name, not a version).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from .normalize import canonical_ref

_PURL_TYPE = re.compile(r"^pkg:([A-Za-z.+-][A-Za-z0-9.+-]*)/")
_VERSIONED = re.compile(
    r"^(?P<name>.*?[^\W_])(?:[-_ ]v?|@v?)(?P<version>\d+(?:\.\d+)+"
    r"(?:[-.]?(?:a|b|c|rc|alpha|beta|pre|preview|dev|post)\.?\d*)*(?:\+[\w.]+)?)$",
    re.IGNORECASE)


def ecosystem(entity_id: str) -> str | None:
    """The package ecosystem an entity ID belongs to, or None (see the module docstring)."""
    m = _PURL_TYPE.match(entity_id)
    if m:
        return m.group(1).lower()
    if entity_id.endswith("#python"):
        return "pypi"
    doc, sep, _ = entity_id.rpartition("#")
    if sep:
        name = doc.rsplit("/", 1)[-1]
        if name == "package.json":
            return "npm"
        if name == "go.mod":
            return "golang"
    return None


def is_package_purl(entity_id: str) -> bool:
    """Whether an ID is a purl (a published package's name on its registry)."""
    return _PURL_TYPE.match(entity_id) is not None


def npm_scope(entity_id: str, label: str) -> str | None:
    """The npm scope of an npm entity (``@types``, ``@babel``), "" for an unscoped one, None
    when the entity is not npm's or its name is unknown."""
    if ecosystem(entity_id) != "npm":
        return None
    if is_package_purl(entity_id):
        name = unquote(entity_id[len("pkg:npm/"):].split("?", 1)[0])
    else:
        name = label.strip()
    scope, slash, _ = name.partition("/")
    return scope.lower() if slash and scope.startswith("@") else ""


def _versionless(entity_id: str) -> str:
    """A purl without version and qualifiers (``pkg:maven/g/a@1.0?type=jar`` is ``pkg:maven/g/a``
    at 1.0: the same package), any other ID as it is."""
    return (canonical_ref(entity_id) or entity_id) if is_package_purl(entity_id) else entity_id


def compose_project(entity_id: str) -> str | None:
    """The Compose project of a service ID ``compose:<project>/<service>``, else None."""
    if not entity_id.startswith("compose:"):
        return None
    project, slash, _ = entity_id[len("compose:"):].partition("/")
    return project if slash else None


def folder_named(entity_id: str, label: str) -> bool:
    """Whether an unpublished project is labelled just with its folder's name."""
    doc, sep, local = entity_id.rpartition("#")
    if not sep or ecosystem(entity_id) is None or is_package_purl(entity_id):
        return False
    folder = doc if local == "python" else doc.rpartition("/")[0]
    return label.strip() == folder.rsplit("/", 1)[-1] and split_version(label) is None


def may_be_same(a: str, a_label: str, b: str, b_label: str, curated: bool = False) -> bool:
    """Whether entities ``a`` and ``b`` (IDs with their labels) may be one package by the rules
    of the module docstring; ``curated``: a curated alias links them, so two purls (or two
    unpublished projects) may."""
    ea, eb = ecosystem(a), ecosystem(b)
    if ea and eb and ea != eb:
        return False
    if not curated and ea and ea == eb and is_package_purl(a) == is_package_purl(b) and (
            _versionless(a) != _versionless(b)):
        return False
    if not curated and (folder_named(a, a_label) or folder_named(b, b_label)):
        return False
    pa, pb = compose_project(a), compose_project(b)
    if not curated and pa and pb and pa != pb:
        return False
    sa, sb = npm_scope(a, a_label), npm_scope(b, b_label)
    return sa is None or sb is None or sa == sb


MAX_VERSIONED = 300  # longer names are not read as name-version (the pattern backtracks)


def split_version(name: str) -> tuple[str, str] | None:
    """``(name, version)`` of a version-suffixed name (``requests-2.32.3`` ->
    ``("requests", "2.32.3")``), None when ``name`` carries no version (or is over 300
    characters)."""
    name = name.strip()
    if len(name) > MAX_VERSIONED or not name[-1:].isalnum():
        return None
    m = _VERSIONED.match(name)
    return (m.group("name"), m.group("version")) if m else None
