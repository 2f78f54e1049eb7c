"""Moving commits to and from a remote: the git command when there is one, libgit2 otherwise.

A sync's time goes into the packs it sends and receives. libgit2 builds
every pack by delta search over whole store files (tens of milliseconds a
commit for a 10,000-entry store), while ``git`` reuses the deltas its packs
already hold (ctx packs in the background), and brings the operator's own
SSH and credential set-up. So where ``git`` is on the PATH, fetch and push
run it (``bench/results.md`` has the figures); ``CTX_GIT_TRANSPORT=libgit2``
forces libgit2. Both run no hooks, never prompt, and report the same errors:
``Behind`` when the remote has commits this side lacks, a named lock file,
or a one-line ``GitError``.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

from ctx import settings
from ctx.errors import Conflict, GitError

from ctxgit.plumbing.locks import lock_error, locked_file
from ctxgit.plumbing.gitenv import clean_git_env

BEHIND_WORDS = ("non-fast-forward", "fetch first", "fast forward", "not present locally")


class Behind(Conflict):
    """The remote has commits this side lacks: pull (``ctx sync``) first."""


def use_git() -> bool:
    """True when fetch and push go through the ``git`` command."""
    if settings.choice("CTX_GIT_TRANSPORT") == "libgit2":
        return False
    return shutil.which("git") is not None


def _env() -> dict[str, str]:
    return dict(clean_git_env(), GIT_TERMINAL_PROMPT="0", LC_ALL="C")


def _run(root: Path, args: list[str], keep_fd: int | None) -> subprocess.CompletedProcess:
    env = _env()
    command = ["git", "-C", str(root), "-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0",
               "-c", "maintenance.auto=false", *args]
    limit = settings.seconds("CTX_REMOTE_TIMEOUT")  # a hung fetch or push (a dead link, an unseen prompt) ends
    try:  # its own process group: a stop takes git's ssh and helpers with it
        proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True,
                                pass_fds=(keep_fd,) if keep_fd is not None else ())
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror}") from None
    try:
        out, err = proc.communicate(timeout=limit)
    except BaseException as exc:  # the timeout, or Ctrl-C (git is not in the terminal's group)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.communicate()
        if isinstance(exc, subprocess.TimeoutExpired):
            raise GitError(f"git {args[0]} gave no answer in {limit:g} s and was stopped "
                           "(CTX_REMOTE_TIMEOUT); nothing here changed, run it again") from None
        raise
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


def _last_words(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("fatal:", "error:", "remote: error:"))]
    return errors[0] if errors else (lines or ["git gave no reason"])[-1]  # the first says most


def git_fetch(root: Path, name: str, url: str, keep_fd: int | None = None) -> None:
    """``git fetch NAME`` (its configured refspec: the remote-tracking branches);
    ``keep_fd``: a descriptor the child inherits (the remote flock, ``locks.py``)."""
    done = _run(root, ["fetch", "--quiet", "--no-tags", name], keep_fd)
    if done.returncode != 0:
        lock = locked_file(done.stderr)
        if lock:
            raise lock_error(f"cannot fetch from {name}", lock)
        raise GitError(f"cannot fetch from {name} ({url}): {_last_words(done.stderr)}")


def git_push(root: Path, name: str, url: str, refspec: str, keep_fd: int | None = None) -> None:
    """``git push NAME REFSPEC``; ``Behind`` when the remote moved on."""
    done = _run(root, ["push", "--quiet", "--porcelain", name, refspec], keep_fd)
    if done.returncode == 0:
        return
    text = done.stdout + "\n" + done.stderr
    lock = locked_file(text)
    if lock:
        raise lock_error(f"{name} could not take the push", lock)
    if any(word in text for word in BEHIND_WORDS):
        raise Behind(f"{name} has changes this machine lacks: run `ctx sync`")
    refused = re.search(r"\[remote rejected\] \(([^)]*)\)", text)
    if refused:  # the remote's own policy (a hook, a protected branch): retrying will not help
        said = [line[len("remote:"):].strip() for line in done.stderr.splitlines()
                if line.startswith("remote:") and line[len("remote:"):].strip()]
        raise Conflict(f"{name} refused the push ({refused.group(1)})" + (f": {said[-1]}" if said else ""))
    raise GitError(f"cannot push to {name} ({url}): {_last_words(done.stderr)}")
