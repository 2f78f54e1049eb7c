"""Claude Code (Anthropic's ``claude``).

- Start: a SessionStart hook in ``~/.claude/settings.json`` (``./.claude/settings.json``
  with ``--project``) running ``ctx start``; Claude Code puts what a SessionStart hook
  prints on stdout into the model's context. Its hook ``timeout`` is in seconds. The
  hook prints plain text: the JSON form (``ctx start --format hook``, which Gemini CLI
  needs) serves no better here. Measured with Claude Code 2.1.197: both reach the first
  request inline, in the same place ("SessionStart:startup hook success: ..." against
  "SessionStart hook additional context: ..."), and both are cut alike past 10,000
  characters (a file and a 2 KB preview instead), while plain text reads the same to a
  person running the command and cannot be broken by a stray line on stdout.
- Recall at a failing command: a PostToolUseFailure hook (matcher ``Bash``) running ``ctx event
  failure --harness claude-code``. Measured with Claude Code 2.1.197 (issue 37): its stdin holds
  ``tool_name``, ``tool_input.command`` and ``error`` ("Exit code 2\nerror: ..."), and the
  ``hookSpecificOutput.additionalContext`` it prints reaches the model's very next request, as a
  ``<system-reminder>`` after the tool result (tests/recall/test_recall_claude_code.py).
- The moments (``ctx event``): Stop (block once with a reason: the agent goes on, the
  reason in its next request; the next Stop carries ``stop_hook_active``), SessionEnd
  (``reason``), PostCompact (``compact_summary``: the compaction's whole reply). Its
  SessionStart hook has no matcher, so ``source: compact`` runs ``ctx start`` again.
- MCP: the user scope, top-level ``mcpServers`` of ``~/.claude.json`` (the project scope
  with ``--project``: ``./.mcp.json``); its entries carry ``"type": "stdio"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctx.harness.base import Budget, Edit, Harness, Wiring, home
from ctx.harness.edit import FAILURE_MARK, HOOK_MARK, with_hooks
from ctx.harness.texts import EVENT_MARKS, MOMENT_NOTES, event_command, failure_command, hook_command
from ctx.hookpayload import field, session_of

if TYPE_CHECKING:
    from ctx.failure_recall import Failure

HOOK_TIMEOUT = 15  # seconds (Claude Code's unit); `ctx start` takes well under one
FAILURE_TIMEOUT = 10  # seconds: the recall stays within 1.5 s on 10,000 entries (bench/recallhook.py)
# Claude Code's events ctx runs at besides SessionStart: (event, `ctx event` word, timeout in seconds).
# SessionEnd's hooks get 1.5 s unless their timeout says more; `ctx event end` only spawns the push.
MOMENTS = (("Stop", "stop", 10), ("SessionEnd", "end", 5), ("PostCompact", "compact", 15))


class ClaudeCode(Harness):
    name = "claude-code"
    agent = "Claude"

    budget = Budget(9000, "Claude Code inlines a SessionStart hook's output up to 10,000 characters, then keeps "
                          "only a 2 KB preview (measured with Claude Code 2.1)")
    start_help = ("~/.claude/settings.json (./.claude/ with --project): a SessionStart hook running "
                  "ctx start, errors ignored; a PostToolUseFailure hook (Bash) running ctx event failure")
    failure_event = "PostToolUseFailure"
    failure_matcher = "Bash"

    def settings_path(self, project: bool) -> Path:
        return (Path.cwd() if project else home()) / ".claude" / "settings.json"

    def hook(self, wiring: Wiring) -> dict[str, Any]:
        assert self.budget is not None
        command = hook_command(wiring.root, wiring.program, self.budget.chars, only_under=wiring.only_under,
                               harness=self.name)
        return {"type": "command", "command": command, "timeout": HOOK_TIMEOUT}

    def failure_hook(self, wiring: Wiring) -> dict[str, Any]:
        command = failure_command(wiring.root, wiring.program, self.name, only_under=wiring.only_under)
        return {"type": "command", "command": command, "timeout": FAILURE_TIMEOUT, "matcher": self.failure_matcher}

    def failure(self, payload: dict[str, Any]) -> Failure | None:
        from ctx.failure_recall import Failure
        if field(payload, "hook_event_name") not in (None, self.failure_event) or field(payload, "tool_name") != "Bash":
            return None
        command, error = field(payload, "tool_input", "command"), field(payload, "error")
        if not command or not error:
            return None
        return Failure(command, error, session_of(payload))

    def moments(self, wiring: Wiring) -> list[tuple[str, dict[str, Any], str]]:
        """The hooks besides the start: (event, hook, mark)."""
        def one(event: str, timeout: int) -> dict[str, Any]:
            command = event_command(wiring.root, wiring.program, event, self.name, only_under=wiring.only_under)
            return {"type": "command", "command": command, "timeout": timeout}
        return [(name, one(event, timeout), EVENT_MARKS[event]) for name, event, timeout in MOMENTS]

    def start(self, wiring: Wiring) -> tuple[list[Edit], list[str]]:
        wanted = [("SessionStart", self.hook(wiring), HOOK_MARK),
                  (self.failure_event, self.failure_hook(wiring), FAILURE_MARK), *self.moments(wiring)]
        edit = Edit(self.settings_path(wiring.project), lambda before: with_hooks(before or "", wanted))
        return [edit], ["set CTX_AUTHOR to the agent's name in the harness's environment (§5.3)",
                        "SessionStart runs after a compaction too (source compact): the start payload follows it",
                        *(MOMENT_NOTES[event] for _, event, _ in MOMENTS)]

    mcp_help = '~/.claude.json "mcpServers" (user scope; ./.mcp.json with --project)'
    server_env = "Claude Code starts a stdio server with its own environment and the entry's env"

    def mcp_path(self, project: bool) -> Path:
        return Path.cwd() / ".mcp.json" if project else home() / ".claude.json"

    def mcp_entry(self, wiring: Wiring) -> dict[str, Any]:
        return {"type": "stdio", **super().mcp_entry(wiring)}

    def mcp_notes(self, wiring: Wiring) -> list[str]:
        asks = "; Claude Code asks before it uses a project's .mcp.json" if wiring.project else ""
        return super().mcp_notes(wiring) + [f"check with `claude mcp list`{asks}"]


HARNESS = ClaudeCode()
