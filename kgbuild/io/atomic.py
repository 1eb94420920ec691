"""Atomic file writes: nothing already built is ever left half-written."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Iterable

from ..errors import InputError


def _umask() -> int:
    """The process's umask, read without changing it where the system tells it (Linux:
    /proc/self/status); elsewhere set and restored, which a thread creating a file at that
    moment would see."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str | Path, data: str | bytes | Iterable[str | bytes],
                 durable: bool = True) -> None:
    """Write to a temporary file beside ``path``, fsync, then rename over it (``data`` may be
    an iterable of text or UTF-8 pieces, written as they come). The file gets
    the mode it had, or the usual permissions for a new file (``0o666`` less the umask).
    ``durable=False`` skips the fsync (for caches: a reader never sees a half-written file,
    but after a power loss the entry may be empty, which a cache reader must treat as missing)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        st = path.stat()
        mode = st.st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    else:  # a device, FIFO or socket is never replaced (run as root, /dev/null would be)
        if not stat.S_ISREG(st.st_mode):
            raise InputError("not a regular file: not replaced", str(path), code="output")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            if isinstance(data, (str, bytes)):
                fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            else:
                for piece in data:
                    fh.write(piece if isinstance(piece, bytes) else piece.encode("utf-8"))
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
