"""How the commands print what reads find and what writes did."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is for the checker; importing it costs ~3 ms at every start
if TYPE_CHECKING:
    from typing import Any

    from ctx.cli.run import Run
    from ctx.context import Context
    from ctx.results import Result


def print_results(run: Run, results: list[Result], verbose: bool, as_json: bool, keys_only: bool = False) -> None:
    from ctx.display import result_json, result_line, show_entry
    if as_json:
        run.json([{"store": r.store, "key": r.key} for r in results] if keys_only
                 else [result_json(r) for r in results])
    elif keys_only:
        for r in results:
            run.out(f"{r.store}/{r.key}")
    elif verbose:
        if results:
            run.out("\n\n".join(show_entry(r, True) for r in results))
    else:
        for r in results:
            run.out(result_line(r))


def write_done(run: Run, context: Context, result: dict[str, Any], message: str, as_json: bool,
               warnings: list[str] | None = None) -> None:
    """A write's warnings on stderr, then its result: a line, or JSON with the warnings in it."""
    shown = run.warn(context, warnings)
    run.result({**result, "warnings": shown}, message, as_json)
