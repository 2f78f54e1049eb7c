"""Moving commits to and from a remote: the git command when there is one, libgit2 otherwise.

A sync's time goes into the packs it sends and receives. libgit2 builds
every pack by delta search over whole store files (tens of milliseconds a
commit for a 10,000-entry store), while ``git`` reuses the deltas its packs
already hold (ctx packs in the background), and brings the operator's own
SSH and credential set-up. So where ``git`` is on the PATH, fetch and push
and clone run it (``bench/results.md`` has the figures); ``CTX_GIT_TRANSPORT=libgit2``
forces libgit2. Both run no hooks, never prompt, stop after CTX_REMOTE_TIMEOUT
seconds without a word from the server, and report the same errors:
``Raced`` when a push lost a race to another machine's (``Behind``: the remote
has commits this side lacks; ``RemoteBusy``: the remote's branch lock is held),
``Conflict`` when the remote refuses the push on its own terms (a hook, a
protected branch, permissions), a named lock file, ``NoAnswer`` when stopped, or a
one-line ``GitError`` naming the cause (``causes.py``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

from ctx import progress, settings
from ctx.errors import Conflict, CtxError, GitError
from ctxgit.plumbing.gitenv import clean_git_env
from ctxgit.plumbing.locks import lock_error, locked_file
from ctxgit.sync.causes import explain
from ctxgit.sync.urls import redact, redact_text, where

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


def _own_ssh(root: Path | None) -> bool:
    """True when the operator named their own ssh command (``core.sshCommand`` at any level
    git reads: the root's, ~/.gitconfig, ~/.config/git/config, an include): it is
    theirs to keep, batch mode not added (no terminal and no askpass: ssh asks nothing)."""
    where_ = ["-C", str(root)] if root is not None else []
    try:
        done = subprocess.run(["git", *where_, "config", "--get", "core.sshCommand"], env=clean_git_env(),
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def git_env(root: Path | None = None, ssh: bool = True) -> dict[str, str]:
    """git's environment: never a prompt (no terminal; ssh in batch mode, so a host key or
    a passphrase is never asked for; SSH_ASKPASS, which git would fall back to for a
    password, left out), the operator's own ssh command and credential set-up kept.
    ``ssh`` False: no ssh will run (a remote on a local path), none of that is looked up."""
    env = dict(clean_git_env(), GIT_TERMINAL_PROMPT="0", LC_ALL="C", SSH_ASKPASS_REQUIRE="never")
    env.pop("SSH_ASKPASS", None)
    if ssh and not ("GIT_SSH_COMMAND" in env or "GIT_SSH" in env or _own_ssh(root)):
        env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"
    return env


class NoAnswer(GitError):
    """A clone, fetch or push stopped: the server said nothing for CTX_REMOTE_TIMEOUT
    seconds, or the caller's own bound (``ctx sync --timeout``, sync-timeout) ran out."""


def no_answer(url: str, verb: str, seconds: float, why: str, heard: bool = False) -> NoAnswer:
    """The one line for a stopped clone, fetch or push (``heard``: the server had been
    answering, but the caller's bound ran out first)."""
    who = where(url).host or "the remote"
    said = f"git {verb} did not finish in {seconds:g} s" if heard else f"{who} gave no answer in {seconds:g} s"
    return NoAnswer(f"{said}; git {verb} was stopped ({why}): nothing here changed, run it again"
                    if not heard else f"{said} and was stopped ({why}): nothing here changed, run it again")


_PROGRESS = re.compile(r"(?:remote: )?([A-Z][A-Za-z ]+):\s+\d+% \((\d+)/(\d+)\)")


def _show_progress(chunk: bytes) -> None:
    """git's own progress lines ("Receiving objects:  45% (450/1000)") on ctx's line."""
    for piece in re.split(rb"[\r\n]", chunk):
        found = _PROGRESS.search(piece.decode("utf-8", "replace"))
        if found:
            progress.count(int(found[2]), int(found[3]), found[1].strip().lower())


def _run(root: Path, args: list[str], keep_fd: int | None,
         limit: tuple[float, str, float] | None = None, url: str = "") -> subprocess.CompletedProcess:
    """Run git, stopped after CTX_REMOTE_TIMEOUT seconds without a byte from it (git
    reports its progress, so a long transfer that moves goes on) and, with ``limit``
    (seconds left, what bounds them, that bound's seconds), when that runs out."""
    import selectors
    import time
    env = git_env(root if (root / ".git").exists() else None, ssh=not (url and is_local(url)))
    command = ["git", "-C", str(root), "-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0",
               "-c", "maintenance.auto=false", *args]
    idle = settings.seconds("CTX_REMOTE_TIMEOUT")
    try:  # its own process group: a stop takes git's ssh and helpers with it
        proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True,
                                pass_fds=(keep_fd,) if keep_fd is not None else ())
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror}") from None
    assert proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    began = heard = time.monotonic()
    verb = next((a for a in args if not a.startswith("-") and "=" not in a), "")
    try:
        with selectors.DefaultSelector() as watch:
            watch.register(proc.stdout, selectors.EVENT_READ, out)
            watch.register(proc.stderr, selectors.EVENT_READ, err)
            while watch.get_map():
                now = time.monotonic()
                quiet_left = idle - (now - heard)
                bound_left = limit[0] - (now - began) if limit is not None else quiet_left + 1
                if quiet_left <= 0:
                    raise no_answer(url, verb, idle, "CTX_REMOTE_TIMEOUT")
                if bound_left <= 0:
                    assert limit is not None
                    raise no_answer(url, verb, limit[2], limit[1], heard > began)
                ready = watch.select(min(quiet_left, bound_left, 0.25))
                if not ready and proc.poll() is not None:
                    break  # git has exited; what it started may hold its pipes (an ssh ControlPersist master)
                for key, _ in ready:
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        watch.unregister(key.fileobj)
                        continue
                    heard = time.monotonic()
                    key.data.extend(chunk)
                    if key.data is err:
                        _show_progress(chunk)
        proc.wait()
    except BaseException:  # stopped, or Ctrl-C (git is not in the terminal's group)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()
        raise
    finally:
        proc.stdout.close()
        proc.stderr.close()
    return subprocess.CompletedProcess(command, proc.returncode, out.decode("utf-8", "replace"),
                                       err.decode("utf-8", "replace"))


# git's closing words, which say that something failed but never what
GENERIC = ("fatal: could not read from remote repository", "please make sure you have the correct access",
           "and the repository exists", "error: failed to push some refs", "fatal: the remote end hung up")


def _last_words(stderr: str) -> str:
    lines = [line.strip() for line in re.split(r"[\r\n]", stderr) if line.strip()]
    lines = [line for line in lines if not _PROGRESS.search(line) and not line.startswith("Cloning into")]
    telling = [line for line in lines if not line.lower().startswith(GENERIC + ("warning:", "hint:"))]
    errors = [line for line in telling or lines if line.startswith(("fatal:", "error:", "remote: error:", "ERROR:"))]
    if errors:
        return errors[0]  # the first says most
    return (telling or lines or ["git gave no reason"])[-1]  # ssh's own line, before git's closing words


def failure(what: str, url: str, stderr: str) -> GitError:
    """The one-line error for a clone, fetch or push git could not do: ``what`` ("cannot
    fetch from origin (URL)") and the cause, named where it can be."""
    cause = explain(stderr, url) or redact_text(_last_words(stderr), url)
    return GitError(f"{what}: {cause}")


def git_fetch(root: Path, name: str, url: str, keep_fd: int | None = None,
              limit: tuple[float, str, float] | None = None) -> None:
    """``git fetch NAME`` (its configured refspec: the remote-tracking branches);
    ``keep_fd``: a descriptor the child inherits (the remote flock, ``locks.py``)."""
    done = _run(root, ["fetch", "--progress", "--no-tags", name], keep_fd, limit, url)
    if done.returncode != 0:
        lock = locked_file(done.stderr)
        if lock:
            raise lock_error(f"cannot fetch from {name}", lock)
        raise failure(f"cannot fetch from {name} ({redact(url)})", url, done.stderr)


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
    done = _run(root, [*whole, "push", "--progress", "--porcelain", name, refspec], keep_fd, limit, url)
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
    raise failure(f"cannot push to {name} ({redact(url)})", url, done.stderr)


def git_clone(url: str, root: Path) -> None:
    """``git clone URL ROOT`` (an empty directory), with the operator's own ssh and
    credential set-up as for fetch and push: no hooks, never a prompt, the same limit. No
    checkout: the work tree is written after ``incoming.check``, never by git before it."""
    done = _run(root, ["clone", "--no-checkout", "--progress", "--origin", "origin", "--", url, "."],
                None, None, url)
    if done.returncode != 0:
        raise failure(f"cannot clone {redact(url)}", url, done.stderr)
