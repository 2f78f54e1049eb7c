"""OpenAI's Codex CLI.

- Start: the pointer in ``$CODEX_HOME/AGENTS.md`` (default ``~/.codex``), the instructions
  Codex gives the model in every session; ``AGENTS.override.md`` beside it, when present,
  is read instead.
- Hooks: ``$CODEX_HOME/hooks.json`` (Claude Code's shape; timeouts in seconds):
  SessionStart (``source`` startup, resume, clear, compact) prints the start payload as
  the hook JSON Codex requires; Stop (block once, ``stop_hook_active`` after);
  SessionEnd (at most 3 s). Each runs only once the user trusts it (``TRUST_STEPS``).
- Recall at a failing command: a PostToolUse hook (matcher ``Bash``) in the same hooks.json
  running ``ctx event failure --harness codex``. Codex fires PostToolUse after a failing command
  too, with the command's output text only, no exit code (measured with Codex 0.171:
  ``tool_response`` is the text; tests/recall/test_recall_codex.py): ctx takes an output that
  says it failed (an error, "No such file", "not found", a traceback...) for a failure, and an
  exit code line when one is there. A success whose output reads as an error costs one search:
  the gate still gives nothing that does not answer it. Codex runs a hook it did not write only
  once the user trusted it (its "Hooks need review" prompt or ``/hooks`` in the TUI; ``codex
  exec`` has no review and skips an untrusted hook): ctx writes no trust record of its own (the
  hash Codex keeps is its private format), and ``ctx wire codex`` says what to do.
- MCP: ``[mcp_servers.ctx]`` in ``$CODEX_HOME/config.toml`` (``./.codex/config.toml`` with
  ``--project``: Codex reads it only in a project it trusts), edited as text
  (``tomledit``). Codex sends a session's first request without waiting for an MCP server
  unless it is ``required``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctx.harness.base import Budget, Edit, Harness, Wiring, home
from ctx.harness.edit import FAILURE_MARK, HOOK_MARK, with_block, with_hooks
from ctx.harness.texts import EVENT_MARKS, MOMENT_NOTES, event_command, failure_command, hook_command, pointer
from ctx.hookpayload import field, session_of

if TYPE_CHECKING:
    from ctx.failure_recall import Failure

HOOK_TIMEOUT = 15  # seconds (Codex's unit)
FAILURE_TIMEOUT = 10  # seconds: the recall stays within 1.5 s on 10,000 entries (bench/recallhook.py)
_EXIT_CODE = re.compile(r"^\s*(?:exit code|process exited with code)[:\s]+(-?\d+)", re.M | re.I)
_SAYS_FAILED = re.compile(r"\b(errors?|err!|fatal|failed|failure|cannot|can't|could not|couldn't|not found|"
                          r"no such file|denied|refused|traceback|exception|panic|unable to|not set|invalid|"
                          r"unrecognized|unknown (?:option|command))\b", re.I)
# Codex's events ctx runs at besides SessionStart: (event, `ctx event` word, timeout in seconds);
# Codex caps a SessionEnd hook at 3 s. Its PostCompact carries the trigger only: not wired.
MOMENTS = (("Stop", "stop", 10), ("SessionEnd", "end", 3))
# Codex skips a hook it was not told to trust, without a word in `codex exec`: the pointer stays
# for such sessions, and says when its first step is done already.
HOOKED = ("When the start payload is in your context already (ctx's SessionStart hook puts it\n"
          "there), that first step is done: do not run ctx start again.\n")
TRUST_STEPS = ("Codex runs a new or changed hook only once you trust it: start `codex` and accept ctx's hooks "
               "at its \"Hooks need review\" prompt (or type /hooks), reviewing ctx's hooks in {hooks} "
               "(SessionStart, PostToolUse, Stop, SessionEnd) and trusting each; trust is kept per hook "
               "definition, so do it again after a `ctx wire codex` that changed one. Until then Codex skips "
               "them silently (`codex exec` too) and the AGENTS.md pointer does the start; a one-off `codex exec "
               "--dangerously-bypass-hook-trust` runs them untrusted")


def codex_home() -> Path:
    """``$CODEX_HOME``, else ``~/.codex``."""
    given = (os.environ.get("CODEX_HOME") or "").strip()
    return Path(given) if given else home() / ".codex"


class Codex(Harness):
    name = "codex"
    agent = "Codex"

    budget = Budget(8000, "Codex cuts what a command prints for the model (10 KB and 256 lines in its first CLI, "
                          "10,000 tokens per tool output since): 8,000 keeps clear")
    start_help = ("$CODEX_HOME/AGENTS.md (default ~/.codex): the pointer; and in $CODEX_HOME/hooks.json a "
                  "SessionStart hook printing ctx start as the JSON Codex reads, a PostToolUse hook (Bash) "
                  "running ctx event failure, Stop and SessionEnd hooks, once you trust them in Codex")
    failure_event = "PostToolUse"
    failure_matcher = "Bash"

    def failure_hook(self, wiring: Wiring) -> dict[str, Any]:
        command = failure_command(wiring.root, wiring.program, self.name, agent=wiring.agent)
        return {"type": "command", "command": command, "timeout": FAILURE_TIMEOUT, "matcher": self.failure_matcher}

    def failure(self, payload: dict[str, Any]) -> Failure | None:
        from ctx.failure_recall import Failure
        if field(payload, "hook_event_name") not in (None, self.failure_event) or field(payload, "tool_name") != "Bash":
            return None
        command = field(payload, "tool_input", "command")
        output = field(payload, "tool_response") or field(payload, "tool_response", "output")
        if not command or not output:
            return None
        code = _EXIT_CODE.search(output)
        if (code.group(1) == "0") if code else not _SAYS_FAILED.search(output):
            return None  # a success, or an output that does not say it failed
        return Failure(command, output, session_of(payload))

    def hooks(self, wiring: Wiring) -> list[tuple[str, dict[str, Any], str]]:
        """hooks.json's entries: (event, hook, mark); timeouts in seconds."""
        assert self.budget is not None
        start = hook_command(wiring.root, wiring.program, self.budget.chars, agent=wiring.agent, as_json=True,
                             harness=self.name)
        wanted = [("SessionStart", {"type": "command", "command": start, "timeout": HOOK_TIMEOUT}, HOOK_MARK),
                  (self.failure_event, self.failure_hook(wiring), FAILURE_MARK)]
        for name, event, timeout in MOMENTS:
            command = event_command(wiring.root, wiring.program, event, self.name, agent=wiring.agent)
            wanted.append((name, {"type": "command", "command": command, "timeout": timeout}, EVENT_MARKS[event]))
        return wanted

    def start(self, wiring: Wiring) -> tuple[list[Edit], list[str]]:
        assert self.budget is not None
        path = codex_home() / "AGENTS.md"
        block = pointer(wiring.root, wiring.agent, self.budget.chars, HOOKED)
        notes = []
        override = path.parent / "AGENTS.override.md"
        if override.exists():
            notes.append(f"{override} exists: Codex reads it instead of AGENTS.md; move the ctx block there")
        wanted = self.hooks(wiring)
        hooks_file = codex_home() / "hooks.json"
        notes += [TRUST_STEPS.format(hooks=hooks_file),
                  "SessionStart runs after a compaction too (source compact): the start payload follows it",
                  *(MOMENT_NOTES[event] for _, event, _ in MOMENTS),
                  "Codex's PostCompact sends no summary: nothing of a compaction is kept"]
        return [Edit(path, lambda before: (with_block(before or "", block), [])),
                Edit(hooks_file, lambda before: with_hooks(before or "", wanted))], notes

    mcp_help = "$CODEX_HOME/config.toml (default ~/.codex; ./.codex with --project): [mcp_servers.ctx]"
    server_env = ("Codex gives a stdio server only a few variables of its own (HOME, PATH, USER, LANG, "
                  "TERM, TMPDIR, TZ...) and the entry's env")

    def mcp_path(self, project: bool) -> Path:
        return Path.cwd() / ".codex" / "config.toml" if project else codex_home() / "config.toml"

    def mcp_text(self, before: str | None, wiring: Wiring) -> str:
        from ctx.harness.tomledit import with_toml_server
        return with_toml_server(before or "", self.mcp_entry(wiring))

    def mcp_notes(self, wiring: Wiring) -> list[str]:
        trusted = ["Codex reads ./.codex/config.toml only in a project it trusts"] if wiring.project else []
        return super().mcp_notes(wiring) + trusted


HARNESS = Codex()
