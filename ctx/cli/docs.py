"""The command reference, docs/reference.md, generated from each command's ``--help``.

``python -m ctx.cli.docs`` prints it and ``--write`` writes it;
``tests/cli/test_docs.py`` checks the file holds exactly this text, so the
help (built from the command table) and the reference cannot drift.
"""

from __future__ import annotations

from pathlib import Path

import click

from ctx.cli.app import cli

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference.md"
HEADER = """# ctx command reference

Generated from each command's `--help` by `python -m ctx.cli.docs --write`;
a test checks it matches. The README explains the ideas; this is every
option of every command.
"""
SETTINGS = dict(terminal_width=80, max_content_width=80, **cli.context_settings)


def _walk(group: click.Group, parent: click.Context, prefix: str):
    """Every visible command under ``group``, depth first, in the group's order."""
    for name in group.list_commands(parent):
        command = group.get_command(parent, name)
        if command is None or command.hidden:
            continue
        ctx = click.Context(command, info_name=name, parent=parent, **SETTINGS)
        yield f"{prefix}{name}", command, ctx
        if isinstance(command, click.Group):
            yield from _walk(command, ctx, f"{prefix}{name} ")


def sections() -> list[tuple[str, str]]:
    """``(ctx NAME, its --help)`` for the root and every visible command."""
    root = click.Context(cli, info_name="ctx", **SETTINGS)
    out = [("ctx", cli.get_help(root))]
    out += [(f"ctx {name}", command.get_help(ctx)) for name, command, ctx in _walk(cli, root, "")]
    return out


def reference() -> str:
    parts = [HEADER]
    for title, text in sections():
        parts += [f"## {title}", "", "```text", text, "```", ""]
    return "\n".join(parts)


if __name__ == "__main__":  # pragma: no cover
    import sys

    if "--write" in sys.argv:
        REFERENCE.parent.mkdir(exist_ok=True)
        from ctx.storage.files import atomic_write
        atomic_write(REFERENCE, reference().encode("utf-8"), mode=0o644)
    else:
        print(reference())
