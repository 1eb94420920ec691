"""Shared paths and helpers for the test-suite."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs property tests on a fixed seed so that a red build always means a change broke
# something; local runs keep exploring new examples.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "corpora"
CATALOGS = SHARED / "catalogs"
BACKSTAGE = CATALOGS / "backstage"
FIXTURE_CATALOG = REPO / "fixtures" / "catalog"

# Tests that read the real-world corpora are marked ``@pytest.mark.corpus`` (or a module's
# ``pytestmark = pytest.mark.corpus``). In a plain clone, where ../shared/corpora is absent,
# they are skipped with this reason; when the corpora are present, an unmarked test that reads
# them fails, so the promise "the README's test command passes in a plain clone" holds without
# anyone having to try it.
CORPUS_REASON = "needs ../shared/corpora (real-world corpora beside the repo)"
HAVE_CORPORA = SHARED.is_dir()


# Tests that need a provisioned server, model or browser are slow by nature: the default run
# (pyproject's addopts: -m "not slow") leaves them to .ci/run, which runs everything.
SLOW_BY_NATURE = ("server", "llm_real", "browser")


@pytest.hookimpl(tryfirst=True)  # before -m deselects by the markers added here
def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(item.get_closest_marker(m) is not None for m in SLOW_BY_NATURE):
            item.add_marker(pytest.mark.slow)
    if HAVE_CORPORA:
        return
    skip = pytest.mark.skip(reason=CORPUS_REASON)
    for item in items:
        if item.get_closest_marker("corpus") is not None:
            item.add_marker(skip, append=False)  # before parametrize's "got empty parameter set"


_CORPUS_ROOTS = tuple({str(SHARED), os.path.realpath(SHARED)})
_PATH_EVENTS = {"open", "os.scandir", "os.listdir", "glob.glob", "shutil.copyfile",
                "shutil.copytree", "shutil.rmtree"}
_corpus_reads: list[str] | None = None  # a list while an unmarked test runs


def _in_corpora(arg) -> str | None:
    if not isinstance(arg, (str, bytes, os.PathLike)):
        return None
    path = os.path.abspath(os.fsdecode(arg))
    for root in _CORPUS_ROOTS:
        if path == root or path.startswith(root + os.sep):
            return path
    return None


def _audit(event: str, args: tuple) -> None:
    if _corpus_reads is None:
        return
    try:
        if event in _PATH_EVENTS and args:
            candidates = args[:1]
        elif event == "subprocess.Popen":  # (executable, args, cwd, env): a CLI run on a corpus
            candidates = [args[1]] if isinstance(args[1], (str, bytes)) else list(args[1] or ())
        else:
            return
        for arg in candidates:
            hit = _in_corpora(arg)
            if hit:
                _corpus_reads.append(hit)
    except Exception:  # never let the guard break the code under test
        pass


if HAVE_CORPORA:
    sys.addaudithook(_audit)


def _guard_corpus_reads(item):
    global _corpus_reads
    if not HAVE_CORPORA or item.get_closest_marker("corpus") is not None:
        return (yield)
    _corpus_reads = []
    try:
        result = yield
    finally:
        reads, _corpus_reads = _corpus_reads, None
    if reads:
        pytest.fail(f"reads {reads[0]} but is not marked @pytest.mark.corpus, so it would fail "
                    f"in a clone without ../shared/corpora", pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _guard_corpus_reads(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _guard_corpus_reads(item))


def expected_relations(path: Path) -> set[tuple[str, str, str]]:
    """Relations from one of Backstage's own EXPECTED-*.relations.jsonl files."""
    return {(d["source_ref"], d["type"], d["target_ref"])
            for d in map(json.loads, path.read_text().splitlines()) if d}


def both_directions(kg) -> set[tuple[str, str, str]]:
    """Every stored edge plus its schema-derived inverse, as Backstage emits them."""
    out = set()
    for s, p, o in kg.edges():
        out.add((s, p, o))
        inverse = kg.schema.edge_types[p].inverse
        if inverse:
            out.add((o, inverse, s))
    return out


@pytest.fixture(autouse=True)
def _run_in_tmp(tmp_path, monkeypatch):
    """Commands default to ./.kgbuild: keep every test's store out of the repository (and
    its file-graph cache out of the home folder)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / ".cache"))


@pytest.fixture(scope="session")
def schema():
    from kgbuild import load_schema
    return load_schema()


def require(ok: bool, reason: str) -> None:
    """Skip a test whose server or tool is missing, with ``reason`` — except under CI
    (``CI`` set), where ``.ci/run`` provisions every server and a missing one is a failure:
    a skip there would hide that the integration was never exercised."""
    if ok:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI provisions this but it is missing: {reason}", pytrace=False)
    pytest.skip(reason)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for a server a test starts)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
