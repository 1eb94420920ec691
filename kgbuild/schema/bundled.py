"""Where the project's bundled ``schema/`` and ``shapes/`` folders are.

Both stay at the top of the repository. A wheel ships them inside the package as
``kgbuild/bundled/schema`` and ``kgbuild/bundled/shapes`` (``package-dir`` in
``pyproject.toml``); a checkout or an editable install reads them where they are.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent


def bundled(folder: str) -> Path:
    """The folder of bundled ``schema`` or ``shapes`` files."""
    inside = _PACKAGE / "bundled" / folder
    return inside if inside.is_dir() else _PACKAGE.parent / folder
