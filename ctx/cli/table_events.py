"""The command table, continued: what a harness's hooks run at its moments (issue 37). Each
row is one moment and self-contained; the handlers are in ``commands/events.py``. A hook
never fails the harness: these commands read the hook's stdin (bounded, checked), print
what the harness reads, or nothing, and exit 0 whatever happens."""

from __future__ import annotations

from ctx.cli.params import Command, Opt
from ctx.harness.registry import HARNESSES

_HOOKED = tuple(name for name, h in HARNESSES.items() if h.failure_event)

EVENTS: tuple[Command, ...] = (
    Command("event", None, "What a harness's hooks run at its moments (a failing command, a stop, a "
            "session's end, a compaction).", """\
What a harness's hooks run at its moments: `ctx wire TARGET` writes the
hooks. Each reads the hook's JSON on stdin, prints what the harness hands
its model (or nothing) and exits 0 whatever happens: a hook never fails
the harness's tool call or session.""", """\
Example:
  ctx event failure --harness claude-code < payload.json
""", group=True),
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
""", options=(Opt("harness", "--harness", choices=_HOOKED, required=True,
                  help="The harness whose hook sends the payload."),), auto_sync=False),
)
