"""Secrets stay secret: a URL's credentials never reach an error, a summary, JSON output or a
state file (one redaction, :func:`kgbuild.io.urls.redact_url`), and a project file cannot
point the user's $OPENAI_API_KEY at a host of its choosing."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import free_port
from loopback_http import Loopback, answer, chat, response

from kgbuild.cli import main
from kgbuild.io.urls import redact_url
from kgbuild.llm.settings import LLMSettings
from kgbuild.remote.sparql import RemoteError, SparqlClient
from kgbuild.retrieve.embeddings import EmbeddingMatcher


@pytest.fixture(autouse=True)
def _no_ambient_llm_settings(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "KGBUILD_MODEL", "KGBUILD_TRUST_PROJECT_URL"):
        monkeypatch.delenv(name, raising=False)

SECRET = "S3cr%40t-pw"  # as written in the URL (percent-encoded); decoded: S3cr@t-pw
EMPTY = b'{"head": {"vars": []}, "results": {"bindings": []}}'
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def leaks(text: str) -> bool:
    return "S3cr" in text


def with_creds(url: str) -> str:
    return url.replace("http://", f"http://bob:{SECRET}@")


@pytest.mark.parametrize("url, shown", [
    ("http://bob:pw@h:7878/query", "http://bob:***@h:7878/query"),
    ("https://ghp_token@h/x", "https://***@h/x"),  # a user info without a password may be a token
    ("http://h/v1?api_key=k1&model=m#frag", "http://h/v1?api_key=***&model=m#frag"),
    ("http://h/s?X-Amz-Signature=abc&access_token=t&q=1",
     "http://h/s?X-Amz-Signature=***&access_token=***&q=1"),
    ("http://b:p@ss@h:99999/q", "http://b:***@h:99999/q"),  # invalid (bad port): redacted anyway
    ("redis://u:pw@h:6379", "redis://u:***@h:6379"),
    ("http://h:7878/query", "http://h:7878/query"),
])
def test_redact_url(url, shown):
    assert redact_url(url) == shown


def sparql(conn, head):
    """A SPARQL server that holds nothing and accepts everything."""
    is_query = head["body"].startswith(b"query=")
    conn.sendall(response(200 if is_query else 204, EMPTY if is_query else b""))


@pytest.mark.parametrize("status, body", [
    (401, b"no"), (403, b"no"), (500, b"failed for bob:S3cr@t-pw and S3cr%40t-pw"),
    (307, b"moved"), (400, b"bad query"),
])
def test_sparql_errors_never_show_the_password(status, body):
    with Loopback(answer(status, body, {"Location": "http://elsewhere/"})) as srv, \
            SparqlClient(with_creds(srv.url) + "/query", retries=0) as client, \
            pytest.raises(RemoteError) as err:
        client.select("SELECT * WHERE { ?s ?p ?o }")
    assert not leaks(str(err.value)) and "bob:***@" in str(err.value)
    auth = srv.seen[0]["headers"]["authorization"]  # the credentials are still used
    assert base64.b64decode(auth.split()[1]) == b"bob:S3cr@t-pw"


def test_an_unreachable_or_malformed_endpoint_never_shows_the_password():
    with SparqlClient(with_creds(f"http://127.0.0.1:{free_port()}/query"), retries=0,
                      timeout=2) as client, pytest.raises(RemoteError) as err:
        client.select("SELECT * WHERE { ?s ?p ?o }")
    assert not leaks(str(err.value))
    r = CliRunner().invoke(main, ["push", "--endpoint", f"http://bob:{SECRET}@h:99999/query"])
    assert r.exit_code == 2 and "[usage]" in r.output and not leaks(r.output)


@pytest.fixture
def store(tmp_path):
    r = CliRunner().invoke(main, ["build", str(FIXTURES / "catalog"), "--store",
                                  str(tmp_path / "store"), "--timestamp", "0", "--no-validate"])
    assert r.exit_code == 0, r.output
    return tmp_path / "store"


def test_push_and_pull_show_and_store_no_password(store, tmp_path):
    with Loopback(sparql) as srv:
        endpoint = with_creds(srv.url) + "/query"
        for fmt in ("text", "json"):
            r = CliRunner().invoke(main, ["push", "--endpoint", endpoint, "--store", str(store),
                                          "--full", "--format", fmt])
            assert r.exit_code == 0, r.output
            assert not leaks(r.output) and "bob:***@" in r.output
        [state] = (store / "remote").glob("push-*.json")
        assert not leaks(state.read_text())
        assert json.loads(state.read_text())["endpoint"] == redact_url(endpoint)
        r = CliRunner().invoke(main, ["pull", "--endpoint", endpoint, "-o",
                                      str(tmp_path / "out.nq"), "--format", "json"])
        assert r.exit_code == 0 and not leaks(r.output) and "bob:***@" in r.output
    assert all(s["headers"]["authorization"].startswith("Basic ") for s in srv.seen)


@pytest.fixture
def prose(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.md").write_text("The checkout service depends on the pricing library.\n")
    return tmp_path


def extract(*args, **kw):
    shutil.rmtree(".kgbuild", ignore_errors=True)  # no cached answer: every run asks
    return CliRunner().invoke(main, ["extract", "notes.md", "--model", "m", "--no-validate",
                                     *args], **kw)


@pytest.mark.slow
def test_extract_shows_and_stores_no_password(prose):
    with Loopback(chat()) as srv:
        for fmt in ("text", "json"):
            r = extract("--base-url", with_creds(srv.url) + "/v1", "--format", fmt)
            assert r.exit_code == 0, r.output
            assert not leaks(r.output) and "bob:***@" in r.output
            stored = "".join(p.read_text(errors="replace")
                             for p in (prose / ".kgbuild").rglob("*.json"))
            assert "bob:***@" in stored and not leaks(stored)  # the mode remembered per endpoint
    r = extract("--base-url", f"http://bob:{SECRET}@h:99999/v1")
    assert r.exit_code == 2 and not leaks(r.output)


def key_seen(srv) -> str:
    return srv.seen[-1]["headers"]["authorization"]


@pytest.mark.slow
def test_a_project_base_url_gets_no_key_without_opting_in(prose, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-users-own")
    with Loopback(chat()) as srv:
        (prose / "kgbuild.toml").write_text(f'[llm]\nbase_url = "{srv.url}/v1"\n')
        r = extract()
        assert r.exit_code == 0, r.output
        assert key_seen(srv) == "Bearer unused"
        warning = [line for line in r.stderr.splitlines() if "OPENAI_API_KEY" in line]
        assert len(warning) == 1 and "127.0.0.1" in warning[0]
        assert "--trust-project-url" in warning[0]
        r = extract("--trust-project-url")
        assert r.exit_code == 0 and key_seen(srv) == "Bearer sk-users-own"
        assert "OPENAI_API_KEY" not in r.stderr
        r = extract(env={"KGBUILD_TRUST_PROJECT_URL": "1"})
        assert r.exit_code == 0 and key_seen(srv) == "Bearer sk-users-own"
        for own in (["--base-url", srv.url + "/v1"], []):  # the user's own choice of host
            env = {} if own else {"OPENAI_BASE_URL": srv.url + "/v1"}
            r = extract(*own, env=env)
            assert r.exit_code == 0 and key_seen(srv) == "Bearer sk-users-own"
            assert "OPENAI_API_KEY" not in r.stderr
        (prose / "kgbuild.toml").write_text(f'[llm]\nbase_url = "{with_creds(srv.url)}/v1"\n')
        r = extract()
        assert r.exit_code == 0 and "bob:***@127.0.0.1" in r.stderr and not leaks(r.output)


def test_key_rule_in_the_settings():
    env = {"OPENAI_API_KEY": "sk-x"}
    assert LLMSettings.resolve(model="m", config={"base_url": "http://evil.test/v1"},
                               env=env).api_key is None
    for url in ("https://api.openai.com/v1", "https://API.openai.com:443/v1/"):  # OpenAI's own
        assert LLMSettings.resolve(model="m", config={"base_url": url}, env=env).api_key == "sk-x"
    assert LLMSettings.resolve(model="m", config={"base_url": "http://api.openai.com/v1"},
                               env=env).api_key is None  # not in clear text either
    assert LLMSettings.resolve(model="m", config={"base_url": "http://evil.test/v1"}, env=env,
                               trust_project_url=True).api_key == "sk-x"
    no_key = LLMSettings.resolve(model="m", config={"base_url": "http://evil.test/v1"}, env={})
    assert no_key.api_key is None and no_key.warning is None  # nothing withheld, no warning


def test_embeddings_show_and_store_no_password(tmp_path):
    with Loopback(answer(404, b'{"error": {"message": "no embeddings here"}}')) as srv:
        matcher = EmbeddingMatcher.from_env("e", with_creds(srv.url) + "/v1", "k",
                                            cache_dir=tmp_path)
        with pytest.raises(Exception) as err:
            matcher.embed(["a"])
    assert not leaks(str(err.value)) and "bob:***@" in str(err.value)
    stored = "".join(p.read_text() for p in tmp_path.glob("*.json"))
    assert "bob:***@" in stored and not leaks(stored)


def test_scrub_removes_a_urls_password_and_token_from_any_text():
    from kgbuild.io.urls import scrub, url_secrets

    url = "redis://bob:s3cr%40t@127.0.0.1:1/0"
    assert scrub("auth failed for bob with s3cr@t (s3cr%40t)", url_secrets(url)) == \
        "auth failed for bob with *** (***)"
    assert scrub("token tok123 refused", url_secrets("http://tok123@h/")) == "token *** refused"
    assert scrub("nothing here", url_secrets("http://[::1/")) == "nothing here"


def test_a_falkordb_error_shows_the_url_redacted(tmp_path):
    from kgbuild.project.pipeline import build_graph
    from kgbuild.remote.cypher import push_falkordb
    from kgbuild.remote.sparql import RemoteError
    from kgbuild.schema.loader import load_schema

    pytest.importorskip("falkordb")
    from conftest import FIXTURE_CATALOG
    build_graph([FIXTURE_CATALOG], load_schema(), store=tmp_path / "s", timestamp=0).store.close()
    with pytest.raises(RemoteError) as info:  # nothing listens on port 1
        push_falkordb(tmp_path / "s", load_schema(), "redis://bob:hunter2@127.0.0.1:1",
                      "g", timeout=2)
    assert "hunter2" not in str(info.value) and "bob:***@127.0.0.1:1" in str(info.value)
