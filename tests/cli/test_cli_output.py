"""Text output for people: problems grouped by code with counts (--quiet, --verbose), every
line within 100 columns on real catalogs, counted words in the singular for 1; JSON keeps
everything."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import CATALOGS

from kgbuild.cli.main import main
from kgbuild.cli.output import WIDTH, fit, plural, problem_lines
from kgbuild.errors import Problem


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_problems_grouped_by_code_errors_first_capped():
    problems = [Problem("warning", "not-fetched", f"target {i} is a URL", "a.yaml", i + 1)
                for i in range(24)] + [Problem("error", "rejected-entity", "unknown kind", "b.yaml", 2)]
    lines = problem_lines(problems)
    assert lines[:3] == ["problems (25): 1 error, 24 warnings", "  [rejected-entity] 1 error",
                         "    b.yaml:2: error: unknown kind [rejected-entity]"]
    assert lines[3] == "  [not-fetched] 24 warnings"
    assert lines[4:9] == [f"    a.yaml:{i + 1}: warning: target {i} is a URL [not-fetched]"
                          for i in range(5)]
    assert lines[9:] == ["    ... and 19 more (--verbose lists them)"]
    assert len(problem_lines(problems, verbose=True)) == 1 + 2 + 1 + 24
    assert problem_lines(problems, quiet=True) == ["problems (1): 1 error", *lines[1:3]]
    assert problem_lines(problems[:3], quiet=True) == []
    assert problem_lines([p.to_dict() for p in problems]) == lines  # dicts too (JSON summaries)


def test_plural():
    assert [plural(1, "edge"), plural(2, "edge"), plural(0, "entity", "entities"),
            plural(1234, "node")] == ["1 edge", "2 edges", "0 entities", "1,234 nodes"]


def test_fit_wraps_lists_and_cuts_long_words_in_the_middle():
    line = "entities: " + ", ".join(f"Type{i} {i * 7}" for i in range(20))
    out = fit(line).splitlines()
    assert all(len(x) <= WIDTH for x in out) and len(out) == 3
    assert all(x.startswith("  Type") for x in out[1:])  # items kept whole, indented
    assert " ".join(x.strip() for x in out) == line
    path = "    catalogs/" + "/".join(f"folder-{i}" for i in range(20)) + "/component.yaml:9"
    [cut] = fit(path).splitlines()
    assert len(cut) == WIDTH and cut.startswith("    catalogs/folder-0/") and "…" in cut
    assert cut.endswith("/component.yaml:9")
    assert fit("short\n\n  also short") == "short\n\n  also short"


def test_fit_keeps_a_table_one_line_a_row_and_aligned():
    rows = ["  petstore  API  api:default/petstore  degree 3",
            "  " + "x" * 60 + "  Library  catalogs/" + "y" * 70 + "#lib  degree 12"]
    out = fit("\n".join(rows)).splitlines()
    assert len(out) == 2 and all(len(x) <= WIDTH for x in out)
    assert out[0].index("API") == out[1].index("Library")  # columns aligned
    assert out[0].index("api:") == out[1].index("catalogs/")
    assert out[1].endswith("#lib  degree 12") and out[0].endswith("degree 3")
    assert "…" in out[1] and out[0].split()[:3] == ["petstore", "API", "api:default/petstore"]
    hubs = ["hubs:"] + [f"      {n}  name-{n} (Library, catalogs/{'z' * 90}#{n})" for n in (28, 26)]
    out = fit("\n".join(hubs)).splitlines()  # two cells, no rule: not a table, each line cut
    assert len(out) == 3 and all(len(x) <= WIDTH and "…" in x for x in out[1:])
    assert out[2].startswith("      26  name-26 (Library, catalogs/") and out[2].endswith("#26)")
    table = ["s     o", "----  ----", "<" + "a" * 80 + ">  <" + "b" * 80 + ">"]
    out = fit("\n".join(table)).splitlines()  # two cells under a rule: a table
    assert len(out) == 3 and out[1] == "-" * 49 + "  " + "-" * 49 and len(out[2]) == WIDTH


@pytest.fixture(scope="module")
def backstage(tmp_path_factory):
    """The shared Backstage corpora built once into a store: 34 problems, 26 not-fetched."""
    store = tmp_path_factory.mktemp("bs") / "store"
    built = run("build", CATALOGS / "backstage", "--store", store, "--format", "json")
    assert built.exit_code == 0
    return store, json.loads(built.output)


@pytest.mark.slow
@pytest.mark.corpus
def test_build_groups_problems_and_json_keeps_every_one(backstage, tmp_path):
    store, summary = backstage
    assert summary["problems_by_code"] == {"not-fetched": 26, "rejected-entity": 8}
    assert len(summary["problem_list"]) == 34
    text = run("build", CATALOGS / "backstage", "--store", store).output
    assert "problems (34): 8 errors, 26 warnings" in text
    assert "  [rejected-entity] 8 errors" in text and "  [not-fetched] 26 warnings" in text
    assert text.count("(--verbose lists them)") == 2 and "... and 21 more" in text
    assert all(len(line) <= WIDTH for line in text.splitlines())
    every = run("build", CATALOGS / "backstage", "--store", store, "--verbose").output
    assert "(--verbose lists them)" not in every
    assert sum(line.startswith("    backstage/") for line in every.splitlines()) == 34
    quiet = run("build", CATALOGS / "backstage", "--store", store, "--quiet").output
    assert quiet.splitlines()[0] == "problems (8): 8 errors"
    assert "not-fetched" not in quiet and "entities" not in quiet


@pytest.mark.slow
@pytest.mark.corpus
def test_ls_stats_show_within_100_columns_on_a_real_catalog(tmp_path):
    store = tmp_path / "store"
    assert run("build", CATALOGS, "--store", store, "--no-validate").exit_code == 0
    for args in (["ls", "--limit", "1000"], ["stats"], ["show", "component:default/petstore"],
                 ["show", "pkg:pypi/flask"], ["validate", "--undefined-external"]):
        r = run(*args, "--store", store)
        lines = r.output.splitlines()
        assert r.exit_code == 0 and len(lines) > 5, args
        assert max(map(len, lines)) <= WIDTH, (args, max(lines, key=len))
        wide = json.loads(run(*args, "--store", store, "--format", "json").output)
        assert wide  # JSON untouched by fitting
    assert "1 edges" not in run("show", "component:default/petstore", "--store", store).output
