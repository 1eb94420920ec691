"""The HTML pages under ``/ui`` in process: an entity page with its edges, evidence, file:line,
confidence and picture; search over names and aliases; the query form; a hidden entity is as
absent as an unknown one; a hostile name in a catalog stays text."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser

import pytest
from conftest import FIXTURE_CATALOG
from helpers import PCI_TOKEN, bearer, write_config
from starlette.testclient import TestClient

from kgbuild.project.pipeline import build_graph
from kgbuild.schema.loader import load_schema
from kgbuild.serve.app import create_app
from kgbuild.serve.config import load_serve_config

HOSTILE_TITLE = '<script>alert("title")</script> Evil & "Co"'
HOSTILE = f"""apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: evil-widget
  title: '{HOSTILE_TITLE}'
  description: '<img src=x onerror=alert(1)> steals cookies'
spec:
  type: service
  lifecycle: production
  owner: commerce-platform
  dependsOn:
    - component:pricing-sdk
"""


class Tags(HTMLParser):
    """Every start tag and attribute of a page, as a browser's parser reads them."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags(html: str) -> list[tuple[str, dict]]:
    parser = Tags()
    parser.feed(html)
    return parser.tags


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ui")
    catalog = folder / "catalog"
    shutil.copytree(FIXTURE_CATALOG, catalog)
    (catalog / "components" / "evil.yaml").write_text(HOSTILE)
    build_graph([catalog], load_schema(), store=folder / "store", timestamp=0).store.close()
    config = load_serve_config(write_config(folder))
    with TestClient(create_app(folder / "store", load_schema(), config, watch=False),
                    raise_server_exceptions=False) as c:
        yield c


def test_an_entity_page_shows_edges_evidence_file_line_and_a_picture(client):
    r = client.get("/ui/node", params={"id": "component:default/checkout-service"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    page = r.text
    assert "<h1>Checkout Service</h1>" in page and "Service · <code>component:default/" \
        "checkout-service</code>" in page
    row = re.search(r"<tr><td>dependsOn</td><td><a href=\"/ui/node\?id=component%3Adefault%2F"
                    r"pricing-sdk\">Pricing SDK</a>.*?</tr>", page, re.DOTALL).group()
    assert "“- component:pricing-sdk”" in row and "checkout-service.yaml:14</code>" in row
    assert "backstage, confidence 1" in row
    assert "<h2>Edges in</h2>" in page and "Web Shop" in page  # web-shop dependsOn it
    svg = re.search(r"<svg id=\"graph\".*?</svg>", page, re.DOTALL).group()
    assert 'data-id="component:default/pricing-sdk"' in svg
    assert '<a href="/ui/node?id=component%3Adefault%2Fpricing-sdk">' in svg
    assert not any(tag == "script" for tag, _ in tags(page))
    assert r.headers["content-security-policy"].startswith("default-src 'none'")


def test_search_finds_names_aliases_and_ids(client):
    for q, expected in [("Pricing SDK", "component:default/pricing-sdk"),
                        ("pricing-sdk", "component:default/pricing-sdk"),
                        ("payments", "system:default/payments"),
                        ("component:default/web-shop", "component:default/web-shop")]:
        page = client.get("/ui/search", params={"q": q}).text
        assert f'href="/ui/node?id={expected.replace(":", "%3A").replace("/", "%2F")}"' in page, q
    assert "Nothing visible is named" in client.get("/ui/search", params={"q": "zzzq"}).text


def test_a_hidden_entity_is_as_absent_as_an_unknown_one(client):
    hidden = client.get("/ui/node", params={"id": "resource:default/payments-db"})
    unknown = client.get("/ui/node", params={"id": "resource:default/nothing"})
    assert hidden.status_code == unknown.status_code == 404
    assert "Payments DB" not in hidden.text
    assert "payments-db" not in client.get("/ui/search", params={"q": "Payments DB"}).text
    assert "Payments DB" not in client.get(
        "/ui/node", params={"id": "component:default/payments-service"}).text
    seen = client.get("/ui/node", params={"id": "resource:default/payments-db"},
                      headers=bearer(PCI_TOKEN))
    assert seen.status_code == 200 and "<h1>Payments DB</h1>" in seen.text


def test_a_hostile_name_stays_text(client):
    pages = [client.get("/ui/node", params={"id": "component:default/evil-widget"}).text,
             client.get("/ui/node", params={"id": "component:default/pricing-sdk"}).text,
             client.get("/ui/search", params={"q": "evil"}).text,
             client.get("/ui/nodes", params={"type": "Service"}).text,
             client.get("/ui/search", params={"q": '"><script>alert(3)</script>'}).text,
             client.get("/ui/query", params={"query": "</textarea><script>alert(4)</script>"}).text,
             client.get("/sparql", params={"query": "SELECT ('<script>alert(5)</script>' AS ?x) "
                                                    "WHERE {}"}, headers={"accept": "text/html"}).text]
    for page in pages:
        assert not any(tag in ("script", "img") or tag == "svg" and "onload" in attrs
                       or any(a.startswith("on") for a in attrs) for tag, attrs in tags(page))
    entity = pages[0]
    assert "&lt;script&gt;alert(&quot;title&quot;)&lt;/script&gt; Evil &amp; &quot;Co&quot;" in \
        entity and "&lt;img src=x onerror=alert(1)&gt; steals cookies" in entity
    assert "Evil &amp;" in pages[1]  # the picture of its neighbour names it too, escaped


def test_the_home_page_lists_types_and_the_query_form_posts_to_sparql(client):
    home = client.get("/ui").text
    assert '<a href="/ui/nodes?type=Service">Service</a>' in home
    listing = client.get("/ui/nodes", params={"type": "Service"}).text
    assert "Checkout Service" in listing and "Payments DB" not in listing
    form = client.get("/ui/query").text
    [(_, attrs)] = [t for t in tags(form) if t[0] == "form" and t[1].get("id") == "query-form"]
    assert attrs == {"method": "post", "action": "/sparql", "id": "query-form"}
    assert client.get("/ui/nodes", params={"type": "Nope"}).status_code == 400
