"""Exit statuses of every command, and the one line each kind of failure prints.

The one owner of the error → message → exit status mapping: both doors
(the fast parser and click's commands) run a command through
``ctx.cli.run.invoke``, which turns what the core raises into a line from
here and a status from ``ExitStatus``.
"""

from __future__ import annotations

from ctx.errors import (
    Conflict,
    ContextRootError,
    CredentialRefused,
    CtxError,
    GitError,
    InvalidArgument,
    LockTimeout,
    NotFound,
    StoreError,
)


class ExitStatus:
    """Exit statuses (documented in ``ctx --help``): plain ints, named once here. (Not an
    ``IntEnum``: no read imports enum (test_fastcli.py:
    test_the_reads_load_neither_re_nor_pathlib), and a status is only ever a number handed to
    the exit.)"""

    OK = 0
    NOT_FOUND = 1      # also: doctor and scan found something
    USAGE = 2          # an invalid argument (click's usage errors use 2 as well)
    STORE = 3          # a store file ctx will not write, a bad context root
    REFUSED = 4        # a credential refused (§11), a conflict, a remote's refusal
    BUSY = 5           # the lock or the repository stayed busy
    FAILED = 6         # any other failed write; an internal error
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as a shell reports it


_EXIT_FOR = (
    (NotFound, ExitStatus.NOT_FOUND),
    (InvalidArgument, ExitStatus.USAGE),
    (StoreError, ExitStatus.STORE),
    (ContextRootError, ExitStatus.STORE),
    (CredentialRefused, ExitStatus.REFUSED),
    (Conflict, ExitStatus.REFUSED),
    (LockTimeout, ExitStatus.BUSY),
    (GitError, ExitStatus.FAILED),
)


def exit_status_for(error: CtxError) -> int:
    for kind, status in _EXIT_FOR:
        if isinstance(error, kind):
            return status
    return ExitStatus.FAILED


# An error's message quotes what it was given: a key, a path, a file name, a remote's URL or
# its own words. It is shown as one line of visible text (``ctx.display.visible``), as every
# other field is, so that no message can move the cursor, write the clipboard or print a
# second line that looks like ctx's (tests/reliability/test_visible_printers.py). (Imported
# here, not at the top: only a failure pays for it.)

def error_line(error: CtxError) -> str:
    from ctx.display import visible
    return visible(f"ctx: {error}")


def os_error_line(error: OSError) -> str:
    from ctx.display import visible
    return visible(f"ctx: {error.strerror or error}: {error.filename or ''}".rstrip(": "))


def internal_error_line(error: Exception) -> str:
    from ctx.display import visible
    return (f"ctx: internal error: {type(error).__name__}: {visible(str(error))} "
            "(set CTX_DEBUG=1 for the traceback)")


INTERRUPTED_LINE = "ctx: interrupted"
