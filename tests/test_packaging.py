"""The wheel: built from the sources, installed with its dependencies into a fresh venv, it
runs the main job from an unrelated folder with the schema and shapes it ships.

This is what a user gets from ``pip install kgbuild``, so nothing here may come from the
checkout: the venv is created without system site-packages, the commands run from an empty
folder, and the installed package must not see the test venv (pytest is not importable).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import FIXTURE_CATALOG, REPO

pytestmark = pytest.mark.slow  # 23-30 s on the 2-core machine: a wheel build and a dependency install

# What pip prints when it cannot reach any index (and has nothing cached)
OFFLINE = ("Failed to establish a new connection", "Temporary failure in name resolution",
           "Network is unreachable", "No matching distribution found",
           "Could not find a version that satisfies the requirement")
# Left out of the copy the wheel is built from (top-level names only: kgbuild/project is a package)
NOT_SOURCES = {".git", ".venv", "build", "dist", ".kgbuild", ".pytest_cache", ".hypothesis"}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env.update(PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    return env


def _run(args, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _pip_step(args, cwd: Path, what: str) -> None:
    """Run a pip step; skip only when pip cannot fetch anything at all, else fail loudly."""
    done = _run(args, cwd)
    if done.returncode == 0:
        return
    output = done.stdout + done.stderr
    if any(sign in output for sign in OFFLINE):
        probe = _run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", cwd / "probe",
                      "setuptools"], cwd, timeout=120)
        if probe.returncode != 0:
            pytest.skip(f"cannot {what}: no package index reachable and nothing cached")
    pytest.fail(f"{what} failed (exit {done.returncode}):\n{output[-4000:]}", pytrace=False)


def _copy_sources(dst: Path) -> None:
    """The checkout without its venv, VCS data and build leftovers (a stale build/lib would
    otherwise put deleted modules into the wheel, and an in-tree build would write into the
    repository other processes are using)."""
    def ignore(folder, names):
        top = Path(folder).resolve() == REPO
        return {n for n in names if (top and n in NOT_SOURCES) or n == "__pycache__"
                or n.endswith(".egg-info")}
    shutil.copytree(REPO, dst, ignore=ignore)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel, venv bin folder) for a wheel built from the sources and pip-installed, with its
    dependencies, into a venv of its own."""
    base = tmp_path_factory.mktemp("packaging")
    src, dist, venv = base / "src", base / "dist", base / "venv"
    _copy_sources(src)
    _pip_step([sys.executable, "-m", "pip", "wheel", "--no-deps", src, "-w", dist], base,
              "build the wheel")
    [wheel] = dist.glob("kgbuild-*.whl")
    made = _run([sys.executable, "-m", "venv", venv], base)
    assert made.returncode == 0, made.stderr
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    _pip_step([bin_dir / "python", "-m", "pip", "install", wheel], base,
              "install the wheel with its dependencies")
    return wheel, bin_dir


@pytest.fixture
def elsewhere(tmp_path):
    """An empty folder unrelated to the checkout to run the installed commands from."""
    work = tmp_path / "elsewhere"
    work.mkdir()
    return work


def test_wheel_holds_every_package_and_the_bundled_schema_and_shapes(installed):
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    packages = sorted(p.parent.relative_to(REPO).as_posix()
                      for p in (REPO / "kgbuild").rglob("__init__.py")
                      if "__pycache__" not in p.parts)
    missing = [p for p in packages if f"{p}/__init__.py" not in names]
    assert not missing, (f"packages missing from the wheel: {missing} (list them in "
                         f"[tool.setuptools] packages in pyproject.toml)")
    for folder, pattern in (("schema", "*.yaml"), ("shapes", "*.ttl")):
        files = sorted((REPO / folder).glob(pattern))
        assert files
        for f in files:
            assert f"kgbuild/bundled/{folder}/{f.name}" in names, f"{folder}/{f.name} not shipped"


def test_installed_package_is_the_wheel_in_a_fresh_venv(installed, elsewhere):
    _, bin_dir = installed
    probe = ("import importlib.util, json, kgbuild\n"
             "from kgbuild.schema.bundled import bundled\n"
             "print(json.dumps({'file': kgbuild.__file__, 'schema': str(bundled('schema')),"
             " 'shapes': str(bundled('shapes')),"
             " 'pytest': importlib.util.find_spec('pytest') is not None}))")
    done = _run([bin_dir / "python", "-c", probe], elsewhere)
    assert done.returncode == 0, done.stderr
    where = json.loads(done.stdout)
    venv = bin_dir.parent.resolve()
    for key in ("file", "schema", "shapes"):
        path = Path(where[key]).resolve()
        assert path.is_relative_to(venv) and "site-packages" in path.parts, (key, path)
    assert Path(where["schema"]).name == "schema" and Path(where["schema"]).parent.name == "bundled"
    assert where["pytest"] is False, "the venv sees the test environment's packages"


def test_main_job_runs_from_another_folder_and_conforms(installed, elsewhere):
    _, bin_dir = installed
    done = _run([bin_dir / "kgbuild", "build", FIXTURE_CATALOG, "-o", "out.ttl", "--no-store",
                 "--format", "json"], elsewhere)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert (summary["entities"], summary["edges"], summary["assertions"]) == (16, 30, 32)
    assert summary["documents"] == 9 and summary["problems"] == 0
    assert summary["conforms"] is True
    out = elsewhere / "out.ttl"
    assert out.read_text(encoding="utf-8").startswith("@prefix ")
    assert not (elsewhere / ".kgbuild").exists()  # --no-store
    checked = _run([bin_dir / "kgbuild", "validate", "out.ttl", "--format", "json"], elsewhere)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["conforms"] is True
    # the text summary a user sees
    text = _run([bin_dir / "kgbuild", "build", FIXTURE_CATALOG, "-o", "text.ttl", "--no-store"],
                elsewhere)
    assert text.returncode == 0, text.stderr
    assert "wrote text.ttl: 16 entities, 30 edges" in text.stdout and "conforms" in text.stdout
    assert (elsewhere / "text.ttl").read_bytes() == out.read_bytes()  # deterministic Turtle


def test_schema_commands_read_the_bundled_files(installed, elsewhere):
    _, bin_dir = installed
    shown = _run([bin_dir / "kgbuild", "schema", "show", "software"], elsewhere)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("schema software")
    for name in ("Service", "Library", "Group", "ownedBy", "dependsOn", "partOf"):
        assert name in shown.stdout
    as_json = _run([bin_dir / "kgbuild", "schema", "show", "software", "--format", "json"],
                   elsewhere)
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["name"] == "software"
    # shapes generated from the schema plus the hand-written shapes/provenance.ttl
    shapes = _run([bin_dir / "kgbuild", "schema", "shapes", "software"], elsewhere)
    assert shapes.returncode == 0, shapes.stderr
    for shape in ("Assertion", "EdgeCoverage", "DocumentCompleteness"):
        assert f"<https://kgbuild.dev/shapes#{shape}> a sh:NodeShape" in shapes.stdout
