"""The reference, the configuration page, the README and the help cannot drift apart."""

import re
from pathlib import Path

from ctx import settings
from ctx.cli.docs import CONFIGURATION, DOCS, REFERENCE, configuration, reference, sections
from ctx.features import config

README = Path(__file__).resolve().parents[2] / "README.md"
PAGES = sorted(DOCS.glob("*.md"))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_the_reference_is_the_generated_help():
    assert REFERENCE.read_text(encoding="utf-8") == reference(), "run: python -m ctx.cli.docs --write"


def test_the_configuration_page_is_generated_from_the_settings_tables():
    text = CONFIGURATION.read_text(encoding="utf-8")
    assert text == configuration(), "run: python -m ctx.cli.docs --write"
    for name in settings.VARIABLES:
        assert f"| `{name}` |" in text
    for name in config.KEYS:
        assert f"| `{name}` |" in text


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


def test_the_readme_is_a_page_of_at_most_300_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300


def _relative_links(page: Path) -> list[str]:
    """The targets of a page's Markdown links that point inside the repository."""
    targets = [m.group(1) for m in LINK.finditer(page.read_text(encoding="utf-8"))]
    return [t.split("#", 1)[0] for t in targets
            if not re.match(r"[a-z][a-z0-9+.-]*:", t) and not t.startswith("#")]


def test_every_relative_link_of_the_readme_and_the_docs_points_to_a_file_that_exists():
    missing = [f"{page.name}: {target}" for page in (README, *PAGES) for target in _relative_links(page)
               if not (page.parent / target).exists()]
    assert not missing, missing


def test_a_broken_link_is_seen(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("[here](gone.md) [web](https://example.org/x.md) [anchor](#top) [ok](page.md#a)\n",
                    encoding="utf-8")
    assert _relative_links(page) == ["gone.md", "page.md"]


def test_the_readme_links_every_page_of_the_docs():
    linked = {(README.parent / target).resolve() for target in _relative_links(README)}
    assert not [page.name for page in PAGES if page.resolve() not in linked]
