"""Real clients of a real ``kgbuild serve`` on 127.0.0.1: rdflib's ``SPARQLStore`` and headless
Chromium (driven over the DevTools protocol: it fills in the query form and submits it, and
runs a ``fetch`` of ``/sparql`` from the page) answer what ``kgbuild query`` answers; the
pages' screenshots are kept (the folder is printed; copies in /tmp/kgbuild-ui-screenshots/)."""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from conftest import REPO, require
from helpers import ADMIN_TOKEN, access_stores, cli_query, start_serve, write_config
from rdflib import Graph
from rdflib.plugins.stores.sparqlstore import SPARQLStore

CHROMIUM = os.environ.get("KGBUILD_CHROMIUM", "/usr/bin/chromium")
SHOTS = REPO / ".ci" / "artifacts" / "serve-ui"
COPIES = Path("/tmp/kgbuild-ui-screenshots")
PREFIXES = ("PREFIX sw: <https://kgbuild.dev/schema/software#>\n"
            "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n")
SELECT = PREFIXES + "SELECT ?s ?label WHERE { ?s a sw:Service ; rdfs:label ?label } ORDER BY ?s"
DEPENDS = PREFIXES + "SELECT ?a ?b WHERE { ?a sw:dependsOn ?b } ORDER BY ?a ?b"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("clients")
    with_doc, without = access_stores(folder)
    proc, base = start_serve(with_doc, write_config(folder), folder)
    from kgbuild.graph.access import Principal
    from kgbuild.schema.loader import load_schema
    from kgbuild.serve.viewstore import write_view_store
    from kgbuild.store.graphstore import GraphStore

    with GraphStore(without, load_schema(), write=False) as store:  # what the public sees of it
        public = write_view_store(store, Principal(), folder / "public-without")
    try:
        yield base, with_doc, public
    finally:
        proc.kill()
        proc.wait(10)


def _plain(rows) -> list[tuple[str, ...]]:
    return [tuple(str(x) for x in row) for row in rows]


def _cli_plain(store: Path, sparql: str) -> list[tuple[str, ...]]:
    lines = cli_query(store, sparql, "csv").splitlines()
    return [tuple(line.split(",")) for line in lines[1:]]


@pytest.mark.server
@pytest.mark.parametrize("method", ["GET", "POST", "POST_FORM"])
def test_rdflib_sparqlstore_answers_what_kgbuild_query_answers(served, method):
    base, with_doc, without = served
    admin = SPARQLStore(f"{base}/sparql", method=method,
                        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    public = SPARQLStore(f"{base}/sparql", method=method, returnFormat="json")
    for sparql in (SELECT, DEPENDS):
        assert _plain(Graph(store=admin).query(sparql)) == _cli_plain(with_doc, sparql)
        # the public sees the store as if the hidden document had never been built (and
        # without the pci-labelled entity of fixtures/catalog, which neither store shows it)
        assert _plain(Graph(store=public).query(sparql)) == _cli_plain(without, sparql)
    ask = Graph(store=admin).query(PREFIXES + "ASK { ?s rdfs:label 'General Ledger' }")
    assert ask.askAnswer is True
    assert Graph(store=public).query(
        PREFIXES + "ASK { ?s rdfs:label 'General Ledger' }").askAnswer is False
    triples = Graph(store=admin).query(
        PREFIXES + "CONSTRUCT { ?s rdfs:label ?l } WHERE { ?s a sw:System ; rdfs:label ?l }")
    assert sorted(str(o) for _, _, o in triples) == ["Payments", "Storefront"]
    triples = Graph(store=public).query(  # (asked for SPARQL JSON: the graph as JSON-LD)
        PREFIXES + "CONSTRUCT { ?s rdfs:label ?l } WHERE { ?s a sw:System ; rdfs:label ?l }")
    assert sorted(str(o) for _, _, o in triples) == ["Payments", "Storefront"]


class Chromium:
    """Headless Chromium and one page, driven over the DevTools protocol (a WebSocket)."""

    def __init__(self, profile: Path):
        from websockets.sync.client import connect

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1280,900",
             f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        active = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (active.is_file() and len(active.read_text().split()) == 2):
            assert self.proc.poll() is None and time.monotonic() < deadline, "no Chromium"
            time.sleep(0.1)
        port = active.read_text().split()[0]
        pages = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
        url = next(p for p in pages if p["type"] == "page")["webSocketDebuggerUrl"]
        self._open = ExitStack()
        self.ws = self._open.enter_context(connect(url, max_size=64 << 20, open_timeout=30))
        self.ids = itertools.count(1)
        self.call("Page.enable")

    def call(self, method: str, **params) -> dict:
        n = next(self.ids)
        self.ws.send(json.dumps({"id": n, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=60))
            if message.get("id") == n:
                assert "error" not in message, message
                return message["result"]

    def run(self, script: str):
        out = self.call("Runtime.evaluate", expression=script, awaitPromise=True,
                        returnByValue=True)
        assert "exceptionDetails" not in out, out
        return out["result"].get("value")

    def wait(self, script: str) -> None:
        deadline = time.monotonic() + 60
        while not self.run(script):
            assert time.monotonic() < deadline, f"never true: {script}"
            time.sleep(0.1)

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait(f"document.readyState === 'complete' && location.href === {json.dumps(url)}")

    def screenshot(self, name: str) -> Path:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / name
        path.write_bytes(base64.b64decode(data["data"]))
        COPIES.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, COPIES / name)
        return path

    def close(self) -> None:
        self._open.close()
        self.proc.kill()
        self.proc.wait(10)


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    require(os.access(CHROMIUM, os.X_OK), f"headless Chromium not found at {CHROMIUM} "
                                          f"(.ci/steps/40-chromium.sh installs it)")
    browser = Chromium(tmp_path_factory.mktemp("profile"))
    yield browser
    browser.close()
    print(f"\nscreenshots of the UI: {SHOTS} (copies in {COPIES})")


@pytest.mark.browser
def test_the_query_form_in_chromium_answers_what_kgbuild_query_answers(served, chromium):
    base, _, without = served
    chromium.open(f"{base}/ui/query")
    chromium.run(f"document.querySelector('textarea[name=query]').value = {json.dumps(DEPENDS)};"
                 "document.getElementById('query-form').submit(); true")
    chromium.wait("document.getElementById('answer') !== null")
    rows = chromium.run("[...document.querySelectorAll('#answer tr')].slice(1).map("
                        "r => [...r.cells].map(c => 'https://kgbuild.dev/id/' + c.textContent))")
    assert [tuple(r) for r in rows] == _cli_plain(without, DEPENDS) and len(rows) == 4
    assert chromium.run("location.pathname") == "/sparql"
    chromium.screenshot("query-answer.png")
    # a script of the page asking for SPARQL JSON, as YASGUI would
    answer = chromium.run(
        "fetch('/sparql', {method: 'POST', headers: {'Content-Type': "
        "'application/sparql-query', 'Accept': 'application/sparql-results+json'}, body: "
        f"{json.dumps(SELECT)}}}).then(r => r.json())")
    assert [(b["s"]["value"], b["label"]["value"]) for b in answer["results"]["bindings"]] == \
        _cli_plain(without, SELECT)


@pytest.mark.browser
def test_the_pages_in_chromium(served, chromium):
    base = served[0]
    chromium.open(f"{base}/ui/node?id=component%3Adefault%2Fcheckout-service")
    assert chromium.run("document.querySelector('h1').textContent") == "Checkout Service"
    boxes = chromium.run("[...document.querySelectorAll('#graph .node')].map("
                         "g => g.getAttribute('data-id'))")
    assert "component:default/pricing-sdk" in boxes and "component:default/web-shop" in boxes
    assert chromium.run("document.querySelector('#graph').getBoundingClientRect().width") > 300
    chromium.screenshot("entity-page.png")
    chromium.run("document.querySelector('#graph a[href*=pricing-sdk]')"
                 ".dispatchEvent(new MouseEvent('click', {bubbles: true})); true")
    chromium.wait("document.querySelector('h1') && "
                  "document.querySelector('h1').textContent === 'Pricing SDK'")
    chromium.open(f"{base}/ui")
    chromium.run("document.querySelector('input[name=q]').value = 'payments';"
                 "document.querySelector('form[role=search]').submit(); true")
    chromium.wait("location.pathname === '/ui/search' && document.readyState === 'complete'")
    hits = chromium.run("[...document.querySelectorAll('ul.hits a')].map(a => a.textContent)")
    assert {"Payments", "Payments API", "Payments Service"} <= set(hits)
    assert "Payments DB" not in hits and "General Ledger" not in hits
    chromium.screenshot("search.png")
    shot = chromium.screenshot("home.png") if chromium.open(f"{base}/ui") is None else None
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
