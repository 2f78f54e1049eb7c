"""The ``ctx`` command line run in the test's own process through the front door, as the
``ctx`` executable runs it (``ctx.cli.main``), with what click's test runner gives a test:
``sys.argv``, the standard streams and the environment swapped for the call, and a
``click.testing.Result`` back. The fast door is what agents run hundreds of times a day,
so it is what most tests drive (tests/conftest.py's ``run``)."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

from click.testing import CliRunner, Result


def run_front_door(runner: CliRunner, args: Sequence[str], *, input: str | bytes | None = None,
                   env: Mapping[str, str | None] | None = None) -> Result:
    """``ctx ARGS`` through ``ctx.cli.main``; its exit status, output and any exception."""
    from ctx.cli import main
    argv = sys.argv
    exception: BaseException | None = None
    exc_info = None
    code = 0
    with runner.isolation(input=input, env=env) as (stdout, stderr, output):
        sys.argv = ["ctx", *args]
        try:
            main()
        except SystemExit as done:
            status = done.code
            if status is None:
                status = 0
            if not isinstance(status, int):
                sys.stdout.write(f"{status}\n")
                status = 1
            if status != 0:
                exception, exc_info = done, sys.exc_info()
            code = status
        except Exception as error:  # an internal error: shown as click's runner shows it
            exception, exc_info, code = error, sys.exc_info(), 1
        finally:
            sys.argv = argv
            sys.stdout.flush()
            sys.stderr.flush()
        return Result(runner=runner, stdout_bytes=stdout.getvalue(), stderr_bytes=stderr.getvalue(),
                      output_bytes=output.getvalue(), return_value=None, exit_code=code,
                      exception=exception, exc_info=exc_info)  # type: ignore[arg-type]
