"""Every harness ctx wires, by the name ``ctx wire`` takes, in the order its help lists them."""

from __future__ import annotations

from ctx.errors import InvalidArgument
from ctx.harness import agents_md, claude_code, codex, cursor, gemini, launcher
from ctx.harness.base import Harness

HARNESSES: dict[str, Harness] = {h.name: h for h in (
    claude_code.HARNESS, codex.HARNESS, agents_md.HARNESS, gemini.HARNESS, launcher.HARNESS, cursor.HARNESS)}
NAMES = tuple(HARNESSES)
START_TARGETS = tuple(name for name, h in HARNESSES.items() if h.starts)  # `ctx wire TARGET`
MCP_TARGETS = tuple(name for name, h in HARNESSES.items() if h.has_mcp)  # `ctx wire TARGET --mcp`


def harness(name: str) -> Harness:
    try:
        return HARNESSES[name]
    except KeyError:
        raise InvalidArgument(f"unknown target {name!r}: use one of {', '.join(NAMES)}") from None
