"""Safe reading of text sources, keeping line numbers.

Guards every extractor against hostile or broken files: only regular files are opened (a
FIFO, device or socket is refused before anything blocks or streams forever), never more
than the size limit is read (even from a file that grows), binary content and bytes that do
not decode are reported with the line they sit on. UTF-8 (with or without a BOM), and UTF-16
or UTF-32 with a BOM or recognisable by the NUL pattern of their first characters (as YAML
1.2 and JSON's RFC 4627 detect them), are decoded.

Lines are counted as the formats kgbuild reads count them (YAML 1.2, JSON, TOML, the line
formats): only ``\\n`` ends a line (``\\r\\n`` too, its ``\\r`` dropped). ``str.splitlines``
also breaks at form feeds, vertical tabs, U+0085, U+2028 and U+2029, which would shift
every later line number; use :func:`split_lines` and :class:`LineIndex` instead.

Evidence and literals are bounded here too: :func:`clip` and :func:`one_line` cut a text
to a size with a visible marker.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import reprlib
import stat
from bisect import bisect_right
from pathlib import Path
from typing import BinaryIO

from ..errors import InputError

MAX_EVIDENCE_CHARS = 300  # the quote of the entry that states a relation
MAX_LITERAL_CHARS = 64 * 1024  # one string value (label, description, ...) in the graph
CUT = "…"  # marks a text that was cut


def clip(text: str, limit: int = MAX_EVIDENCE_CHARS) -> str:
    """``text``, or its first ``limit - 1`` characters and :data:`CUT` when it is longer."""
    return text if len(text) <= limit else text[:max(limit - 1, 0)] + CUT


def one_line(text: str, limit: int = MAX_EVIDENCE_CHARS) -> str:
    """``text`` with every run of white space (line breaks included) one space, trimmed and
    clipped to ``limit``; reads at most a few times ``limit`` characters of it."""
    head = text[:limit * 4 + 16]
    flat = " ".join(head.split())
    if len(head) < len(text):
        return flat[:max(limit - 1, 0)].rstrip() + CUT
    return clip(flat, limit)


def brief(value: object, limit: int = 80) -> str:
    """``repr(value)`` for messages, bounded to about ``limit`` characters (and a few items
    of a list or mapping) whatever the value's size, without building the full ``repr``;
    a short value gives its plain ``repr``."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4000:
        return f"an integer of {value.bit_length():,} bits"
    short = reprlib.Repr()
    short.maxlevel, short.maxdict, short.maxlist, short.maxtuple = 3, 6, 6, 6
    short.maxstring = short.maxother = short.maxlong = limit
    try:
        return short.repr(value)
    except ValueError:  # e.g. an integer too long to print, inside a list
        return type(value).__name__


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` as YAML, JSON and TOML count them: split at ``\\n`` only (a
    ``\\r`` before it dropped), a final line break ending the last line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


class LineIndex:
    """Line numbers of character offsets in one text (1-based, ``\\n`` ends a line)."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0]
        find, at = text.find, text.find("\n")
        while at != -1:
            self.starts.append(at + 1)
            at = find("\n", at + 1)

    def line(self, offset: int) -> int:
        """The line holding the character at ``offset``."""
        return bisect_right(self.starts, offset)

    def line_text(self, line: int) -> str:
        """Line ``line`` without its line break ("" outside the text)."""
        if not 0 < line <= len(self.starts):
            return ""
        start = self.starts[line - 1]
        end = self.starts[line] - 1 if line < len(self.starts) else len(self.text)
        return self.text[start:end].removesuffix("\r")

    def __len__(self) -> int:
        return len(self.starts)


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a special file"


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) \
    | getattr(os, "O_CLOEXEC", 0)


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` opened for binary reading if it is a regular file; raises :class:`OSError`
    otherwise (a FIFO, device or socket is never opened blocking: its open cannot hang)."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    fd = os.open(path, _OPEN_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def is_regular(path: str | Path) -> bool:
    """Whether ``path`` is (or links to) a regular file; False for anything that cannot be
    looked at (missing, a loop, a name too long, a NUL in it) instead of raising."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def resolved(path: Path) -> Path:
    """``path.resolve()``, raising :class:`OSError` for what Python reports otherwise (a
    symlink loop is a RuntimeError before Python 3.13, a NUL in the name a ValueError)."""
    try:
        return path.resolve()
    except RuntimeError as exc:
        raise OSError(errno.ELOOP, "symlink loop", str(path)) from exc
    except ValueError as exc:
        raise OSError(errno.EINVAL, str(exc), str(path)) from exc


def read_bytes(path: str | Path, max_bytes: int, name: str | None = None,
               what: str = "a source file (raise it with --max-file-size)") -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them.

    Raises :class:`InputError` naming the file: ``not-a-regular-file`` for a FIFO, device,
    socket or folder (checked before opening, and again on the open descriptor, which is
    opened non-blocking so that a FIFO swapped in meanwhile cannot hang the read),
    ``file-too-large`` over the limit (also for a file that grows while it is read),
    ``unreadable`` when the system refuses.
    """
    name = name or str(path)
    try:
        before = os.stat(path)
        if not stat.S_ISREG(before.st_mode):
            raise _not_regular(before.st_mode, name)
        _check_size(before.st_size, max_bytes, name, what)
        fd = os.open(path, _OPEN_FLAGS)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise _not_regular(st.st_mode, name)
            _check_size(st.st_size, max_bytes, name, what)
            chunks, total = [], 0
            while total <= max_bytes:
                chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
        finally:
            os.close(fd)
    except (OSError, ValueError) as exc:  # (ValueError: a NUL in the name)
        raise InputError(f"cannot read: {getattr(exc, 'strerror', None) or exc}", name,
                         code="unreadable") from None
    _check_size(total, max_bytes, name, what)
    return b"".join(chunks)


def _not_regular(mode: int, name: str) -> InputError:
    return InputError(f"{file_kind(mode)}, not a regular file: not read", name,
                      code="not-a-regular-file")


def size_text(size: int) -> str:
    """A size in words: ``20 MiB``, ``1.5 MiB``, ``97,656 bytes``."""
    return f"{size / 2**20:.3g} MiB" if size >= 2**20 else f"{size:,} bytes"


def _check_size(size: int, max_bytes: int, name: str, what: str) -> None:
    if size > max_bytes:
        have = size_text(size) if size > max_bytes + 1 else "larger"  # (grew while read)
        raise InputError(f"file is {have}, over the {size_text(max_bytes)} limit for {what}",
                         name, code="file-too-large")


def read_text(path: Path, max_bytes: int, name: str | None = None) -> str:
    """Read a text file (see :func:`read_bytes` and :func:`decode_text`) or raise
    :class:`InputError` naming the file and line."""
    name = name or str(path)
    return decode_text(read_bytes(path, max_bytes, name), name)


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
         (codecs.BOM_UTF16_BE, "utf-16-be"))  # UTF-32 LE first: its BOM starts with UTF-16's


def detect_encoding(data: bytes) -> tuple[str, int]:
    """(codec, length of the BOM) of a text: a BOM decides; else the NUL pattern of the
    first characters (ASCII in UTF-32 or UTF-16, as YAML and RFC 4627 detect it); else UTF-8."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return codec, len(bom)
    head = data[:4]
    if len(head) == 4:
        if head[:3] == b"\0\0\0" and head[3]:
            return "utf-32-be", 0
        if head[0] and head[1:] == b"\0\0\0":
            return "utf-32-le", 0
    if len(head) >= 2:
        if not head[0] and head[1]:
            return "utf-16-be", 0
        if head[0] and not head[1]:
            return "utf-16-le", 0
    return "utf-8", 0


def head_as_utf8(head: bytes) -> bytes:
    """The first bytes of a file as UTF-8 (for extractors that sniff content): UTF-16 and
    UTF-32 heads are transcoded, a character cut at the end dropped; others are unchanged."""
    codec, bom = detect_encoding(head)
    if codec == "utf-8":
        return head
    return head[bom:].decode(codec, "ignore").encode("utf-8", "backslashreplace")


def decode_text(data: bytes, name: str) -> str:
    """Decode a text (see :func:`detect_encoding`); binary content (a NUL character) or
    bytes invalid in its encoding raise with their line number."""
    codec, bom = detect_encoding(data)
    if codec != "utf-8":
        try:
            text = data[bom:].decode(codec)
        except UnicodeDecodeError as exc:
            line = data[bom:bom + exc.start].decode(codec, "replace").count("\n") + 1
            raise InputError(f"not valid {codec.upper().replace('-LE', '').replace('-BE', '')} "
                             f"(offset {exc.start + bom})", name, line) from None
        nul = text.find("\x00")
        if nul != -1:
            raise InputError("binary content (NUL character), not a text file", name,
                             text.count("\n", 0, nul) + 1)
        return text
    nul = data.find(b"\x00")
    if nul != -1:
        raise InputError("binary content (NUL byte), not a text file", name,
                         data.count(b"\n", 0, nul) + 1)
    try:
        return data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = exc.start + bom
        line = data.count(b"\n", 0, at) + 1
        raise InputError(f"not valid UTF-8 (byte 0x{data[at]:02x} at offset {at})",
                         name, line) from None


_SURROGATE = re.compile("[\ud800-\udfff]")


def safe_text(text: str) -> str:
    """``text`` with every lone surrogate (``"\\ud800"`` in JSON, an undecodable byte of a file
    name) written as the escape ``\\ud800``: what is left encodes as UTF-8, so IDs, hashes,
    IRIs and literals never fail, and two different surrogates stay different."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
