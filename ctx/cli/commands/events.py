"""What a harness's hooks run (``table_events.py``): each reads the hook's JSON on stdin,
prints what the harness hands its model, or nothing, and never fails the harness (every
error ends in silence and exit 0: tests/cli/test_event_failure.py)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctx.cli.run import Run

MAX_STDIN = 256 * 1024  # bytes of a hook's payload; a longer one is not read at all


def payload(run: Run, wait: float | None = None) -> dict[str, Any] | None:
    """The hook's JSON object, or None (too long, not UTF-8, not JSON, not an object; with
    ``wait``, nothing on stdin within that many seconds)."""
    import json
    raw = run.hook_stdin(MAX_STDIN, wait)
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def failure(run: Run, harness: str) -> None:
    try:
        _failure(run, harness)
    except Exception:  # the hook never fails the tool call: exit 0, nothing said
        return


def _failure(run: Run, harness: str) -> None:
    from ctx.features.config import get_value
    from ctx.harness.registry import harness as harness_named
    found = harness_named(harness)
    data = payload(run)
    told = found.failure(data) if data is not None else None
    if told is None:
        return
    context = run.context()  # (the read index may be brought up to date: the next hook reads it ready)
    if not get_value(context.where, "recall-on-failure", context.state):
        return
    from ctx.failure_recall import fenced, recall
    from ctx.meaning import model
    results = [r for r, _ in recall(context, told, model.shared())]
    text, shown = fenced(results)
    if not text:
        return
    run.out(found.context_output(found.failure_event, text), end="")
    note_shown(context, "recall", harness, told.session, [(r.store, r.key) for r in shown])


def note_shown(context: Any, what: str, harness: str, session: str, keys: list[tuple[str, str]]) -> None:
    """The shown log's record of a payload that reached a model, when the setting keeps one."""
    from ctx.features.config import get_value
    from ctx.shown import note
    try:
        if not get_value(context.where, "shown-log", context.state):
            return
    except Exception:  # a bad setting: the log is kept, as by default
        pass
    note(context.state, what, harness, session, context.author or "", keys)
