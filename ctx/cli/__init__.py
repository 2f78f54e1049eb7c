"""The front door: the ``ctx`` command line and the MCP server.

``main`` is the entry point: the fast parser takes the everyday commands, click
takes everything else; it ends in ``SystemExit``. ``console`` is what the ``ctx``
executable and ``python -m ctx`` run: ``main``, then the process leaves without the
interpreter's teardown.
"""

from __future__ import annotations


def main() -> None:
    """Run the command line; raises ``SystemExit`` with the exit status."""
    from ctx.cli.fast import main as fast_main
    fast_main()


def console() -> None:
    """``main`` for a process of its own. Once the command is done and its output
    flushed, the process exits at once: freeing every module and object one by one
    (what ``sys.exit`` does) costs a short command more than its own work
    (bench/run.py measures the commands), and frees nothing the kernel would not.
    What was registered to run at exit still runs.
    Whenever that cannot be done cleanly (output that cannot be flushed, an exit
    with a message, a profiler or tracer that writes its report at the end), the
    ordinary exit takes over."""
    try:
        main()
    except SystemExit as done:
        status = done.code
        if status is not None and not isinstance(status, int):
            raise
        import atexit
        import os
        import sys
        if sys.getprofile() is not None or sys.gettrace() is not None:
            raise
        atexit._run_exitfuncs()  # (then cleared: the ordinary exit below would not run them again)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            raise done from None
        os._exit(status or 0)
