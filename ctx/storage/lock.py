"""The context lock (§8.4): ``flock(LOCK_EX)`` on ``memory/.lock``, re-entrant in a
process, given up after ``CTX_LOCK_TIMEOUT`` seconds rather than hanging an agent."""

from __future__ import annotations

import _thread  # not threading: no read imports it (test_fastcli.py: test_a_read_loads_only_what_it_uses)
import errno
import fcntl
import os
import time

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from ctx.storage.files import StrPath

from ctx import settings
from ctx.errors import ContextRootError, LockTimeout, StoreError
from ctx.storage.files import FILE_MODE

LOCK_NAME = ".lock"

_held: dict[str, int] = {}
_held_guard = _thread.RLock()


def wait_for_flock(fd: int, timeout: float, gave_up: str) -> None:
    """Take ``flock(LOCK_EX)`` on ``fd``, polling up to ``timeout`` seconds (a blocking
    flock could hang an agent for good); ``LockTimeout(gave_up)`` after that."""
    deadline = time.monotonic() + timeout
    pause = 0.002
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
        if time.monotonic() >= deadline:
            raise LockTimeout(gave_up)
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


class ContextLock:
    """``with context_lock(root):``: ``flock(LOCK_EX)`` on ``memory/.lock``, re-entrant
    within a thread (threads exclude each other). One use per object. A class, not a
    generator under ``contextlib.contextmanager``: every command imports this module
    (``ctx.context`` does), reads too, and no read imports contextlib with the functools and
    collections it brings (tests/cli/test_fastcli.py: test_the_reads_load_neither_re_nor_pathlib)."""

    __slots__ = ("path", "timeout", "ident", "fd")

    def __init__(self, root: StrPath, timeout: float | None = None) -> None:
        self.path = os.path.join(root, "memory", LOCK_NAME)
        self.timeout = timeout
        self.ident = ""
        self.fd = -1  # -1 while re-entered: the outer holder keeps the file and the flock

    def __enter__(self) -> None:
        path = self.path
        self.ident = ident = f"{path}\0{_thread.get_ident()}"
        with _held_guard:
            if ident in _held:
                _held[ident] += 1
                return
        if os.path.islink(path):
            raise StoreError(f"{path}: is a symbolic link; ctx never writes through a link")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        except OSError as exc:
            raise ContextRootError(f"cannot open the lock {path}: {exc.strerror}") from None
        try:
            wait_for_flock(fd, settings.seconds("CTX_LOCK_TIMEOUT") if self.timeout is None else self.timeout,
                           f"another writer holds {path}; gave up waiting (set CTX_LOCK_TIMEOUT to wait longer)")
        except BaseException:
            os.close(fd)
            raise
        with _held_guard:
            _held[ident] = 1
        self.fd = fd

    def __exit__(self, *_exc: object) -> None:
        with _held_guard:
            if self.fd < 0:
                _held[self.ident] -= 1
                return
            del _held[self.ident]
        fd, self.fd = self.fd, -1
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def context_lock(root: StrPath, timeout: float | None = None) -> ContextLock:
    """Hold ``flock(LOCK_EX)`` on ``memory/.lock`` for a ``with`` block; re-entrant within
    a process.

    Waits for another holder up to ``timeout`` seconds (``CTX_LOCK_TIMEOUT``,
    default 60), then raises ``LockTimeout`` rather than hanging an agent.
    """
    return ContextLock(root, timeout)
