"""What a harness's hooks run (``table_events.py``): the stop's handover, the session's end,
the compaction's summary; and the session's start as ``ctx start --harness`` notes it.

Every handler here returns 0 and prints only the harness's JSON: whatever goes wrong (bad
stdin, no context, a store that cannot be read, a setting that cannot be parsed) ends in
nothing printed and one line on stderr at most, so a hook never fails the harness and
never blocks a stop wrongly (tests/features/test_events.py).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.cli.hookinput import Hook
    from ctx.cli.run import Run
    from ctx.context import Context


def _hook(run: Run) -> Hook | None:
    from ctx.cli.hookinput import parse
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


def note_start(run: Run, context: Context, harness: str) -> None:
    """``ctx start --harness NAME``: note this session's start from the SessionStart hook's
    stdin (the first start of a session id; a compaction's or a resume's keeps it). Never
    fails the start."""
    import os
    try:
        hook = _hook(run)
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
        hook = _hook(run)
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
        hook = _hook(run)
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
        hook = _hook(run)
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
