"""Auto-sync's trigger: what a write pays for, and nothing more.

After a write the front door calls ``after_write``: a few plain file reads
(this machine's ``sync-auto``, main's upstream as git reads it, kept by
``ctxgit/plumbing/gitconfig.py``, main and the remote-tracking ref) and, when main is ahead and no background push runs,
one ``posix_spawn`` of it (``ctxgit/sync/auto.py``). Only ``os`` and
``fcntl`` are loaded (``json`` only when the machine's file names sync-auto):
a write stays a write. ``ctxgit/sync/state.py``
reads the same files for ``ctx status`` and the brief.
"""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path

from ctxgit.gitfiles.layout import AUTOSYNC_LOCK, MACHINE, SYNC_LOG, tracking_ref
from ctxgit.gitfiles.refs import head_id, ref_id
from ctxgit.plumbing.gitconfig import upstream
from ctxgit.plumbing.spawn import detached

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.storage.files import StrPath

START_DELAY = 0.1  # seconds between a write and the start of the push it triggers


def auto_remote(root: Path) -> str | None:
    """The remote auto-sync pushes to: main's upstream, when it is set and names a remote
    (``ctxgit/gitfiles/config.py``'s rule; auto-sync never guesses one)."""
    chosen = upstream(root)
    return chosen.remote if chosen.is_set else None


def tracking_id(root: Path, remote: str) -> str | None:
    return ref_id(Path(root), tracking_ref(remote))


def in_step(root: Path, remote: str) -> bool:
    """True when main is where the remote was at the last fetch (nothing to push)."""
    head = head_id(Path(root))
    return head is not None and head == tracking_id(root, remote)


def auto_sync_on(root: Path) -> bool:
    """``sync-auto`` is true on this machine. Read without loading the configuration module
    (every write pays for this check): its per-machine file holds the key as JSON ``true``."""
    try:
        raw = (Path(root) / ".git" / MACHINE).read_bytes()
    except OSError:
        return False
    if b"sync-auto" not in raw:
        return False
    import json
    try:
        return json.loads(raw).get("sync-auto") is True
    except (ValueError, AttributeError):
        return False


def lock_path(root: Path) -> Path:
    return Path(root) / ".git" / AUTOSYNC_LOCK


def running(root: Path) -> bool:
    """True when a background push holds the lock now."""
    try:
        fd = os.open(lock_path(root), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # releases it when taken
    return False


def after_write(root: StrPath) -> bool:
    """Start a background push when auto-sync is on and main is ahead; True when one was
    started. Never raises: a write's success never depends on it."""
    try:
        return _push_in_background(Path(root), session_end=False)
    except Exception:  # the write is done whatever happens here
        return False


def at_session_end(root: StrPath) -> bool:
    """A harness session's end (``ctx event end``): when auto-sync is on and main is ahead,
    the background push, detached and bounded by ``sync-timeout`` (it never delays the
    harness's exit: the hook returns once it is spawned); True when one was started. Never
    raises."""
    try:
        return _push_in_background(Path(root), session_end=True)
    except Exception:  # the session has ended whatever happens here
        return False


def _push_in_background(root: Path, session_end: bool) -> bool:
    """The background push when auto-sync is on and main is ahead of its remote; at a
    session's end bounded by ``sync-timeout``. True when one was started."""
    if not auto_sync_on(root):
        return False
    remote = auto_remote(root)
    if remote is None or in_step(root, remote) or running(root):
        return False
    if session_end:
        from ctx.features.config import get_value
        from ctxgit.gitfiles.layout import state_dir
        spawn(root, within=float(get_value(root, "sync-timeout", state_dir(root))))
    else:
        spawn(root)
    return True


def spawn(root: Path, within: float | None = None) -> int:
    """``python -m ctxgit.sync.auto ROOT [SECONDS]``, detached: a session of its own, no
    terminal, stdin from /dev/null, stdout and stderr to the sync log. ``within``: the
    whole run's bound in seconds (a session's end), else auto-sync's own."""
    log = Path(root) / ".git" / SYNC_LOG
    log.parent.mkdir(mode=0o700, exist_ok=True)
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0")
    # the push starts a moment later, once the write that started it has ended: on a busy
    # machine it never takes a core from that write (nor from the agent waiting for it)
    shell = "/bin/sh"
    bound = [] if within is None else [f"{within:g}"]
    command = ([shell, "-c", f'sleep {START_DELAY}; exec "$0" -m ctxgit.sync.auto "$@"', sys.executable, str(root),
                *bound]
               if os.path.exists(shell) else [sys.executable, "-m", "ctxgit.sync.auto", str(root), *bound])
    return detached(command, env, str(log))
