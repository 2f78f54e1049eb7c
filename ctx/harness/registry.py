"""Every harness ctx wires, by the name ``ctx wire`` takes, in the order its help lists them."""

from __future__ import annotations

from ctx.errors import InvalidArgument
from ctx.harness import agents_md, claude_code, codex, cursor, gemini, launcher
from ctx.harness.base import Harness

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from ctx.features.harness_import import Source

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


MEMORY_SOURCES = ("claude-code", "codex", "gemini", "cursor")  # `ctx import --from HARNESS`


def read_memories(name: str, path: Path | None = None) -> Source:
    """What harness ``name``'s own memory holds (``ctx/harness/memory_*.py``, one reader each):
    at ``path``, else in the harness's own place for the current project."""
    if name == "claude-code":
        from ctx.harness import memory_claude as reader
    elif name == "codex":
        from ctx.harness import memory_codex as reader  # type: ignore[no-redef]
    elif name == "gemini":
        from ctx.harness import memory_gemini as reader  # type: ignore[no-redef]
    elif name == "cursor":
        from ctx.harness import memory_cursor as reader  # type: ignore[no-redef]
    else:
        raise InvalidArgument(f"unknown harness {name!r}: use one of {', '.join(MEMORY_SOURCES)}")
    return reader.read(path)
