"""What a harness's hooks run (``table_events.py``): the failing command's recall, the
stop's handover, the session's end, the compaction's summary; and the session's start as
``ctx start --harness`` notes it. Each reads the hook's JSON on stdin through the one
bounded reader (``Run.hook_stdin``, ``hookinput.py``).

Every handler here prints only the harness's JSON and exits 0: whatever goes wrong (bad
stdin, no context, a store that cannot be read, a setting that cannot be parsed) ends in
nothing printed and one line on stderr at most, so a hook never fails the harness, its tool
call, and never blocks a stop wrongly (tests/features/test_events.py,
tests/cli/test_event_failure.py).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctx.cli.run import Run
    from ctx.context import Context
    from ctx.hookpayload import Hook


def payload(run: Run) -> dict[str, Any] | None:
    """The hook's JSON object, fields unchecked (None: too long, not UTF-8, not JSON, not an
    object, or nothing on stdin in time)."""
    from ctx.hookpayload import load
    return load(run.hook_stdin())


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


def hook_input(run: Run) -> Hook | None:
    """The hook's input, its known fields checked (``hookinput.Hook``)."""
    from ctx.hookpayload import parse
    return parse(run.hook_stdin())



def _setting(context: Context, name: str) -> bool:
    from ctx.features.config import get_value
    return get_value(context.where, name, context.state) is True


def _notes(context: Context) -> str:
    from ctxgit.gitfiles.layout import SESSIONS, path
    return path(context.where, SESSIONS)


def _quiet(run: Run, what: str, error: Exception) -> int:
    from ctx.display import visible
    run.err(visible(f"ctx event {what}: {type(error).__name__}: {error}; nothing done"))
    return 0


def note_start(run: Run, context: Context, harness: str, hook: Hook | None) -> None:
    """``ctx start --harness NAME``: note this session's start from the SessionStart hook's
    input (read once by ``start``, which also gives its session id to the shown log; the
    first start of a session id counts, a compaction's or a resume's keeps it). Never fails
    the start."""
    import os
    try:
        if hook is None or hook.session_id is None or not os.path.isdir(os.path.join(context.where, ".git")):
            return
        import time

        from ctx import handover
        from ctxgit.gitfiles.refs import head_id
        # the commit HEAD is at: the session's writes are the commits after it (commit times are
        # whole seconds, and one made in the second the session began may be from before it:
        # test_a_write_just_before_the_start_is_not_the_sessions)
        handover.note_start(_notes(context), hook.session_id, int(time.time()), harness, context.author,
                            head=head_id(context.where))
    except Exception as error:  # the payload is printed all the same
        _quiet(run, "start", error)


def stop(run: Run, harness: str) -> int:
    """The stop's handover. It reads the root's files directly, no ``Context`` (a stop that
    is let through pays for a start-up and a few file reads: bench/stophook.py)."""
    try:
        hook = hook_input(run)
        if hook is None or hook.session_id is None or hook.stop_hook_active:
            return 0
        from ctx import handover, settings
        from ctxgit.gitfiles.layout import SESSIONS, path, state_dir
        root = settings.home()
        notes_path = path(root, SESSIONS)
        notes = handover.read_notes(notes_path)
        began = handover.started(notes, hook.session_id)
        if began is None or handover.asked(notes, hook.session_id):
            return 0  # a session this machine did not see start: which writes were its own is unknown
        from ctx.features.config import get_value
        if get_value(root, "handover-on-stop", state_dir(root)) is not True:
            return 0
        from ctx.model import validate_author
        author = validate_author(settings.author())
        from ctxgit.gitfiles.identity import author_identity
        from ctxgit.porcelain.authored import written_since
        written = written_since(root, began, author_identity(author)[0] if author else None,
                                after=handover.head_at_start(notes, hook.session_id))
        reason = handover.ask_reason(enabled=True, hook_active=False, already_asked=False,
                                     wrote=written.wrote, summarized=written.summarized)
        if reason is None:
            return 0
        import time
        if not handover.note_asked(notes_path, hook.session_id, int(time.time()), harness, author):
            return 0  # asked already (or the note could not be kept: never ask without it)
        import json
        run.out(json.dumps({"decision": "block", "reason": reason}))
    except Exception as error:
        return _quiet(run, "stop", error)
    return 0


def end(run: Run, harness: str) -> int:
    """The background push, detached: it outlives the hook, bounded by sync-timeout."""
    try:
        hook = hook_input(run)
        if hook is None:
            return 0
        context = run.context(cache="read")
        from ctxgit.sync.trigger import at_session_end
        at_session_end(context.where)
    except Exception as error:
        return _quiet(run, "end", error)
    return 0


def compact(run: Run, harness: str) -> int:
    try:
        hook = hook_input(run)
        if hook is None or hook.session_id is None or not hook.compact_summary:
            return 0
        context = run.context()
        if not _setting(context, "keep-compaction"):
            return 0
        from ctx import compaction
        compaction.keep(context, hook.compact_summary, session=hook.session_id, harness=harness,
                        trigger=hook.trigger)
    except Exception as error:
        return _quiet(run, "compact", error)
    return 0
