"""How the commands print what reads find and what writes did."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ctx.cli.run import Run
    from ctx.context import Context
    from ctx.results import Result


def print_results(run: Run, results: list[Result], verbose: bool, as_json: bool, keys_only: bool = False,
                  payload: Callable[[], Any] | None = None) -> None:
    """Search's and list's results: a line each (the keys only, or each entry whole with
    ``verbose``), or their JSON (``payload``: another JSON than each entry's own)."""
    from ctx.display import name, result_json, result_line, show_entry

    def as_data() -> Any:
        return [{"store": r.store, "key": r.key} for r in results] if keys_only else [result_json(r) for r in results]

    def as_text() -> str | None:
        if not results:
            return None
        if keys_only:
            return "\n".join(f"{name(r.store)}/{name(r.key)}" for r in results)
        if verbose:
            return "\n\n".join(show_entry(r, True) for r in results)
        return "\n".join(result_line(r) for r in results)
    run.result(payload or as_data, as_text, as_json)


def write_done(run: Run, context: Context, result: dict[str, Any], message: str, as_json: bool,
               warnings: list[str] | None = None) -> None:
    """A write's warnings on stderr, then its result: a line, or JSON with the warnings in it."""
    shown = run.warn(context, warnings)
    run.result({**result, "warnings": shown}, message, as_json)
