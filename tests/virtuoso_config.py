"""The virtuoso.ini of a Virtuoso started on 127.0.0.1 with its own database folder: the one
tests/remote's fixtures start (small cache) and bench/remote_push_bench.py's (``buffers``
8 KiB pages of cache). Plain text, no pytest: the benches read it too."""

from __future__ import annotations

from pathlib import Path

VIRTUOSO_INI = """[Database]
DatabaseFile = {d}/virtuoso.db
ErrorLogFile = {d}/virtuoso.log
LockFile = {d}/virtuoso.lck
TransactionFile = {d}/virtuoso.trx
xa_persistent_file = {d}/virtuoso.pxa
TempStorage = TempDatabase
[TempDatabase]
DatabaseFile = {d}/virtuoso-temp.db
TransactionFile = {d}/virtuoso-temp.trx
[Parameters]
ServerPort = 127.0.0.1:{sql}
DisableUnixSocket = 1
MaxClientConnections = 4
NumberOfBuffers = {buffers}
MaxDirtyBuffers = {dirty}
DirsAllowed = .
[HTTPServer]
ServerPort = 127.0.0.1:{http}
ServerRoot = {d}
ServerThreads = 4
MaxClientConnections = 4
[SPARQL]
ResultSetMaxRows = 1000000
MaxQueryExecutionTime = {seconds}
"""


def write_virtuoso_ini(folder: Path, sql: int, http: int, buffers: int = 10_000,
                       seconds: int = 120) -> Path:
    """``folder/virtuoso.ini`` for a server on these ports (``seconds``: a query's limit)."""
    path = folder / "virtuoso.ini"
    path.write_text(VIRTUOSO_INI.format(d=folder, sql=sql, http=http, buffers=buffers,
                                        dirty=buffers * 3 // 5, seconds=seconds))
    return path
