"""The harnesses ``ctx import --from`` reads, and the one place that picks a reader."""


from __future__ import annotations

from ctx.errors import InvalidArgument

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from ctx.features.harness_import import Source

SOURCES = ("claude-code", "codex", "gemini", "cursor")  # `ctx import --from HARNESS`


def read_memories(name: str, path: Path | None = None) -> Source:
    """What harness ``name``'s own memory holds: at ``path``, else in the harness's own place
    for the current project."""
    if name == "claude-code":
        from ctx.harness.memory import claude as reader
    elif name == "codex":
        from ctx.harness.memory import codex as reader  # type: ignore[no-redef]
    elif name == "gemini":
        from ctx.harness.memory import gemini as reader  # type: ignore[no-redef]
    elif name == "cursor":
        from ctx.harness.memory import cursor as reader  # type: ignore[no-redef]
    else:
        raise InvalidArgument(f"unknown harness {name!r}: use one of {', '.join(SOURCES)}")
    return reader.read(path)
