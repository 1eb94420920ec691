"""Damaged, odd and read-only stores, damaged caches.

Every command on a damaged store answers in one line naming the store and the way out (exit 2,
no traceback); ``build --full`` rebuilds from the sources whatever state the store is in;
reads work on a store nobody may write; a damaged or stale read model or cache is made again,
never trusted.
The damage is generated here (truncated, zeroed, garbage, deleted files of the database and
of the store's own bookkeeping), not kept in git.
"""

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG, REPO, require

from kgbuild.cli.main import main
from kgbuild.errors import KgbuildError
from kgbuild.retrieve.embeddings import EmbeddingMatcher
from kgbuild.store import graphstore, modelfiles
from kgbuild.store.graphstore import GraphStore

CASES = REPO / "fixtures" / "retrieval" / "cases.yaml"
READS = {
    "export": ["export", "--format", "nt"],
    "traverse": ["traverse", "--seed", "group:default/commerce-platform", "--follow", "ownerOf",
                 "--hops", "2"],
    "explain": ["resolve", "explain", "payments api", "--type", "API"],
    "review": ["resolve", "review"],
    "eval": ["eval", "retrieval", str(CASES)],
}


def run(*args, cwd=None):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)


def read(name, store):
    return run(*READS[name], "--store", store)


def one_line_error(r, *needles):
    """Exit 2, one line, no traceback, each needle present."""
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert isinstance(r.exception, SystemExit), r.exception  # not an uncaught exception
    text = r.output.strip()
    assert len(text.splitlines()) == 1, text
    assert "Traceback" not in text and "[internal]" not in text
    for needle in needles:
        assert needle in text, (needle, text)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A catalog, a store built from it, and what every read command prints on it."""
    base = tmp_path_factory.mktemp("stores")
    cat = base / "cat"
    shutil.copytree(FIXTURE_CATALOG, cat)
    store = base / "store"
    r = run("build", cat, "--store", store, "--timestamp", 0, "--no-validate")
    assert r.exit_code == 0, r.output
    outputs = {name: read(name, store) for name in READS}
    for name, r in outputs.items():
        assert r.exit_code in (0, 1) and r.output, (name, r.output)
    return cat, store, {name: r.output for name, r in outputs.items()}


@pytest.fixture
def store(built, tmp_path):
    """A fresh copy of the built store (the catalog stays where the documents name it)."""
    copy = tmp_path / "store"
    shutil.copytree(built[1], copy)
    return copy


def database(store: Path) -> Path:
    return store / (store / "CURRENT").read_text().split()[0]


def _damage_file(mode):
    def apply(path: Path):
        data = path.read_bytes()
        if mode == "half":
            path.write_bytes(data[: len(data) // 2])
        elif mode == "empty":
            path.write_bytes(b"")
        elif mode == "zero":
            path.write_bytes(b"\0" * len(data))
        elif mode == "garbage":
            path.write_bytes(bytes((i * 131 + 7) % 256 for i in range(max(len(data), 64))))
        elif mode == "deleted":
            path.unlink()
    return apply


def _largest(pattern):
    def pick(store: Path) -> Path:
        return max(database(store).glob(pattern), key=lambda p: p.stat().st_size)
    return pick


def _file_damage(pattern, mode):
    return lambda store: _damage_file(mode)(_largest(pattern)(store))


def _write_current(text: bytes):
    return lambda store: (store / "CURRENT").write_bytes(text)


def _current_is_folder(store):
    (store / "CURRENT").unlink()
    (store / "CURRENT").mkdir()


def _current_missing(store):
    (store / "CURRENT").unlink()


def _db_missing(store):
    shutil.rmtree(database(store))


def _db_emptied(store):
    for p in database(store).iterdir():
        p.unlink()


def _every_sst_zeroed(store):
    for p in database(store).glob("*.sst"):
        _damage_file("zero")(p)


DAMAGE = {
    **{f"sst-{m}": _file_damage("*.sst", m) for m in ("half", "empty", "zero", "garbage", "deleted")},
    **{f"manifest-{m}": _file_damage("MANIFEST-*", m)
       for m in ("half", "empty", "zero", "garbage", "deleted")},
    **{f"db-current-{m}": _file_damage("CURRENT", m) for m in ("empty", "garbage", "deleted")},
    "every-sst-zeroed": _every_sst_zeroed,
    "current-empty": _write_current(b""),
    "current-blank-line": _write_current(b"\n"),
    "current-garbage": _write_current(bytes(range(256))),
    "current-names-missing-db": _write_current(b"db-77\n"),
    "current-escapes": _write_current(b"../../../etc\n"),
    "identity-record-wrong": lambda s: Path(f"{database(s)}.id").write_text("0" * 32 + "\n"),
    "identity-record-garbage": lambda s: Path(f"{database(s)}.id").write_bytes(b"\xff" * 40),
    "current-is-folder": _current_is_folder,
    "current-missing": _current_missing,
    "db-folder-missing": _db_missing,
    "db-folder-emptied": _db_emptied,
}

# Damage RocksDB recovers from by itself: the store must simply keep working.
HARMLESS = {
    "options-garbage": _file_damage("OPTIONS-*", "garbage"),
    "log-deleted": lambda s: (database(s) / "LOG").unlink(),
    "identity-garbage": lambda s: _damage_file("garbage")(database(s) / "IDENTITY"),
    "wal-emptied": _file_damage("*.log", "empty"),
}


@pytest.mark.slow
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_store_every_command_one_line_then_full_rebuild(built, store, damage):
    cat, _, expected = built
    DAMAGE[damage](store)
    for name in READS:
        one_line_error(read(name, store), "[store-damaged]", str(store), "kgbuild build --full")
    one_line_error(run("build", cat, "--store", store, "--timestamp", 0, "--no-validate"),
                   "[store-damaged]", "kgbuild build --full")
    one_line_error(run("build", cat, "--store", store, "--timestamp", 0, "--no-validate"),
                   "[store-damaged]")  # still there: nothing was silently discarded or replaced
    r = run("build", cat, "--store", store, "--full", "--timestamp", 0, "--no-validate")
    assert r.exit_code == 0, r.output
    assert "[store-rebuilt]" in r.output and "16 entities" in r.output
    assert [p.name for p in store.glob("db-*") if p.is_dir()] == [database(store).name]
    assert read("export", store).output == expected["export"]
    assert read("traverse", store).output == expected["traverse"]
    again = run("build", cat, "--store", store, "--timestamp", 0, "--no-validate")
    assert again.exit_code == 0 and "9 unchanged" in again.output


@pytest.mark.slow
@pytest.mark.parametrize("damage", sorted(HARMLESS))
def test_damage_rocksdb_recovers_from_keeps_working(built, store, damage):
    cat, _, expected = built
    HARMLESS[damage](store)
    for name in ("export", "traverse"):
        assert read(name, store).output == expected[name]
    r = run("build", cat, "--store", store, "--timestamp", 0, "--no-validate")
    assert r.exit_code == 0 and "9 unchanged" in r.output


def test_store_that_is_a_file(tmp_path, schema):
    f = tmp_path / "store"
    f.write_text("not a store\n")
    with pytest.raises(KgbuildError) as info:
        GraphStore(f, schema, write=False)
    assert info.value.code == "store-not-folder"
    with pytest.raises(KgbuildError) as info:
        GraphStore(f, schema)
    assert info.value.code == "store-not-folder" and f.read_text() == "not a store\n"
    for name in READS:
        one_line_error(read(name, f), str(f))
    one_line_error(run("build", FIXTURE_CATALOG, "--store", f, "--no-validate"), str(f))


def test_missing_store_for_reads(tmp_path):
    for name in READS:
        one_line_error(read(name, tmp_path / "nowhere"), "no kgbuild store", "kgbuild build")
    assert not (tmp_path / "nowhere").exists()  # reading never creates a store


def test_lock_that_is_a_folder(built, store):
    (store / "lock").unlink()
    (store / "lock").mkdir()
    one_line_error(run("build", built[0], "--store", store, "--no-validate"), "[store-lock]")
    assert read("export", store).output == built[2]["export"]  # reading takes no lock


@pytest.mark.slow
def test_damage_found_only_while_reading(built, store, monkeypatch, schema):
    """RocksDB finds some damage only when a block is read (checksums): the first read that
    fails gives the same one-line error, and a full rebuild still completes."""
    state = {"wrapped": False}

    class Flaky:
        """The opened database: its first read works, later ones fail while iterating."""

        def __init__(self, db):
            self.db, self.reads = db, 0

        def quads_for_pattern(self, *args):
            self.reads += 1
            if self.reads == 1:
                return self.db.quads_for_pattern(*args)
            return self._failing(self.db.quads_for_pattern(*args))

        def query(self, *args, **kwargs):  # exports read each graph by a CONSTRUCT dump
            self.reads += 1
            if self.reads == 1:
                return self.db.query(*args, **kwargs)
            raise RuntimeError("Corruption: block checksum mismatch: stored = 1, computed = 2")

        def dump(self, *args, **kwargs):
            self.reads += 1
            if self.reads == 1:
                return self.db.dump(*args, **kwargs)
            raise RuntimeError("Corruption: block checksum mismatch: stored = 1, computed = 2")

        def _failing(self, quads):
            rows = iter(quads)
            if self.reads % 2:  # fail at once, or after the first row of a longer read
                first = next(rows, None)
                if first is not None and next(rows, None) is not None:
                    yield first
            raise RuntimeError("Corruption: block checksum mismatch: stored = 1, computed = 2")

        def __getattr__(self, name):
            return getattr(self.db, name)

    real_init = graphstore.Guarded.__init__

    def init(self, db, owner):
        if owner.path is not None and not state["wrapped"]:
            db, state["wrapped"] = Flaky(db), True
        real_init(self, db, owner)

    monkeypatch.setattr(graphstore.Guarded, "__init__", init)
    # a walk whose saved model a reader found current for the database's files reads no
    # block of the database (damage found only by reading cannot show there): check again
    (store / "model" / "seen.json").unlink(missing_ok=True)
    for attempt in (lambda: read("export", store), lambda: read("traverse", store),
                    lambda: read("explain", store),
                    lambda: run("build", built[0], "--store", store, "--no-validate")):
        state["wrapped"] = False
        one_line_error(attempt(), "[store-damaged]", "block checksum mismatch",
                       "kgbuild build --full")
    state["wrapped"] = False
    r = run("build", built[0], "--store", store, "--full", "--timestamp", 0, "--no-validate")
    monkeypatch.setattr(graphstore.Guarded, "__init__", real_init)
    assert r.exit_code == 0, r.output
    assert "[store-rebuilt]" in r.output
    assert read("export", store).output == built[2]["export"]


def test_a_killed_first_build_leaves_no_damage(tmp_path, schema):
    """A database marked as being built was never committed: it is collected, not reported."""
    store = tmp_path / "store"
    store.mkdir()
    (store / "db-1").mkdir()
    (store / "db-1" / "junk.sst").write_bytes(b"half a database")
    (store / f"db-1{graphstore.BUILDING}").touch()
    with pytest.raises(KgbuildError) as info:
        GraphStore(store, schema, write=False)
    assert info.value.code == "no-store"
    r = run("build", FIXTURE_CATALOG, "--store", store, "--timestamp", 0, "--no-validate")
    assert r.exit_code == 0 and "[store-" not in r.output, r.output
    assert not list(store.glob(f"*{graphstore.BUILDING}"))


# -- read-only stores ------------------------------------------------------------------------


def _unprivileged():
    """A command prefix running as a user without write access (we may be root, whom
    permissions do not stop)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")  # util-linux: on every Debian machine, CI's included
    require(setpriv is not None,
            "running as root without setpriv: cannot drop privileges to test permissions")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


@pytest.fixture
def readonly_store(built):
    """A copy of the store, without its read model, that its (unprivileged) reader cannot write."""
    base = Path(tempfile.mkdtemp(prefix="kgbuild-ro-"))
    try:
        os.chmod(base, 0o755)
        store = base / "store"
        shutil.copytree(built[1], store)
        for cache in ("model", "embeddings"):
            shutil.rmtree(store / cache, ignore_errors=True)
        for p in [store, *store.rglob("*")]:
            mode = p.stat().st_mode
            os.chmod(p, (mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH) & ~0o222
                     | (0o111 if p.is_dir() else 0))
        yield base, store
    finally:
        for p in [base, *base.rglob("*")]:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
def test_read_only_store_can_be_read(built, readonly_store):
    base, store = readonly_store
    prefix = _unprivileged()
    env = {**os.environ, "HOME": str(base), "PYTHONDONTWRITEBYTECODE": "1"}
    for name in READS:
        r = subprocess.run([*prefix, sys.executable, "-m", "kgbuild.cli", *READS[name], "--store",
                            str(store)], capture_output=True, text=True, cwd=base, env=env,
                           timeout=300)
        assert "Traceback" not in r.stderr, r.stderr
        assert r.returncode in (0, 1) and r.stdout == built[2][name], (name, r.stderr)
    assert not (store / "model").exists()  # made in memory by each reader
    r = subprocess.run([*prefix, sys.executable, "-m", "kgbuild.cli", "build", str(FIXTURE_CATALOG),
                        "--store", str(store), "--no-validate"], capture_output=True, text=True,
                       cwd=base, env=env, timeout=300)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "[store-permission]" in r.stderr and str(store) in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_folders_that_cannot_be_written(built, store):
    """Simulated as root too: a file where the read model and the embeddings belong."""
    for cache in ("model", "embeddings"):
        shutil.rmtree(store / cache, ignore_errors=True)
        (store / cache).write_text("in the way\n")
    for name in READS:
        r = read(name, store)
        assert r.exit_code in (0, 1) and r.output == built[2][name], (name, r.output)
    assert (store / "model").read_text() == "in the way\n"


def test_read_model_writes_failing_never_fail_reads(built, store, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    shutil.rmtree(store / "model")
    monkeypatch.setattr(modelfiles, "save", refuse)
    assert read("traverse", store).output == built[2]["traverse"]
    assert not (store / "model").exists()


def test_a_read_model_of_another_state_is_never_served(built, store, tmp_path):
    """A database rolled back (here: an old copy restored) and updated again: the read model
    made for the state it had before is not served for the state it has now."""
    cat = tmp_path / "cat"
    shutil.copytree(built[0], cat)
    snapshot = tmp_path / "snapshot"
    shutil.copytree(store, snapshot)
    web = cat / "components" / "web-shop.yaml"
    original = web.read_text()
    walk = ["traverse", "--seed", "component:default/web-shop", "--hops", "1", "--store", store]
    web.write_text(original.replace("web-shop", "state-b-shop"))
    assert run("build", cat, "--store", store, "--timestamp", 0, "--no-validate").exit_code == 0
    newer = tmp_path / "newer-model"
    shutil.copytree(store / "model", newer)
    shutil.rmtree(database(store))
    shutil.copytree(database(snapshot), database(store))  # same identity, older content
    web.write_text(original.replace("web-shop", "state-c-shop"))
    assert run("build", cat, "--store", store, "--timestamp", 0, "--no-validate").exit_code == 0
    shutil.rmtree(store / "model")
    shutil.copytree(newer, store / "model")  # the newer state's model in place
    text = run(*[w.replace("web-shop", "state-c-shop") for w in map(str, walk)]).output
    assert "state-c-shop" in text and "state-b-shop" not in text


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["half", "empty", "zero", "garbage", "folder", "inconsistent"])
def test_a_damaged_read_model_is_made_again(built, store, mode):
    for walk in ([*READS["traverse"], "--store", store],  # by ID, and through a filter
                 [*READS["traverse"], "--min-confidence", "0", "--store", store]):
        expected = run(*walk).output
        assert "paths:" in expected
        folder = store / "model" / (store / "model" / "current").read_text()
        npy = folder / "dst.npy"
        if mode == "folder":
            npy.unlink()
            npy.mkdir()
        elif mode == "inconsistent":  # arrays that would index past the end
            np.save(npy, np.load(npy) + 10_000)
        else:
            _damage_file(mode)(npy)
        r = run(*walk)
        assert r.exit_code == 0 and r.output == expected, r.output
        again = store / "model" / (store / "model" / "current").read_text()
        assert again != folder and int(np.load(again / "dst.npy").max()) < 10_000


class _FakeEmbeddings:
    """An embeddings client in-process: each text's vector from its length and first byte."""

    def __init__(self, dim=8):
        self.dim = dim
        self.calls = 0
        self.embeddings = self

    def create(self, model, input):
        self.calls += 1
        rows = []
        for i, text in enumerate(input):
            vec = np.zeros(self.dim)
            vec[len(text) % self.dim] = 1.0
            vec[text.encode()[0] % self.dim if text else 0] += 0.5
            rows.append(type("Row", (), {"index": i, "embedding": vec.tolist()}))
        return type("Response", (), {"data": rows})


@pytest.mark.parametrize("mode", ["half", "empty", "zero", "garbage", "folder", "wrong-sizes",
                                  "not-finite", "bad-keys"])
def test_damaged_embeddings_cache_is_rebuilt(tmp_path, mode):
    client = _FakeEmbeddings()
    texts = ["Payments API (API)", "Commerce Platform (Group)", "x"]
    first = EmbeddingMatcher(client, "m", tmp_path).embed(texts)
    cache = tmp_path / "embeddings-m.npz"
    assert cache.is_file() and client.calls == 1
    if mode == "folder":
        cache.unlink()
        cache.mkdir()
    elif mode in ("wrong-sizes", "not-finite", "bad-keys"):
        with np.load(cache) as z:
            arrays = {k: z[k] for k in z.files}
        key = sorted(arrays)[0]
        if mode == "wrong-sizes":
            arrays[key] = np.ones(3, dtype=np.float32)
        elif mode == "not-finite":
            arrays[key] = np.full(8, np.nan, dtype=np.float32)
        else:
            arrays["../../x"] = arrays.pop(key)
        np.savez(cache, **arrays)
    else:
        _damage_file(mode)(cache)
    again = EmbeddingMatcher(client, "m", tmp_path)
    assert again._cache == {}  # damaged: dropped, not trusted
    assert np.allclose(again.embed(texts), first) and client.calls == 2


def test_embeddings_cache_unwritable_is_skipped(tmp_path):
    (tmp_path / "embeddings").write_text("in the way\n")
    client = _FakeEmbeddings()
    m = EmbeddingMatcher(client, "m", tmp_path / "embeddings")
    assert m.embed(["a", "bb"]).shape == (2, 8)
    assert m.embed(["a"]).shape == (1, 8) and client.calls == 1  # kept in memory


def test_validate_reads_what_export_writes_from_a_store(built, tmp_path):
    """``validate`` on the store's TriG and N-Quads checks the union of their graphs."""
    _, store, _ = built
    for fmt, suffix in (("trig", "trig"), ("nquads", "nq")):
        out = tmp_path / f"g.{suffix}"
        assert run("export", "--store", store, "--format", fmt, "-o", out).exit_code == 0
        broken = tmp_path / f"broken.{suffix}"
        text = out.read_text()
        assert "software#Group" in text or "sw:Group" in text
        broken.write_text(text.replace("software#Group>", "software#Library>")
                          .replace("sw:Group", "sw:Library"))
        assert run("validate", out).exit_code == 0
        r = run("validate", broken)
        assert r.exit_code == 1 and "does not conform" in r.output


@pytest.mark.slow
@pytest.mark.parametrize("what", ["CURRENT", "sst", "folder"])
def test_unreadable_store_is_one_line(readonly_store, what):
    base, store = readonly_store
    prefix = _unprivileged()
    target = {"CURRENT": [store / "CURRENT"], "sst": list(database(store).glob("*.sst")),
              "folder": [store]}[what]
    for p in target:
        os.chmod(p, 0)
    env = {**os.environ, "HOME": str(base), "PYTHONDONTWRITEBYTECODE": "1"}
    for name in ("export", "traverse", "explain"):
        r = subprocess.run([*prefix, sys.executable, "-m", "kgbuild.cli", *READS[name], "--store",
                            str(store)], capture_output=True, text=True, cwd=base, env=env,
                           timeout=300)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and "[internal]" not in r.stderr
        if what == "folder":  # refused by the --store option itself
            assert "not readable" in r.stderr, r.stderr
        else:
            assert "[store-permission]" in r.stderr and str(store) in r.stderr, r.stderr
