"""Exit statuses of every command, and the one line an error prints (no click here).

Both front doors, click's (``cli.py``) and the fast one (``fastcli.py``),
turn a library error into ``ctx: <message>`` on stderr and a status from here.
"""

from __future__ import annotations

from enum import IntEnum

from ctx.errors import (Conflict, ContextRootError, CredentialRefused, CtxError, GitError, InvalidArgument,
                     LockTimeout, NotFound, StoreError)


class ExitStatus(IntEnum):
    """Exit statuses (documented in ``ctx --help``)."""

    OK = 0
    NOT_FOUND = 1
    USAGE = 2          # click's own usage errors use 2 as well
    STORE = 3          # a store file ctx will not write, a bad context root
    REFUSED = 4        # a credential refused (§11), a conflict
    BUSY = 5           # the lock or the repository stayed busy
    FAILED = 6         # any other failed write


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


def exit_status_for(error: CtxError) -> ExitStatus:
    for kind, status in _EXIT_FOR:
        if isinstance(error, kind):
            return status
    return ExitStatus.FAILED


def os_error_line(error: OSError) -> str:
    return f"ctx: {error.strerror or error}: {error.filename or ''}".rstrip(": ")


def internal_error_line(error: Exception) -> str:
    return (f"ctx: internal error: {type(error).__name__}: {error} "
            "(set CTX_DEBUG=1 for the traceback)")
