"""OpenAI's Codex CLI.

- Start: the pointer in ``$CODEX_HOME/AGENTS.md`` (default ``~/.codex``), the instructions
  Codex gives the model in every session; ``AGENTS.override.md`` beside it, when present,
  is read instead.
- MCP: ``[mcp_servers.ctx]`` in ``$CODEX_HOME/config.toml`` (``./.codex/config.toml`` with
  ``--project``: Codex reads it only in a project it trusts), edited as text
  (``tomledit``). Codex sends a session's first request without waiting for an MCP server
  unless it is ``required``.
"""

from __future__ import annotations

import os
from pathlib import Path

from ctx.harness.base import Budget, Edit, Harness, Wiring, home
from ctx.harness.edit import with_block
from ctx.harness.texts import pointer


def codex_home() -> Path:
    """``$CODEX_HOME``, else ``~/.codex``."""
    given = (os.environ.get("CODEX_HOME") or "").strip()
    return Path(given) if given else home() / ".codex"


class Codex(Harness):
    name = "codex"
    agent = "Codex"

    budget = Budget(8000, "Codex cuts what a command prints for the model (10 KB and 256 lines in its first CLI, "
                          "10,000 tokens per tool output since): 8,000 keeps clear")
    start_help = "$CODEX_HOME/AGENTS.md (default ~/.codex): the pointer"

    def start(self, wiring: Wiring) -> tuple[list[Edit], list[str]]:
        assert self.budget is not None
        path = codex_home() / "AGENTS.md"
        block = pointer(wiring.root, wiring.agent, self.budget.chars)
        notes = []
        override = path.parent / "AGENTS.override.md"
        if override.exists():
            notes.append(f"{override} exists: Codex reads it instead of AGENTS.md; move the ctx block there")
        return [Edit(path, lambda before: (with_block(before or "", block), []))], notes

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
