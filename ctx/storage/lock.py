"""The context lock (§8.4): ``flock(LOCK_EX)`` on ``memory/.lock``, re-entrant in a
process, given up after ``CTX_LOCK_TIMEOUT`` seconds rather than hanging an agent."""

from __future__ import annotations

import _thread  # threading itself costs ~1.8 ms at every start; the lock needs only these two
import errno
import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path

TYPE_CHECKING = False  # typing is for the checker; importing it costs ~3 ms at every start
if TYPE_CHECKING:
    from collections.abc import Iterator

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


@contextmanager
def context_lock(root: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold ``flock(LOCK_EX)`` on ``memory/.lock``; re-entrant within a process.

    Waits for another holder up to ``timeout`` seconds (``CTX_LOCK_TIMEOUT``,
    default 60), then raises ``LockTimeout`` rather than hanging an agent.
    """
    path = root / "memory" / LOCK_NAME
    ident = f"{path}\0{_thread.get_ident()}"  # re-entrant per thread; threads exclude each other
    with _held_guard:
        if ident in _held:
            _held[ident] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield
        finally:
            with _held_guard:
                _held[ident] -= 1
        return
    if path.is_symlink():
        raise StoreError(f"{path}: is a symbolic link; ctx never writes through a link")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    except OSError as exc:
        raise ContextRootError(f"cannot open the lock {path}: {exc.strerror}") from None
    try:
        wait_for_flock(fd, settings.seconds("CTX_LOCK_TIMEOUT") if timeout is None else timeout,
                       f"another writer holds {path}; gave up waiting (set CTX_LOCK_TIMEOUT to wait longer)")
        with _held_guard:
            _held[ident] = 1
        try:
            yield
        finally:
            with _held_guard:
                del _held[ident]
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
