"""``ctx mcp``: serve the context to MCP clients over stdio. The server is in
``ctx/cli/mcp/``, on the official MCP SDK (the ``mcp`` extra), loaded only here."""

from __future__ import annotations

from ctx.errors import InvalidArgument

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.cli.run import Run

INSTALL = "pip install 'ctx-memory[mcp]'"
MAJOR = "2."  # the SDK's major version ctx is written against (pyproject pins mcp>=2.3,<3)


def sdk_missing() -> str | None:
    """Why the SDK cannot be used (one line), or None."""
    from importlib import metadata, util
    if util.find_spec("mcp") is None:
        return f"the MCP server needs the MCP SDK, an optional extra: {INSTALL}"
    try:
        version = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        return None  # a source checkout on the path: trust it
    if not version.startswith(MAJOR):
        return f"the MCP server needs version 2 of the MCP SDK (mcp {version} is installed): {INSTALL}"
    return None


def serve(run: Run, author: str | None) -> None:
    problem = sdk_missing()
    if problem:
        raise InvalidArgument(problem)
    from ctx.cli.mcp.server import serve as run_server
    run_server(author)

