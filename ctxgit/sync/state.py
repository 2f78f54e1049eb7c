"""Where syncing stands on this machine: ``ctx status``, the brief's header, the sync log.

Everything here is this machine's own and lives in ``.git`` (never committed,
never synced, so it can never conflict): ``.git/ctx/sync.json`` holds the
last sync (when, how it ended, what it said), ``.git/ctx/sync.log`` what
auto-sync did. The remote's position is the remote-tracking ref as of the
last fetch (``FETCH_HEAD``'s time). The cheap readers (the upstream,
``brief_line`` when in step) read plain files: ``ctx start`` stays fast.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ctx.errors import CtxError
from ctxgit.gitfiles import syncrecord, waiting
from ctxgit.gitfiles.layout import SYNC_LOG
from ctxgit.gitfiles.syncrecord import last
from ctxgit.plumbing.gitconfig import upstream
from ctxgit.sync.trigger import auto_sync_on, in_step, tracking_id

LOG_BYTES = 256 * 1024  # the log keeps its newer half past this


# --- the last sync, and the log ------------------------------------------------------------

def log(root: Path, line: str) -> None:
    """One line in ``.git/ctx/sync.log`` (what auto-sync did); the older half goes past 256 KB."""
    path = Path(root) / ".git" / SYNC_LOG
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{syncrecord.now()} [{os.getpid()}] {line}\n")
        if path.stat().st_size > LOG_BYTES:
            data = path.read_bytes()
            keep = data[len(data) // 2:]
            keep = keep[keep.find(b"\n") + 1:]
            from ctx.storage.files import atomic_write
            atomic_write(path, keep, durable=False)
    except (OSError, CtxError):
        pass


def ago(stamp: str | None, now: float | None = None) -> str:
    """``2026-11-30T12:00:00Z`` as "3 min ago"."""
    if not stamp:
        return "never"
    try:
        import calendar
        then = calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return stamp
    seconds = max(0, int((time.time() if now is None else now) - then))
    if seconds < 60:
        return f"{seconds} s ago"
    if seconds < 7200:
        return f"{seconds // 60} min ago"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h ago"
    return f"{seconds // 86400} days ago"


def last_fetch(root: Path) -> str | None:
    try:
        moment = (Path(root) / ".git" / "FETCH_HEAD").stat().st_mtime
    except OSError:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


# --- ctx status, and the brief's words ----------------------------------------------------

def ahead_behind(root: Path, remote: str) -> tuple[int, int] | None:
    """Commits main has that the remote lacked, and the other way, as of the last fetch."""
    from ctxgit.plumbing.repo import open_repo
    repo = open_repo(Path(root))
    if repo is None or repo.head_is_unborn:
        return None
    theirs = tracking_id(root, remote)
    head = repo.head.target
    if theirs is None:
        return sum(1 for _ in repo.walk(head)), 0
    try:
        return repo.ahead_behind(head, theirs)
    except Exception:  # the tracking ref names a commit this repository lacks
        return None


def status(root: Path) -> dict:
    """``ctx status --json``."""
    from ctxgit.plumbing.repo import dirty_paths, open_repo
    root = Path(root)
    chosen = upstream(root, keep=True)  # (status loads libgit2 anyway: it keeps git's answer for the reads)
    remote = chosen.remote
    counts = ahead_behind(root, remote) if remote else None
    record_ = last(root) or {}
    repo = open_repo(root)
    uncommitted = dirty_paths(repo) if repo is not None else []
    return {"remote": remote, "remote_problem": chosen.problem,
            "ahead": counts[0] if counts else None,
            "behind": counts[1] if counts else None,
            "last_sync": record_.get("time"), "last_sync_result": record_.get("result"),
            "auto_sync": auto_sync_on(root), "merge_in_progress": waiting.read(root) is not None,
            "uncommitted": uncommitted}


def _commits(n: int) -> str:
    return f"{n} commit" + ("" if n == 1 else "s")


def brief_line(root: Path) -> str | None:
    """The sync state in a few words for the brief's header; None without a remote."""
    root = Path(root)
    chosen = upstream(root)
    remote = chosen.remote
    if remote is None:
        return None if not chosen.remotes and not chosen.stale else "no remote chosen: see `ctx status`"
    merge = waiting.read(root)
    if merge is not None:
        return f"a merge with {merge.label} waits ({merge.files()}): see `ctx status`"
    auto = "auto-sync on" if auto_sync_on(root) else "auto-sync off"
    done = last(root)
    when = "never synced" if done is None else \
        f"last sync {ago(done.get('time'))}" + ("" if done.get("ok") else " failed")
    if in_step(root, remote):
        return f"in step with {remote} ({when}; {auto})"
    counts = ahead_behind(root, remote)
    if counts is None:
        return f"{remote}: unknown ({when}; {auto})"
    ahead, behind = counts
    parts = ([f"{_commits(ahead)} to push"] if ahead else []) + ([f"{_commits(behind)} to pull"] if behind else [])
    return f"{', '.join(parts) or 'in step'} with {remote} ({when}; {auto})"
