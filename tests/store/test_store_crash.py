"""A rebuild killed with SIGKILL at random points never leaves a broken store or output."""

import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest
from conftest import REPO

from kgbuild.project.pipeline import build_graph
from kgbuild.graph.turtle import to_turtle
from kgbuild.schema.loader import load_schema
from kgbuild.store.graphstore import GraphStore

sys.path.insert(0, str(REPO / "bench"))
from catalog_gen import write_catalog  # noqa: E402

N = 300


def export(store_path):
    with GraphStore(store_path, load_schema(), write=False) as store:
        return to_turtle(store.triples(), store.schema)


def cli(*args):
    return [sys.executable, "-m", "kgbuild.cli", *map(str, args)]


@pytest.fixture(scope="module")
def states(tmp_path_factory):
    """Sources in state A with a store built from them, the turtle of A and of B."""
    base = tmp_path_factory.mktemp("crash")
    src = base / "catalog"
    files = write_catalog(src, N)
    build_graph([src], store=base / "store-a", timestamp=0, validate=False).store.close()
    turtle_a = export(base / "store-a")
    for f in files[::4]:  # state B: a quarter of the files change owner, a few disappear
        f.write_text(f.read_text().replace("owner: team-", "owner: newteam-"))
    for f in files[1::50]:
        f.unlink()
    build_graph([src], store=base / "store-b", timestamp=0, validate=False).store.close()
    turtle_b = export(base / "store-b")
    assert turtle_a != turtle_b
    start = time.monotonic()
    subprocess.run(cli("build", src, "--store", base / "timing", "--timestamp", 0, "--no-validate"),
                   check=True, capture_output=True)
    return base, src, turtle_a, turtle_b, time.monotonic() - start


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["incremental", "full"])
def test_sigkill_leaves_old_or_new_state(states, tmp_path, mode):
    base, src, turtle_a, turtle_b, duration = states
    rng = random.Random(f"kill-{mode}")
    outcomes = set()
    for trial in range(3):
        store = tmp_path / f"store-{trial}"
        shutil.copytree(base / "store-a", store)
        out = tmp_path / f"out-{trial}.ttl"
        out.write_text(turtle_a)
        args = ["build", src, "--store", store, "--timestamp", 0, "--no-validate", "-o", out]
        proc = subprocess.Popen(cli(*args, *(["--full"] if mode == "full" else [])),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.2, duration * 1.1))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        state = export(store)  # opens: never a store that fails to open
        assert state in (turtle_a, turtle_b)
        assert out.read_text() in (turtle_a, turtle_b)  # never half-written
        outcomes.add(state == turtle_b)
        # the next build (no longer killed) completes the update from whatever state remained
        subprocess.run(cli(*args), check=True, capture_output=True)
        assert export(store) == turtle_b
    assert outcomes  # at least one trial ran


def test_killed_writer_releases_the_lock(tmp_path):
    store = tmp_path / "store"
    code = ("import sys, time; from kgbuild.store.graphstore import GraphStore; from kgbuild.schema.loader import load_schema;"
            f"s = GraphStore({str(store)!r}, load_schema()); print('locked', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with GraphStore(store, load_schema()) as s:
        assert s.documents() == {}
