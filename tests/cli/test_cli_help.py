"""Every command's --help (the root, each group, each subcommand) has an Examples block and an
Exit codes block."""

from __future__ import annotations

import importlib
import re

import click
from click.testing import CliRunner

from kgbuild.cli.main import COMMANDS, main


def every_command():
    for module in {m for m, _ in COMMANDS.values()}:
        importlib.import_module(f"kgbuild.cli.{module}")

    def walk(cmd, path):
        yield path, cmd
        if isinstance(cmd, click.Group):
            for name, sub in sorted(cmd.commands.items()):
                yield from walk(sub, [*path, name])
    return list(walk(main, []))


def test_every_help_has_examples_and_exit_codes():
    commands = every_command()
    assert len(commands) >= 31  # the root, every command, group and subcommand
    for path, _ in commands:
        r = CliRunner().invoke(main, [*path, "--help"], terminal_width=100)
        assert r.exit_code == 0, path
        text = r.output
        assert re.search(r"\n *Examples[^\n]*:\n +kgbuild ", text), path
        codes = re.search(r"\n *Exit codes[^:]*: 0 ", text)
        assert codes and " 2 " in text[codes.end():], path


def test_the_exit_codes_said_are_the_ones_returned(tmp_path):
    r = CliRunner().invoke(main, ["schema", "check", str(tmp_path / "missing.yaml")])
    assert r.exit_code == 2
    r = CliRunner().invoke(main, ["ls", "--type", "Servce", "--store", str(tmp_path / "s")])
    assert r.exit_code == 2 and "did you mean Service?" in r.output
