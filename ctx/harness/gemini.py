"""Google's Gemini CLI (``gemini``).

- Start: a SessionStart hook in ``~/.gemini/settings.json`` (``./.gemini/`` with
  ``--project``). Gemini CLI passes a hook's plain output to nobody; the JSON
  ``{"hookSpecificOutput": {"additionalContext": ...}}`` reaches the model whole, as
  ``<hook_context>`` before the user's prompt (with ``<`` and ``>`` as ``&lt;`` and
  ``&gt;``; seen with Gemini CLI 0.61), so the hook runs ``ctx start --format hook``.
  Its ``timeout`` is in milliseconds. Unlike a shell or MCP tool's result (which
  Gemini wraps in ``<untrusted_context>``, telling the model to ignore directives inside),
  the rules that come through the hook are not marked untrusted; and in its default
  approval mode a ``gemini -p`` session is offered neither the shell nor MCP tools, so
  the hook is the one way a session starts from ctx there. Beside it, the pointer in
  ``~/.gemini/GEMINI.md`` (``./GEMINI.md`` with ``--project``), for sessions where the
  hook cannot run.
- Recall at a failing command: an AfterTool hook (matcher ``run_shell_command``) running ``ctx
  event failure --harness gemini``. AfterTool fires after every shell command, failing or not;
  the payload's ``tool_response`` tells the exit code only as text (``Exit Code: 1`` in its
  ``llmContent``), or holds an ``error``: ctx decides from it whether the command failed.
  ``hookSpecificOutput.additionalContext`` reaches the model as ``<hook_context>``.
- The moments (``ctx event``): AfterAgent is its Stop, SessionEnd fires at exit; there is
  no event after a compression (PreCompress only, before it, with nothing to keep), so
  the pointer says to run ``ctx start`` again by hand.
- MCP: ``mcpServers`` in the same ``settings.json``; ``"trust": true`` (``--trust``)
  lets the model call ctx's tools without asking the user each time. Gemini waits for
  its MCP servers before the first request.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctx.harness.base import Budget, Edit, Harness, Wiring, home
from ctx.harness.edit import FAILURE_MARK, HOOK_MARK, with_block, with_hooks
from ctx.harness.texts import (
    EVENT_MARKS,
    MOMENT_NOTES,
    after_compression,
    event_command,
    failure_command,
    hook_command,
    pointer,
)
from ctx.hookpayload import field, session_of

if TYPE_CHECKING:
    from ctx.failure_recall import Failure

HOOK_TIMEOUT_MS = 15000  # Gemini CLI's hook timeout is in milliseconds (its default: 60,000)
FAILURE_TIMEOUT_MS = 10000  # the recall stays within 1.5 s on 10,000 entries (bench/recallhook.py)
_EXIT_CODE = re.compile(r"^\s*Exit Code:\s*(-?\d+)", re.M | re.I)
# the lines of the shell tool's text that only frame the output ("Command: ...", "Exit Code: 1")
_FRAME = re.compile(r"^\s*(Command|Directory|Exit Code|Signal|Background PIDs|Process Group PGID):.*$"
                    r"|^\s*Error: \(none\)\s*$", re.M | re.I)
# Gemini CLI's events ctx runs at besides SessionStart: (event, `ctx event` word, timeout in ms).
# AfterAgent is its Stop (a "deny"/"block" decision's reason goes back as a new prompt, once:
# the next carries stop_hook_active); it does not wait for SessionEnd's hooks.
MOMENTS = (("AfterAgent", "stop", 10000), ("SessionEnd", "end", 5000))
TRUST_NOTE = ('"trust": true: Gemini CLI runs ctx\'s tools (writes included) without asking you '
              "to confirm each call")


class Gemini(Harness):
    name = "gemini"
    agent = "Gemini"

    def settings_path(self, project: bool) -> Path:
        """settings.json, which holds both sides: the hook and the MCP entry."""
        return (Path.cwd() if project else home()) / ".gemini" / "settings.json"

    budget = Budget(16000, "ctx's choice, about 4,000 tokens: Gemini CLI passes a hook's context and a command's "
                           "output whole far beyond this")
    start_help = ("~/.gemini/settings.json (./.gemini/ with --project): a SessionStart hook printing ctx "
                  "start as the JSON Gemini CLI hands the model, an AfterTool hook (run_shell_command) running "
                  "ctx event failure, AfterAgent and SessionEnd hooks (ctx event stop, end); and the pointer "
                  "in ~/.gemini/GEMINI.md (./GEMINI.md)")
    failure_event = "AfterTool"
    failure_matcher = "run_shell_command"

    def failure_hook(self, wiring: Wiring) -> dict[str, Any]:
        command = failure_command(wiring.root, wiring.program, self.name, agent=wiring.agent,
                                  only_under=wiring.only_under)
        return {"type": "command", "command": command, "timeout": FAILURE_TIMEOUT_MS, "matcher": self.failure_matcher}

    def failure(self, payload: dict[str, Any]) -> Failure | None:
        from ctx.failure_recall import Failure
        if (field(payload, "hook_event_name") not in (None, self.failure_event)
                or field(payload, "tool_name") != self.failure_matcher):
            return None
        command = field(payload, "tool_input", "command")
        content = field(payload, "tool_response", "llmContent") or field(payload, "tool_response", "returnDisplay")
        error = field(payload, "tool_response", "error") or field(payload, "tool_response", "error", "message")
        code = _EXIT_CODE.search(content or "")
        if not command or not (error or (code and code.group(1) != "0")):
            return None  # a command that succeeded
        shown = _FRAME.sub("", content or "").replace("Output: ", "", 1)
        return Failure(command, "\n".join(x for x in (error, shown) if x and x.strip()), session_of(payload))

    def hook(self, wiring: Wiring) -> dict[str, Any]:
        assert self.budget is not None
        command = hook_command(wiring.root, wiring.program, self.budget.chars, agent=wiring.agent, as_json=True,
                               only_under=wiring.only_under, harness=self.name)
        return {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_MS}

    def moments(self, wiring: Wiring) -> list[tuple[str, dict[str, Any], str]]:
        """The hooks besides the start: (event, hook, mark)."""
        def one(event: str, timeout: int) -> dict[str, Any]:
            command = event_command(wiring.root, wiring.program, event, self.name, agent=wiring.agent,
                                    only_under=wiring.only_under)
            return {"type": "command", "command": command, "timeout": timeout}
        return [(name, one(event, timeout), EVENT_MARKS[event]) for name, event, timeout in MOMENTS]

    def start(self, wiring: Wiring) -> tuple[list[Edit], list[str]]:
        assert self.budget is not None
        wanted = [("SessionStart", self.hook(wiring), HOOK_MARK),
                  (self.failure_event, self.failure_hook(wiring), FAILURE_MARK), *self.moments(wiring)]
        block = pointer(wiring.root, wiring.agent, self.budget.chars, after_compression(self.budget.chars))
        context_file = Path.cwd() / "GEMINI.md" if wiring.project else home() / ".gemini" / "GEMINI.md"
        notes = [*(MOMENT_NOTES[event] for _, event, _ in MOMENTS),
                 "Gemini CLI has no hook after it compresses a conversation: the pointer in "
                 f"{context_file.name} tells the model to run ctx start again, and nothing keeps the compression"]
        return [Edit(self.settings_path(wiring.project), lambda before: with_hooks(before or "", wanted)),
                Edit(context_file, lambda before: (with_block(before or "", block), []))], notes

    mcp_help = '~/.gemini/settings.json "mcpServers" (./.gemini with --project; --trust: "trust": true)'
    server_env = ("Gemini CLI withholds from a stdio server every variable of its own whose name holds "
                  "KEY, TOKEN, SECRET, PASSWORD, AUTH or CREDENTIAL (CTX_AUTHOR among them), but never the "
                  "entry's env")

    def mcp_path(self, project: bool) -> Path:
        return self.settings_path(project)

    def mcp_entry(self, wiring: Wiring) -> dict[str, Any]:
        entry = super().mcp_entry(wiring)
        return {**entry, "trust": True} if wiring.trust else entry

    def mcp_notes(self, wiring: Wiring) -> list[str]:
        said = TRUST_NOTE if wiring.trust else ("Gemini CLI asks you to confirm each call of ctx's tools; "
                                                "--trust writes " + TRUST_NOTE)
        return super().mcp_notes(wiring) + [said]


HARNESS = Gemini()
