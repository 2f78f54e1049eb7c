"""The reference, the README and the help cannot drift apart."""

from pathlib import Path

from ctx.cli.docs import REFERENCE, reference, sections

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_reference_is_the_generated_help():
    assert REFERENCE.read_text(encoding="utf-8") == reference(), "run: python -m ctx.cli.docs --write"


def test_every_command_is_in_the_reference_with_an_example():
    text = REFERENCE.read_text(encoding="utf-8")
    for title, help_text in sections():
        assert f"## {title}\n" in text
        if title != "ctx":
            assert "Example" in help_text, f"{title} --help has no example"
    names = [title for title, _ in sections()]
    assert {"ctx summary new", "ctx remote add", "ctx hooks install", "ctx get"} <= set(names)


def _readme_commands() -> list[str]:
    return README.read_text(encoding="utf-8").split("```sh\n", 1)[1].split("```", 1)[0].splitlines()


def test_readme_opens_with_the_two_commands():
    lines = _readme_commands()
    assert lines[0].startswith("pip install -e '.[test]'") and "ctx init" in lines[0]
    assert lines[1] == "python -m pytest"


def test_ci_runs_the_readmes_two_commands_as_written_before_anything_else_is_installed():
    """.ci/run quotes the README's commands, not a variant of its own: a newcomer's first run
    is what CI runs first (only pip itself is upgraded before)."""
    script = (README.parent / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line.strip() for line in script if line.strip() and not line.lstrip().startswith("#")]
    first, second = _readme_commands()
    assert first in commands and any(c == second or c.startswith(second + " ||") for c in commands)
    at = commands.index(first)
    assert not [c for c in commands[:at] if "pip install" in c and "--upgrade pip" not in c], commands[:at]
    assert commands.index(first) < min(i for i, c in enumerate(commands) if c.startswith(second))


def test_readme_points_to_the_reference_and_links_nothing_outside_the_repository():
    text = README.read_text(encoding="utf-8")
    assert "docs/reference.md" in text
    assert "../shared" not in text
