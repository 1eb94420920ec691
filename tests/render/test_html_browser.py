"""The HTML picture of the classic example opened in real headless Chromium: after the page's
script ran, the four entities and three relations of the answer path are drawn with their
labels; a screenshot is kept under .ci/artifacts/ (CI keeps it as an artifact)."""

from __future__ import annotations

import os
import re
import struct
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURE_CATALOG, REPO, require

from kgbuild import load_schema
from kgbuild.project.pipeline import build_graph
from kgbuild.render.html import render_html
from kgbuild.retrieve.traverse import TraversalSpec, traverse

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("KGBUILD_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]
ARTIFACTS = REPO / ".ci" / "artifacts"


def chromium(page: Path, profile: Path, *args: str, fragment: str = ""
             ) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args,
                           page.as_uri() + fragment],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    require(os.access(CHROMIUM, os.X_OK), f"headless Chromium not found at {CHROMIUM} "
                                          f"(.ci/steps/40-chromium.sh installs it)")
    schema = load_schema()
    kg = build_graph([FIXTURE_CATALOG], schema, store=None, timestamp=0).graph
    question = "Which service depends on the library maintained by the team that owns Payments API?"
    result = traverse(kg, TraversalSpec(question=question,
                                        path="ownedBy:out/ownerOf:out/dependsOn:in")).to_dict()
    path = tmp_path_factory.mktemp("html") / "classic.html"
    path.write_text(render_html(result, schema.node_types), encoding="utf-8")
    return path


def test_chromium_renders_the_classic_answer(page, tmp_path):
    run = chromium(page, tmp_path / "profile", "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    assert re.search(r'<body data-rendered="5"', dom), "the page's script did not run"
    labels = dict(re.findall(r'<g class="node[^"]*" id="n\d+" tabindex="0" data-id="([^"]+)">'
                             r'<title>.*?</title>.*?<text class="label"[^>]*>([^<]*)</text>',
                             dom, re.S))
    assert {labels.get(i) for i in ("api:default/payments-api", "group:default/commerce-platform",
                                    "component:default/pricing-sdk",
                                    "component:default/checkout-service")} == {
        "Payments API", "Commerce Platform", "Pricing SDK", "Checkout Service"}
    edges = re.findall(r'<g class="edge" id="e\d+" tabindex="0" data-predicate="(\w+)"><title>'
                       r"([^\n<]*)", dom)
    for relation in ("Payments API ownedBy Commerce Platform",
                     "Pricing SDK ownedBy Commerce Platform",
                     "Checkout Service dependsOn Pricing SDK"):
        assert (relation.split()[2], relation) in edges


def test_chromium_screenshot_is_kept(page, tmp_path):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "classic-example.png"
    shot.unlink(missing_ok=True)
    run = chromium(page, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1200,800",
                   "--hide-scrollbars")
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    head = shot.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", head[16:24]) == (1200, 800)
    assert shot.stat().st_size > 20_000  # a drawing, not a blank page (blank: about 4.5 kB)


def test_selecting_an_edge_shows_its_provenance(page, tmp_path):
    html = page.read_text()
    key = re.search(r'<g class="edge" id="(e\d+)" tabindex="0" data-predicate="dependsOn"><title>'
                    r"Checkout Service dependsOn Pricing SDK", html).group(1)
    run = chromium(page, tmp_path / "profile", "--dump-dom", fragment=f"#{key}")
    assert run.returncode == 0, run.stderr[-2000:]
    details = re.search(r'<aside id="details">(.*?)</aside>', run.stdout, re.S).group(1)
    assert "Checkout Service —dependsOn→ Pricing SDK" in details
    assert re.search(r"<code>\S*catalog/components/checkout-service\.yaml line 14</code>", details)
    assert "“- component:pricing-sdk”" in details and "backstage, confidence 1" in details
