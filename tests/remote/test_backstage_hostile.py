"""A hostile or broken Backstage catalog API: every read is bounded (deadline, page size,
entities), every failure one line with its code, and a failed read changes nothing already
built (a partial listing would look like removed entities)."""

from __future__ import annotations

import base64
import copy
import json
import time

import pytest
from catalog_api_server import TOKEN, CatalogApi
from click.testing import CliRunner
from loopback_http import Loopback, answer, drip, gzip_bomb

from kgbuild.cli.main import main
from kgbuild.project.pipeline import build_graph
from kgbuild.remote import backstage
from kgbuild.remote.backstage import CatalogError, CatalogSource, read_catalog
from kgbuild.schema.loader import load_schema
from kgbuild.store.graphstore import GraphStore

ENTITY = {"apiVersion": "backstage.io/v1alpha1", "kind": "Component",
          "metadata": {"name": "web", "namespace": "default", "etag": "e1"},
          "spec": {"type": "service", "lifecycle": "production", "owner": "team-a"}}
QUERY = "/api/catalog/entities/by-query"


def named(name: str) -> dict:
    e = copy.deepcopy(ENTITY)
    e["metadata"]["name"] = name
    return e


def page(items, cursor=None) -> tuple[int, bytes]:
    info = {"nextCursor": cursor} if cursor is not None else {}
    return 200, json.dumps({"items": items, "totalItems": 10**9, "pageInfo": info}).encode()


def read(api: CatalogApi, **bounds):
    return read_catalog(CatalogSource(api.url, TOKEN, **{"page_size": 2, **bounds}))


def failure(api: CatalogApi, **bounds) -> CatalogError:
    with pytest.raises(CatalogError) as caught:
        read(api, **bounds)
    message = str(caught.value)
    assert "\n" not in message and TOKEN not in message and len(message) <= 500
    return caught.value


def test_a_server_that_pages_for_ever_stops_at_the_entity_limit():
    counter = iter(range(10**9))
    with CatalogApi({}) as api:  # the same page again and again, each with a fresh cursor
        api.hook = lambda path, q: page([named("a"), named("b")], f"c{next(counter)}")
        err = failure(api, max_entities=50)
        assert err.code == "backstage-limit" and "more than 50 entities" in str(err)
        assert len(api.requests) == 26  # the page past 50 entities
        # new entities on every page: the same bound
        api.hook = lambda path, q: page([named(f"n{next(counter)}")], f"c{next(counter)}")
        assert failure(api, max_entities=50).code == "backstage-limit"


def test_a_cursor_loop_and_an_empty_page_naming_a_next_one():
    with CatalogApi({}) as api:
        api.hook = lambda path, q: page([named("a")], "A" if q.get("cursor") != "A" else "B") \
            if q.get("cursor") != "B" else page([named("b")], "A")
        err = failure(api)
        assert err.code == "backstage-limit" and "loops" in str(err)
        api.hook = lambda path, q: page([], "next")
        assert "empty page that names a next page" in str(failure(api))


@pytest.mark.parametrize("body, message", [
    (b'{"items": [', "did not answer with JSON"),
    (b"<html>Backstage</html>", "did not answer with JSON"),
    (b'{"entities": []}', "did not answer with the catalog's JSON"),
    (b'[{"kind": "Component"}]', "did not answer with the catalog's JSON"),
    (b'{"items": [{"kind": "Component", "metadata": {}}]}', "no catalog entity"),
    (b'{"items": [7]}', "no catalog entity"),
    (b'{"items": [], "pageInfo": {"nextCursor": 5}}', "cursor that is not a string"),
    (b"[" * 100_000 + b"]" * 100_000, "did not answer with JSON"),
])
def test_answers_that_are_no_catalog(body, message):
    with CatalogApi({}) as api:
        api.hook = lambda path, q: (200, body)
        err = failure(api)
    assert err.code == "backstage-api" and message in str(err)


def test_a_huge_page_is_refused_as_it_arrives():
    with CatalogApi({}) as api:
        big = json.dumps({"items": [named(f"e{i}") for i in range(4000)]}).encode()
        api.hook = lambda path, q: (200, big)
        err = failure(api, max_page_bytes=100_000)
    assert err.code == "backstage-limit" and "larger than 100000 bytes" in str(err)
    with Loopback(answer(200, gzip_bomb(64 << 20), {"Content-Encoding": "gzip"})) as srv:
        with pytest.raises(CatalogError, match="larger than 1 MiB") as caught:
            read_catalog(CatalogSource(srv.url, max_page_bytes=1 << 20))
    assert caught.value.code == "backstage-limit"


@pytest.mark.slow
def test_a_slow_server_meets_the_deadline():
    with Loopback(drip("body", every=0.1, count=200)) as srv:
        start = time.monotonic()
        with pytest.raises(CatalogError, match="did not serve the whole catalog within 1 s") \
                as caught:
            read_catalog(CatalogSource(srv.url, timeout=1.0, request_timeout=0.5))
        assert time.monotonic() - start < 2.5  # attempts of 0.5 s inside one deadline of 1 s
    assert caught.value.code == "backstage-limit"


def test_server_errors_are_retried_then_one_line(monkeypatch):
    monkeypatch.setattr(backstage, "BACKOFF", 0.01)
    with CatalogApi({}) as api:
        api.hook = lambda path, q: (503, b'{"error": {"name": "ServiceUnavailable", '
                                         b'"message": "catalog is starting"}}')
        err = failure(api)
        assert "answered 503: catalog is starting (after 3 attempts)" in str(err)
        assert len(api.requests) == 3
        api.hook = lambda path, q: (400, b'{"error": {"name": "InputError", "message": "bad"}}')
        assert "answered 400: bad" in str(failure(api)) and len(api.requests) == 4


def test_a_redirect_is_not_followed_so_the_token_stays_home():
    with CatalogApi({}) as other, Loopback(answer(
            302, b"", {"Location": other.url + QUERY})) as srv:
        with pytest.raises(CatalogError, match="redirect to .*redirects are not followed"):
            read_catalog(CatalogSource(srv.url, TOKEN))
        assert other.requests == []


def test_the_token_is_scrubbed_from_what_a_server_echoes():
    with CatalogApi({}) as api:
        api.hook = lambda path, q: (418, json.dumps({"error": {"message": f"no {TOKEN}"}}).encode())
        assert "no ***" in str(failure(api))


def test_a_url_with_credentials_or_the_api_path_is_shown_and_stored_without_them():
    with CatalogApi({}, token=None) as api:
        api.put(named("web"))
        host = api.url.split("://")[1]
        catalog = read_catalog(CatalogSource(f"http://user:pw@{host}/api/catalog/"))
    assert catalog.base == api.url
    assert [e.doc_id for e in catalog.entities] == [
        f"{api.url}/api/catalog/entities/by-name/component/default/web"]
    assert api.auth_headers[0].startswith("Basic ")  # sent as the URL said


@pytest.mark.slow
def test_a_failed_read_loses_nothing_already_built(tmp_path, monkeypatch):
    (tmp_path / "catalog-info.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: local\n"
        "spec:\n  type: service\n  lifecycle: production\n  owner: team-a\n")
    store = tmp_path / ".kgbuild"
    with CatalogApi({}) as api:
        for i in range(5):
            api.put(named(f"svc-{i}"))
        source = CatalogSource(api.url, TOKEN, page_size=2)
        built = build_graph([tmp_path / "catalog-info.yaml"], store=store, validate=False,
                            resolve=False, timestamp=0, backstage=[source], root=tmp_path)
        built.store.close()
        with GraphStore(store, load_schema(), write=False) as s:
            before = s.document_states()
        assert len(before) == 6
        hostile = [
            lambda path, q: (200, b"{") if "cursor" in q else None,  # page 2 malformed
            lambda path, q: page([named("x")], q.get("cursor", "") + "x"),  # for ever
            lambda path, q: (401, b"{}"),
        ]
        for hook in hostile:
            api.hook = hook
            with pytest.raises(CatalogError):
                build_graph([tmp_path / "catalog-info.yaml"], store=store, validate=False,
                            resolve=False, backstage=[CatalogSource(api.url, TOKEN, page_size=2,
                                                                    max_entities=40)],
                            root=tmp_path)
            with GraphStore(store, load_schema(), write=False) as s:
                assert s.document_states() == before
        # the CLI: one line, exit 2, and still nothing lost
        api.hook = lambda path, q: (200, b"{")
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("BACKSTAGE_TOKEN", TOKEN)
        out = CliRunner().invoke(main, ["build", "catalog-info.yaml", "--backstage", api.url])
        assert out.exit_code == 2 and out.output.count("\n") == 1, out.output
        assert out.output.endswith("[backstage-api]\n") and TOKEN not in out.output
        with GraphStore(store, load_schema(), write=False) as s:
            assert s.document_states() == before


def test_cursors_are_passed_back_as_given():
    cursor = base64.b64encode(b'{"a": "b/c?d=e&f"}').decode()
    with CatalogApi({}) as api:
        api.hook = lambda path, q: page([named("a")], cursor) if "cursor" not in q else \
            page([named("b")]) if q["cursor"] == cursor else (400, b"{}")
        assert [e.ref for e in read(api).entities] == ["component:default/a",
                                                        "component:default/b"]
