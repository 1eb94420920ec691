"""``kgbuild serve`` as a real uvicorn process on 127.0.0.1: the CLI's answers over HTTP,
tokens, concurrent requests, a rebuilt store picked up without a restart, a clean stop."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from conftest import FIXTURE_CATALOG, free_port
from helpers import ADMIN_TOKEN, PCI_TOKEN, SPECS, bearer, cli_json, start_serve, write_config

from kgbuild.project.pipeline import build_graph
from kgbuild.schema.loader import load_schema

pytestmark = pytest.mark.server


@pytest.fixture
def server(tmp_path):
    catalog = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, catalog)
    build_graph([catalog], load_schema(), store=tmp_path / "store", timestamp=0).store.close()
    proc, base = start_serve(tmp_path / "store", write_config(tmp_path, reload_interval=0.2),
                             tmp_path)
    try:
        yield base, tmp_path, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def test_a_real_server_answers_like_the_cli_and_follows_the_store(server):
    base, folder, proc = server
    store = folder / "store"
    with httpx.Client(base_url=base, timeout=30) as client:
        for spec in SPECS[:5]:
            assert client.post("/traverse", json=spec).json() == cli_json(store, spec)
            assert client.post("/traverse", json=spec, headers=bearer(PCI_TOKEN)).json() == \
                cli_json(store, spec, "--principal", "pci")
        assert client.get("/health", headers=bearer("nope")).status_code == 401
        bad = client.post("/traverse", content=b'{"seeds": ["a"], "hops": -1}')
        assert bad.status_code == 400 and bad.json()["code"] == "error"

        def ask(spec):  # 16 at once, each answered in full
            return httpx.post(f"{base}/traverse", json=spec, timeout=60).json()
        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(ask, [SPECS[0], SPECS[2]] * 8))
        assert answers == [answers[0], answers[1]] * 8

        spec = {"seeds": ["component:default/checkout-service"], "follow": ["dependsOn"],
                "hops": 1}
        before = client.get("/health").json()
        f = folder / "catalog" / "components" / "checkout-service.yaml"
        f.write_text(f.read_text().replace("dependsOn:", "dependsOn:\n    - component:payments-service", 1))
        build_graph([folder / "catalog"], load_schema(), store=store, timestamp=0).store.close()
        deadline = time.monotonic() + 60
        while client.get("/health").json()["generation"] == before["generation"]:
            assert time.monotonic() < deadline, "the new generation was not picked up in 60 s"
            time.sleep(0.1)
        health = client.get("/health", headers=bearer(ADMIN_TOKEN)).json()  # (public: no counts)
        assert health["reloads"] == 1 and health["status"] == "ok"
        after = client.post("/traverse", json=spec)
        assert after.headers["x-kgbuild-generation"] == health["generation"]
        assert after.json() == cli_json(store, spec)
        assert "component:default/payments-service" in {n["id"] for n in after.json()["nodes"]}
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 0
    log = (folder / "server.log").read_text()
    assert "Traceback" not in log and "serving" in log


def test_a_missing_store_is_a_one_line_error(tmp_path):
    r = subprocess.run([sys.executable, "-m", "kgbuild.cli", "serve", "--store",
                        str(tmp_path / "none"), "--port", str(free_port())],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip().endswith("[no-store]")
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""
