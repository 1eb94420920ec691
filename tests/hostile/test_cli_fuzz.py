"""The CLI fuzzed: every command and group with generated option values, and every input format
with hostile content (odd unicode, JSON surrogate escapes, NUL bytes, huge numbers, deep
nesting, wrong types). Whatever comes in: exit code 0, 1 or 2, never a traceback (CliRunner
with ``catch_exceptions=False``: an exception fails the test), never the CLI's last-resort
``[internal]`` error line, and output bounded by the input.

Runtime is bounded by ``max_examples`` (the whole file takes well under a minute); under
``CI=true`` conftest loads a derandomized profile, so a red run is reproducible.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG, REPO
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kgbuild.cli import main

SCALE = float(os.environ.get("KGBUILD_FUZZ_SCALE", "1"))  # more examples for a deeper local run


def fuzz(n: int):
    return settings(max_examples=max(1, int(n * SCALE)), deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


# -- the world every command line runs in ---------------------------------------------------------
@pytest.fixture(scope="module")
def world(tmp_path_factory):
    w = tmp_path_factory.mktemp("world")
    shutil.copytree(FIXTURE_CATALOG, w / "cat")
    (w / "tiny").mkdir()  # a small catalog: fast builds
    for f in ("components/web-shop.yaml", "components/pricing-sdk.yaml", "org/teams.yaml"):
        shutil.copy(FIXTURE_CATALOG / f, w / "tiny" / Path(f).name)
    shutil.copy(REPO / "schema" / "software.yaml", w / "schema.yaml")
    shutil.copy(REPO / "fixtures" / "aliases" / "aliases.yaml", w / "aliases.yaml")
    (w / "afile").write_text("just text\n")
    (w / "adir").mkdir()
    (w / "empty.ttl").write_text("")
    (w / "bad.ttl").write_text("@prefix : <x> .\n:a :b \"unterminated\n")
    (w / "bad-schema.yaml").write_text("name: 5\nnamespace: 'https://e.org/a>#'\n"
                                       "node_types: {1: {}}\nedge_types: []\n")
    (w / "cases.yaml").write_text(
        "graph: graph.ttl\ncases:\n"
        "  - {name: owner, question: Who owns Payments API?, path: ownedBy,\n"
        "     required: [{node: api:default/payments-api}]}\n"
        "  - {name: none, seeds: [nope], follow: [ownedBy], expect: abstain}\n")
    os.mkfifo(w / "fifo")
    (w / "fifo-link").symlink_to(w / "fifo")
    shutil.copytree(REPO / "fixtures" / "prose", w / "docs")
    (w / "corpus.jsonl").write_text(
        json.dumps({"id": "p1", "title": "Payments API", "text": "Payments API charges cards."})
        + "\n" + json.dumps({"id": "p2", "title": "Pricing SDK", "text": "Prices for Payments API."})
        + "\n{not json\n")
    (w / "q.jsonl").write_text(json.dumps({"id": "a", "question": "Who owns Payments API?",
                                           "supporting_ids": ["p1"]}) + "\n")
    (w / "edges.jsonl").write_text(
        json.dumps({"subject": "Checkout Service", "predicate": "dependsOn",
                    "object": "Pricing SDK", "evidence": "Checkout Service depends on",
                    "source": "checkout-design.md"}) + "\n{not json\n")
    with cwd(w):
        r = run(["build", "cat", "--timestamp", "0", "-o", "graph.ttl"])  # into ./.kgbuild
    assert r.exit_code == 0, r.output
    assert (w / "graph.ttl").stat().st_size > 1000
    with cwd(w):
        r = run(["ingest", "corpus.jsonl", "--no-embed"])  # passages beside the graph
    assert r.exit_code == 0, r.output
    with cwd(w):
        r = run(["traverse", "--seed", "api:default/payments-api", "--path", "ownedBy",
                 "--format", "json"])
    assert r.exit_code == 0, r.output
    (w / "result.json").write_text(r.stdout)
    (w / "bad-result.json").write_text('{"nodes": 5, "edges": [[]]}')
    return w


@contextmanager
def cwd(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


ENV = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "unused",  # loopback only
       "SOURCE_DATE_EPOCH": None, "KGBUILD_EMBEDDINGS_MODEL": None, "KGBUILD_MODEL": "fuzz"}


def run(argv: list[str]):
    return CliRunner().invoke(main, argv, catch_exceptions=False, env=ENV)


def check(argv: list[str], result, limit: int = 200_000) -> None:
    """The promise every command line keeps."""
    shown = f"{argv!r}\n{result.output[-3000:]}"
    assert result.exit_code in (0, 1, 2), shown
    assert "Traceback" not in result.output, shown
    assert "[internal]" not in result.output, shown
    assert "[os-error]" not in result.output, shown  # every path is checked before it is used
    assert len(result.output) <= limit + 20 * sum(len(a) for a in argv), shown
    code = result.stderr.rstrip().rsplit("[", 1)[-1].rstrip("]") if result.exit_code == 2 else ""
    event(f"exit {result.exit_code} {code if len(code) < 20 else ''}".strip())  # statistics
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("Error:")]
    assert len(errors) <= 1, shown  # an error is one line, ending in its [code]
    assert all(ln.endswith("]") for ln in errors), shown


# -- values -------------------------------------------------------------------------------------
# a real command line holds no NUL byte, and undecodable bytes arrive as \udc80-\udcff
_pieces = st.characters(codec="utf-8", exclude_characters="\x00") | st.sampled_from(
    ["\udc80", "\udcff", "\u2028", "\x0c", "\n", "\t", "\ufeff", "\u202e", "'", '"', "\\", "%",
     "../", "/", ":", ",", " ", "*", "[", "{", "<", ">", "#", "~", "group:default/", "pkg:npm/"])
long_text = st.integers(300, 5000).map(lambda n: "x" * n)
hostile = st.lists(_pieces, max_size=25).map("".join) | st.sampled_from(["", " ", "-", "--"]) \
    | long_text
numbers = st.integers(-(2**70), 2**70).map(str) | st.sampled_from(
    ["0", "1", "-1", "2147483647", "2147483648", "9223372036854775808", "99999999999999",
     "253402300800", "1e9", "nan", "inf", "-inf", "0x10", "", " 1", "1.5", "١"])
floats = st.floats(allow_nan=True, allow_infinity=True).map(repr) | numbers


def pick(*values):
    return st.sampled_from(list(values))


def mostly(good, bad=hostile):
    """Good values four times in five (so that the command gets past option parsing into the
    work), hostile ones the rest."""
    return st.integers(0, 4).flatmap(lambda i: good if i else bad)


small = pick("0", "1", "2", "3", "5", "50", "1000")
boundaries = pick("1000000", "1000001", "1000000000", "1000000001", "2147483645", "2147483647",
                  "2147483648", "4294967296", "9223372036854775807", "9223372036854775808",
                  "99999999999999", "253402300799", "-2147483649")
numbers = st.one_of(small, boundaries, numbers)  # a third each: fine, at the edges, anything
floats = mostly(pick("0.5", "0", "1", "-1", "0.99"), floats)
EDGE_NAMES = ["ownedBy", "ownerOf", "dependsOn", "dependencyOf", "partOf", "hasPart",
              "memberOf", "hasMember", "childOf", "parentOf", "providesApi", "consumesApi"]
edges = mostly(st.builds(lambda e, d: e + d, pick(*EDGE_NAMES, "nope", ""),
                         pick("", ":out", ":in", ":both", ":sideways", ":", "::")))
paths = mostly(st.lists(edges, min_size=1, max_size=5).map("/".join))
ids = mostly(pick("group:default/storefront", "api:default/payments-api", "pkg:npm/left-pad",
                  "component:default/checkout-service", "group:default/commerce-platform",
                  "user:default/jane", "x"))
names = mostly(pick("Payments API", "payments", "Storefront", "Commerce Platform", "pricing sdk",
                    "Paymnts"))
questions = mostly(pick("Who owns Payments API?", "Which service depends on the library "
                        "maintained by the team that owns Payments API?",
                        "What does Checkout Service depend on?"))
types = mostly(pick("Service", "Group", "API", "component", "Library", "Nope", ""))
labels = mostly(pick("risk", "pci", "a,b", "", ",", "a b", "pci,,risk"))
inputs = mostly(pick("graph.ttl", "empty.ttl", "bad.ttl", "afile", "adir", "fifo", "missing.ttl",
                     "schema.yaml", "cases.yaml", "aliases.yaml", "/dev/null", ".kgbuild/CURRENT",
                     ".kgbuild/review-queue.json"))
graphs = mostly(pick("graph.ttl", "graph.ttl", "empty.ttl", "bad.ttl", "afile", "fifo", "adir"))
outputs = mostly(pick("scratch/out.ttl", "afile/sub.ttl", "adir", "fifo", "scratch/new/deep/x.ttl",
                      "fifo-link", "/proc/nope/x.ttl", "", "scratch/", "afile"))
# (never a real device as an output: if the check ever broke, root would replace /dev/null)
stores = mostly(pick(".kgbuild", ".kgbuild", "missing-store", "afile", "adir", "fifo", ""))
schemas = mostly(pick("software", "software", "schema.yaml", "bad-schema.yaml", "nope", "afile",
                      "adir", "fifo", ""))
urls = pick("http://127.0.0.1:9/v1", "http://[::1", "ftp://x", "", "http://", "not a url",
            "http://127.0.0.1:99999/", "http://127.0.0.1:9/v1\n")  # never anything but loopback
queries = mostly(pick("SELECT ?s WHERE { ?s a ?t } ORDER BY ?s", "ASK { ?s ?p ?o }",
                      "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 5",
                      "SELECT * WHERE { ?s ?p }", "INSERT DATA { <a:b> <a:c> <a:d> }", ""))
registries = mostly(pick("scratch/reg.yaml", "aliases.yaml", "adir", "afile", "fifo", "scratch/"))


def fmt(*valid):
    return mostly(pick(*valid))


# (option, values): values None is a flag
COMMON_READ = [("--store", stores), ("--schema", schemas), ("--graph", graphs)]
COMMANDS: dict[tuple[str, ...], tuple[list, list]] = {
    # command path: (positional argument strategies, options)
    ("export",): ([], [("--store", stores), ("--schema", schemas),
                       ("--format", fmt("turtle", "nt", "jsonld", "trig", "nquads")),
                       ("-o", outputs)]),
    ("validate",): ([graphs], [("--schema", schemas), ("--format", fmt("text", "json"))]),
    ("schema", "show"): ([schemas], [("--format", fmt("text", "json", "turtle", "json-schema"))]),
    ("schema", "check"): ([schemas], [("--format", fmt("text", "json"))]),
    ("schema", "shapes"): ([schemas], [("-o", outputs)]),
    ("schema", "import"): ([graphs], [("-o", outputs), ("--name", names), ("--prefix", names)]),
    ("schema", "infer"): ([graphs], [("-o", outputs), ("--name", names), ("--prefix", names)]),
    ("traverse",): ([], COMMON_READ + [
        ("--seed", ids), ("--seed", ids), ("--name", names), ("-q", questions),
        ("-q", questions), ("--follow", edges), ("--hops", numbers), ("--path", paths),
        ("--path", paths), ("--hub-cap", numbers), ("--cap", numbers), ("--no-cap", None),
        ("--include-seeds", None), ("--type", types), ("--max-nodes", numbers),
        ("--max-edges", numbers), ("--max-paths", numbers), ("--max-chars", numbers),
        ("--semantic", numbers), ("--semantic-min", floats), ("--embeddings-url", urls),
        ("--principal", labels), ("--as", labels), ("--all-access", None),
        ("--format", fmt("text", "json"))]),
    ("eval", "retrieval"): ([mostly(pick("cases.yaml"), inputs)],
                            COMMON_READ + [("--format", fmt("text", "json"))]),
    ("resolve", "explain"): ([names], COMMON_READ + [
        ("--type", types), ("--registry", registries), ("--principal", labels),
        ("--all-access", None), ("--format", fmt("text", "json"))]),
    ("resolve", "review"): ([], COMMON_READ + [
        ("--queue", inputs), ("--type", types), ("--registry", registries),
        ("--principal", labels), ("--all-access", None), ("--format", fmt("text", "json"))]),
    ("resolve", "accept"): ([names, ids], [("--type", types), ("--type", types),
                                           ("--schema", schemas), ("--registry", registries),
                                           ("--format", fmt("text", "json"))]),
    ("resolve", "reject"): ([names, ids], [("--type", types), ("--type", types),
                                           ("--schema", schemas), ("--registry", registries),
                                           ("--format", fmt("text", "json"))]),
    # extract: a dry run mostly; a real one asks 127.0.0.1:9 (refused at once, never retried)
    ("extract",): ([mostly(pick("docs", "docs/checkout-design.md"), inputs)], [
        ("--dry-run", None), ("--dry-run", None), ("--model", names), ("--base-url", urls),
        ("--mode", fmt("chunk", "document")), ("--chunk-size", numbers),
        ("--chunk-overlap", numbers), ("--concurrency", numbers), ("--gleanings", numbers),
        ("--structured-output", fmt("auto", "json_schema", "json_object", "tools")),
        ("--full", None), ("-o", outputs), ("--report", outputs), ("--aliases", registries),
        ("--access", inputs), ("--exclude", hostile), ("--timestamp", numbers),
        ("--store", pick("scratch/xstore", "afile", "fifo")), ("--format", fmt("text", "json"))]),
    ("verify",): ([mostly(pick("edges.jsonl"), inputs)], [
        ("--sources", mostly(pick("docs", "docs"), inputs)), ("--sources", pick("docs")),
        ("--schema", schemas), ("-o", outputs), ("--report", outputs), ("--store", stores),
        ("--no-store", None), ("--aliases", registries), ("--timestamp", numbers),
        ("--format", fmt("text", "json"))]),
    ("show",): ([ids], COMMON_READ + [
        ("--result", mostly(pick("result.json", "bad-result.json"), inputs)),
        ("--format", fmt("text", "json", "html")), ("-o", outputs), ("--hops", numbers),
        ("--hub-cap", numbers), ("--max-nodes", numbers), ("--max-edges", numbers),
        ("--principal", labels), ("--all-access", None)]),
    ("ls",): ([], COMMON_READ + [("--type", types), ("--limit", numbers),
                                 ("--principal", labels), ("--format", fmt("text", "json"))]),
    ("stats",): ([], COMMON_READ + [("--top", numbers), ("--principal", labels),
                                    ("--all-access", None), ("--format", fmt("text", "json"))]),
    ("paths",): ([types, types], [("--max-hops", numbers), ("--limit", numbers),
                                  ("--schema", schemas), ("--format", fmt("text", "json"))]),
    ("query",): ([queries], [("--store", stores), ("--format", fmt("table", "json", "csv")),
                             ("--limit", numbers), ("--timeout", floats),
                             ("--union", None), ("--no-union", None)]),
    # push/pull: only to a refused loopback port or a malformed URL, never retried
    ("push",): ([], [("--endpoint", urls), ("--store", stores), ("--graph-iri", ids),
                     ("--full", None), ("--batch-bytes", numbers), ("--user", names),
                     ("--token", names), ("--format", fmt("text", "json"))]),
    ("pull",): ([], [("--endpoint", urls), ("-o", outputs), ("--graph-iri", ids),
                     ("--format", fmt("text", "json"))]),
    # ingest: a scratch store by default; embeddings only from a refused loopback port
    ("ingest",): ([mostly(pick("corpus.jsonl"), inputs)], [
        ("--store", pick("scratch/pstore", "afile", "fifo", "adir")), ("--full", None),
        ("--no-embed", None), ("--embeddings-url", urls), ("--embeddings-model", names),
        ("--format", fmt("text", "json"))]),
    ("retrieve",): ([], [
        ("-q", questions), ("-q", questions), ("--questions", mostly(pick("q.jsonl"), inputs)),
        ("--k", numbers), ("--method", fmt("default", "bm25", "dense", "hybrid", "graph")),
        ("--store", stores), ("--embeddings-url", urls), ("--principal", labels),
        ("--all-access", None), ("--format", fmt("text", "json", "jsonl", "context"))]),
    # load: into a scratch store by default (the world's store stays as built)
    ("load",): ([graphs], [("--store", pick("scratch/lstore", "afile", "fifo", "adir")),
                           ("--schema", schemas), ("--format", fmt("text", "json"))]),
    # init: in a scratch folder of its own (a kgbuild.toml in the world would steer the rest)
    ("init",): ([], [("--force", None), ("--source", mostly(pick("cat", "."), inputs))]),
    ("schema",): ([], []),
    ("resolve",): ([], []),
    ("eval",): ([], []),
    (): ([], [("--version", None), ("--help", None), ("--bogus", None)]),
}
# how often each command is drawn: the ones with the most options the most
WEIGHTS = {("traverse",): 6, ("show",): 2, ("query",): 2, ("resolve", "explain"): 2, ("resolve", "review"): 2,
           ("eval", "retrieval"): 2, ("export",): 2, ("resolve", "accept"): 2, ("extract",): 3,
           ("verify",): 2}
DRAWN = [c for c in sorted(COMMANDS) for _ in range(WEIGHTS.get(c, 1))]


@st.composite
def command_lines(draw, commands=COMMANDS):
    path = draw(st.sampled_from(DRAWN))
    positional, options = commands[path]
    argv = list(path)
    if options:
        for opt, values in draw(st.lists(st.sampled_from(options), max_size=5)):
            argv.append(opt)
            if values is not None:
                argv.append(draw(values))
    # usually the right number of positionals, sometimes one too few or too many
    args = [draw(v) for v in positional]
    if draw(st.integers(0, 14)) == 0:
        args = args[:-1] if args and draw(st.booleans()) else args + [draw(hostile)]
    if draw(st.booleans()):
        argv.extend(args)
    else:
        argv[len(path):len(path)] = args
    if path in (("push",), ("pull",)):  # bounded: a refused port is never retried
        argv += ["--retries", "0", "--timeout", "2"]
    if path == ("ingest",):  # a scratch store by default (the world's passages stay)
        argv[1:1] = ["--store", "scratch/pstore"]
    if path == ("load",):  # a scratch store by default
        argv[1:1] = ["--store", "scratch/lstore"]
    if path == ("extract",):  # bounded: no retries, a short timeout, a scratch store by default
        argv[1:1] = ["--store", "scratch/xstore"]
        argv += ["--max-retries", "0", "--timeout", "2"]
    return argv


@pytest.mark.slow
def test_the_world_is_what_the_fuzzing_expects(world):
    """The fixtures the command lines name exist, so good values really are good."""
    with cwd(world):
        r = run(["traverse", "--seed", "api:default/payments-api", "--path", "ownedBy"])
        assert r.exit_code == 0 and "Commerce Platform" in r.output, r.output
        r = run(["traverse", "--graph", "graph.ttl", "--seed", "x", "--hub-cap", "2147483648"])
        assert r.exit_code == 2 and "[usage]" in r.output, r.output


@pytest.mark.slow
@fuzz(160)
@given(argv=command_lines())
def test_every_command_with_generated_options(world, argv):
    with cwd(world):
        (world / "scratch").mkdir(exist_ok=True)
    here = world
    if argv[:1] == ["init"]:  # its own folder, holding what --source names
        here = world / "scratch" / "init"
        here.mkdir(exist_ok=True)
        for name in ("cat", "afile", "fifo"):
            if not (here / name).exists():
                (here / name).symlink_to(world / name)
    with cwd(here):
        check(argv, run(argv))


TRAVERSE_SETTINGS = [o for o in COMMANDS[("traverse",)][1]
                     if o[0] not in ("--seed", "--name", "-q", "--store", "--graph", "--schema")]
seeding = st.one_of(st.tuples(st.just("--seed"), pick("group:default/storefront",
                                                      "api:default/payments-api")),
                    st.tuples(st.just("--name"), pick("Payments API", "Storefront Team")),
                    st.tuples(st.just("-q"), pick("Who owns Payments API?")))
walks = st.one_of(st.tuples(st.just("--follow"), pick("ownerOf", "ownedBy:both", "dependsOn:in")),
                  st.tuples(st.just("--path"), pick("ownedBy", "ownedBy:out/ownerOf:out",
                                                    "ownerOf")))


@fuzz(80)
@given(seed=seeding, walk=walks, options=st.lists(st.sampled_from(TRAVERSE_SETTINGS), max_size=4),
       data=st.data())
@pytest.mark.slow
def test_traverse_from_a_real_seed_with_generated_settings(world, seed, walk, options, data):
    """A seed that exists and a walk that goes somewhere, so every setting reaches the walk."""
    argv = ["traverse", *seed, *walk]
    for opt, values in options:
        argv.append(opt)
        if values is not None:
            argv.append(data.draw(values))
    with cwd(world):
        check(argv, run(argv))


# -- build: options and hostile input files -----------------------------------------------------
BUILD_OPTIONS = [
    ("-o", outputs), ("--schema", schemas), ("--no-store", None), ("--full", None),
    ("--prune", None), ("--exclude", hostile | pick("*.yaml", "**", "!x", "[", "a/**/b", "\\")),
    ("--no-gitignore", None), ("--access", inputs), ("--aliases", registries),
    ("--validate", None), ("--no-validate", None), ("--resolve", None), ("--no-resolve", None),
    ("--strict", None), ("--timestamp", numbers), ("--max-file-size", numbers),
    ("--format", fmt("text", "json")), ("--store", pick("{run}/store", "afile", "adir", "fifo"))]


@pytest.mark.slow
@fuzz(25)
@given(options=st.lists(st.sampled_from(BUILD_OPTIONS), max_size=6), data=st.data())
def test_build_with_generated_options(world, options, data):
    with cwd(world), tempfile.TemporaryDirectory(dir=world) as run_dir:
        argv = ["build", "tiny", "--no-validate"]
        for opt, values in options:
            argv.append(opt)
            if values is not None:
                argv.append(data.draw(values).replace("{run}", run_dir))
        if "--store" not in argv:
            argv += ["--store", f"{run_dir}/store"]
        check(argv, run(argv))


scalars = (st.none() | st.booleans() | st.integers(-(2**80), 2**80)
           | st.floats(allow_nan=True, allow_infinity=True) | hostile
           | st.text(st.characters(codec="utf-8") | pick("\ud800", "\udfff", "\x00", "\u2028"),
                     max_size=20))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(hostile | pick("name", "owner", "dependsOn"), inner,
                                        max_size=4), max_leaves=12)


def js(value) -> str:
    """JSON text; lone surrogates become ``\\ud800`` escapes, NaN becomes ``NaN``."""
    return json.dumps(value, ensure_ascii=True)


def nested(depth: int, open_: str = "[", close: str = "]") -> str:
    return open_ * depth + close * depth


refs = pick("component:pricing-sdk", "resource:db", "group:team", "api:x", "user:u") | hostile
backstage = st.builds(
    lambda kind, name, spec, extra: {"apiVersion": "backstage.io/v1alpha1", "kind": kind,
                                     "metadata": {"name": name, **extra}, "spec": spec},
    pick("Component", "API", "Group", "User", "Resource", "System", "Domain", "Location",
         "Template", 5, None, ["Component"]),
    pick("svc", "a" * 100, "") | hostile | st.integers(),
    st.dictionaries(pick("owner", "type", "lifecycle", "system", "dependsOn", "dependencyOf",
                         "providesApis", "consumesApis", "memberOf", "children", "parent",
                         "members", "definition", "targets", "target", "subcomponentOf"),
                    refs | st.lists(refs, max_size=5) | values, max_size=6),
    st.dictionaries(pick("annotations", "labels", "namespace", "tags", "title"),
                    values | st.just({"kgbuild.dev/access": "pci"}), max_size=3))


@st.composite
def source_files(draw) -> dict[str, bytes]:
    """One to three files in any format kgbuild reads, each hostile in its own way."""
    out: dict[str, bytes] = {}
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["backstage", "npm", "cyclonedx", "compose", "pyproject",
                                     "requirements", "gomod", "codeowners", "openapi", "deep",
                                     "bytes"]))
        text = hostile_text = draw(hostile)
        if kind == "backstage":
            docs = draw(st.lists(backstage, min_size=1, max_size=3))
            name, text = "catalog-info.yaml", "\n---\n".join(js(d) for d in docs)
        elif kind == "npm":
            name, text = "package.json", js({"name": draw(hostile | pick("app", "@s/app")),
                                             "dependencies": draw(st.dictionaries(hostile, values,
                                                                                  max_size=4)),
                                             "devDependencies": draw(values)})
        elif kind == "cyclonedx":
            comps = draw(st.lists(st.fixed_dictionaries(
                {"bom-ref": hostile, "name": hostile, "type": pick("library", "application", 5),
                 "purl": hostile | pick("pkg:npm/a@1", "pkg:pypi/b")}), max_size=3))
            deps = [{"ref": c["bom-ref"], "dependsOn": [d["bom-ref"] for d in comps]} for c in comps]
            name, text = "bom.json", js({"bomFormat": "CycloneDX", "specVersion": "1.5",
                                         "components": comps, "dependencies": deps + [draw(values)]})
        elif kind == "compose":
            name, text = "docker-compose.yml", js({"services": draw(st.dictionaries(
                hostile, st.fixed_dictionaries({"image": values, "depends_on": values,
                                                "links": values}), max_size=3))})
        elif kind == "pyproject":
            deps = draw(st.lists(hostile | pick("requests>=2", "a[b]; python_version<'3'"),
                                 max_size=4))
            name = "pyproject.toml"
            text = (f"[project]\nname = {js(draw(hostile))}\ndependencies = {js(deps)}\n"
                    f"[project.optional-dependencies]\n{js(draw(hostile))} = {js(deps)}\n")
        elif kind == "requirements":
            lines = draw(st.lists(hostile | pick("-r other.txt", "-r ../../../etc/passwd",
                                                 "-r /dev/zero", "-r requirements.txt",
                                                 "requests==2.0", "-e .", "--hash=sha256:x"),
                                  max_size=6))
            name, text = "requirements.txt", "\n".join(lines)
            out.setdefault("other.txt", b"flask\n")
        elif kind == "gomod":
            reqs = draw(st.lists(hostile, max_size=4))
            name = "go.mod"
            text = f"module {hostile_text}\n\nrequire (\n" + "".join(f"\t{r} v1.0.0\n" for r in reqs) + ")\n"
        elif kind == "codeowners":
            rules = draw(st.lists(st.tuples(hostile | pick("*", "*a*a*a*a*a*a*a*a*a*a*b", "/docs/",
                                                           "**/x", "!y", "[a-", "\\"),
                                            hostile | pick("@team", "@org/team", "a@b.c")),
                                  max_size=5))
            name, text = "CODEOWNERS", "\n".join(f"{p} {o}" for p, o in rules)
            out.setdefault("package.json", js({"name": "owned-app"}).encode())
        elif kind == "openapi":
            name, text = "openapi.json", js({"openapi": draw(values | pick("3.0.0")),
                                             "info": {"title": draw(values), "version": draw(values)},
                                             "paths": draw(values)})
        elif kind == "deep":
            depth = draw(st.integers(50, 20000) | pick(999, 1001, 60_000, 200_000))
            name, text = draw(pick(("package.json", nested(depth)), ("catalog-info.yaml",
                                   "a: " + nested(depth)), ("bom.json", nested(depth, "{\"a\":", "}")),
                                   ("docker-compose.yml", nested(depth, "{a: ", "}")),
                                   ("pyproject.toml", "a = " + nested(depth))))
        else:
            name = draw(pick("catalog-info.yaml", "package.json", "go.mod", "pyproject.toml",
                             "requirements-dev.txt", "bom.json", "compose.yaml"))
            out[name] = draw(st.binary(max_size=300)) + b"\x00" + draw(st.binary(max_size=50))
            continue
        if draw(st.integers(0, 7)) == 0:  # a NUL byte or a UTF-16 encoding
            raw = draw(pick(text.encode("utf-8", "surrogatepass").replace(b",", b",\x00", 1),
                            text.encode("utf-16", "surrogatepass")))
        else:
            raw = text.encode("utf-8", "surrogatepass")
        out[name] = raw
    return out


@pytest.mark.slow
@fuzz(60)
@given(files=source_files(), validate=st.integers(0, 5))
def test_build_of_hostile_sources(world, files, validate):
    with tempfile.TemporaryDirectory(dir=world) as tmp:
        src = Path(tmp) / "src"
        (src / ".github").mkdir(parents=True)
        for name, data in files.items():
            (src / (".github/CODEOWNERS" if name == "CODEOWNERS" else name)).write_bytes(data)
        size = sum(len(d) for d in files.values())
        argv = ["build", "src", "--no-store", "-o", "out.ttl", "--timestamp", "0",
                "--validate" if validate == 0 else "--no-validate", "--format", "json"]
        with cwd(tmp):
            r = run(argv)
        check(argv, r, limit=50_000 + 20 * size)
        if r.exit_code != 2:
            summary = json.loads(r.stdout)
            event(f"built {min(summary['entities'], 3)}+ entities, "
                  f"{min(summary['problems'], 3)}+ problems")
            out = Path(tmp) / "out.ttl"
            assert out.stat().st_size <= 20_000 + 60 * size, (files, out.stat().st_size)
            if validate == 1:  # what build wrote, every reader reads
                with cwd(tmp):
                    for argv in (["validate", "out.ttl"], ["schema", "infer", "out.ttl"],
                                 ["traverse", "--graph", "out.ttl", "--seed", "x"]):
                        check(argv, run(argv))


# -- the tool's own files: schemas, cases, RDF graphs -------------------------------------------
@st.composite
def mutated(draw, base):
    """``base`` (a valid document) with up to three values replaced by hostile ones or removed,
    anywhere in it: the near misses a loader has to locate."""
    doc = json.loads(json.dumps(draw(base)))
    for _ in range(draw(st.integers(0, 3))):
        spots = []

        def walk(node):
            if isinstance(node, dict):
                for k in list(node):
                    spots.append((node, k))
                    walk(node[k])
            elif isinstance(node, list):
                for i in range(len(node)):
                    spots.append((node, i))
                    walk(node[i])
        walk(doc)
        if not spots:
            break
        parent, key = draw(st.sampled_from(spots))
        action = draw(st.integers(0, 3))
        if action == 0 and isinstance(parent, dict):
            del parent[key]
        elif action == 1 and isinstance(parent, dict):  # a key of another type
            parent[draw(st.integers() | st.none() | st.booleans() | hostile)] = parent.pop(key)
        else:
            parent[key] = draw(values)
    return doc


words = pick("A", "B", "Service", "Team", "x_1", "Z9")
namespaces = mostly(pick("https://e.org/s#", "https://e.org/s/", "urn:x:y/", "http://e.org/é#",
                         "https://e.org/a%20b/", "x:/"),
                    pick("https://e.org/a b#", "https://e.org/a>#", 'https://e.org/"#', "urn:x:",
                         "https://e.org/a#b/", "https://e.org/%zz#", "https://e.org/\x01#"))
valid_schemas = st.builds(
    lambda ns, prefix, extra_types, inverse, transitive, dt, iri: {
        "name": "fz", "version": 1, "namespace": ns, "prefix": prefix,
        "node_types": {"Thing": {"description": "any"}, "Part": {"parent": "Thing"},
                       **{t: {} for t in extra_types if t not in ("Thing", "Part")}},
        "edge_types": {"linksTo": {"domain": "Thing", "range": ["Part", "Thing"],
                                   "transitive": transitive,
                                   **({"inverse": inverse} if inverse else {}),
                                   **({"iri": iri} if iri else {})}},
        "attributes": {"size": {"datatype": dt, "multiple": True}}},
    namespaces, mostly(pick("fz", "sw", "x"), pick("rdf", "owl", "a-b", "")),
    st.lists(words, max_size=3),
    st.integers(0, 9).flatmap(lambda i: pick("LinksTo", "Part") if i == 0 else pick(None, "linkedFrom")),
    st.booleans(), mostly(pick("string", "integer", "date", "dateTime", "anyURI"), pick("float")),
    mostly(pick(None, "https://e.org/other#p", "https://e.org/\u00e9"),
           pick("http://www.w3.org/2000/01/rdf-schema#label", "https://kgbuild.dev/ns#x",
                "https://e.org/p q")))
schema_docs = mutated(valid_schemas)


@pytest.mark.slow
@fuzz(60)
@given(doc=schema_docs)
def test_a_schema_check_accepts_builds(world, doc):
    """Whatever ``schema check`` accepts, every command can use; what it refuses is one line."""
    with tempfile.TemporaryDirectory(dir=world) as tmp, cwd(tmp):
        Path("s.yaml").write_text(js(doc), encoding="utf-8", errors="surrogatepass")
        r = run(["schema", "check", "s.yaml"])
        check(["schema", "check", js(doc)], r)
        if r.exit_code == 0:
            for argv in (["schema", "show", "s.yaml", "--format", "turtle"],
                         ["schema", "shapes", "s.yaml"],
                         ["schema", "show", "s.yaml", "--format", "json-schema"],
                         ["build", str(world / "tiny"), "--no-store", "-o", "g.ttl", "--schema",
                          "s.yaml", "--timestamp", "0"]):
                r = run(argv)
                check(argv + [js(doc)], r)
                assert r.exit_code in (0, 1), (doc, argv, r.output)


valid_cases = st.builds(
    lambda name, seeds, walk, extra, graph: {
        "graph": graph, "cases": [{"name": name, **seeds, **walk, **extra}]},
    pick("one", "two", "déjà vu"),
    pick({"seeds": ["group:default/storefront"]}, {"names": ["Payments API"]},
         {"question": "Who owns Payments API?"}, {"seeds": ["nope"]}),
    pick({"path": "ownedBy"}, {"path": "ownedBy:out/ownerOf:out"},
         {"follow": ["ownerOf"], "hops": 2}, {"follow": ["nope"]}, {"path": "bad::"}),
    st.fixed_dictionaries({}, optional={
        "cap": pick(0, 5, None), "max_nodes": pick(1, 10), "principal": pick(["risk"], "all", []),
        "remove": pick([["api:default/payments-api", "ownedBy", "group:default/commerce-platform"]],
                       [["a", "nope", "b"]]),
        "required": pick([{"node": "api:default/payments-api"}],
                         [{"edge": ["api:default/payments-api", "ownedBy",
                                    "group:default/commerce-platform"]}]),
        "forbidden": pick([{"node": "x"}]), "answers": pick(["group:default/commerce-platform"]),
        "expect": pick("answer", "abstain"), "abstain_reason": pick("no-seed", "no-path"),
        "types": pick(["Group"], ["Nope"])}),
    pick("graph.ttl", "tiny", "missing", "fifo", "adir/..", "/dev/null"))
cases_docs = mutated(valid_cases)


@pytest.mark.slow
@fuzz(30)
@given(doc=cases_docs)
def test_eval_retrieval_of_generated_cases(world, doc):
    with cwd(world), tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=world, delete=False,
                                                 encoding="utf-8", errors="surrogatepass") as f:
        f.write(js(doc))
    try:
        with cwd(world):
            argv = ["eval", "retrieval", f.name, "--graph", "graph.ttl"]
            check(argv + [js(doc)], run(argv))
    finally:
        os.unlink(f.name)


iri_parts = hostile | pick("a", "b c", "x>y", "%zz", "\\u0000", "#", "\ud800")
literals = values.map(js) | pick('"\\ud800"', '"x"^^<http://www.w3.org/2001/XMLSchema#integer>',
                                 '"1e999"^^<http://www.w3.org/2001/XMLSchema#double>',
                                 '"abc"^^<http://www.w3.org/2001/XMLSchema#dateTime>',
                                 '"a"@' + "x" * 100)
triples = st.tuples(iri_parts, pick("http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
                                    "https://kgbuild.dev/schema/software#dependsOn",
                                    "https://kgbuild.dev/ns#line", "http://e.org/p"),
                    iri_parts | literals)


@fuzz(30)
@given(rows=st.lists(triples, max_size=6), raw=mostly(st.just(""), hostile), ext=pick(".nt", ".ttl", ".nq", ".trig",
                                                                     ".jsonld", ".rdf", ".owl"))
@pytest.mark.slow
def test_rdf_readers_on_hostile_graphs(world, rows, raw, ext):
    lines = []
    for s, p, o in rows:
        obj = o if o.startswith('"') else f"<http://e.org/{o}>"
        lines.append(f"<http://e.org/{s}> <{p}> {obj} .")
    text = "\n".join(lines) + "\n" + raw
    with tempfile.TemporaryDirectory(dir=world) as tmp, cwd(tmp):
        Path("g" + ext).write_bytes(text.encode("utf-8", "surrogatepass"))
        for argv in (["validate", "g" + ext], ["schema", "infer", "g" + ext],
                     ["schema", "import", "g" + ext, "-o", "s.yaml"],
                     ["traverse", "--graph", "g" + ext, "--seed", "http://e.org/a",
                      "--follow", "dependsOn"],
                     ["resolve", "explain", "a", "--graph", "g" + ext]):
            check(argv + [text[:200]], run(argv))


# -- the project file and the files beside it: access rules, alias registry, review queue -------
def toml_value(value) -> str:
    """``value`` as TOML (strings as JSON-escaped basic strings; a surrogate is a TOML error)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) and value == value and abs(value) != float("inf"):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{js(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"
    return js(str(value))


valid_projects = st.fixed_dictionaries({}, optional={
    "sources": pick(["tiny"], ["tiny", "missing"], ["../tiny"], [], ["tiny/web-shop.yaml"]),
    "schema": pick("software", "nope", "s.yaml"), "store": pick(".kgbuild", "st", "tiny"),
    "exclude": pick(["*.json"], ["["], ["**/teams.yaml"], []), "gitignore": st.booleans(),
    "access": pick("access.yaml", "missing.yaml", "tiny"), "aliases": pick("aliases.yaml", "x.yaml"),
    "max_file_size": pick(1, 20, 0, 2**40)})
valid_access = st.fixed_dictionaries({"rules": st.lists(st.fixed_dictionaries(
    {"paths": pick(["*.yaml"], "teams.yaml", ["**"], ["["], ["!x"]),
     "labels": pick(["pci"], ["a b"], [], "risk")}), max_size=3)},
    optional={"default": pick([], ["public"], "x")})
valid_registry = st.fixed_dictionaries({}, optional={
    "aliases": pick({"API": {"api:default/payments-api": ["PAPI", "payments"]}},
                    {"Nope": {"x": ["y"]}}, {"Library": {"pkg:pypi/pyyaml": "yaml"}}),
    "distinct": pick([["api:default/payments-api", "api:default/x"]], [["a"]]),
    "decisions": pick([{"mention": "Paymnts", "type": "API", "id": "api:default/payments-api",
                        "decision": "accepted"}], [{"mention": 5, "decision": "maybe"}])})
valid_queue = st.fixed_dictionaries({"queue": st.lists(st.fixed_dictionaries(
    {"mention": pick("Paymnts", "x"), "type": pick("API", None, "Nope"), "status": pick("review"),
     "candidates": pick([], [{"id": "api:default/payments-api", "score": 80.0}]),
     "count": pick(1, 2**70)}), max_size=2)})


@fuzz(40)
@given(project=mutated(valid_projects), access=mutated(valid_access),
       registry=mutated(valid_registry), queue=mutated(valid_queue))
@pytest.mark.slow
def test_project_access_aliases_and_queue_files(world, project, access, registry, queue):
    with tempfile.TemporaryDirectory(dir=world) as tmp, cwd(tmp):
        shutil.copytree(world / "tiny", "tiny")
        Path("kgbuild.toml").write_text(
            "".join(f"{js(str(k))} = {toml_value(v)}\n" for k, v in project.items()),
            encoding="utf-8", errors="surrogatepass")
        Path("access.yaml").write_text(js(access), encoding="utf-8", errors="surrogatepass")
        Path("aliases.yaml").write_text(js(registry), encoding="utf-8", errors="surrogatepass")
        Path("queue.json").write_text(js(queue), encoding="utf-8", errors="surrogatepass")
        graph = str(world / "graph.ttl")
        for argv in (["build", "--no-validate", "--timestamp", "0"],
                     ["build", "tiny", "--no-store", "-o", "g.ttl", "--access", "access.yaml",
                      "--aliases", "aliases.yaml", "--no-validate"],
                     ["resolve", "explain", "Paymnts", "--graph", graph, "--registry", "aliases.yaml"],
                     ["resolve", "review", "--queue", "queue.json", "--graph", graph,
                      "--registry", "aliases.yaml"],
                     ["resolve", "accept", "PAPI", "api:default/payments-api", "--type", "API",
                      "--registry", "aliases.yaml"]):
            check(argv + [js(project)[:300]], run(argv))
