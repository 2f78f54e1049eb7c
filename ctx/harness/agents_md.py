"""``AGENTS.md`` in the current directory: the instruction file many harnesses read
(Codex among them) in a project. Only the pointer; no MCP side."""

from __future__ import annotations

from pathlib import Path

from ctx.harness.base import Budget, Edit, Harness, Wiring
from ctx.harness.edit import with_block
from ctx.harness.texts import pointer


class AgentsMd(Harness):
    name = "agents-md"
    agent = ""

    budget = Budget(8000, "as codex: the harnesses that read AGENTS.md cut a command's output near 10 KB")
    start_help = "./AGENTS.md: the pointer"

    def start(self, wiring: Wiring) -> tuple[list[Edit], list[str]]:
        assert self.budget is not None
        block = pointer(wiring.root, wiring.agent, self.budget.chars)
        return [Edit(Path.cwd() / "AGENTS.md", lambda before: (with_block(before or "", block), []))], []


HARNESS = AgentsMd()
