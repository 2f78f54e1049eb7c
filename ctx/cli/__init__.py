"""The front door: the ``ctx`` command line (and, later, the MCP server).

``main`` is the console entry point: the fast parser takes the everyday
commands, click takes everything else.
"""

from __future__ import annotations


def main() -> None:
    """The ``ctx`` console entry point."""
    from ctx.cli.fast import main as fast_main
    fast_main()
