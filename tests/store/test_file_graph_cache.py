"""``traverse --graph FILE``: the file is read once per content, its read model then served
from the cache."""

import json
import os
import shutil

from click.testing import CliRunner
from conftest import FIXTURE_CATALOG

import kgbuild.store.filemodel as filemodel
from kgbuild.cli.main import main
from kgbuild.project.pipeline import build
from kgbuild.store.filemodel import FILE_CACHE_ENTRIES, file_graph_cache

SEED = "component:default/pricing-sdk"


def walk(graph):
    r = CliRunner().invoke(main, ["traverse", "--graph", str(graph), "--seed", SEED,
                                  "--follow", "ownedBy:both", "--hops", "2", "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    return r


def test_second_walk_reads_the_cache_and_a_changed_file_is_read_again(tmp_path, monkeypatch):
    graph = tmp_path / "g.ttl"
    build([FIXTURE_CATALOG], graph, store=None, timestamp=0, validate=False, resolve=False)
    reads = []
    real = filemodel.read_graph_file
    monkeypatch.setattr(filemodel, "read_graph_file", lambda p, s: reads.append(p) or real(p, s))
    first = walk(graph)
    assert len(reads) == 1 and json.loads(first.stdout)["nodes"]
    assert walk(graph).stdout == first.stdout and len(reads) == 1
    entry = next(file_graph_cache().iterdir())
    model = entry / "model" / (entry / "model" / "current").read_text()
    assert (model / "meta.json").is_file() and sorted(entry.iterdir()) == [
        entry / "model", entry / "problems.json"]
    (model / "src.npy").write_bytes(b"damaged")  # a damaged model is made again
    assert walk(graph).stdout == first.stdout and len(reads) == 2
    graph.write_text(graph.read_text().replace("pricing-sdk", "pricing-kit"))
    assert json.loads(walk(graph).stdout)["seeds"] == [] and len(reads) == 3


def test_warnings_come_back_from_the_cache_and_entries_are_bounded(tmp_path):
    foreign = tmp_path / "f.ttl"
    foreign.write_text('<https://example.org/a> <https://example.org/p> "x" .\n')
    first = walk(foreign)
    assert walk(foreign).stderr == first.stderr
    for i in range(FILE_CACHE_ENTRIES + 2):
        other = tmp_path / f"g{i}.nt"
        shutil.copy(foreign, other)
        walk(other)
    assert len(list(file_graph_cache().iterdir())) == FILE_CACHE_ENTRIES


def _hashes(monkeypatch) -> list:
    """Every time the file's content is read to be hashed (the module's ``open``)."""
    opened = []

    def counting(path, *args, **kwargs):
        opened.append(path)
        return open(path, *args, **kwargs)
    monkeypatch.setattr(filemodel, "open", counting, raising=False)
    return opened


def test_an_unchanged_file_is_not_hashed_again_and_a_changed_one_is(tmp_path, monkeypatch):
    graph = tmp_path / "g.ttl"
    build([FIXTURE_CATALOG], graph, store=None, timestamp=0, validate=False, resolve=False)
    os.utime(graph, ns=(10**18, 10**18))  # changed long before it is hashed
    # (ctime is now; a stat records it: only a file older than the racy window is trusted)
    monkeypatch.setattr(filemodel, "RACY_NS", -10**19)
    hashed = _hashes(monkeypatch)
    first = walk(graph)
    assert len(hashed) == 1
    assert walk(graph).stdout == first.stdout and len(hashed) == 1  # the stat said: unchanged
    text = graph.read_text()
    graph.write_text(text.replace("pricing-sdk", "pricing-kit"))  # same size, same mtime
    os.utime(graph, ns=(10**18, 10**18))
    assert json.loads(walk(graph).stdout)["seeds"] == [] and len(hashed) == 2  # (ctime moved)


def test_a_file_changed_within_the_racy_window_is_hashed_every_time(tmp_path, monkeypatch):
    graph = tmp_path / "g.ttl"
    build([FIXTURE_CATALOG], graph, store=None, timestamp=0, validate=False, resolve=False)
    hashed = _hashes(monkeypatch)  # (written just now: within RACY_NS of any hashing)
    first = walk(graph)
    assert walk(graph).stdout == first.stdout and len(hashed) == 2
