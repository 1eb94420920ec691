"""The spec's rules, read the same by every caller: a hub cap of 0 is no cap, and a question
with types and neither path nor follow walks the shortest typed path unless told otherwise."""

from __future__ import annotations

from conftest import FIXTURE_CATALOG

from kgbuild.evaluate.retrieval import eval_retrieval
from kgbuild.project.pipeline import build_graph
from kgbuild.retrieve.spec import request_spec

CASE = """cases:
  - name: capped
    seeds: [group:default/commerce-platform]
    follow: [ownerOf:out]
    hops: 1
    cap: {cap}
"""


def test_a_request_reads_cap_zero_as_no_cap_and_defaults_the_shortest_path():
    assert request_spec({"cap": 0}).cap is None and request_spec({"cap": 3}).cap == 3
    assert request_spec({}).cap == 50
    asked = {"question": "q", "types": ["Group"]}
    assert request_spec(asked).shortest_path is True
    assert request_spec({**asked, "path": "ownedBy"}).shortest_path is False
    assert request_spec({**asked, "shortest_path": False}).shortest_path is False
    assert request_spec({"question": "q"}).shortest_path is False


def test_an_evaluation_case_reads_cap_zero_as_no_cap(tmp_path):
    kg = build_graph([FIXTURE_CATALOG], timestamp=0, validate=False).graph
    runs = {}
    for cap in (0, "null", 1):
        cases = tmp_path / f"cases-{cap}.yaml"
        cases.write_text(CASE.format(cap=cap))
        runs[cap] = eval_retrieval(cases, kg)["cases"][0]
    assert runs[0] == runs["null"] and runs[1]["cap_cut"] > 0 == runs[0]["cap_cut"]
