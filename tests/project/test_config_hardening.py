"""The project file's loose ends: ``tool.kgbuild`` in pyproject.toml however written is read
(and checked) as kgbuild.toml is, every numeric setting is range-checked with the file, line
and key named, a UTF-8 byte order mark is accepted, a TOML syntax error names its line and
column."""

from __future__ import annotations

import pytest

from kgbuild.project.config import find_project, load_project
from kgbuild.errors import InputError

PROJECT = '[project]\nname = "x"\n\n'


@pytest.mark.parametrize("text", [
    PROJECT + '[tool.kgbuild.llm]\nmodel = "m"\nconcurrency = 8\n',  # no [tool.kgbuild] line
    PROJECT + '[tool]\nkgbuild.llm.model = "m"\nkgbuild.llm.concurrency = 8\n',
    'tool.kgbuild.llm.model = "m"\ntool.kgbuild.llm.concurrency = 8\n',
    PROJECT + '[tool.kgbuild]\nllm.model = "m"\nllm.concurrency = 8\n',
    PROJECT + '[tool.kgbuild]\nllm = {model = "m", concurrency = 8}\n',
])
def test_pyproject_llm_settings_however_written_are_read(tmp_path, text):
    (tmp_path / "pyproject.toml").write_text(text)
    project = find_project(tmp_path)
    assert project.config == tmp_path / "pyproject.toml"
    assert project.llm == {"model": "m", "concurrency": 8}


@pytest.mark.parametrize("name, text, line, key", [
    ("pyproject.toml", PROJECT + '[tool.kgbuild.llm]\nmodel = "m"\nconcurrency = -3\n', 6,
     "tool.kgbuild.llm.concurrency"),
    ("pyproject.toml", PROJECT + '[tool]\nkgbuild.llm.concurrency = -3\n', 5,
     "tool.kgbuild.llm.concurrency"),
    ("pyproject.toml", 'tool.kgbuild.llm.timeout = 0\n', 1, "tool.kgbuild.llm.timeout"),
    ("kgbuild.toml", '[llm]\nconcurrency = -3\n', 2, "llm.concurrency"),
    ("kgbuild.toml", 'schema = "software"\nllm.concurrency = -3\n', 2, "llm.concurrency"),
    ("kgbuild.toml", '\nllm = {model = "m", concurrency = -3}\n', 2, "llm.concurrency"),
    ("kgbuild.toml", '[llm]\ntimeout = nan\n', 2, "llm.timeout"),
    ("kgbuild.toml", '[llm]\nmax_retries = 11\n', 2, "llm.max_retries"),
    ("kgbuild.toml", '[llm]\nmax_response_size = 0\n', 2, "llm.max_response_size"),
    ("kgbuild.toml", '[llm]\ntemperature = -0.5\n', 2, "llm.temperature"),
    ("kgbuild.toml", '[llm]\nmodel = "m"\n\n[llm.price]\ninput = -1\n', 5, "llm.price"),
    ("kgbuild.toml", 'max_file_size = -3\n', 1, "max_file_size"),
])
def test_every_number_out_of_range_is_a_located_error(tmp_path, name, text, line, key):
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError) as err:
        find_project(tmp_path)
    assert err.value.file == str(tmp_path / name) and err.value.line == line
    assert str(err.value).startswith(f"{tmp_path / name}:{line}: {key} ")


def test_a_byte_order_mark_is_accepted(tmp_path):
    (tmp_path / "kgbuild.toml").write_bytes(b'\xef\xbb\xbf[llm]\nmodel = "m"\n')
    assert load_project(tmp_path / "kgbuild.toml").llm == {"model": "m"}
    (tmp_path / "kgbuild.toml").unlink()
    (tmp_path / "pyproject.toml").write_bytes(b'\xef\xbb\xbf[tool.kgbuild.llm]\nmodel = "m"\n')
    assert find_project(tmp_path).llm == {"model": "m"}


@pytest.mark.parametrize("name, text, line, column", [
    ("kgbuild.toml", '[llm]\nmodel = "m"\nconcurrency = \n', 3, 15),
    ("kgbuild.toml", '[llm]\nmodel = "m', 2, 11),  # at the end of the document
    ("kgbuild.toml", 'sources = ["a",\n', 2, 1),
    ("pyproject.toml", PROJECT + '[tool.kgbuild.llm\nmodel = "m"\n', 4, 18),  # found, reported
])
def test_a_syntax_error_names_its_line_and_column(tmp_path, name, text, line, column):
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError) as err:
        find_project(tmp_path)
    assert err.value.line == line and f"TOML syntax error at column {column}: " in err.value.message
    assert "(at " not in err.value.message  # said once, not twice
