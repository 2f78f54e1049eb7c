"""What ctx's last commit left, and a commit under way: ctx's own files in ``.git/ctx``.

``state.json`` records the repository as ctx's last commit left it: HEAD, the
identity (size, time, inode) of git's index, of the repository's and the user's git
config, of the repository's attributes file and of every file ctx versions, and the
operator (this machine's git identity, read from that config). While all of it holds,
nothing changed outside ctx: the next write skips asking git what changed (``git
status``) and commits at once (``recorder.GitRecorder``). The record is ctx's, never one
of git's files.

``committing`` says a commit is under way (``begin``/``end``): when a ctx dies while
its git holds a lock file, the next write knows the lock for the dead commit's
(``recover``: tests/reliability/test_crash.py).
"""

from __future__ import annotations

import os
import time

from ctx.jsoncodec import compact, loads
from ctx.storage.files import atomic_write, make_dir, read_text, remove, sweep_temporaries
from ctxgit.gitfiles.layout import ATTRIBUTES, BRANCH, BRANCH_REF, COMMITTING, DIR, MANAGED_FILES, STATE
from ctxgit.gitfiles.refs import head_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.storage.files import StrPath

RACY_NS = 2_000_000_000
# the record's form, and what ctx makes sure of before a write skips asking git: a record from
# an older ctx sends the next write the slow way, which sees the repository anew (3: the line
# of .git/info/attributes that commits files as written, tests/git/test_git_settings.py)
VERSION = 3
LOCKS = ("index.lock", f"{BRANCH_REF}.lock", "HEAD.lock")
GIT_PID = COMMITTING + ".git"  # the pid of the last git the committing ctx started


def begin(git: StrPath, how: str) -> None:
    """Say, before git takes its lock files, that a commit is under way and by what
    (``git``, ``libgit2``): ``recover`` judges lock files by this file's time."""
    path = os.path.join(git, COMMITTING)
    make_dir(os.path.dirname(path))
    # Replaced whole: never found half-written. Not fsynced (every write takes this path):
    # a kill loses nothing the page cache holds; after a power cut a lost marker only
    # leaves a lock file named in an error, not removed.
    atomic_write(path, f"{os.getpid()}\n{how}\n".encode(), durable=False)
    from ctxgit.plumbing import gitcommit
    gitcommit.note_pids(os.path.join(git, GIT_PID))


def end(git: StrPath) -> None:
    """The commit is over (made or not). Never raises: a commit that stands must not look
    undone for a marker left behind (tests/reliability/test_filesystem.py's BUG-2); the
    next write's ``recover`` removes it."""
    from ctxgit.plumbing import gitcommit
    gitcommit.note_pids(None)
    for name in (COMMITTING, GIT_PID):
        try:
            remove(os.path.join(git, name))
        except OSError:
            pass


def recover(root: StrPath) -> list[str]:
    """Remove the lock files a ctx commit killed half-way left behind (called under the
    context lock: no other ctx is committing).

    A git outlives the ctx that started it: while the git a dead ctx noted
    (``GIT_PID``) still runs, it is waited for (``CTX_GIT_RETRY_SECONDS``), and its
    locks go with it. A lock left once it has ended is that git's (killed too) when it
    was made after the commit began; a lock with no git of ctx's behind it (ctx was
    killed before starting one) is an operator's and stays (named by ``ctx doctor``).
    """
    git = os.path.join(root, ".git")
    sweep_temporaries(os.path.join(git, DIR))  # a counter's or marker's temporary a killed ctx left
    intent = os.path.join(git, COMMITTING)
    try:
        began = os.stat(intent).st_mtime
    except FileNotFoundError:
        return []
    try:
        pid = int(read_text(os.path.join(git, GIT_PID)).strip() or 0)
    except (OSError, ValueError):
        pid = 0
    removed = []
    if pid > 0:
        from ctx import settings
        deadline = time.monotonic() + settings.seconds("CTX_GIT_RETRY_SECONDS")
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        for name in LOCKS if not _alive(pid) else ():
            lock = os.path.join(git, name)
            try:
                made = os.stat(lock).st_mtime
            except FileNotFoundError:
                continue
            if made >= began - 1:
                remove(lock)
                removed.append(name)
    end(git)
    forget(root)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a child of this very process that ended unreaped is a zombie: gone for our purpose
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return True


# --- the record ------------------------------------------------------------------------

def _identity(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _stat(path: StrPath) -> list[int] | None:
    try:
        return _identity(os.stat(path))
    except FileNotFoundError:
        return None


def versioned(root: StrPath) -> dict[str, list[int]]:
    """Identity of every file ctx versions, as it is on disk now."""
    out = {}
    for name in MANAGED_FILES:
        found = _stat(os.path.join(root, name))
        if found is not None:
            out[name] = found
    for folder, test in (("memory", lambda n: n.endswith(".json") and not n.startswith(".")),
                         ("sessions", lambda n: True)):
        where = os.path.join(root, folder)
        try:
            names = os.listdir(where)
        except FileNotFoundError:
            continue
        for name in names:
            path = os.path.join(where, name)
            if test(name) and os.path.isfile(path):
                out[f"{folder}/{name}"] = _identity(os.stat(path))
    return out


def _global_configs() -> list:
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return [_stat(os.path.join(home, ".gitconfig")), _stat(os.path.join(xdg, "git", "config")),
            _stat(os.environ["GIT_CONFIG_GLOBAL"]) if os.environ.get("GIT_CONFIG_GLOBAL") else None]


def save(root: StrPath, operator: list[str] | None, index_is_head: bool = False) -> None:
    """Record the repository as a commit just left it. ``operator``: this machine's git
    identity (None: none set), read from the config whose identity the record covers;
    ``index_is_head``: git's index holds just what HEAD does (git said so, or the commit
    was made from that index: ``gitcommit.commit``). A record without it reads as False."""
    git = os.path.join(root, ".git")
    head = head_id(root)
    if head is None:
        return forget(root)
    state = {"head": head, "index": _stat(os.path.join(git, "index")), "config": _stat(os.path.join(git, "config")),
             "attributes": _stat(os.path.join(git, ATTRIBUTES)), "global": _global_configs(), "operator": operator,
             "files": versioned(root), "index_is_head": index_is_head, "version": VERSION}
    path = os.path.join(git, STATE)
    make_dir(os.path.dirname(path))
    # lost: git is asked next time; read only under the context lock
    atomic_write(path, compact(state, ascii=True).encode(), durable=False, unlink_first=True)


def forget(root: StrPath) -> None:
    remove(os.path.join(root, ".git", STATE))


def check(root: StrPath) -> tuple[dict | None, str]:
    """The record, if the repository is still exactly as it says; else None and why (a
    phrase): the next write asks git what changed."""
    git = os.path.join(root, ".git")
    if os.path.islink(git) or not os.path.isdir(git):
        return None, "the repository is not a plain .git directory"
    try:
        state = loads(read_text(os.path.join(git, STATE)))
    except FileNotFoundError:
        return None, "no record of ctx's last commit (.git/ctx/state.json)"
    except (OSError, ValueError):
        return None, "the record of ctx's last commit is unreadable"
    try:
        if state.get("version") != VERSION:
            return None, "the record was written by an older ctx"
        if read_text(os.path.join(git, "HEAD")) != f"ref: {BRANCH_REF}\n":
            return None, f"HEAD is not the branch {BRANCH}"
        if head_id(root) != state["head"]:
            return None, "main moved since ctx's last commit (a commit, pull or reset outside ctx)"
    except (OSError, ValueError, KeyError, AttributeError):
        return None, "the record of ctx's last commit is unreadable"
    for name in ("index.lock", "MERGE_HEAD", f"{BRANCH_REF}.lock"):
        if os.path.exists(os.path.join(git, name)):
            return None, f".git/{name} exists"
    if _stat(os.path.join(git, "index")) != state["index"]:
        return None, "git's index changed since ctx's last commit (a git add, status or gc?)"
    if _stat(os.path.join(git, "config")) != state["config"]:
        return None, ".git/config changed since ctx's last commit"
    if _stat(os.path.join(git, ATTRIBUTES)) != state.get("attributes"):  # (ctx's line: guard/install.py)
        return None, f".git/{ATTRIBUTES} changed since ctx's last commit"
    if state.get("global") != _global_configs():
        return None, "the user's git configuration changed since ctx's last commit"
    on_disk = versioned(root)
    if on_disk != state["files"]:
        changed = sorted(p for p in set(on_disk) | set(state["files"]) if on_disk.get(p) != state["files"].get(p))
        return None, f"{', '.join(changed[:3])} changed outside ctx"
    try:
        recorded = os.stat(os.path.join(git, STATE)).st_mtime_ns
    except OSError:
        return None, "the record of ctx's last commit is unreadable"
    for path, ident in on_disk.items():
        if _racy(ident[1], recorded):
            return None, f"{path} may have changed in the tick of ctx's last commit"
    return state, ""


def _racy(mtime: int, recorded: int) -> bool:
    """git's rule for a "racily clean" file: one not older than the record of it (the
    state file, written after it, on the same file system and clock) may have changed
    since within the same clock tick, its size, time and inode unchanged: git is asked.
    Where the file system keeps whole seconds (no sub-millisecond part), the last
    ``RACY_NS`` before the record count too."""
    fine = mtime % 1_000_000 and recorded % 1_000_000
    return mtime >= recorded - (0 if fine else RACY_NS)
