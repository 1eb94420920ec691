"""A real Backstage catalog backend (Backstage's own npm packages: backend-defaults, the
catalog plugin, the scaffolder's Template kind; SQLite) serving a shared corpus from file
locations: kgbuild's relations from its API are the relations Backstage itself computed for
the same entities (each entity's ``relations``), and those kgbuild reads from the same files.

Needs ``$KGBUILD_BACKSTAGE_DIR``: a folder whose node_modules holds the packages
``tests/backstage_backend/package.json`` names (``.ci/steps/35-backstage.sh`` installs them).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import httpx2
import pytest
from catalog_api_server import catalog_files
from conftest import BACKSTAGE, REPO, both_directions, free_port, require

from kgbuild.project.pipeline import build_graph
from kgbuild.remote.backstage import CatalogError, CatalogSource, read_catalog

pytestmark = [pytest.mark.server, pytest.mark.corpus]
BACKEND = REPO / "tests" / "backstage_backend" / "index.js"
TOKEN = "kgbuild-real-backstage-token-7d41"
KINDS = ["Component", "API", "Resource", "System", "Domain", "Group", "User", "Location",
         "Template"]
FOLDERS = ["backstage-upstream-2020-11", "janus-idp-backstage-showcase"]


def _config(folder: Path, port: int, db: Path) -> str:
    locations = "".join(f"    - type: file\n      target: {json.dumps(str(p))}\n"
                        for p in catalog_files(folder))
    return (f"backend:\n  baseUrl: http://127.0.0.1:{port}\n"
            f"  listen: {{port: {port}, host: 127.0.0.1}}\n"
            f"  database:\n    client: better-sqlite3\n    connection: {{directory: {db}}}\n"
            f"  auth:\n    externalAccess:\n      - type: static\n"
            f"        options: {{token: {TOKEN}, subject: kgbuild-test}}\n"
            f"catalog:\n  rules:\n    - allow: {json.dumps(KINDS)}\n"
            f"  locations:\n{locations}")


def _settled(url: str, proc: subprocess.Popen, log: Path, timeout: float = 180) -> list[dict]:
    """The catalog's entities once processing has settled (the same etags twice, 3 s apart,
    and no entity waiting to be stitched)."""
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the Backstage backend exited: {log.read_text()[-2000:]}")
        try:
            r = httpx2.get(f"{url}/api/catalog/entities", timeout=10,
                           headers={"Authorization": f"Bearer {TOKEN}"})
            items = r.json() if r.status_code == 200 else None
        except httpx2.HTTPError:
            items = None
        if items:
            now = sorted((e["metadata"]["uid"], e["metadata"]["etag"]) for e in items)
            if now == last:
                return items
            last = now
        time.sleep(3)
    pytest.fail(f"the Backstage catalog did not settle in {timeout:g} s")


@pytest.fixture(scope="module", params=FOLDERS)
def backstage(request, tmp_path_factory):
    where = os.environ.get("KGBUILD_BACKSTAGE_DIR", "")
    modules = Path(where) / "node_modules"
    require(bool(where) and (modules / "@backstage" / "plugin-catalog-backend").is_dir()
            and shutil.which("node") is not None,
            "a Backstage backend's npm packages ($KGBUILD_BACKSTAGE_DIR: .ci/steps/35-backstage.sh)")
    folder = BACKSTAGE / request.param
    tmp = tmp_path_factory.mktemp("backstage")
    port = free_port()
    (tmp / "db").mkdir()
    config = tmp / "app-config.yaml"
    config.write_text(_config(folder, port, tmp / "db"))
    (tmp / "package.json").write_text('{"name": "kgbuild-backstage-test", "private": true}')
    # (Backstage looks for its project's root, a package.json, from the working directory up)
    log = tmp / "backend.log"
    env = {**os.environ, "NODE_PATH": str(modules), "NODE_ENV": "production",
           "LOG_LEVEL": "warn"}
    with log.open("w") as out:
        proc = subprocess.Popen(["node", str(BACKEND), "--config", str(config)], cwd=tmp,
                                env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        yield folder, url, _settled(url, proc, log)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_relations_are_backstages_own_and_the_files(backstage, tmp_path):
    folder, url, served = backstage
    refs = {f"{e['kind']}:{e['metadata']['namespace']}/{e['metadata']['name']}".lower()
            for e in served}
    # Backstage's own relations: each entity lists every relation row whose source it is
    theirs = {(ref, r["type"], r["targetRef"]) for e, ref in
              ((e, f"{e['kind']}:{e['metadata']['namespace']}/{e['metadata']['name']}".lower())
               for e in served) for r in e.get("relations", [])}
    result = build_graph([], store=tmp_path / "store", validate=False, resolve=False,
                         timestamp=0, backstage=[CatalogSource(url, TOKEN, page_size=7)])
    ours = both_directions(result.graph)
    assert result.catalogs[0]["entities"] == len(served) and result.catalogs[0]["pages"] > 1
    assert theirs and {t for t in ours if t[0] in refs} == theirs
    # the files: the same, once the entities Backstage refused (a $text URL it cannot fetch
    # here, an unknown kind) are left out on both sides
    files = build_graph([folder], validate=False, resolve=False, timestamp=0)
    refused = {n for n, node in files.graph.nodes.items() if node.defined_in} - refs
    keep = lambda rel: not ({rel[0], rel[2]} & refused)
    assert {t for t in ours if keep(t)} == {t for t in both_directions(files.graph) if keep(t)}
    # provenance: the origin location Backstage recorded, a JSON pointer per relation
    assert all(d.path.startswith("file:") for d in result.graph.documents.values())
    assert all(a.pointer and a.pointer.startswith("/spec/")
               for a in result.graph.assertions.values())
    result.store.close()
    # read again: every etag unchanged, nothing re-extracted
    again = build_graph([], store=tmp_path / "store", validate=False, resolve=False,
                        timestamp=0, backstage=[CatalogSource(url, TOKEN)])
    assert len(again.changes["unchanged"]) == len(served) and not again.changes["changed"]
    again.store.close()


def test_a_real_backstage_refuses_a_missing_token(backstage):
    _, url, _ = backstage
    with pytest.raises(CatalogError) as caught:
        read_catalog(CatalogSource(url))
    assert caught.value.code == "backstage-auth" and "answered 401" in str(caught.value)
