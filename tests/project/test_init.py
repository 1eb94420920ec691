"""``kgbuild init`` writes a commented kgbuild.toml that works as written, naming every setting
the project file takes; the sample in docs/sources.md works when copied."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CATALOG

from kgbuild.cli.main import main
from kgbuild.errors import InputError, KgbuildError
from kgbuild.project.config import (
    _TYPES,
    BACKSTAGE_KEYS,
    EMBEDDINGS_KEYS,
    LLM_KEYS,
    RERANK_KEYS,
    load_project,
)
from kgbuild.project.init import init_project, project_template

DOCS = Path(__file__).resolve().parents[2] / "docs" / "sources.md"


def test_the_template_names_every_setting_and_each_commented_line_loads(tmp_path):
    text = project_template()
    config = tmp_path / "kgbuild.toml"
    config.write_text(text)
    project = load_project(config)
    assert project.sources == (".",) and project.schema == "software" and project.store == ".kgbuild"
    tables = {"llm": LLM_KEYS, "embeddings": EMBEDDINGS_KEYS, "rerank": RERANK_KEYS,
              "backstage": BACKSTAGE_KEYS}
    top = set(_TYPES) - set(tables)
    assert {k for k in top if re.search(rf"^(# )?{k} = ", text, re.M)} == top
    for table, keys in tables.items():
        block = text.split(f"# [{table}]\n", 1)[1].split("\n\n", 1)[0]
        named = set(re.findall(r"^# (\w+) = ", block, re.M))
        assert named == set(keys), table
        for line in block.splitlines():  # each default, uncommented alone, is accepted
            setting = line[2:]
            extra = "" if table != "backstage" or setting.startswith("url") else 'url = "http://x"\n'
            config.write_text(f"[{table}]\n{extra}{setting}\n")
            load_project(config)
    for line in re.findall(r"^# ((?:access|aliases) = .*)$", text, re.M):
        config.write_text(line + "\n")
        load_project(config)


def test_init_then_build_works_and_init_keeps_an_existing_file(tmp_path, monkeypatch):
    shutil.copytree(FIXTURE_CATALOG, tmp_path / "catalog")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    r = runner.invoke(main, ["init"])
    assert r.exit_code == 0 and "wrote kgbuild.toml" in r.output
    built = runner.invoke(main, ["build"])
    assert built.exit_code == 0, built.output
    assert "16 entities, 30 edges" in built.output and (tmp_path / ".kgbuild").is_dir()
    again = runner.invoke(main, ["init"])
    assert again.exit_code == 2 and "exists: kept (--force replaces it) [output]" in again.output
    (tmp_path / "kgbuild.toml").write_text("# mine\n")
    assert runner.invoke(main, ["init", "--force", "--source", "catalog"]).exit_code == 0
    assert load_project(tmp_path / "kgbuild.toml").sources == ("catalog",)


def test_init_project_refuses_a_folder_in_the_way(tmp_path):
    (tmp_path / "kgbuild.toml").mkdir()
    with pytest.raises(KgbuildError, match="not a regular file"):
        init_project(tmp_path, force=True)


@pytest.mark.slow
def test_the_docs_sample_works_when_copied(tmp_path, monkeypatch):
    section = DOCS.read_text().split("## Projects", 1)[1]
    sample = section.split("```toml\n", 1)[1].split("```", 1)[0]
    for name in ("catalog", "services"):
        shutil.copytree(FIXTURE_CATALOG, tmp_path / name)
    (tmp_path / "kgbuild.toml").write_text(sample)
    try:
        load_project(tmp_path / "kgbuild.toml")
    except InputError as exc:  # pragma: no cover - the message says which line
        pytest.fail(str(exc))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    r = CliRunner().invoke(main, ["build"])
    assert r.exit_code == 0, r.output


def test_every_kgbuild_toml_sample_in_the_docs_loads(tmp_path):
    docs = [*sorted(DOCS.parent.glob("*.md")), DOCS.parents[1] / "README.md"]
    samples = [(d.name, block) for d in docs
               for block in re.findall(r"```toml\n(.*?)```", d.read_text(), re.S)]
    assert len(samples) >= 4
    for name, block in samples:
        if "[tool." in block:  # a pyproject.toml sample
            continue
        (tmp_path / "kgbuild.toml").write_text(block)
        try:
            load_project(tmp_path / "kgbuild.toml")
        except InputError as exc:
            pytest.fail(f"{name}: {exc}")
