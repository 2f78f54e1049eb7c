"""Drive ``ctx mcp`` as a harness does: the MCP SDK's own client, over stdio, to a
real ``python -m ctx mcp`` subprocess with the test's environment."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio

from support.gitutil import merged_env


def params(*args: str, env: Mapping[str, str | None] | None = None):
    from mcp import StdioServerParameters
    return StdioServerParameters(command=sys.executable, args=["-m", "ctx", "mcp", *args], env=merged_env(env))


@asynccontextmanager
async def connect(*args: str, env: Mapping[str, str | None] | None = None,
                  mode: str = "auto") -> AsyncIterator[Any]:
    """A connected ``mcp.Client`` to a new server process (closed on exit)."""
    from mcp import Client
    async with Client(params(*args, env=env), mode=mode, read_timeout_seconds=120) as client:
        yield client


def serve(body: Callable[[Any], Awaitable[Any]], *args: str, env: Mapping[str, str | None] | None = None,
          mode: str = "auto") -> Any:
    """Run ``await body(client)`` against one server; returns what it returns."""
    async def main() -> Any:
        async with connect(*args, env=env, mode=mode) as client:
            return await body(client)
    return anyio.run(main)


def text(result: Any) -> str:
    """The text blocks of a tool result, joined."""
    return "".join(block.text for block in result.content if block.type == "text")


def wire(tool: Any) -> dict[str, Any]:
    """A listed tool as it came over the wire (camelCase, no unset fields)."""
    return tool.model_dump(by_alias=True, exclude_none=True, mode="json")
