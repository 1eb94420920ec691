"""The docs stay true: the README is a short front page whose links resolve, every page of
docs/ is reachable from it, docs/cli.md is every command's current ``--help``, and the
module paths docstrings name (``:mod:`kgbuild.graph.refs```) exist."""

from __future__ import annotations

import importlib
import importlib.util
import re

from conftest import REPO

DOCS = REPO / "docs"
README = (REPO / "README.md").read_text(encoding="utf-8")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
ROLE = re.compile(r":(?:mod|func|class|meth|data|attr|exc):`~?(kgbuild(?:\.\w+)+)`")


def test_the_readme_is_a_front_page():
    assert len(README.splitlines()) < 250
    assert "python -m pytest" in README and "kgbuild build fixtures/catalog" in README


def test_every_docs_page_is_linked_from_the_readme_and_every_link_resolves():
    linked = set()
    for page in [REPO / "README.md", *sorted(DOCS.glob("*.md"))]:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            path = (page.parent / target).resolve()
            assert path.exists(), f"{page.relative_to(REPO)} links to missing {target}"
            if page.name == "README.md":
                linked.add(path)
    pages = {p.resolve() for p in DOCS.glob("*.md")}
    assert not pages - linked, f"not linked from the README: {sorted(pages - linked)}"


def test_the_cli_reference_is_current():
    spec = importlib.util.spec_from_file_location("gen_cli", DOCS / "gen_cli.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    current = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert current == gen.render(), "docs/cli.md is not current: run python docs/gen_cli.py"


def _resolves(ref: str) -> bool:
    parts = ref.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def test_module_paths_named_in_docstrings_exist():
    stale = sorted({(str(path.relative_to(REPO)), ref)
                    for path in (REPO / "kgbuild").rglob("*.py")
                    for ref in ROLE.findall(path.read_text(encoding="utf-8"))
                    if not _resolves(ref)})
    assert not stale, f"docstrings name what does not exist: {stale}"
