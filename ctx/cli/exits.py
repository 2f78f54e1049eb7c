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
    ``IntEnum``: enum costs every process ~2 ms to import, and a status is only ever a number
    handed to the exit.)"""

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


def error_line(error: CtxError) -> str:
    return f"ctx: {error}"


def os_error_line(error: OSError) -> str:
    return f"ctx: {error.strerror or error}: {error.filename or ''}".rstrip(": ")


def internal_error_line(error: Exception) -> str:
    return (f"ctx: internal error: {type(error).__name__}: {error} "
            "(set CTX_DEBUG=1 for the traceback)")


INTERRUPTED_LINE = "ctx: interrupted"
