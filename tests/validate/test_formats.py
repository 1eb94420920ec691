"""``kgbuild validate`` reads every format ``export`` writes; bad files are one located line."""

import os

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG

from kgbuild.cli.main import main
from kgbuild.errors import InputError
from kgbuild.io.rdffile import load_graph
from kgbuild.store.formats import EXPORT_FORMATS
from kgbuild.validate.validator import validate_file

SUFFIX = {"turtle": "ttl", "nt": "nt", "jsonld": "jsonld", "trig": "trig", "nquads": "nq"}


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """The fixture catalog's store exported in every format."""
    base = tmp_path_factory.mktemp("exports")
    store = base / "store"
    r = run("build", FIXTURE_CATALOG, "--store", store, "--timestamp", 0, "--no-validate")
    assert r.exit_code == 0, r.output
    out = {}
    for fmt in EXPORT_FORMATS:
        out[fmt] = base / f"graph.{SUFFIX[fmt]}"
        r = run("export", "--store", store, "--format", fmt, "-o", out[fmt])
        assert r.exit_code == 0, r.output
    return out


def test_every_export_format_reads_the_same_triples(exports, schema):
    graphs = {fmt: load_graph(path) for fmt, path in exports.items()}
    turtle = set(graphs["turtle"])
    assert len(turtle) > 400
    for fmt, g in graphs.items():
        assert set(g) == turtle, fmt  # TriG and N-Quads: the union of their named graphs
    for fmt, path in exports.items():
        assert validate_file(path, schema).conforms, fmt


@pytest.mark.parametrize("fmt", ["trig", "nquads"])
def test_violations_in_named_graphs_are_found(exports, tmp_path, fmt):
    path = exports[fmt]
    lines = path.read_text().splitlines(keepends=True)
    kept = [x for x in lines if "ns#extractor" not in x and "kg:extractor" not in x]
    assert len(kept) < len(lines)
    if fmt == "trig":  # a predicate-object list must still end where its last pair ended
        kept = "".join(kept).replace(";\n\t}", ".\n\t}").replace(";\n  }", ".\n  }")
    bad = tmp_path / path.name
    bad.write_text("".join(kept))
    r = run("validate", bad, "--format", "json")
    assert r.exit_code == 1, r.output
    assert '"conforms": false' in r.output and "extractor" in r.output


@pytest.mark.parametrize("suffix,text", [
    ("ttl", ""), ("ttl", "@prefix x: <http://x/> .\n# nothing else\n"), ("nt", "\n\n"),
    ("nq", "# comment only\n"), ("trig", "@prefix x: <http://x/> .\nx:g { }\n"),
    ("jsonld", "[]"), ("rdf", '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/>'),
])
def test_no_triples_is_an_error_not_conforms(tmp_path, suffix, text):
    p = tmp_path / f"empty.{suffix}"
    p.write_text(text)
    r = run("validate", p)
    assert r.exit_code == 2
    assert "no triples" in r.output and "conforms" not in r.output.replace("no triples", "")
    assert len(r.output.strip().splitlines()) == 1


@pytest.mark.parametrize("suffix,text,line", [
    ("ttl", "@prefix x: <http://x/> .\n\nx:a x:b x:c .\nx:a x:b .\n", 4),
    ("nt", "<http://a> <http://b> <http://c> .\n<http://a> <http://b> \"open .\n", 2),
    ("nq", "<http://a> <http://b> <http://c> <http://g> .\n\n\n<http://a> <b> <http://c> .\n", 4),
    ("trig", "@prefix x: <http://x/> .\nx:g {\n x:a x:b x:c .\n x:a x:b\n}\n", 5),
    ("nt", "<http://a> <http://b> \"x\u2028y\" .\n<http://a> <http://b> \"z\" .\nbroken\n", 3),
])
def test_parse_error_is_one_line_at_the_parsers_line(tmp_path, suffix, text, line):
    p = tmp_path / f"bad.{suffix}"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_graph(p)
    assert info.value.line == line
    r = run("validate", p)
    assert r.exit_code == 2 and f"bad.{suffix}:{line}: cannot parse" in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_remote_jsonld_context_is_never_fetched(tmp_path):
    p = tmp_path / "remote.jsonld"
    p.write_text('{"@context": "http://127.0.0.1:9/context.jsonld", "@id": "http://a", "b": "c"}')
    with pytest.raises(InputError) as info:
        load_graph(p)
    assert "remote.jsonld" in str(info.value)


def test_fifo_is_refused_not_read(tmp_path):
    fifo = tmp_path / "graph.ttl"
    os.mkfifo(fifo)
    with pytest.raises(InputError) as info:
        load_graph(fifo)  # would block forever if opened for a blocking read
    assert "not a regular file" in str(info.value)
    link = tmp_path / "zero.nt"
    link.symlink_to("/dev/zero")
    with pytest.raises(InputError) as info:
        load_graph(link)
    assert "not a regular file" in str(info.value)


def test_a_four_megabyte_literal_validates(exports, tmp_path, schema):
    """rdflib's N-Triples reader is quadratic in a literal's length (minutes for 4 MB); the
    file is now read by pyoxigraph. Finishing is the bound."""
    nt = exports["nt"].read_text()
    subject = next(x.split(" ")[0] for x in nt.splitlines() if "rdf-schema#label>" in x)
    big = "q" * (4 * 2**20)
    p = tmp_path / "big.nt"
    p.write_text(nt + f'{subject} <http://www.w3.org/2000/01/rdf-schema#comment> "{big}" .\n')
    g = load_graph(p)
    assert max(len(o) for o in g.objects()) == len(big)
    assert validate_file(p, schema).conforms
    report = run("validate", p, "--format", "json")
    assert report.exit_code == 0 and len(report.output) < 10_000
