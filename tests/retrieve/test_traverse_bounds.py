"""Every traversal setting has a bound, for library callers as for the CLI: a cap or budget
beyond any graph would overflow the index's int32 arrays, a longer path the walk recursion."""

import pytest

from kgbuild import Assertion, KnowledgeGraph
from kgbuild.errors import KgbuildError
from kgbuild.retrieve.spec import (
    MAX_COUNT,
    MAX_HOPS,
    MAX_NAME_CHARS,
    MAX_PATH_STEPS,
    MAX_QUESTION_CHARS,
    TraversalSpec,
)
from kgbuild.retrieve.traverse import traverse


def chain(schema, n: int) -> KnowledgeGraph:
    kg = KnowledgeGraph(schema)
    for i in range(n):
        kg.add_node(f"component:default/c{i}", "Service", f"C{i}")
    for i in range(n - 1):
        kg.add_assertion(Assertion(f"component:default/c{i}", "dependsOn",
                                   f"component:default/c{i + 1}", "d.yaml", "t",
                                   "2024-01-01T00:00:00Z", line=i + 1))
    return kg


@pytest.mark.parametrize("setting", [{"cap": MAX_COUNT + 1}, {"cap": 2**31}, {"hops": 0},
                                     {"hops": MAX_HOPS + 1}, {"max_nodes": -1},
                                     {"max_edges": 2**63}, {"max_paths": True},
                                     {"max_chars": 1.5}])
def test_a_setting_out_of_bounds_is_an_error(schema, setting):
    with pytest.raises(KgbuildError, match="must be an integer from"):
        traverse(chain(schema, 3), TraversalSpec(seeds=["component:default/c0"], **setting))


def test_the_bounds_themselves_walk(schema):
    kg = chain(schema, 300)
    r = traverse(kg, TraversalSpec(seeds=["component:default/c0"], follow=["dependsOn"],
                                   hops=MAX_HOPS, cap=MAX_COUNT, max_nodes=MAX_COUNT,
                                   max_edges=MAX_COUNT, max_paths=MAX_COUNT, max_chars=MAX_COUNT))
    assert len(r.nodes) == 300
    steps = "/".join(["dependsOn"] * MAX_PATH_STEPS)
    r = traverse(kg, TraversalSpec(seeds=["component:default/c0"], path=steps, cap=MAX_COUNT))
    assert r.answers == [f"component:default/c{MAX_PATH_STEPS}"]


def test_a_path_longer_than_the_bound_is_an_error_not_a_recursion_error(schema):
    steps = "/".join(["dependsOn"] * 5000)
    with pytest.raises(KgbuildError, match=f"at most {MAX_PATH_STEPS} steps, this one 5000"):
        traverse(chain(schema, 10), TraversalSpec(seeds=["component:default/c0"], path=steps))


def test_the_cli_the_server_and_the_cases_read_the_bounds_of_the_spec():
    from kgbuild.cli.traverse import traverse as command
    from kgbuild.evaluate.retrieval import _NUMBERS
    from kgbuild.retrieve.spec import BOUNDS
    from kgbuild.serve.spec import BOUNDS as SERVED

    ranges = {p.name: (p.type.min, p.type.max) for p in command.params
              if p.name in BOUNDS and p.name != "semantic_min"}
    assert ranges and all(ranges[k] == BOUNDS[k] for k in ranges)
    assert all(_NUMBERS[k][:2] == BOUNDS[k] for k in _NUMBERS) and SERVED is BOUNDS
    assert BOUNDS["cap"] == (0, MAX_COUNT) and BOUNDS["hops"] == (1, MAX_HOPS)


def test_a_question_or_name_beyond_its_bound_is_an_error(schema):
    kg = chain(schema, 3)
    with pytest.raises(KgbuildError, match="a question has at most 10,000 characters"):
        traverse(kg, TraversalSpec(question="C1 " * (MAX_QUESTION_CHARS // 3 + 1)))
    with pytest.raises(KgbuildError, match="a name has at most"):
        traverse(kg, TraversalSpec(names=["x" * (MAX_NAME_CHARS + 1)]))
    r = traverse(kg, TraversalSpec(question="x" * (MAX_QUESTION_CHARS - 3) + " C1"))
    assert [s["id"] for s in r.seeds] == ["component:default/c1"]
