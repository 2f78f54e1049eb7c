"""Moving commits to and from a remote: the git command when there is one, libgit2 otherwise.

A sync's time goes into the packs it sends and receives. libgit2 builds
every pack by delta search over whole store files (tens of milliseconds a
commit for a 10,000-entry store), while ``git`` reuses the deltas its packs
already hold (ctx packs in the background), and brings the operator's own
SSH and credential set-up. So where ``git`` is on the PATH, fetch and push
run it (``bench/results.md`` has the figures); ``CTX_GIT_TRANSPORT=libgit2``
forces libgit2. Both run no hooks, never prompt, and report the same errors:
``Raced`` when a push lost a race to another machine's (``Behind``: the remote
has commits this side lacks; ``RemoteBusy``: the remote's branch lock is held),
``Conflict`` when the remote refuses the push on its own terms (a hook, a
protected branch, permissions), a named lock file, or a one-line ``GitError``.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

from ctx import settings
from ctx.errors import Conflict, CtxError, GitError
from ctxgit.plumbing.gitenv import clean_git_env
from ctxgit.plumbing.locks import lock_error, locked_file

BEHIND_WORDS = ("non-fast-forward", "fetch first", "fast forward", "not present locally")


class Raced(Conflict):
    """The push lost a race to another machine's push: fetch, merge and push again."""


class Behind(Raced):
    """The remote has commits this side lacks: pull (``ctx sync``) first."""


class RemoteBusy(Raced):
    """The remote could not update its branch just now: another push is updating it (its
    lock is held), or another push's update, or the remote's own housekeeping after one,
    got in the way. Tried again for a while; ``lock``: the error reported if it lasts
    (a lock a dead push left, a remote that keeps failing)."""

    def __init__(self, message: str, lock: CtxError) -> None:
        super().__init__(message)
        self.lock = lock


class Deadline:
    """A bound on remote work: when it ends, and what set it (named when it runs out)."""

    def __init__(self, seconds: float, why: str) -> None:
        import time
        self._clock = time.monotonic
        self.seconds, self.why = seconds, why
        self.at = self._clock() + seconds

    def left(self) -> float:
        return max(0.0, self.at - self._clock())

    def passed(self) -> bool:
        return self.left() <= 0

    def limit(self) -> tuple[float, str, float]:
        """For ``_run``: the seconds left (a little at least), what set the bound, and it."""
        return max(0.2, self.left()), self.why, self.seconds


# a remote's failure to update its branch that no retry mends
FATAL_WORDS = ("permission denied", "read-only file system", "no space left", "quota", "denied")
RACE_WORDS = ("but expected", "reference already exists", "cannot lock ref")


def remote_lock(text: str, root: Path, name: str) -> RemoteBusy | GitError | None:
    """A lock file named in a push's output: the remote's (another push holds it: a race)
    or one of this root's (an error naming it), or None."""
    lock = locked_file(text)
    if lock is None:
        return None
    error = lock_error(f"{name} could not take the push", lock)
    if lock.startswith(str(root) + os.sep):
        return error
    return RemoteBusy(f"{name}'s branch is being updated by another push", error)


def use_git() -> bool:
    """True when fetch and push go through the ``git`` command."""
    if settings.choice("CTX_GIT_TRANSPORT") == "libgit2":
        return False
    return shutil.which("git") is not None


BATCH = {"on": False}  # background work (auto-sync): ssh must never ask anything


def never_prompt(root: Path) -> None:
    """From now on in this process, ssh runs in batch mode (no password or host-key
    question), unless the operator set their own ssh command (it is theirs to keep)."""
    BATCH["on"] = True
    try:
        import pygit2

        from ctxgit.plumbing.repo import open_repo
        repo = open_repo(root)
        config = repo.config if repo is not None else pygit2.Config.get_global_config()
        BATCH["own_ssh"] = "core.sshCommand" in config
    except Exception:  # no readable configuration: batch mode all the same
        BATCH["own_ssh"] = False


def _env() -> dict[str, str]:
    env = dict(clean_git_env(), GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    if BATCH["on"]:
        env["SSH_ASKPASS_REQUIRE"] = "never"
        if not ("GIT_SSH_COMMAND" in env or "GIT_SSH" in env or BATCH.get("own_ssh")):
            env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"
    return env


def _run(root: Path, args: list[str], keep_fd: int | None,
         limit: tuple[float, str, float] | None = None) -> subprocess.CompletedProcess:
    """Run git; ``limit``: at most these seconds, what bounds them and that bound's seconds
    (default: CTX_REMOTE_TIMEOUT)."""
    env = _env()
    command = ["git", "-C", str(root), "-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0",
               "-c", "maintenance.auto=false", *args]
    # a hung fetch or push (a dead link, an unseen prompt) ends
    if limit is None:
        seconds = settings.seconds("CTX_REMOTE_TIMEOUT")
        limit = (seconds, "CTX_REMOTE_TIMEOUT", seconds)
    limit, why, shown = limit
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
            verb = next((a for a in args if not a.startswith("-") and "=" not in a), "")
            raise GitError(f"git {verb} gave no answer in {shown:g} s and was stopped "
                           f"({why}); nothing here changed, run it again") from None
        raise
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


def _last_words(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("fatal:", "error:", "remote: error:"))]
    return errors[0] if errors else (lines or ["git gave no reason"])[-1]  # the first says most


def git_fetch(root: Path, name: str, url: str, keep_fd: int | None = None,
              limit: tuple[float, str, float] | None = None) -> None:
    """``git fetch NAME`` (its configured refspec: the remote-tracking branches);
    ``keep_fd``: a descriptor the child inherits (the remote flock, ``locks.py``)."""
    done = _run(root, ["fetch", "--quiet", "--no-tags", name], keep_fd, limit)
    if done.returncode != 0:
        lock = locked_file(done.stderr)
        if lock:
            raise lock_error(f"cannot fetch from {name}", lock)
        raise GitError(f"cannot fetch from {name} ({url}): {_last_words(done.stderr)}")


def is_local(url: str) -> bool:
    """A remote on a path of this machine (a disk, a shared folder), not over a network."""
    return url.startswith("file://") or ("://" not in url and Path(url).is_absolute())


def git_push(root: Path, name: str, url: str, refspec: str, keep_fd: int | None = None,
             limit: tuple[float, str, float] | None = None) -> None:
    """``git push NAME REFSPEC``; ``Raced`` when another push got there first.

    To a remote on a local path, objects the push makes a pack of anew (a merge's
    store file: a few MB) are sent whole, not as deltas: finding a delta for a
    large store file costs git more time (here, and on the remote to resolve it)
    than copying its bytes on the same machine; over a network the delta's small
    size wins, and git's default stays."""
    whole = ["-c", "pack.window=0"] if is_local(url) else []
    done = _run(root, [*whole, "push", "--quiet", "--porcelain", name, refspec], keep_fd, limit)
    if done.returncode == 0:
        return
    text = done.stdout + "\n" + done.stderr
    if any(word in text for word in BEHIND_WORDS):
        raise Behind(f"{name} has changes this machine lacks: run `ctx sync`")
    lock = remote_lock(text, root, name)
    if isinstance(lock, RemoteBusy) and not any(word in text for word in RACE_WORDS[:2]):
        raise lock
    if any(word in text for word in RACE_WORDS):  # the remote's ref moved while it took ours
        raise Raced(f"another push updated {name} first")
    if lock is not None:
        raise lock
    refused = re.search(r"\[remote rejected\] \(([^)]*)\)", text) or \
        re.search(r"\[remote rejected\] \S+ -> \S+ \(([^)]*)\)", text)
    if refused:  # the remote's own policy (a hook, a protected branch): retrying will not help
        said = [line[len("remote:"):].strip() for line in done.stderr.splitlines()
                if line.startswith("remote:") and line[len("remote:"):].strip()]
        error = Conflict(f"{name} refused the push ({refused.group(1)})" + (f": {said[-1]}" if said else ""))
        if refused.group(1) == "failed to update ref" and not any(word in text.lower() for word in FATAL_WORDS):
            raise RemoteBusy(f"{name} could not update its branch just now", error)  # transient: try again
        raise error
    raise GitError(f"cannot push to {name} ({url}): {_last_words(done.stderr)}")
