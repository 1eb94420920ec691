"""The public surface stays in step with the docs (docs/python-api.md, docs/cli.md,
docs/layout.md).

Everything is read at test time: ``kgbuild.__all__``, the commands ``kgbuild --help`` lists
(group by group), and the modules on disk. A new verb, command or module without its line in
the docs fails here, and so does a line for something that no longer exists.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import REPO

import kgbuild

DOCS = REPO / "docs"
PAGES = {"Python API": "python-api.md", "Layout": "layout.md"}


def section(title: str) -> str:
    """The text of the ``## title`` section of its docs page, up to the next ``## ``."""
    text = (DOCS / PAGES[title]).read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}[ \t]*\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"docs/{PAGES[title]} has no '## {title}' section"
    return match.group(1)


def code_blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}[ \t]*\n(.*?)^```", text, re.S | re.M)


# --- Python API -------------------------------------------------------------------------------

def test_all_names_exist_and_are_unique():
    assert len(kgbuild.__all__) == len(set(kgbuild.__all__))
    namespace: dict = {}
    exec(f"from kgbuild import {', '.join(kgbuild.__all__)}", namespace)
    for name in kgbuild.__all__:
        assert namespace[name] is getattr(kgbuild, name)
        assert getattr(namespace[name], "__doc__", None), f"kgbuild.{name} has no docstring"


def test_every_exported_name_is_documented_in_the_python_api_section():
    text = section("Python API")
    missing = [n for n in kgbuild.__all__ if not re.search(rf"(?<![\w.]){re.escape(n)}\b", text)]
    assert not missing, f"in kgbuild.__all__ but not in the 'Python API' of docs/python-api.md: {missing}"


def _kgbuild_names_used(block: str) -> list[tuple[str, str]]:
    """(what, dotted name) for every kgbuild import in a code block and every attribute read
    directly on an imported name (``Principal.of``)."""
    tree = ast.parse(block)
    imported: dict[str, str] = {}
    used = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "kgbuild":
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                used.append(("import", f"{node.module}.{alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "kgbuild":
                    used.append(("module", alias.name))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in imported):
            used.append(("attribute", f"{imported[node.value.id]}.{node.attr}"))
    return used


def _resolve(dotted: str):
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def test_python_api_examples_name_only_what_exists():
    blocks = code_blocks(section("Python API"), "python")
    assert blocks, "the 'Python API' of docs/python-api.md section has no python code block"
    used = [u for b in blocks for u in _kgbuild_names_used(b)]
    assert any(kind == "import" for kind, _ in used)
    broken = []
    for kind, dotted in used:
        try:
            _resolve(dotted)
        except (ImportError, AttributeError) as e:
            broken.append(f"{kind} {dotted}: {e}")
    assert not broken, "the 'Python API' of docs/python-api.md names what does not exist:\n" + "\n".join(broken)


def test_python_api_examples_import_from_the_top_level():
    """The section teaches the public API: ``from kgbuild import ...``, no deep imports."""
    deep = [d for b in code_blocks(section("Python API"), "python")
            for kind, d in _kgbuild_names_used(b)
            if kind == "import" and not re.fullmatch(r"kgbuild\.\w+", d)]
    assert not deep, f"import these from kgbuild instead: {deep}"


@pytest.mark.slow
def test_python_api_examples_run(tmp_path):
    """The section's code blocks run, in order, in a project folder holding the fixtures."""
    (tmp_path / "fixtures").symlink_to(REPO / "fixtures", target_is_directory=True)
    namespace: dict = {"__name__": "readme"}
    for i, block in enumerate(code_blocks(section("Python API"), "python"), 1):
        try:
            exec(compile(block, f"docs/python-api.md 'Python API' block {i}", "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - report which block broke
            pytest.fail(f"docs/python-api.md 'Python API' block {i} fails: {type(e).__name__}: {e}")
    assert (tmp_path / "graph.ttl").is_file()  # the examples did build


# --- CLI ----------------------------------------------------------------------------------------

def _entry_point():
    [script] = [e for e in entry_points(group="console_scripts") if e.name == "kgbuild"]
    return script.load()


def _help_commands(cli, prefix: tuple[str, ...] = ()) -> set[str]:
    """Every command ``kgbuild [group...] --help`` lists, groups expanded into their commands."""
    result = CliRunner().invoke(cli, [*prefix, "--help"], prog_name="kgbuild")
    assert result.exit_code == 0, result.output
    if "\nCommands:\n" not in result.output:
        return {" ".join(prefix)}
    listing = result.output.split("\nCommands:\n", 1)[1]
    names = []
    for line in listing.splitlines():
        if not line.strip():
            break
        if re.match(r"^  \S", line):
            names.append(line.split()[0])
    assert names, result.output
    return set().union(*(_help_commands(cli, (*prefix, n)) for n in names))


def _documented_commands() -> set[str]:
    """The commands docs/cli.md has a section for (``## kgbuild schema show``; a group's own
    section, ``## kgbuild schema``, is not a command)."""
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    sections = {m.strip() for m in re.findall(r"^#{2,4} kgbuild (.+)$", text, re.M)}
    return {c for c in sections if not any(o.startswith(c + " ") for o in sections)}


def test_the_cli_reference_lists_exactly_the_commands_of_kgbuild_help():
    shown = _help_commands(_entry_point())
    assert {"build", "validate", "schema show"} <= shown  # the walk itself works
    documented = _documented_commands()
    assert not shown - documented, f"commands missing from docs/cli.md: " \
                                   f"{sorted(shown - documented)}"
    assert not documented - shown, f"docs/cli.md lists commands kgbuild does not " \
                                   f"have: {sorted(documented - shown)}"


def test_entry_point_is_the_cli_group():
    from kgbuild.cli import main
    assert _entry_point() is main


# --- Layout -------------------------------------------------------------------------------------

def _layout_tree() -> set[str]:
    """Paths (``kgbuild/schema/loader.py``, ``kgbuild/extract/manifests/``) of the tree in
    docs/layout.md's Layout section; two spaces of indentation per level."""
    [block] = code_blocks(section("Layout"), "")
    paths, stack, inside = set(), [], False
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        assert indent % 2 == 0, f"Layout: odd indentation: {line!r}"
        level, name = indent // 2, line.split()[0]
        if level == 0:  # kgbuild/ or the repository's other top-level folders
            inside = name == "kgbuild/"
            stack = ["kgbuild"] if inside else []
            if inside:
                paths.add(name)
            continue
        if not inside:
            continue
        assert level <= len(stack), f"Layout: {line!r} is indented below a module"
        assert len(line.split(maxsplit=1)) == 2, f"Layout: no description: {line!r}"
        stack = stack[:level]
        paths.add("/".join([*stack, name]))
        if name.endswith("/"):
            stack.append(name.rstrip("/"))
    return paths


def test_layout_section_lists_every_folder_and_module():
    listed = _layout_tree()
    actual = set()
    for folder, dirs, files in os.walk(REPO / "kgbuild"):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        rel = Path(folder).relative_to(REPO).as_posix()
        if "__init__.py" in files:
            actual.add(rel + "/")
        actual.update(f"{rel}/{f}" for f in files
                      if f.endswith(".py") and f not in ("__init__.py", "__main__.py"))
    optional = {p for p in listed if p.endswith(("/__init__.py", "/__main__.py"))}
    assert not actual - listed, f"missing from docs/layout.md: {sorted(actual - listed)}"
    assert not listed - actual - optional, \
        f"docs/layout.md lists what does not exist: {sorted(listed - actual - optional)}"
