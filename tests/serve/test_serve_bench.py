"""bench/serve_bench.py at a tiny size: the load test's answers equal the library's and the
CLI's at every concurrency level (correctness only: timings are the benchmark's business)."""

from __future__ import annotations

import sys

import pytest
from conftest import REPO, free_port

sys.path.insert(0, str(REPO / "bench"))
import serve_bench  # noqa: E402


@pytest.mark.slow
@pytest.mark.server
def test_the_load_test_gets_equal_answers_at_every_level():
    lines: list[str] = []
    result = serve_bench.run(components=60, requests=48, seconds=60, levels=[1, 4, 16],
                             cli_runs=1, port=free_port(), out=lines.append)
    assert result["equal"], "\n".join(lines)
    assert [r["requests"] for r in result["levels"]] == [48, 48, 48]
    assert [r["wrong"] for r in result["levels"]] == [0, 0, 0]
