"""git's lock files around ctx's talks with remotes: recover, name, list.

git (and libgit2) update a ref by creating ``<ref>.lock`` and renaming it
over the ref; a process killed in between leaves the ``.lock`` and every
later update of that ref fails. ctx fetches and pushes outside the context
lock (the network can be slow), so a lock file found then may belong to a
live process. To tell a dead ctx's lock files from a live one's, every fetch
and push in a root runs under ``.git/ctx/remote.lock`` (``flock``: one at a
time, released by the kernel when the process dies) and leaves an intent
file, ``.git/ctx/remote-op``, while it runs. The next one that finds the
intent knows the last one was killed: lock files under ``refs/remotes/``
made since are its own, and are removed; so is the lock a push to a remote
on a local path (a USB disk, a shared folder) left there, when it holds the
very commit that push was sending (the intent names it). Any other lock file
is named in a one-line error and in ``ctx doctor``, never removed.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ctx import settings
from ctx.errors import GitError, LockTimeout
from ctx.storage.files import atomic_write
from ctx.storage.lock import wait_for_flock
from ctxgit.gitfiles.layout import AUTOSYNC_LOCK, DIR
from ctxgit.gitfiles.layout import REMOTE_LOCK as FLOCK
from ctxgit.gitfiles.layout import REMOTE_OP as INTENT

_FAILED_TO_LOCK = re.compile(r"failed to (?:lock|create locked) file '([^']+)'|'([^']+\.lock)': File exists")


class RemoteInUse(LockTimeout):
    """Another fetch or push in this root (another ctx, or auto-sync's background push)
    held the remote flock for the whole wait; ``auto``: it was auto-sync's own push,
    ``remote``: the remote it talks to (None when its intent did not say)."""

    def __init__(self, message: str, auto: bool = False, remote: str | None = None) -> None:
        super().__init__(message)
        self.auto = auto
        self.remote = remote


@dataclass
class Holder:
    """Who holds the remote flock, as its intent file says."""
    pid: int | None
    remote: str | None  # the remote's name
    pushing: bool
    since: float | None  # when it took the flock (the intent's mtime)
    auto: bool  # auto-sync's background push (its pid is the one in autosync.lock)
    alive: bool  # False: a git left running by a ctx that has stopped

    def describe(self, now: float | None = None) -> str:
        """``auto-sync's own background push has been pushing to origin for 75 s (since 02:14:05)``."""
        who = ("auto-sync's own background push" if self.auto else
               f"another ctx (pid {self.pid})" if self.alive and self.pid else
               "a git command started by a ctx that has stopped" if self.pid else "another ctx")
        what = ("pushing to" if self.pushing else "fetching from") + f" {self.remote}" if self.remote \
            else "talking to a remote"
        if self.since is None:
            return f"{who} is {what}"
        now = time.time() if now is None else now
        return (f"{who} has been {what} for {max(0.0, now - self.since):.0f} s "
                f"(since {time.strftime('%H:%M:%S', time.localtime(self.since))})")


def holder(git: Path) -> Holder:
    """Read who holds the remote flock (call when it is held by another): the intent file
    its holder wrote on taking it, and the pid auto-sync's background push keeps in its lock."""
    try:
        since: float | None = (git / INTENT).stat().st_mtime
        lines = (git / INTENT).read_text(errors="replace").splitlines()
    except OSError:
        since, lines = None, []
    first = lines[0].split("\t") if lines else []
    pid = int(first[0]) if first and first[0].isdigit() else None
    remote = first[1] if len(first) > 1 and first[1] else None
    pushing = len(lines) > 1 and lines[1].startswith("push\t")
    try:
        auto_pid = int((git / AUTOSYNC_LOCK).read_text(errors="replace").split()[0])
    except (OSError, ValueError, IndexError):
        auto_pid = None
    alive = True
    if pid is not None:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            alive = False
        except OSError:
            pass  # another user's process: alive
    return Holder(pid, remote, pushing, since, pid is not None and pid == auto_pid and alive, alive)


@dataclass
class RemoteOperation:
    removed: list[str]  # lock files of a killed earlier operation, removed
    fd: int  # holds the flock: pass it to a child (``pass_fds``) so a killed ctx's git keeps it


@contextmanager
def remote_operation(root: Path, pushing: tuple[str, str] | None = None,
                     wait: float | None = None, why: str | None = None,
                     remote: str | None = None) -> Iterator[RemoteOperation]:
    """Hold the remote flock for one fetch or push (``pushing``: the remote's URL and
    the commit sent; ``wait``: seconds to wait for it, default CTX_REMOTE_WAIT_SECONDS;
    ``why``: what set ``wait``, named in the error; ``remote``: the remote's name, kept in
    the intent so that a ctx kept waiting can say who holds the remote).
    A ``git`` child given the descriptor holds the flock until it exits, so a ctx
    killed while its git runs on leaves no window for recovery."""
    git = root / ".git"
    (git / DIR).mkdir(mode=0o700, exist_ok=True)
    fd = os.open(git / FLOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        seconds = settings.seconds("CTX_REMOTE_WAIT_SECONDS") if wait is None else wait
        try:
            wait_for_flock(fd, seconds, "")
        except LockTimeout:
            raise busy(git, seconds, why or "CTX_REMOTE_WAIT_SECONDS") from None
        removed = recover(git)
        intent = f"{os.getpid()}\t{remote or ''}\n" + (f"push\t{pushing[0]}\t{pushing[1]}\n" if pushing else "")
        # Replaced whole and fsynced: the next operation judges lock files by its mtime
        # and content (a half-written one would hide the push's lock in the remote), and
        # after a power cut mid-push it is what lets those lock files be removed; a
        # fetch or push pays one fsync beside its network round trips, a write none.
        atomic_write(git / INTENT, intent.encode(), durable=True)
        yield RemoteOperation(removed, fd)
        # only after success: a git that failed or was stopped half-way (a timeout)
        # may have left lock files, and the intent lets the next operation remove them
        (git / INTENT).unlink(missing_ok=True)
    finally:
        os.close(fd)  # releases the flock


def busy(git: Path, waited: float, why: str) -> RemoteInUse:
    """The one line for a fetch or push that waited ``waited`` seconds (the wait ``why``
    names) for the holder of the remote flock: who it is, what it does, since when."""
    found = holder(git)
    shown = f"{waited:.1f}".rstrip("0").rstrip(".")
    line = f"{found.describe()}; this command waited {shown} s for it ({why}) and gave up"
    if found.auto:
        idle = settings.seconds("CTX_REMOTE_TIMEOUT")
        line += (f"; that push stops by itself after {idle:.3g} s without an answer from the server "
                 "(CTX_REMOTE_TIMEOUT): run this again then, or see .git/ctx/sync.log")
    return RemoteInUse(line, found.auto, found.remote)


def recover(git: Path) -> list[str]:
    """Remove the lock files a killed fetch or push left (call holding the flock)."""
    try:
        began = (git / INTENT).stat().st_mtime
        intent = (git / INTENT).read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return []
    candidates = sorted((git / "refs" / "remotes").rglob("*.lock"))
    removed = [str(lock.relative_to(git)) for lock in candidates if _remove_if(lock, began)]
    pushed = intent[1].split("\t") if len(intent) > 1 else []
    if len(pushed) == 3 and pushed[0] == "push" and "://" not in pushed[1]:
        remote = Path(pushed[1])
        remote = remote / ".git" if (remote / ".git").is_dir() else remote
        lock = remote / "refs" / "heads" / "main.lock"
        if _remove_if(lock, began, holding=pushed[2]):
            removed.append(str(lock))
    (git / INTENT).unlink(missing_ok=True)
    return removed


def _remove_if(lock: Path, began: float, holding: str | None = None) -> bool:
    """Remove ``lock`` when it was made since ``began`` (and, with ``holding``, names
    that commit or nothing yet): the killed operation's own."""
    try:
        if lock.stat().st_mtime < began - 1:
            return False
        if holding is not None and lock.read_text(errors="replace").strip() not in ("", holding):
            return False
        lock.unlink()
        return True
    except OSError:
        return False


def locked_file(text: str) -> str | None:
    """The lock file a libgit2 error names, if it is about one."""
    found = _FAILED_TO_LOCK.search(text)
    return os.path.normpath(found.group(1) or found.group(2)) if found else None  # git says remote/./refs


def lock_error(what: str, lock: str) -> GitError:
    """The one-line error for a lock file in the way: what it is, what to do."""
    return GitError(f"{what}: {lock} is in the way: a git command is updating that ref now, or one was "
                    "interrupted and left it; if none is running, remove the file and run it again")


def stale_locks(git_dir: Path, now: float | None = None) -> list[tuple[str, float]]:
    """Every git lock file in a repository, with its age in seconds (for ``ctx doctor``)."""
    now = time.time() if now is None else now
    found = []
    candidates = [git_dir / name for name in ("index.lock", "HEAD.lock", "packed-refs.lock", "config.lock")]
    candidates += list((git_dir / "refs").rglob("*.lock")) if (git_dir / "refs").is_dir() else []
    for path in candidates:
        try:
            age = now - path.stat().st_mtime
        except FileNotFoundError:
            continue
        found.append((str(path.relative_to(git_dir)), age))
    return sorted(found)
