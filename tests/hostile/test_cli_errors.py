"""Every command's errors: one line ``Error: [file:line: ]message [code]``, exit code 2, found
before any work is done where that is possible (nothing built, no store made, no file
written), and never a traceback."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG, REPO

from kgbuild.cli import main


def run(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, env=env)


def one_error(r, code: str) -> str:
    """The single error line of a failed command (exit 2), ending in ``[code]``."""
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.output
    assert lines[0].endswith(f"[{code}]"), lines[0]
    return lines[0]


@pytest.fixture
def catalog(tmp_path):
    shutil.copytree(FIXTURE_CATALOG, tmp_path / "cat")
    return tmp_path / "cat"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A store and its graph file, built once for the module (nothing below writes to them)."""
    where = tmp_path_factory.mktemp("built")
    r = run("build", FIXTURE_CATALOG, "--store", where / "store", "--timestamp", "0", "-o",
            where / "graph.ttl")
    assert r.exit_code == 0, r.output
    return where


@pytest.fixture
def store(built):
    return built / "store"


@pytest.fixture
def graph(built):
    return built / "graph.ttl"


# -- integer options have ranges --------------------------------------------------------------
@pytest.mark.parametrize("option, value", [
    ("--hub-cap", "2147483648"), ("--cap", "99999999999999999999999"), ("--max-nodes", "-1"),
    ("--max-edges", "1000000001"), ("--max-paths", "9223372036854775808"),
    ("--max-chars", "2147483648"), ("--hops", "0"), ("--hops", "1000001"),
    ("--semantic", "-3"), ("--semantic-min", "nan"), ("--semantic-min", "1.5")])
def test_traverse_numbers_outside_their_range_are_usage_errors(store, option, value):
    line = one_error(run("traverse", "--store", store, "--seed", "group:default/storefront",
                         "--follow", "ownerOf", option, value), "usage")
    assert option.split("/")[0] in line or "--hub-cap" in line


def test_the_ranges_are_in_the_help():
    out = run("traverse", "--help").output
    assert "0<=x<=1000000000" in out and "1<=x<=1000000" in out and "-1.0<=x<=1.0" in out  # (the bounds of retrieve/spec.py)
    assert "9999-12-31" in run("build", "--help").output


def test_the_largest_cap_in_range_walks(store):
    r = run("traverse", "--store", store, "--seed", "group:default/storefront", "--follow",
            "ownerOf", "--hub-cap", "1000000000", "--max-nodes", "1000000000")
    assert r.exit_code == 0 and "Checkout Service" in r.output, r.output


@pytest.mark.parametrize("stamp", ["99999999999999", "-1", "253402300800"])
def test_a_timestamp_out_of_range_stops_before_the_build(tmp_path, catalog, stamp):
    one_error(run("build", catalog, "--store", tmp_path / "s", "--timestamp", stamp, "-o",
                  tmp_path / "g.ttl"), "usage")
    assert not (tmp_path / "s").exists() and not (tmp_path / "g.ttl").exists()


def test_the_last_timestamp_in_range_builds(tmp_path, catalog):
    r = run("build", catalog, "--no-store", "--timestamp", "253402300799", "-o", tmp_path / "g.ttl",
            "--no-validate")
    assert r.exit_code == 0, r.output
    assert '"9999-12-31T23:59:59Z"^^xsd:dateTime' in (tmp_path / "g.ttl").read_text()


@pytest.mark.parametrize("value", ["abc", "1e9", "99999999999999", "-5", " 1"])
def test_a_bad_source_date_epoch_is_one_line(tmp_path, catalog, value):
    line = one_error(run("build", catalog, "--no-store", "-o", tmp_path / "g.ttl",
                         env={"SOURCE_DATE_EPOCH": value}), "usage")
    assert "SOURCE_DATE_EPOCH" in line and not (tmp_path / "g.ttl").exists()


# -- output paths are checked before the work -------------------------------------------------
def test_output_below_a_file_stops_before_the_build(tmp_path, catalog):
    (tmp_path / "afile").write_text("x")
    line = one_error(run("build", catalog, "--store", tmp_path / "s", "-o",
                         tmp_path / "afile" / "sub.ttl"), "output")
    assert "afile is not a folder" in line
    assert not (tmp_path / "s").exists()  # the build never started


def test_output_into_missing_folders_is_created(tmp_path, catalog):
    out = tmp_path / "new" / "deeper" / "g.ttl"
    assert run("build", catalog, "--no-store", "-o", out, "--no-validate").exit_code == 0
    assert out.read_text().startswith("@prefix")


@pytest.mark.parametrize("target, code", [("fifo", "output"), ("link-to-fifo", "output"),
                                          ("folder", "usage"), ("", "usage")])
def test_output_never_replaces_what_is_not_a_regular_file(tmp_path, catalog, target, code):
    # a FIFO stands for every device: the old atomic write, run as root, replaced /dev/null
    # with a regular file (so no test names a real device as an output)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link-to-fifo").symlink_to(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    path = tmp_path / target if target else ""
    one_error(run("build", catalog, "--no-store", "-o", path), code)
    assert (tmp_path / "fifo").is_fifo() and (tmp_path / "link-to-fifo").is_symlink()


@pytest.mark.parametrize("argv", [
    ["export", "-o", "{afile}/x.ttl"], ["schema", "shapes", "-o", "{afile}/x.ttl"],
    ["schema", "import", str(REPO / "fixtures" / "foreign" / "lab-ontology.ttl"), "-o",
     "{afile}/x.yaml"],
    ["schema", "infer", str(REPO / "fixtures" / "foreign" / "lab.nt"), "-o", "{afile}/x.yaml"]])
def test_every_output_option_is_checked_first(tmp_path, store, argv):
    (tmp_path / "afile").write_text("x")
    argv = [a.replace("{afile}", str(tmp_path / "afile")) for a in argv]
    if argv[0] == "export":
        argv += ["--store", store]
    one_error(run(*argv), "output")


# -- inputs ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["validate", "{fifo}"], ["validate", "/dev/zero"], ["schema", "import", "{fifo}"],
    ["schema", "infer", "/dev/zero"], ["traverse", "--graph", "{fifo}", "--seed", "x"],
    ["eval", "retrieval", "{fifo}"], ["build", "{cat}", "--no-store", "-o", "{tmp}/g.ttl",
                                      "--access", "{fifo}"],
    ["resolve", "review", "--queue", "{fifo}", "--graph", "{graph}"],
    ["export", "--store", "{fifo}"], ["traverse", "--store", "{tmp}/afile", "--seed", "x"]])
def test_a_fifo_device_or_file_in_the_wrong_place_is_refused_unopened(tmp_path, catalog, graph,
                                                                      argv):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "afile").write_text("x")
    argv = [a.format(fifo=tmp_path / "fifo", cat=catalog, tmp=tmp_path, graph=graph)
            for a in argv]
    line = one_error(run(*argv), "usage")  # a blocking open() would hang the test instead
    assert "not a regular file" in line or "not a folder" in line or "is a file" in line


def test_a_schema_name_the_file_system_refuses_is_a_schema_error():
    one_error(run("schema", "show", "x" * 5000), "schema")
    one_error(run("schema", "check", "/dev/null"), "schema")


# -- traverse: settings checked before the graph is read --------------------------------------
@pytest.mark.parametrize("argv, words", [
    (["--follow", "own>"], "unknown edge type 'own>'"),
    (["--follow", "ownedBy:sideways"], "bad direction"),
    (["--path", "::/"], "bad path"),
    (["--path", "  "], "path is empty"),
    (["--path", "/".join(["ownedBy:both"] * 101)], "a path has at most 100 steps, this one 101"),
    (["--follow", "ownedBy", "--type", "Nope"], "unknown node type 'Nope'"),
    (["--follow", "ownedBy", "--principal", 'a b,"'], "invalid access label"),
    (["--path", "ownedBy", "--follow", "ownedBy"], "not both"),
    (["-q", "hi", "--semantic", "2", "--embeddings-url", "http://[::1"], "not an http(s) URL"),
    (["-q", "hi", "--semantic", "2", "--embeddings-url", "ftp://x"], "not an http(s) URL")])
def test_traverse_settings_are_checked_before_the_store_is_opened(tmp_path, argv, words):
    r = run("traverse", "--store", tmp_path / "no-store-here", "--seed", "x", *argv)
    assert words in one_error(r, r.stderr.strip().rsplit("[", 1)[1].rstrip("]"))
    assert "no kgbuild store" not in r.output


@pytest.mark.parametrize("seed", ["", " ", "a\nb", "x" * 10000, "\udcff", "group:default/\u202e",
                                  "<>\"{}|^`\\", "%00", "../../etc/passwd"])
def test_odd_seeds_and_names_abstain_or_answer(store, seed):
    for option in ("--seed", "--name", "-q"):
        r = run("traverse", "--store", store, option, seed, "--follow", "ownerOf")
        assert r.exit_code in (1, 2) and "Traceback" not in r.output
        assert len(r.output) < 5000 + 2 * len(seed)


# -- schema files --------------------------------------------------------------------------------
BASE = ("name: s\nnamespace: '{ns}'\nprefix: {prefix}\nnode_types:\n  A: {{}}\n{extra}"
        "edge_types:\n  e: {{domain: A, range: A}}\n")


@pytest.mark.parametrize("ns, prefix, extra, words, line", [
    ("https://e.org/s#", "s", "  1: {}\n", "key 1 must be a name", 6),
    ("https://e.org/s#", "s", "  B: {parent: [A]}\n", "parent must be a type name", 6),
    ("https://e.org/s#", "s", "  B: {description: [x]}\n", "description must be text", 6),
    ("https://e.org/s>#", "s", "", "namespace must be an absolute IRI", 2),
    ("https://e.org/a b#", "s", "", "namespace must be an absolute IRI", 2),
    ('https://e.org/"q#', "s", "", "namespace must be an absolute IRI", 2),
    ("https://e.org/a#b/", "s", "", "namespace must be an absolute IRI", 2),
    ("https://e.org/%zz#", "s", "", "namespace must be an absolute IRI", 2),
    ("https://e.org/s#", "a-b", "", "prefix 'a-b' is not a valid name", 3),
    ("https://e.org/s#", "rdf", "", "prefix 'rdf' is one kgbuild binds itself", 3),
    ("https://e.org/s#", "5", "", "prefix 5 is not a valid name", 3),
])
def test_schema_check_refuses_what_build_would_choke_on(tmp_path, catalog, ns, prefix, extra,
                                                        words, line):
    f = tmp_path / "s.yaml"
    f.write_text(BASE.format(ns=ns.replace("'", "''"), prefix=prefix, extra=extra))
    msg = one_error(run("schema", "check", f), "schema")
    assert f"s.yaml:{line}: " in msg and words in msg
    msg = one_error(run("build", catalog, "--schema", f, "--store", tmp_path / "st"), "schema")
    assert words in msg and not (tmp_path / "st").exists()
    d = json.loads(run("schema", "check", f, "--format", "json").stdout)
    assert d["ok"] is False and words in d["error"]


def test_a_schema_with_unusual_but_valid_iris_builds(tmp_path, catalog):
    text = (REPO / "schema" / "software.yaml").read_text()
    f = tmp_path / "s.yaml"
    f.write_text(text.replace('"https://kgbuild.dev/schema/software#"', '"urn:x:sw%C3%A9/"'))
    assert run("schema", "check", f).exit_code == 0
    r = run("build", catalog, "--schema", f, "--no-store", "-o", tmp_path / "g.ttl")
    assert r.exit_code == 0 and "conforms" in r.output, r.output


# -- eval retrieval cases ------------------------------------------------------------------------
@pytest.mark.parametrize("case, words", [
    ("{name: c, seeds: 5}", "case 'c': seeds must be a list of text, got a number"),
    ("{name: c, seeds: [x], question: [a]}", "case 'c': question must be text, got a list"),
    ("{name: c, seeds: [x], follow: [5]}", "case 'c': follow must be a list of text"),
    ("{name: c, seeds: [x], path: 5}", "case 'c': path must be text"),
    ("{name: c, seeds: [x], hops: '2'}", "case 'c': hops must be an integer from 1 to 1000000"),
    ("{name: c, seeds: [x], cap: 1099511627776}", "case 'c': cap must be an integer from 0"),
    ("{name: c, seeds: [x], hops: true}", "case 'c': hops must be an integer"),
    ("{name: c, seeds: [x], principal: 5}", "case 'c': principal must be \"all\" or a list"),
    ("{name: c, seeds: [x], principal: ['a b']}", "case 'c': invalid access label 'a b'"),
    ("{name: c, seeds: [x], remove: [5]}", "case 'c': remove must be a list of edges"),
    ("{name: c, seeds: [x], required: [{edge: 5}]}", "case 'c': required: evidence items are"),
    ("{name: c, seeds: [x], answers: 5}", "case 'c': answers must be a list of text"),
    ("{name: c, seeds: [x], expect: [answer]}", "case 'c': expect must be answer or abstain"),
    ("{name: c, seeds: [x], abstain_reason: 5}", "case 'c': abstain_reason must be one of"),
    ("{name: [x]}", "case 2 needs a name"),
    ("{name: c, seeds: [x], follow: [nope]}", "case 'c': unknown edge type 'nope'"),
    ("{name: c, seeds: [x], remove: [[a, nope, b]]}", "case 'c': unknown edge type 'nope'"),
])
def test_a_case_with_a_wrong_type_is_located_and_named(tmp_path, graph, case, words):
    f = tmp_path / "cases.yaml"
    f.write_text(f"graph: {graph}\ncases:\n  - {{name: fine, seeds: [x]}}\n  - {case}\n")
    msg = one_error(run("eval", "retrieval", f), "input")
    assert f"cases.yaml:4: {words}" in msg, msg


def test_cases_file_keys_are_checked(tmp_path, graph):
    f = tmp_path / "cases.yaml"
    f.write_text(f"graph: {graph}\ngrpah: x\ncases:\n  - {{name: a, seeds: [x]}}\n")
    assert "cases.yaml:2: unknown key 'grpah'" in one_error(run("eval", "retrieval", f), "input")
    f.write_text("graph: 5\ncases:\n  - {name: a, seeds: [x]}\n")
    assert "cases.yaml:1: graph must be the path" in one_error(run("eval", "retrieval", f), "input")


def test_one_text_where_a_list_belongs_is_a_one_item_list(tmp_path, graph):
    f = tmp_path / "cases.yaml"
    f.write_text(f"graph: {graph}\ncases:\n  - {{name: a, seeds: group:default/storefront,\n"
                 "     follow: ownerOf, hops: 1, required: [{edge: [group:default/storefront, ownerOf,\n"
                 "     component:default/checkout-service]}]}\n")
    r = run("eval", "retrieval", f, "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["cases"][0]["recall"] == 1.0


# -- hostile content: lone surrogates ----------------------------------------------------------
def test_json_surrogate_escapes_are_carried_as_escaped_text(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "bom.json").write_text(
        '{"bomFormat": "CycloneDX", "specVersion": "1.5", "components": [{"bom-ref": '
        '"pkg:npm/x\\ud800", "name": "x\\ud800", "type": "library"}, {"bom-ref": "pkg:npm/y", '
        '"name": "y\\udfff", "type": "library"}], "dependencies": [{"ref": "pkg:npm/x\\ud800", '
        '"dependsOn": ["pkg:npm/y"]}]}')
    for fmt in ("text", "json"):
        r = run("build", src, "--no-store", "-o", tmp_path / "g.ttl", "--timestamp", "0",
                "--format", fmt)
        assert r.exit_code == 0, r.output
    ttl = (tmp_path / "g.ttl").read_text(encoding="utf-8")  # strict UTF-8: no surrogate
    assert "pkg:npm/x%5Cud800" in ttl and '"y\\\\udfff"' in ttl
    r = run("validate", tmp_path / "g.ttl")
    assert r.exit_code == 0, r.output
    r = run("traverse", "--graph", tmp_path / "g.ttl", "--seed", "pkg:npm/x\\ud800", "--follow",
            "dependsOn")
    assert r.exit_code == 0 and "y\\udfff" in r.output, r.output


# -- the error handler ---------------------------------------------------------------------------
def test_click_usage_errors_are_one_line_too():
    line = one_error(run("traverse", "--hops", "x"), "usage")
    assert "kgbuild traverse" in line or "main traverse" in line
    assert "-h" in line
    one_error(run("--bogus"), "usage")
    one_error(run("schema", "bogus"), "usage")


def test_an_error_message_is_one_bounded_line(tmp_path):
    r = run("schema", "check", tmp_path / ("a\nb" * 2000 + ".yaml"))
    line = one_error(r, "schema")
    assert len(line) < 2100 and "\\n" in line


def test_an_unexpected_exception_is_one_line_marked_internal(monkeypatch):
    import kgbuild.cli.schema as cli_schema

    def boom(name):
        raise RuntimeError("a bug\nwith two lines")

    monkeypatch.setattr(cli_schema, "load_schema", boom)
    line = one_error(run("schema", "show"), "internal")
    assert "internal error: RuntimeError: a bug\\nwith two lines (please report)" in line


def test_a_file_system_error_is_one_line_marked_os_error(monkeypatch):
    import kgbuild.cli.schema as cli_schema

    def disk_full(name):
        raise OSError(28, "No space left on device", "/full/disk")

    monkeypatch.setattr(cli_schema, "load_schema", disk_full)
    line = one_error(run("schema", "show"), "os-error")
    assert "/full/disk: No space left on device" in line


@pytest.mark.parametrize("depth", [1_001, 60_000, 200_000])
def test_deeply_nested_yaml_is_one_line_not_a_crash(tmp_path, depth):
    """libyaml composes in C: before the depth check, 50,000 brackets killed the process."""
    f = tmp_path / "deep.yaml"
    f.write_text("[" * depth + "]" * depth)
    assert "deep.yaml:1: YAML nested too deeply to read" in one_error(run("schema", "check", f),
                                                                       "schema")
    src = tmp_path / "src"
    src.mkdir()
    (src / "catalog-info.yaml").write_text("a: " + "[" * depth + "]" * depth)
    r = run("build", src, "--no-store", "-o", tmp_path / "g.ttl", "--no-validate")
    assert r.exit_code == 0 and "nested too deeply" in r.output, r.output
