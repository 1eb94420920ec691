"""Safe reading of text and YAML sources, keeping line numbers.

Guards every extractor against hostile or broken files: size limit, binary content,
non-UTF-8 bytes (reported with the line they sit on), YAML syntax errors and alias bombs
(expansion is measured on the composed node graph before anything is built).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError


def read_text(path: Path, max_bytes: int, name: str | None = None) -> str:
    """Read a UTF-8 text file or raise :class:`InputError` naming the file and line."""
    name = name or str(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InputError(f"file is {size / 2**20:.1f} MiB, over the {max_bytes / 2**20:.0f} MiB "
                             f"limit for a source file (raise it with --max-file-size)", name)
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", name) from None
    return decode_text(data, name)


def decode_text(data: bytes, name: str) -> str:
    """Decode UTF-8 (BOM allowed); binary or invalid bytes raise with their line number."""
    nul = data.find(b"\x00")
    if nul != -1:
        raise InputError("binary content (NUL byte), not a text file", name,
                         data.count(b"\n", 0, nul) + 1)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                         name, line) from None




