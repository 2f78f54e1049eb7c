"""Cursor: only its MCP side, ``mcpServers`` in ``~/.cursor/mcp.json``
(``./.cursor/mcp.json`` with ``--project``). ctx writes no start wiring for it."""

from __future__ import annotations

from pathlib import Path

from ctx.harness.base import Harness, home


class Cursor(Harness):
    name = "cursor"
    agent = "Cursor"

    mcp_help = '~/.cursor/mcp.json "mcpServers" (./.cursor with --project; cursor: --mcp only)'
    server_env = "Cursor passes the entry's env; what else of its own environment it passes is not checked"

    def mcp_path(self, project: bool) -> Path:
        return (Path.cwd() if project else home()) / ".cursor" / "mcp.json"


HARNESS = Cursor()
