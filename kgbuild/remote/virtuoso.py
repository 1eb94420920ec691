"""Virtuoso's bulk loader for the graphs a push sends to a server that lacks them.

SPARQL Update into Virtuoso costs about 65 us a triple on a small database and several times
that on a large one (bench/README.md), so a first push of a big store takes hours. Virtuoso's
own bulk loader reads N-Quads files from a folder it may read (``DirsAllowed`` in its
virtuoso.ini) many times faster. :class:`BulkLoader` writes the graphs into a new folder
under ``folder`` (the same path on kgbuild's side and the server's: a local server, or a
shared mount), runs ``ld_dir``, ``rdf_loader_run`` and ``checkpoint`` through Virtuoso's
``isql`` over its SQL port, reads the loader's errors back, forgets its files in
``DB.DBA.LOAD_LIST`` and removes them. It does so in batches of about ``batch_bytes`` of
N-Quads, so the disk holds one batch at a time (a million-component store is ~30 GB of
N-Quads).

The loader is not transactional: a graph appears while it is read, and a load that fails
may leave part of its graphs. Only graphs the server lacks are loaded this way, and a push
records a batch's graphs as sent only when that batch's load succeeded; the next push finds
the others held and replaces them atomically over SPARQL.
"""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .sparql import RemoteError

PART_BYTES = 256 << 20  # N-Quads bytes per file (the loader reads files in parallel)
BATCH_BYTES = 8 << 30  # N-Quads bytes on disk at once: written, loaded and removed in turn
PROGRAMS = ("isql-vt", "isql")  # Debian's name for Virtuoso's isql, then the upstream one
_MARK = "kgbuild-load-error"


class BulkLoadError(RemoteError):
    """Virtuoso's bulk loader could not be run, or failed on a file."""

    code = "bulk-load"


@dataclass(frozen=True)
class BulkLoader:
    """Loads N-Quads through Virtuoso's bulk loader (see the module text): ``folder`` is
    one Virtuoso may read, ``address`` its SQL port (``HOST:PORT``), ``user``/``password``
    an account allowed to run the loader (``dba``), ``timeout`` seconds for each batch's
    load, ``batch_bytes`` the N-Quads written before a load (the disk's share)."""

    folder: Path
    user: str
    password: str
    address: str = "127.0.0.1:1111"
    timeout: float = 24 * 3600.0
    batch_bytes: int = BATCH_BYTES

    def load(self, graphs: Iterable[tuple[str, list[bytes]]],
             loaded: Callable[[list[str]], None] | None = None) -> tuple[int, float, int]:
        """Load ``graphs`` (each a graph IRI and its N-Triples lines, read one at a time) in
        batches, ``loaded(graph IRIs)`` called after each batch's load: the bytes of
        N-Quads written, the seconds Virtuoso's loader took, and the number of batches."""
        program = next((p for p in map(shutil.which, PROGRAMS) if p), None)
        if program is None:
            raise BulkLoadError("the bulk load needs Virtuoso's isql (isql-vt on Debian: "
                                "apt-get install virtuoso-opensource) on the PATH")
        graphs, total, seconds, batches = iter(graphs), 0, 0.0, 0
        while True:
            run = Path(self.folder).resolve() / f"kgbuild-{uuid.uuid4().hex}"
            try:
                run.mkdir(parents=True)
            except OSError as exc:
                raise BulkLoadError(f"cannot make a folder in {self.folder}: "
                                    f"{exc.strerror or exc}") from None
            try:
                written, names = _write_parts(run, graphs, self.batch_bytes)
                if not names:
                    return total, seconds, batches
                start = time.monotonic()
                self._isql(program, run)
                total, seconds, batches = total + written, seconds + time.monotonic() - start, \
                    batches + 1
            finally:
                shutil.rmtree(run, ignore_errors=True)
            if loaded is not None:
                loaded(names)

    def _isql(self, program: str, run: Path) -> None:
        where = f"ll_file LIKE '{_sql(str(run))}/%'"
        script = (f"ld_dir('{_sql(str(run))}', '*.nq', 'urn:kgbuild:bulk');\n"
                  "rdf_loader_run();\ncheckpoint;\n"
                  f"SELECT '{_MARK}', ll_file, ll_error FROM DB.DBA.LOAD_LIST "
                  f"WHERE {where} AND ll_error IS NOT NULL;\n"
                  f"DELETE FROM DB.DBA.LOAD_LIST WHERE {where};\n")
        try:
            done = subprocess.run([program, self.address, self.user, self.password,
                                   "VERBOSE=OFF", "BANNER=OFF", "PROMPT=OFF"], input=script,
                                  capture_output=True, text=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            raise BulkLoadError(f"Virtuoso's bulk load at {self.address} took over "
                                f"{self.timeout:g} s") from None
        errors = [line.strip() for line in done.stderr.splitlines() if line.startswith("*** Error")]
        if done.returncode or errors:
            raise BulkLoadError(f"Virtuoso's isql at {self.address}: "
                                f"{(errors or [done.stderr.strip() or f'exit {done.returncode}'])[0]}")
        failed = [line.split(None, 1)[1] for line in done.stdout.splitlines()
                  if line.startswith(_MARK)]
        if failed:
            raise BulkLoadError(f"Virtuoso's bulk loader failed on {len(failed)} file(s): "
                                f"{' '.join(failed[0].split())}")


def _write_parts(run: Path, graphs: Iterator[tuple[str, list[bytes]]], limit: int
                 ) -> tuple[int, list[str]]:
    """The next graphs as N-Quads files of about :data:`PART_BYTES`, until ``limit`` bytes
    are written; the bytes written and the graphs."""
    total, size, part, fh, names = 0, 0, 0, None, []
    try:
        for graph, lines in graphs:
            tail = f"<{graph}> .\n".encode()
            if fh is None or size >= PART_BYTES:
                if fh is not None:
                    fh.close()
                part += 1
                fh = open(run / f"part-{part:05d}.nq", "wb")  # noqa: SIM115
                size = 0
            data = b"".join(line[:-1] + tail for line in lines)  # "<s> <p> <o> ." -> quad
            fh.write(data)
            size += len(data)
            total += len(data)
            names.append(graph)
            if total >= limit:
                break
    finally:
        if fh is not None:
            fh.close()
    return total, names


def _sql(text: str) -> str:
    """``text`` inside a SQL string literal."""
    return text.replace("'", "''")
