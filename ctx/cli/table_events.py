"""The command table, continued: what a harness's hooks run at its moments (``ctx event``,
issue 37: a failing command, a stop, a session's end, a compaction),
as ``ctx wire`` writes them (ctx/harness/). Each reads the hook's JSON on stdin
(``hookinput.py``: bounded, checked), prints only what the harness reads, and always
exits 0: a hook never fails, nor wrongly blocks, its harness. Handlers in
``commands/events.py``.

Plain classes and constants only: the fast door imports this for ``ctx event``.
"""

from __future__ import annotations

from ctx.cli.params import HOOK_HARNESSES, Command, Opt


def harness_option() -> Opt:
    return Opt("harness", "--harness", choices=HOOK_HARNESSES, default="claude-code", metavar="NAME",
               help="The harness whose hook runs it: claude-code, codex or gemini (default claude-code).")


EVENT_GROUP = Command("event", None, "What a harness's hooks run at its moments (a failing command, a stop, "
                      "a session's end, a compaction).", """\
What a harness's hooks run at its moments: a failing command, a stop, a
session's end, a compaction. `ctx wire TARGET` writes the hooks; each
reads the hook's JSON on stdin, prints only what the harness reads, and
exits 0 whatever happens (bad or missing input: nothing printed).""", """\
Examples (as `ctx wire claude-code` writes them):
  ctx event failure --harness claude-code
  ctx event stop --harness claude-code
  ctx event end --harness claude-code
  ctx event compact --harness claude-code
""", group=True, auto_sync=False)

FAILURE_EVENTS: tuple[Command, ...] = (
    Command("event failure", "events:failure", "A failing command: the entries that answer it.", """\
A failing command (the hook's JSON on stdin): search the context by meaning
for the command and its error and, when entries match well, print at most
3 of them (1,500 characters, each with its key, date and author, fenced as
data) in the form the harness hands its model. A command that succeeded,
a failure nothing answers, a bad or empty stdin: nothing. Each recall
shown is noted in the shown log (`ctx log --shown`). Off with
`ctx config recall-on-failure false`.""", """\
Examples:
  ctx event failure --harness claude-code < payload.json
Hooks (what `ctx wire TARGET` writes):
  claude-code  PostToolUseFailure (Bash): hookSpecificOutput.additionalContext
  codex        PostToolUse (Bash; decides from the output whether it failed):
               hookSpecificOutput.additionalContext
  gemini       AfterTool (run_shell_command, a non-zero exit code):
               hookSpecificOutput.additionalContext
""", options=(harness_option(),), fast=True, auto_sync=False),
)

HANDOVER_EVENTS: tuple[Command, ...] = (
    Command("event stop", "events:stop", "At a stop: ask once for the session's summary.", """\
At a session's stop (Claude Code's and Codex's Stop, Gemini CLI's
AfterAgent): when this session wrote to the context and no session summary
has been written since it began, block the stop once, with a reason that
asks for `ctx summary new` (Done, Open). Never when the harness says a Stop
hook already made it go on (stop_hook_active), never twice for a session,
never for a session that wrote nothing, never once a summary exists.

The session is the hook's session_id; it began when its SessionStart hook
ran `ctx start --harness NAME` (noted in .git/ctx/sessions.json, never
committed). "Wrote": a commit since then by CTX_AUTHOR (anyone, when it is
unset). Off with `ctx config handover-on-stop false`.""", """\
Example:
  echo '{"session_id": "s1", "stop_hook_active": false}' | ctx event stop
Output, when it asks: {"decision": "block", "reason": "..."}; else nothing.
""", options=(harness_option(),), reads=True, fast=True, auto_sync=False),
    Command("event end", "events:end", "At a session's end: push in the background (sync-auto).", """\
At a session's end (SessionEnd): with `ctx config sync-auto true` and an
upstream, start the background push, detached (it outlives the harness),
bounded by sync-timeout; the hook returns at once. Prints nothing.""", """\
Example:
  echo '{"session_id": "s1", "reason": "exit"}' | ctx event end --harness codex
""", options=(harness_option(),), reads=True, fast=True, auto_sync=False),
    Command("event compact", "events:compact", "After a compaction: keep its summary in the context.", """\
After a compaction (Claude Code's PostCompact): keep the <summary> part of
the compaction's text (never its <analysis> scratch) as the agent entry
compaction_<session>_<YYYY_MM_DD>, tagged compaction, so that `ctx search`
finds it and the next `ctx start` shows it when no summary was written after
it. A harness that sends no summary (Codex's PostCompact: the trigger only)
keeps nothing. Off with `ctx config keep-compaction false`. Prints nothing.""", """\
Example:
  echo '{"session_id": "s1", "compact_summary": "<summary>...</summary>"}' |
    CTX_AUTHOR=Claude ctx event compact
""", options=(harness_option(),), fast=True),
)

EVENTS: tuple[Command, ...] = (EVENT_GROUP, *FAILURE_EVENTS, *HANDOVER_EVENTS)
