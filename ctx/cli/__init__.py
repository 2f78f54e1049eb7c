"""The front door: the ``ctx`` command line and the MCP server.

``main`` is the entry point: the fast parser takes the everyday commands, click
takes everything else; it ends in ``SystemExit``. ``console`` is what the ``ctx``
executable and ``python -m ctx`` run.
"""

from __future__ import annotations


def main() -> None:
    """Run the command line; raises ``SystemExit`` with the exit status."""
    from ctx.cli.fast import main as fast_main
    fast_main()


def console() -> None:
    """``main`` for a process of its own (the ``ctx`` executable, ``python -m ctx``): the
    process ends the ordinary way, with the interpreter's own exit and teardown."""
    main()
