"""Session summaries (§7): summary new, list, show. The work is in ``ctx/summaries.py``."""

from __future__ import annotations

import sys

from ctx.errors import InvalidArgument

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.cli.run import Run


def new(run: Run, agent: str | None, focus: str | None, from_stdin: bool, force: bool, as_json: bool) -> None:
    from ctx.summaries import focus_line, new_summary, template, today
    context = run.context()
    focus = focus if focus is not None else focus_line(context)
    if from_stdin:
        body = run.stdin()
    elif sys.stdin.isatty() and sys.stdout.isatty():
        name = agent or context.author
        if not name:
            raise InvalidArgument("a summary is headed with its agent's name: give --agent NAME "
                                  "or set CTX_AUTHOR (§6)")
        import click
        edited = click.edit(template(today(), name, focus), extension=".md")
        if edited is None:
            raise InvalidArgument("the editor closed without saving; no summary written")
        body = edited
    else:
        raise InvalidArgument("not on a terminal: give the summary on stdin with --from-stdin")
    if not body.strip():
        raise InvalidArgument("the summary is empty; nothing written")
    name, _ = new_summary(context, body, agent=agent, focus=focus, force=force)
    run.warn(context)
    path = context.root / "sessions" / name
    run.result({"name": name, "path": str(path)}, f"wrote sessions/{name}", as_json)


def list_(run: Run, as_json: bool) -> None:
    from ctx.summaries import summaries
    rows = summaries(run.context().root)
    if as_json:
        run.json([r.as_json() for r in rows])
        return
    from ctx.display import name
    for r in rows:
        run.out(f"{name(r.name)}  {name(r.agent) if r.agent else '(no agent)'}  {r.open} open")


def show(run: Run, name: str | None) -> None:
    from ctx.display import visible
    from ctx.summaries import find_summary
    run.out(visible(find_summary(run.context().root, name).read(), lines=True), end="")  # (as start shows it)
