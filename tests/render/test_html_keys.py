"""The HTML picture's script looks data up by keys from the page and its fragment: names of
``Object.prototype``'s members (``#__proto__``, ``#constructor``) must select nothing, and
node IDs, labels, types and predicates with those names are data like any other. Runs the
page in headless Chromium (see test_html_browser.py)."""

from __future__ import annotations

import json
import os
import re

import pytest
from conftest import require
from test_html_browser import CHROMIUM, chromium

from kgbuild.render.html import render_html

pytestmark = pytest.mark.browser

NAMES = ["__proto__", "constructor", "toString", "hasOwnProperty"]
SOURCE = {"source": "docs/__proto__.md", "location": "line 1", "evidence": "constructor",
          "extractor": "toString", "confidence": 1.0}


def result() -> dict:
    nodes = [{"id": n, "label": n, "type": n, "hop": i, "seed": i == 0} for i, n in enumerate(NAMES)]
    edges = [{"id": f"{s}-{o}", "subject": s, "predicate": p, "object": o, "assertions": [SOURCE]}
             for s, p, o in zip(NAMES, ["__proto__", "constructor", "valueOf"], NAMES[1:])]
    return {"nodes": nodes, "edges": edges, "seeds": [{"id": "__proto__"}], "answers": NAMES[-1:]}


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    require(os.access(CHROMIUM, os.X_OK), f"headless Chromium not found at {CHROMIUM} "
                                          f"(.ci/steps/40-chromium.sh installs it)")
    path = tmp_path_factory.mktemp("html") / "keys.html"
    path.write_text(render_html(result(), NAMES), encoding="utf-8")
    return path


def details(page, tmp_path, fragment: str) -> str:
    run = chromium(page, tmp_path / "profile", "--dump-dom", fragment=fragment)
    assert run.returncode == 0, run.stderr[-2000:]
    assert '<body data-rendered="4"' in run.stdout, f"the script failed with {fragment}"
    return re.search(r'<aside id="details">(.*?)</aside>', run.stdout, re.S).group(1)


@pytest.mark.parametrize("fragment", ["#" + n for n in NAMES] + ["#%", "#prototype", "#__defineGetter__"])
def test_a_fragment_naming_an_object_member_selects_nothing(page, tmp_path, fragment):
    assert details(page, tmp_path, fragment).startswith("<h2>Details</h2>Click a node")


def test_nodes_and_edges_named_like_object_members_are_shown(page, tmp_path):
    data = json.loads(re.search(r'id="kg-data">(.*?)</script>', page.read_text()).group(1))
    node = next(k for k, n in data["nodes"].items() if n["id"] == "__proto__")
    shown = details(page, tmp_path, "#" + node)
    assert "<h2>__proto__</h2><div>__proto__ · __proto__</div><div>seed</div>" in shown
    assert "__proto__ —__proto__→ constructor" in shown
    edge = next(k for k, e in data["edges"].items() if e["predicate"] == "constructor")
    shown = details(page, tmp_path, "#" + edge)
    assert "<h2>constructor —constructor→ toString</h2>" in shown
    assert "<code>docs/__proto__.md line 1</code>" in shown and "“constructor”" in shown
