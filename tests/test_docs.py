"""The documentation and the command line agree: every command and option is documented, every
link of the README leads to a file, and the README stays a front door."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from kg.cli import cli

ROOT = Path(__file__).resolve().parent.parent
CLI_DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = sorted(cli.commands)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_help_and_is_documented(name):
    command = cli.commands[name]
    assert (command.help or "").strip(), f"kg {name} has no help text"
    assert f"\n## kg {name}\n" in CLI_DOC, f"docs/cli.md has no section on kg {name}"


@pytest.mark.parametrize("name, option", [(n, o) for n in COMMANDS for p in cli.commands[n].params
                                          if isinstance(p, click.Option) for o in p.opts if o.startswith("--")])
def test_every_option_is_documented(name, option):
    section = CLI_DOC.split(f"\n## kg {name}\n", 1)[1].split("\n## ", 1)[0]
    assert f"`{option}" in section, f"docs/cli.md's section on kg {name} does not document {option}"


def test_every_link_of_the_readme_leads_to_a_file():
    links = re.findall(r"\]\(([^)#]+)\)", README)
    assert links
    for link in links:
        assert (ROOT / link).exists(), link


def test_the_readme_is_a_front_door():
    assert len(README.splitlines()) <= 150
