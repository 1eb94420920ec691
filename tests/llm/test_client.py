"""The LLM client against a scripted server on loopback, through the real ``openai`` client:
structured-output fallback remembered, one repair, retries of 429/500/timeouts, the cache,
the concurrency limit, usage and cost."""

from __future__ import annotations

import json
import threading

import llm_fixtures
import pytest
from fakellm import Reply, Script, last_user

from kgbuild.errors import InputError, KgbuildError
from kgbuild.llm.client import LLMClient, Request, default_check, response_format
from kgbuild.llm.settings import LLMSettings, Price

fake_llm = llm_fixtures.fake_llm  # the fixtures, shared with the other LLM tests
_no_ambient_llm_settings = llm_fixtures.no_ambient_llm_settings

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["relations"],
          "properties": {"relations": {"type": "array", "items": {
              "type": "object", "required": ["subject", "predicate", "object"],
              "properties": {"subject": {"type": "string"}, "predicate": {"enum": ["dependsOn"]},
                             "object": {"type": "string"}}}}}}
GOOD = json.dumps({"relations": [{"subject": "A", "predicate": "dependsOn", "object": "B"}]})


def req(text: str) -> Request:
    return Request(({"role": "system", "content": "fixed"}, {"role": "user", "content": text}),
                   SCHEMA, "kgbuild_test", text)


def client(server, tmp_path=None, **kw) -> LLMClient:
    kw.setdefault("max_retries", 2)
    return LLMClient(LLMSettings("test-model", server.base_url, **kw),
                     tmp_path / "cache" if tmp_path else None)


def test_strict_json_schema_first_and_the_answer_returned(fake_llm):
    server = fake_llm(Script(default=Reply(GOOD)))
    [out] = client(server).run([req("chunk 1")])
    assert out.text == GOOD and out.error is None and out.mode == "json_schema"
    rf = server.bodies[0]["response_format"]
    assert rf == response_format("json_schema", SCHEMA, "kgbuild_test")
    assert rf["json_schema"]["strict"] is True and rf["json_schema"]["schema"] == SCHEMA
    assert server.bodies[0]["model"] == "test-model"


def llama_cpp(body):
    """What llama-cpp-python's server answers: json_schema is a 500, JSON mode with a schema works."""
    if body["response_format"]["type"] == "json_schema":
        return Reply(status=500, error="1 validation error: response_format.type: Input should be "
                                       "'text' or 'json_object'")
    return Reply(GOOD)


def test_rejected_json_schema_falls_back_once_and_is_remembered(fake_llm, tmp_path):
    server = fake_llm(llama_cpp)
    c = client(server, tmp_path, concurrency=4)
    out = c.run([req(f"chunk {i}") for i in range(8)])
    assert all(o.text == GOOD and o.mode == "json_object_schema" for o in out)
    # one failing request in all: not one per chunk, and not retried (500s are, normally)
    assert server.formats() == ["json_schema"] + ["json_object+schema"] * 8
    assert c.mode_report()["mode"] == "json_object_schema"
    assert c.mode_report()["rejected"][0]["status"] == 500
    # a new run (another process) remembers it from the cache folder: no json_schema request
    c2 = client(server, tmp_path)
    c2.run([req("another chunk")])
    assert server.formats()[-1] == "json_object+schema" and server.count == 10
    assert c2.mode_report()["rejected"][0]["mode"] == "json_schema"


def test_plain_json_mode_when_no_schema_is_accepted(fake_llm):
    def no_schemas(body):
        rf = body["response_format"]
        if rf["type"] == "json_schema" or "schema" in rf:
            return Reply(status=400, error="unsupported response_format: schema not allowed")
        return Reply(GOOD)
    server = fake_llm(no_schemas)
    c = client(server)
    out = c.run([req("a"), req("b")])
    assert [o.mode for o in out] == ["json_object", "json_object"]
    assert server.formats() == ["json_schema", "json_object+schema", "json_object", "json_object"]


def test_an_unrelated_400_is_an_error_not_a_mode_change(fake_llm):
    server = fake_llm(Script(default=Reply(status=400, error="messages: too long")))
    c = client(server)
    [out] = c.run([req("x")])
    assert out.text is None and "BadRequestError" in out.error and c.mode == "json_schema"
    assert server.count == 1 and c.usage.failures == 1 and not c.confirmed


def test_malformed_json_gets_one_repair(fake_llm, tmp_path):
    server = fake_llm(Script([("chunk", [Reply('{"relations": [{"subject": "A", '), Reply(GOOD)])]))
    c = client(server, tmp_path)
    [out] = c.run([req("chunk 1")])
    assert out.text == GOOD and out.repaired and out.invalid is None
    assert server.count == 2 and c.usage.repairs == 1
    repair = server.bodies[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": '{"relations": [{"subject": "A", '}
    assert "not valid JSON" in repair[-1]["content"]
    # the repaired answer is cached under the original prompt: a re-run asks nothing
    c2 = client(server, tmp_path)
    [again] = c2.run([req("chunk 1")])
    assert again.text == GOOD and again.cached and server.count == 2 and c2.usage.cache_hits == 1


def test_wrong_shape_is_repaired_and_a_second_failure_is_reported_not_retried(fake_llm):
    server = fake_llm(Script(default=Reply('{"triples": "none"}')))
    c = client(server)
    [out] = c.run([req("x")])
    assert out.invalid and "relations" in out.invalid and out.repaired
    assert server.count == 2  # the one repair, nothing more


def test_a_custom_check_decides_what_needs_a_repair(fake_llm):
    server = fake_llm(Script([("x", [Reply('{"relations": []}'), Reply(GOOD)])]))
    [out] = client(server).run([req("x")], check=lambda t: None if "dependsOn" in t else "empty")
    assert out.text == GOOD and server.count == 2


@pytest.mark.slow
def test_429_and_500_are_retried_by_the_client(fake_llm):
    server = fake_llm(Script([
        ("rate", [Reply(status=429, error="slow down", headers={"retry-after-ms": "20"}), Reply(GOOD)]),
        ("boom", [Reply(status=500, error="upstream exploded"), Reply(status=503, error="again"),
                  Reply(GOOD)]),
    ]))
    c = client(server, structured_output="json_schema")
    out = c.run([req("rate limited"), req("boom")])
    assert [o.text for o in out] == [GOOD, GOOD] and c.usage.failures == 0
    assert server.count == 5 and c.usage.requests == 5  # every attempt counted


def test_retries_run_out_into_a_reported_failure(fake_llm):
    server = fake_llm(Script(default=Reply(status=503, error="down", headers={"retry-after-ms": "5"})))
    c = client(server, max_retries=1)
    [out] = c.run([req("x")])
    assert out.text is None and "InternalServerError" in out.error
    assert c.usage.failures == 1 and server.count == 2  # the probe, then its 1 retry


@pytest.mark.slow
def test_a_timeout_is_retried_and_a_lasting_one_reported(fake_llm):
    server = fake_llm(Script([("slow once", [Reply(GOOD, delay=2.0), Reply(GOOD)]),
                              ("always slow", [Reply(GOOD, delay=2.0)])]))
    c = client(server, timeout=0.5, max_retries=1, structured_output="json_schema")
    ok, lost = c.run([req("slow once"), req("always slow")])
    assert ok.text == GOOD and ok.error is None
    assert lost.text is None and "Timeout" in lost.error
    assert sum(1 for b in server.bodies if last_user(b) == "always slow") == 2


@pytest.mark.slow
def test_concurrency_is_bounded(fake_llm):
    server = fake_llm(Script(default=Reply(GOOD, delay=0.15)))
    c = client(server, concurrency=3)
    out = c.run([req(f"chunk {i}") for i in range(15)])
    assert len(out) == 15 and all(o.text == GOOD for o in out)
    assert server.max_inflight == 3  # reached, never exceeded


def test_the_same_prompt_twice_in_a_batch_is_asked_once(fake_llm):
    server = fake_llm(Script(default=Reply(GOOD)))
    out = client(server, structured_output="json_schema").run([req("same"), req("same")])
    assert [o.text for o in out] == [GOOD, GOOD] and server.count == 1


def test_cache_hits_make_no_request_and_keep_usage(fake_llm, tmp_path):
    server = fake_llm(Script(default=Reply(GOOD)))
    c = client(server, tmp_path)
    c.run([req(f"chunk {i}") for i in range(5)])
    assert server.count == 5 and c.usage.cache_hits == 0 and c.usage.prompt_tokens > 0
    c2 = client(server, tmp_path)
    out = c2.run([req(f"chunk {i}") for i in range(5)])
    assert server.count == 5 and c2.usage.cache_hits == 5 and c2.usage.requests == 0
    assert all(o.cached and o.text == GOOD and o.usage["prompt_tokens"] > 0 for o in out)
    assert all(c2.cached(req(f"chunk {i}")) for i in range(5)) and not c2.cached(req("new"))
    # another model's answers are not reused
    other = LLMClient(LLMSettings("other-model", server.base_url), tmp_path / "cache")
    other.run([req("chunk 0")])
    assert server.count == 6


def test_a_damaged_cache_entry_is_ignored(fake_llm, tmp_path):
    server = fake_llm(Script(default=Reply(GOOD)))
    client(server, tmp_path).run([req("x")])
    for f in (tmp_path / "cache").glob("*/*.json"):
        f.write_text("{not json")
    [out] = client(server, tmp_path).run([req("x")])
    assert out.text == GOOD and not out.cached and server.count == 2


def test_answers_written_behind_are_on_disk_when_the_run_returns(fake_llm, tmp_path):
    server = fake_llm(Script(default=Reply(GOOD)))
    c = client(server, tmp_path, concurrency=4)
    c.run([req(f"chunk {i}") for i in range(6)])
    files = list((tmp_path / "cache").glob("*/*.json"))
    assert len(files) == 6 and all(json.loads(f.read_text())["text"] == GOOD for f in files)
    assert json.loads((tmp_path / "cache" / "modes.json").read_text())  # the mode remembered
    assert not any(t.name.startswith("kgbuild-llm-cache") for t in threading.enumerate())


def test_a_cache_that_cannot_be_written_fails_the_run(fake_llm, tmp_path):
    server = fake_llm(Script(default=Reply(GOOD)))
    (tmp_path / "cache").write_text("a file where the cache folder should be")
    with pytest.raises(OSError):
        client(server, tmp_path).run([req(f"chunk {i}") for i in range(3)])


def test_usage_tokens_and_cost(fake_llm):
    server = fake_llm(Script(default=Reply(GOOD)))
    c = client(server, price=Price(input=1.0, output=2.0))
    c.run([req("a" * 400), req("b" * 800)])
    u = c.usage.to_dict(c.settings)
    assert u["prompt_tokens"] == sum(len("fixed\n" + t) // 4 for t in ("a" * 400, "b" * 800))
    assert u["completion_tokens"] == 2 * (len(GOOD) // 4)
    assert u["estimated_cost_usd"] == pytest.approx(
        (u["prompt_tokens"] * 1.0 + u["completion_tokens"] * 2.0) / 1e6)
    assert u["modes"] == {"json_schema": 2}


def test_default_check():
    check = default_check(SCHEMA)
    assert check(GOOD) is None
    assert check("```json\n" + GOOD + "\n```") is None
    assert "not valid JSON" in check("{")
    assert "relations" in check("{}")
    assert check('{"relations": [{"subject": "A", "predicate": "other", "object": "B"}]}') is None
    assert check('{"relations": [{"subject": 1, "predicate": "p", "object": "B"}]}') == \
        "$.relations[0].subject must be string"
    assert check('[]') == "$ must be object"


def test_settings_precedence():
    env = {"KGBUILD_MODEL": "env-model", "OPENAI_BASE_URL": "http://env/v1",
           "OPENAI_API_KEY": "sk-secret"}
    config = {"model": "cfg-model", "base_url": "http://cfg/v1", "concurrency": 7,
              "price": {"input": 0.5}}
    s = LLMSettings.resolve(model="flag-model", config=config, env=env)
    assert (s.model, s.base_url, s.api_key, s.concurrency) == ("flag-model", "http://env/v1",
                                                               "sk-secret", 7)
    assert s.price == Price(0.5, 0.0)
    s = LLMSettings.resolve(config=config, env={})
    assert (s.model, s.base_url, s.api_key) == ("cfg-model", "http://cfg/v1", None)
    assert "sk-secret" not in repr(LLMSettings.resolve(config=config, env=env))
    with pytest.raises(InputError, match="no model"):
        LLMSettings.resolve(config={}, env={})
    with pytest.raises(InputError, match="structured_output"):
        LLMSettings.resolve(model="m", structured_output="yaml", env={})


def test_every_request_bounds_the_answer_length(fake_llm):
    """A small model that repeats itself stops at max_tokens (the flag, else the project's
    [llm] max_tokens, else 4096), sent with every request."""
    assert LLMSettings.resolve(model="m", env={}).max_tokens == 4096
    assert LLMSettings.resolve(model="m", config={"max_tokens": 300}, env={}).max_tokens == 300
    assert LLMSettings.resolve(model="m", max_tokens=50, config={"max_tokens": 300},
                               env={}).max_tokens == 50
    server = fake_llm(Script(default=Reply(GOOD)))
    client(server, max_tokens=123).run([req("a"), req("b")])
    assert [b["max_tokens"] for b in server.bodies] == [123, 123]

def test_a_refused_key_stops_the_run_after_one_request(fake_llm):
    server = fake_llm(Script(default=Reply(status=401, error="Incorrect API key provided")))
    c = client(server, concurrency=4)
    with pytest.raises(KgbuildError, match="AuthenticationError.*OPENAI_API_KEY"):
        c.run([req(f"chunk {i}") for i in range(10)])
    assert server.count == 1


def test_an_unknown_model_stops_the_run(fake_llm):
    server = fake_llm(Script(default=Reply(status=404, error="model 'nope' not found")))
    with pytest.raises(KgbuildError, match="NotFoundError"):
        client(server, structured_output="json_object").run([req("a"), req("b")])
    assert server.count == 1


def test_an_unreachable_endpoint_is_one_error():
    import socket
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    c = LLMClient(LLMSettings("m", f"http://127.0.0.1:{port}/v1", max_retries=0), None)
    with pytest.raises(KgbuildError, match="server running"):
        c.run([req(f"chunk {i}") for i in range(5)])


def test_project_llm_table_in_pyproject_and_its_checks(tmp_path):
    from kgbuild.project.config import find_project, load_project

    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.kgbuild]\nsources = ["docs"]\n\n[tool.kgbuild.llm]\n'
        'model = "llama3.1"\nbase_url = "http://localhost:11434/v1"\nconcurrency = 8\n'
        'timeout = 30\nprice = {input = 0.5, output = 1}\n')
    project = find_project(tmp_path)
    assert project.llm == {"model": "llama3.1", "base_url": "http://localhost:11434/v1",
                           "concurrency": 8, "timeout": 30.0,
                           "price": {"input": 0.5, "output": 1.0}}
    s = LLMSettings.resolve(config=project.llm, env={})
    assert (s.model, s.concurrency, s.timeout, s.price) == ("llama3.1", 8, 30.0, Price(0.5, 1.0))
    bad = tmp_path / "kgbuild.toml"
    for body, message in [('[llm]\nmodel = 3\n', "llm.model must be a str"),
                          ('[llm]\nconcurrency = 0\n', "between 1 and 256"),
                          ('[llm]\nmode = "page"\n', "one of chunk, document"),
                          ('[llm]\nprice = {input = -1}\n', "llm.price"),
                          ('[llm]\napi_key = "sk-..."\n', "unknown setting llm.api_key")]:
        bad.write_text(body)
        with pytest.raises(InputError, match=message) as err:
            load_project(bad)
        assert err.value.line == 2
