"""The README and the help cannot drift apart."""

from pathlib import Path

import click

from ctx.cli.app import cli
from ctx.cli.docs import END, START, reference

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_reference_is_the_generated_help():
    text = README.read_text(encoding="utf-8")
    start, end = text.index(START), text.index(END) + len(END)
    assert text[start:end] == reference(), "run: python -m ctx.cli.docs --write"


def test_every_command_is_in_the_readme_with_an_example():
    text = README.read_text(encoding="utf-8")
    root = click.Context(cli, info_name="ctx")
    for name in cli.list_commands(root):
        command = cli.get_command(root, name)
        if command.hidden:
            continue
        assert f"### ctx {name}\n" in text
        help_text = command.get_help(click.Context(command, info_name=name, parent=root))
        assert "Example" in help_text, f"ctx {name} --help has no example"


def test_readme_opens_with_the_two_commands():
    lines = README.read_text(encoding="utf-8").split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert lines[0].startswith("pip install -e '.[test]'") and "ctx init" in lines[0]
    assert lines[1] == "python -m pytest"
