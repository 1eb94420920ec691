"""Reports: the SHACL report graph reads back, text and JSON name the file and line, the
engines agree through the CLI, and hygiene findings are warnings unless --strict."""

import json
import shutil

from click.testing import CliRunner
from conftest import FIXTURE_CATALOG
from rdflib import Graph
from rdflib.namespace import RDF, SH

from kgbuild.cli.main import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def damaged(tmp_path):
    out = tmp_path / "g.ttl"
    assert run("build", FIXTURE_CATALOG, "-o", out, "--no-validate").exit_code == 0
    text = out.read_text()
    assert text.count('kg:extractor "backstage" ;') > 2
    out.write_text(text.replace('kg:extractor "backstage" ;', "", 2))
    return out


def test_shacl_report_reads_back(tmp_path):
    out = damaged(tmp_path)
    r = run("validate", out, "--format", "shacl", "--no-hygiene")
    assert r.exit_code == 1
    g = Graph().parse(data=r.output, format="turtle")
    [report] = list(g.subjects(RDF.type, SH.ValidationReport))
    assert g.value(report, SH.conforms).toPython() is False
    results = list(g.objects(report, SH.result))
    assert len(results) == 2
    assert {g.value(x, SH.resultPath) for x in results} == {
        next(iter(g.objects(results[0], SH.resultPath)))}
    assert all(g.value(x, SH.sourceConstraintComponent) == SH.MinCountConstraintComponent for x in results)


def test_text_and_json_name_file_and_line_and_engines_agree(tmp_path):
    out = damaged(tmp_path)
    fast = run("validate", out, "--format", "json", "--no-hygiene")
    ref = run("validate", out, "--format", "json", "--no-hygiene", "--engine", "pyshacl")
    assert fast.exit_code == ref.exit_code == 1
    f, p = json.loads(fast.output), json.loads(ref.output)
    assert (f["engine"], p["engine"]) == ("fast", "pyshacl")
    assert f["groups"] == p["groups"]
    wheres = [x["where"] for g in f["groups"] for x in g["results"]]
    assert len(wheres) == 2 and all(w.startswith("catalog/") and w.rsplit(":", 1)[1].isdigit()
                                    for w in wheres)
    text = run("validate", out, "--no-hygiene").output
    assert f"[{wheres[0]}]" in text


def test_unsupported_shapes_fall_back_to_pyshacl(tmp_path):
    out = damaged(tmp_path)
    shapes = tmp_path / "extra.ttl"
    shapes.write_text("@prefix sh: <http://www.w3.org/ns/shacl#> .\n"
                      "<urn:s> a sh:NodeShape ; sh:targetClass <urn:C> ; "
                      "sh:property [ sh:path <urn:p> ; sh:pattern \"^a\" ; sh:message \"m\" ] .\n")
    r = run("validate", out, "--shapes", shapes, "--format", "json", "--no-hygiene")
    data = json.loads(r.output)
    assert data["engine"] == "pyshacl" and "shacl#pattern" in data["note"] and data["violations"] == 2


def test_hygiene_warnings_exit_0_unless_strict(tmp_path):
    root = tmp_path / "catalog"
    shutil.copytree(FIXTURE_CATALOG, root)
    web = root / "components" / "web-shop.yaml"
    web.write_text(web.read_text().replace("dependsOn: [component:checkout-service]",
                                         "dependsOn: [component:checkout-service, component:nowhere-defined]"))
    store = tmp_path / "store"
    assert run("build", root, "--store", store).exit_code == 0
    r = run("validate", "--store", store, "--format", "json", "--skip", "duplicates")
    data = json.loads(r.output)
    undefined = [h for h in data["hygiene"] if h["check"] == "undefined"]
    assert r.exit_code == 0 and data["conforms"]
    assert [h["node"] for h in undefined] == ["component:default/nowhere-defined"]
    assert undefined[0]["where"].startswith("catalog/components/web-shop.yaml:")
    assert run("validate", "--store", store, "--strict", "--skip", "duplicates").exit_code == 1
    assert run("validate", "--store", store, "--no-hygiene", "--strict").exit_code == 0
