"""How far the "since your last session" log (``since.py``) may fall behind the writes.

``ctx start`` writes nothing, so it reads the commits past the stored log's tip
into memory each time: a few cost little, a whole history a lot. Bringing the
log up to HEAD after every write costs each write a few milliseconds (loading
``since.py``, a SQLite transaction). So a write only counts itself here, in a
small file beside the log (never committed), and every ``EVERY``-th write, or
the first when there is no count, brings the log up to date: ``ctx start``
then reads at most that many commits in memory (plus what a pull brought in
since the last ``ctx brief``).
"""

from __future__ import annotations

import os

from ctx.errors import StoreError
from ctx.storage.files import atomic_write, read_bytes
from ctxgit.gitfiles.layout import SINCE_LAG

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.storage.files import StrPath

EVERY = 8


def _path(root: StrPath) -> str:
    return os.path.join(root, ".git", SINCE_LAG)


def keep(root: StrPath, now: bool = False) -> None:
    """After a write (``now``: after a pull, whose commits could be many): bring the log
    up to HEAD when it is due. Never raises: the log is a cache, and the next ``ctx
    brief`` or ``ctx start`` reads the history it lacks."""
    try:
        if now or due(root):
            from ctxgit.porcelain.since import catch_up
            if catch_up(root):
                reset(root)
    except Exception:  # a cache: it never fails the command
        pass


def due(root: StrPath) -> bool:
    """Count this write; True when the log should be brought up to HEAD now."""
    path = _path(root)
    try:
        count = int(read_bytes(path) or b"x") + 1
    except (OSError, ValueError):
        return True  # no count yet (or a garbled one): bring the log up now
    if count >= EVERY:
        return True
    try:
        _write(path, count)  # a count lost to a race is harmless: it only delays
    except (OSError, StoreError):
        return True
    return False


def reset(root: StrPath) -> None:
    """The log is at HEAD: no write is behind it."""
    try:
        _write(_path(root), 0)
    except (OSError, StoreError):
        pass


def _write(path: str, count: int) -> None:
    # Replaced whole, so a reader never sees a count cut short; never fsynced: a count
    # lost to a crash only moves the catch-up by a write or two (none at all: it runs now),
    # and so removed just before (a write finding none in between catches up at once)
    atomic_write(path, b"%d" % count, durable=False, unlink_first=True)
