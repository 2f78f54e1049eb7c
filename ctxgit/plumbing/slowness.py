"""Why writes are committed the slow way (libgit2), when they are for a while.

The fast commit (``fastcommit.py``) is taken whenever the repository is as ctx's
last commit left it. When it is not, libgit2 commits, and usually sets things
right, so the next write is fast again. A cause that lasts (git's index touched
at every write by another tool, a store file another program rewrites, a
configuration that changes) makes every write several times slower: each write
committed through libgit2 counts itself here with the reason, a fast commit
clears the count, and ``ctx doctor --check`` reports a count of
``REPORT_AFTER`` or more, with the last reason.
"""

from __future__ import annotations

import os

from ctx.errors import StoreError
from ctx.storage.files import read_text
from ctxgit.gitfiles.layout import SLOW_COMMITS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.storage.files import StrPath

NAME = SLOW_COMMITS  # in .git: "<count>\t<why the last one was slow>"
REPORT_AFTER = 5


def _path(root: StrPath) -> str:
    return os.path.join(root, ".git", NAME)


def fast(root: StrPath) -> None:
    """A write was committed the fast way: the slow run, if any, is over."""
    try:
        os.unlink(_path(root))
    except OSError:
        pass


def slow(root: StrPath, why: str) -> None:
    """A write was committed through libgit2, because ``why``. Never raises."""
    count = _read(root)[0] + 1
    try:
        os.makedirs(os.path.dirname(_path(root)), exist_ok=True)
        from ctx.storage.files import atomic_write
        atomic_write(_path(root), f"{count}\t{' '.join(why.split())}\n".encode(), durable=False)
    except (OSError, StoreError):
        pass


def _read(root: StrPath) -> tuple[int, str]:
    try:
        count, _, why = read_text(_path(root)).partition("\t")
        return int(count), why.strip()
    except (OSError, ValueError):
        return 0, ""


def report(root: StrPath) -> str | None:
    """What ``ctx doctor --check`` says when the last writes were all slow; None if not."""
    count, why = _read(root)
    if count < REPORT_AFTER:
        return None
    return (f"the last {count} writes were committed through libgit2, not the fast commit "
            f"(each several times slower): {why or 'the reason was not recorded'}")
