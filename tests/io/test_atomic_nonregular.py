"""An atomic write never replaces what is not a regular file: run as root, the rename would
put a regular file where /dev/null was (the CLI checks -o first; library callers get this)."""

import os
from pathlib import Path

import pytest

from kgbuild.errors import InputError
from kgbuild.io.atomic import atomic_write
from kgbuild.project.pipeline import build


def test_a_fifo_is_not_replaced(tmp_path):
    os.mkfifo(tmp_path / "f")
    with pytest.raises(InputError, match="not a regular file: not replaced") as info:
        atomic_write(tmp_path / "f", "x")
    assert info.value.code == "output" and (tmp_path / "f").is_fifo()
    assert os.listdir(tmp_path) == ["f"]  # no temporary file left


def test_the_library_build_refuses_a_fifo_as_output(tmp_path):
    from conftest import FIXTURE_CATALOG

    os.mkfifo(tmp_path / "out.ttl")
    with pytest.raises(InputError, match="not replaced"):
        build([FIXTURE_CATALOG], tmp_path / "out.ttl", store=None, timestamp=0, validate=False)
    assert (tmp_path / "out.ttl").is_fifo()


def test_a_regular_file_and_a_new_one_are_written(tmp_path):
    atomic_write(tmp_path / "a", "1")
    atomic_write(tmp_path / "a", "2")
    atomic_write(tmp_path / "new" / "b", "3")
    assert (tmp_path / "a").read_text() == "2" and (tmp_path / "new" / "b").read_text() == "3"


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads the umask from /proc")
def test_a_new_files_mode_is_read_without_setting_the_umask(tmp_path, monkeypatch):
    """Regression: the umask was read by setting it to 0 and back, and a thread creating a
    file in that moment (the LLM answer cache writes beside the store's threads) got a
    world-writable file."""
    old = os.umask(0o027)
    try:
        def refuse(_mask):
            raise AssertionError("the umask was set")
        monkeypatch.setattr(os, "umask", refuse)
        atomic_write(tmp_path / "new.txt", "x")
    finally:
        monkeypatch.undo()
        os.umask(old)
    assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o640
