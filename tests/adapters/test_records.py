"""The adapters' record helpers on their own: citations, the graph paths behind passages."""

from __future__ import annotations

from kgbuild.adapters.search import citation, graph_paths


def test_graph_paths_follow_the_links_back_within_the_answer():
    def passage(pid, **graph):
        return {"id": pid, "signals": {"graph": graph} if graph else {}}

    paths = graph_paths([passage("a", question=True, name="x"),
                         passage("b", **{"from": "a", "way": "mentions", "name": "y"}),
                         passage("c", **{"from": "b", "way": "dependsOn", "name": "z"}),
                         passage("d", **{"from": "gone", "way": "mentions", "name": "w"}),
                         passage("e", **{"from": "f", "way": "mentions", "name": "v"}),
                         passage("f", **{"from": "e", "way": "mentioned-by", "name": "u"}),
                         passage("g")])
    assert [x["passage"] for x in paths["c"]] == ["a", "b", "c"]
    assert [x["way"] for x in paths["c"]] == ["question", "mentions", "dependsOn"]
    assert paths["d"] == [{"passage": "d", "from": "gone", "way": "mentions", "name": "w"}]
    assert [x["passage"] for x in paths["e"]] == ["f", "e"]  # a cycle stops
    assert paths["g"] == []


def test_citations():
    assert citation("a.yaml", "line 3") == "a.yaml:3"
    assert citation("p.json", "/dependencies/x") == "p.json#/dependencies/x"
    assert citation("d.md", "chars 3-9") == "d.md chars 3-9"
