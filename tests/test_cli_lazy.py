"""The CLI imports a command's module only when that command runs: ``kgbuild --help`` lists
every command from ``COMMANDS`` (kgbuild/cli/main.py), which must match the commands."""

from __future__ import annotations

import ast
import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURE_CATALOG

from kgbuild.cli.main import COMMANDS, main
from kgbuild.project.pipeline import build_graph

CLI = Path(__file__).resolve().parents[1] / "kgbuild" / "cli"


def declared() -> dict[str, str]:
    """Command name -> module, from every ``@main.command``/``@main.group`` in kgbuild/cli."""
    out = {}
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            for d in node.decorator_list:
                if (isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute)
                        and isinstance(d.func.value, ast.Name) and d.func.value.id == "main"):
                    name = d.args[0].value if d.args else node.name.replace("_", "-")
                    out[name] = path.stem
    return out


def test_the_table_names_every_command_and_its_module():
    assert {name: module for name, (module, _) in COMMANDS.items()} == declared()


def test_the_table_holds_each_commands_own_short_help():
    for module in {m for m, _ in COMMANDS.values()}:
        importlib.import_module(f"kgbuild.cli.{module}")
    for name, (_, short) in COMMANDS.items():
        assert main.commands[name].get_short_help_str(limit=10**6) == short, name


def test_help_imports_no_command_module():
    code = ("import sys\nfrom kgbuild.cli import main\ntry:\n    main(['--help'])\n"
            "except SystemExit:\n    pass\nimport json\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('kgbuild.cli.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded == ["kgbuild.cli.main"]
    for name in COMMANDS:
        assert f"  {name} " in out.stdout


def test_pyshacl_is_imported_only_when_its_engine_runs():
    code = ("import sys, kgbuild\nfrom kgbuild.validate import validator, engine\n"
            "print('pyshacl' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_commands_help_loads_no_store_or_pipeline():
    code = ("import sys\nfrom kgbuild.cli import main\ntry:\n    main(['build', '--help'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in ('pyoxigraph', 'rdflib', 'numpy', 'openai', 'pyshacl') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_a_manifest_build_loads_no_llm_or_http_client():
    """Regression: project/update imported the text extractor for one constant, and with it
    the LLM client, openai's and the HTTP client's modules (about 0.3 s of every build)."""
    code = ("import sys\nfrom kgbuild.project.pipeline import build_graph\n"
            "print(sorted(m for m in ('openai', 'httpx2', 'kgbuild.llm.client', "
            "'kgbuild.extract.text.extractor') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_a_told_rebuild_loads_neither_rdflib_nor_the_validator(tmp_path):
    """Regression: the store's modules read kgbuild's IRIs through rdflib namespaces, and the
    build imported the validator, the Python manifests' requirement parser and the glob
    compiler on every start (about 0.15 s of each one-file rebuild)."""
    catalog = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, catalog)
    build_graph([catalog], store=tmp_path / "store", validate=False, root=tmp_path).store.close()
    edited = catalog / "catalog-info.yaml"
    edited.write_text(edited.read_text() + "\n# edited\n")
    code = ("import sys\nfrom kgbuild.project.pipeline import build_graph\n"
            f"build_graph([{str(catalog)!r}], store={str(tmp_path / 'store')!r}, validate=False, "
            f"root={str(tmp_path)!r}, changed=[{str(edited)!r}]).store.close()\n"
            "print(sorted(m for m in ('rdflib', 'pyshacl', 'kgbuild.validate.validator', "
            "'packaging.requirements', 'pathspec') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
