"""Auto-sync: syncing without thinking, per machine and opt-in (``ctx config sync-auto true``).

With it on and main's upstream set:

- After each write the front door calls ``trigger.after_write``: when main is ahead of
  the remote (as of the last fetch) and no background push runs, it starts
  one, detached (``python -m ctxgit.sync.auto ROOT``, its own session, no
  terminal, output to ``.git/ctx/sync.log``). It costs the write a few file
  reads and one spawn, never waits for the network and never fails the write.
- The background push holds ``.git/ctx/autosync.lock`` (one at a time; its
  pid written in it, so that a ctx kept waiting for the remote can name it) and
  syncs while main is ahead, so writes made during a push go with the next
  one (coalesced). After letting the lock go it looks once more, so a write
  that found the lock held just before is never left behind.
- ``ctx start`` and ``ctx brief`` pull first (``pull_first``), within
  ``sync-timeout`` seconds (default 3), and never fail because of it: on a
  timeout or an unreachable remote they say in one line that they show the
  local context.

It never prompts (ssh in batch mode, no terminal), never makes an empty
commit, skips with a reason on a detached HEAD, a git operation in progress
or a merge that waits, and never resolves a text conflict: that is left to
``ctx sync``, which leaves it to a human.
"""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path

from ctxgit.gitfiles import syncrecord
from ctxgit.gitfiles.layout import BRANCH, BRANCH_REF, state_dir
from ctxgit.sync import state
from ctxgit.sync.trigger import after_write, auto_remote, lock_path, running, spawn  # noqa: F401  (the trigger's)

ROUNDS = 20                   # syncs one background run makes at most, writes arriving all along
SYNC_TIMEOUT = 60.0           # the background sync's time, retries and git processes included


# --- cheap checks: on every write, and before start and brief -------------------------------

def enabled(root: Path) -> bool:
    """``sync-auto`` is true on this machine (a cheap read: ``state.auto_sync_on``)."""
    return state.auto_sync_on(root)


def skip_reason(root: Path) -> str | None:
    """Why auto-sync must leave the repository alone now, or None."""
    from ctxgit.gitfiles import waiting
    git = Path(root) / ".git"
    try:
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return "the context has no repository yet"
    if head != f"ref: {BRANCH_REF}":
        return ("HEAD is detached" if not head.startswith("ref: ") else f"HEAD is on {head[16:]}, not {BRANCH}") + \
            f": auto-sync waits until {BRANCH} is checked out again (`git -C ROOT checkout {BRANCH}`)"
    found = waiting.read(root)
    if found is not None:
        return f"a merge with {found.label} waits: {found.next_step()}"
    for name, what in (("rebase-merge", "a git rebase"), ("rebase-apply", "a git rebase or am"),
                       ("CHERRY_PICK_HEAD", "a git cherry-pick"), ("REVERT_HEAD", "a git revert")):
        if (git / name).exists():
            return f"{what} is in progress in the context's repository"
    return None


# --- the background push -----------------------------------------------------------------------

def describe(pulled, pushed) -> str:
    """One line: what a sync received and sent."""
    got = f"received {pulled.received} commit{'s' if pulled.received != 1 else ''}" if pulled.received \
        else "nothing to receive"
    if pulled.kind == "merge":
        got += f" (merged, {pulled.entries} entries changed)"
    got += "".join(f"; {line}" for line in pulled.arrived.lines())  # besides entries: in the log too
    if pushed is None:
        return got
    sent = f"sent {pushed.sent} commit{'s' if pushed.sent != 1 else ''} to {pushed.remote}" if pushed.sent \
        else f"{pushed.remote} already had everything"
    return f"{sent}; {got}"


def _context(root: Path):
    from ctx import settings
    from ctx.context import Context
    from ctxgit.recorder import recorder_for
    return Context(root=root, author=settings.author(), recorder_factory=recorder_for, state_of=state_dir)


def _sync_while_ahead(root: Path, within: float | None = None) -> bool:
    """Sync while main is ahead of the remote; False when a sync failed or was skipped.
    ``within``: one sync bounded by that many seconds (a session's end), not auto-sync's rounds."""
    from ctx.errors import CtxError
    from ctxgit.sync.remote import sync
    for _ in range(ROUNDS if within is None else 1):
        reason = skip_reason(root)
        if reason:
            state.log(root, f"auto-sync skipped: {reason}")
            return False
        remote = auto_remote(root)
        if remote is None or state.in_step(root, remote):
            return True
        try:
            pulled, pushed = sync(_context(root), remote, SYNC_TIMEOUT if within is None else within, auto=True)
        except CtxError as exc:
            state.log(root, f"auto-sync failed: {exc}")
            syncrecord.record(root, False, f"failed: {exc}", auto=True)
            return False
        if pulled.kind == "conflict":
            line = (f"{', '.join(pulled.text_conflicts)} changed on both sides on the same lines: "
                    "auto-sync never merges that; run `ctx sync` to merge it by hand")
            state.log(root, f"auto-sync stopped: {line}")
            syncrecord.record(root, False, f"stopped: {line}", auto=True)
            return False
        line = describe(pulled, pushed)
        state.log(root, f"auto-sync: {line}")
        syncrecord.record(root, True, line, auto=True)
        if pulled.received:  # into the since-log here, in the background, not in every ctx start's memory
            from ctxgit.porcelain import sincelag
            sincelag.keep(root, now=True)
    return True


def run(root: Path, within: float | None = None) -> None:
    """The background push: one at a time, coalescing the writes made meanwhile
    (``within``: once, bounded by that many seconds)."""
    while True:
        fd = os.open(lock_path(root), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return  # another one runs; it looks again after letting go
            os.ftruncate(fd, 0)  # its pid: see locks.holder
            os.write(fd, f"{os.getpid()}\n".encode())
            ok = _sync_while_ahead(root, within)
        finally:
            os.close(fd)
        if within is not None:
            return
        remote = auto_remote(root)
        if not ok or remote is None or state.in_step(root, remote):
            return


def pull_first(root: Path) -> str | None:
    """For ``ctx start`` and ``ctx brief``: pull within ``sync-timeout`` when auto-sync is
    on; the one line to show when the local context is shown instead, or None."""
    import time
    began = time.monotonic()  # the time allowed counts from here, loading git's modules included
    root = Path(root)
    if not enabled(root):
        return None
    from ctxgit.plumbing.gitconfig import upstream
    chosen = upstream(root)
    if chosen.configured is None:
        return None  # no upstream yet: auto-sync starts after a first `ctx sync` or `ctx clone`
    if chosen.remote is None:
        return f"auto-sync did not pull ({chosen.problem}); showing the local context"
    from ctx.errors import CtxError
    remote = chosen.remote
    reason = skip_reason(root)
    if reason:
        return f"auto-sync did not pull ({reason}); showing the local context"
    seconds = 3.0
    try:
        from ctx.features.config import get_value
        seconds = float(get_value(root, "sync-timeout", state_dir(root)))
        from ctxgit.sync import transport
        from ctxgit.sync.remote import pull
        deadline = transport.Deadline(seconds, "sync-timeout")
        deadline.at -= time.monotonic() - began
        pulled = pull(_context(root), remote, auto=True, deadline=deadline)
    except CtxError as exc:
        from ctxgit.plumbing.locks import RemoteInUse
        from ctxgit.sync.transport import NoAnswer
        text = str(exc)
        state.log(root, f"pull before reading failed: {text}")
        if isinstance(exc, NoAnswer):
            return f"{remote} did not answer within {seconds:g} s (sync-timeout); showing the local context"
        if isinstance(exc, RemoteInUse):
            who = "auto-sync's own background push" if exc.auto else "another ctx on this machine"
            return (f"{who} is still talking to {remote} (its server has not finished answering); "
                    "showing the local context")
        return f"could not pull from {remote} ({text}); showing the local context"
    except Exception as exc:  # reading the context must not depend on the network
        return f"could not pull from {remote} ({type(exc).__name__}: {exc}); showing the local context"
    if pulled.kind == "conflict":
        files = ", ".join(pulled.text_conflicts)
        return (f"{remote}'s {files} and this machine's changed the same lines: run `ctx sync` to merge "
                "by hand; showing the local context")
    if pulled.received:
        state.log(root, f"pulled before reading: {describe(pulled, None)}")
    return None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    within = None
    if len(args) == 2:
        try:
            within = float(args[1])
        except ValueError:
            within = -1.0
    if len(args) not in (1, 2) or (within is not None and not 0 < within <= 3600):
        print("usage: python -m ctxgit.sync.auto ROOT [SECONDS]", file=sys.stderr)
        return 2
    root = Path(args[0])
    try:
        os.nice(10)  # background work: the agents' own commands come first
    except OSError:
        pass
    try:
        run(root, within)
    except Exception as exc:  # a background run leaves a line, not a traceback
        state.log(root, f"auto-sync stopped by an internal error: {type(exc).__name__}: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
