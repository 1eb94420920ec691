"""Package identities: ecosystem name normalisation and version-less package URLs.

A dependency's node ID is its package URL (https://github.com/package-url/purl-spec)
without version, so every manifest that names a package points at the same node:

* PyPI: PEP 503 normalised name, ``Flask_SQLAlchemy`` -> ``pkg:pypi/flask-sqlalchemy``;
* npm: lowercase, the scope's ``@`` percent-encoded, ``@Backstage/Core`` ->
  ``pkg:npm/%40backstage/core``;
* Go: the module path, case-sensitive, as written -> ``pkg:golang/github.com/spf13/cobra``.
* Cargo: the crate name as written -> ``pkg:cargo/regex-syntax``;
* Maven: ``groupId`` and ``artifactId`` -> ``pkg:maven/org.apache.commons/commons-lang3``.

Each function raises :class:`ValueError` for a name its ecosystem does not allow.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from ...errors import InvalidValue
from ...io.text import brief

_PYPI = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_NPM_PART = re.compile(r"^[a-z0-9~-][a-z0-9._~!'()*-]*$")
_GO_ELEM = re.compile(r"^[A-Za-z0-9._~+-]+$")
_CRATE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_MAVEN_PART = re.compile(r"^[A-Za-z0-9_.-]{1,255}$")
_PURL = re.compile(r"^pkg:[A-Za-z.+-][A-Za-z0-9.+-]*/[^/@?#]")


def pypi_name(name: str) -> str:
    """PEP 503 normal form: lowercase, runs of ``-``, ``_``, ``.`` become one ``-``."""
    name = name.strip()
    if not _PYPI.match(name):
        raise InvalidValue(f"not a valid Python package name: {brief(name)}", code="bad-name")
    return re.sub(r"[-_.]+", "-", name).lower()


def npm_name(name: str) -> str:
    """npm's lowercase form of ``name`` or ``@scope/name``."""
    norm = name.strip().lower()
    scope, _, base = norm.rpartition("/")
    ok = len(norm) <= 214 and _NPM_PART.match(base) and (
        "/" not in norm if not scope else
        scope.startswith("@") and "/" not in scope and _NPM_PART.match(scope[1:]))
    if not ok:
        raise InvalidValue(f"not a valid npm package name: {brief(name)}", code="bad-name")
    return norm


def go_module(path: str) -> str:
    """A Go module path as written (Go paths are case-sensitive), checked element-wise."""
    path = path.strip()
    elems = path.split("/")
    if not path or not all(_GO_ELEM.match(e) and e not in (".", "..") for e in elems):
        raise InvalidValue(f"not a valid Go module path: {brief(path)}", code="bad-name")
    return path


def pypi_purl(name: str) -> str:
    """``pkg:pypi/<PEP 503 name>``."""
    return "pkg:pypi/" + pypi_name(name)


def npm_purl(name: str) -> str:
    """``pkg:npm/<name>`` or ``pkg:npm/%40<scope>/<name>``, lowercase."""
    return "pkg:npm/" + "/".join(quote(p, safe="") for p in npm_name(name).split("/"))


def golang_purl(path: str) -> str:
    """``pkg:golang/<module path>``, case kept."""
    return "pkg:golang/" + "/".join(quote(p, safe="") for p in go_module(path).split("/"))


def cargo_purl(name: str) -> str:
    """``pkg:cargo/<crate name>``."""
    name = name.strip()
    if not _CRATE.match(name):
        raise InvalidValue(f"not a valid crate name: {brief(name)}", code="bad-name")
    return "pkg:cargo/" + name


def maven_purl(group: str, artifact: str) -> str:
    """``pkg:maven/<groupId>/<artifactId>``."""
    group, artifact = group.strip(), artifact.strip()
    if not (_MAVEN_PART.match(group) and _MAVEN_PART.match(artifact)):
        raise InvalidValue(f"not a valid Maven coordinate: {brief(group)}:{brief(artifact)}",
                           code="bad-name")
    return f"pkg:maven/{group}/{artifact}"


def is_purl(value: str) -> bool:
    """Whether ``value`` looks like a package URL (``pkg:<type>/<name>...``)."""
    return bool(_PURL.match(value))
