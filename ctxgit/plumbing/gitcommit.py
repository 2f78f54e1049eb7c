"""Commits made by git itself, where ``git`` is on PATH: ctx never writes git's files.

The index, the objects, the branch, its reflog and a signature are git's: its
settings (``index.version``, ``core.splitIndex``, ``commit.gpgsign``, ``gpg.format``…)
hold for ctx's commits as for the operator's (tests/git/test_git_settings.py). ctx
says who and when: the author and committer in ``GIT_AUTHOR_*``/``GIT_COMMITTER_*``,
the date from ``model.clock()`` with the writer's zone offset.

git's hooks are not run: every git is given ``-c core.hooksPath=/dev/null``, not
``--no-verify``. ctx has checked the commit already (the credential check), and
``--no-verify`` skips only ``pre-commit`` and ``commit-msg``: a ``prepare-commit-msg``
hook could still rewrite the trailers ctx's history reads, and a ``post-commit`` one
(a push, a notifier) would run at every write (tests/git/test_git_settings.py).

Where git is missing, ``repo.commit_paths`` commits through libgit2 instead.
"""

from __future__ import annotations

import os
import time

from ctx import phases, settings
from ctx.errors import GitError
from ctxgit.plumbing.gitenv import clean_git_env
from ctxgit.plumbing.spawn import run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ctx.storage.files import StrPath
    from ctxgit.plumbing.spawn import Ran

# Given to every git ctx runs: no hooks (above); no `git maintenance run --auto` started after
# each commit (git's default: a second process per write), ctx packs by the bytes its commits
# add (pack.py); and a message labelled as the UTF-8 ctx writes, whatever the operator's
# i18n.commitEncoding says (tests/git/test_git_settings.py).
OWN_SETTINGS = ("-c", "core.hooksPath=/dev/null", "-c", "maintenance.auto=false", "-c", "i18n.commitEncoding=UTF-8")
_found: list[str | None] = []
_noting: list[str] = []  # where the pid of each git started goes, between lastcommit.begin and end


def note_pids(path: str | None) -> None:
    """From now on write the pid of each git this process starts to ``path`` (None: stop).
    A git outlives a ctx killed while it runs: ``lastcommit.recover`` waits for it by pid."""
    _noting[:] = [path] if path else []


def _note(pid: int) -> None:
    try:
        fd = os.open(_noting[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, b"%d\n" % pid)
        finally:
            os.close(fd)
    except OSError:
        pass  # unnoted, a lock the git leaves is named by doctor, never removed


def program() -> str | None:
    """The ``git`` executable on PATH, None when there is none (looked up once a process)."""
    if not _found:
        where = None
        for folder in os.get_exec_path():
            candidate = os.path.join(folder, "git")
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                where = candidate
                break
        _found.append(where)
    return _found[0]


def forget_program() -> None:
    """Look git up again at the next ``program()`` (a test that changes PATH)."""
    _found.clear()


def date(seconds: int, offset_minutes: int) -> str:
    """A date as git reads it: ``@<seconds> <+hhmm>``."""
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    return f"@{seconds} {sign}{hours:02d}{minutes:02d}"


def local_offset(seconds: int) -> int:
    """The writer's zone offset at ``seconds``, in minutes (what git's own commit would say)."""
    return (time.localtime(seconds).tm_gmtoff or 0) // 60


class Person:
    """Who made a commit and when: a name, an email, seconds since the epoch and the
    zone offset in minutes (git's ``author``/``committer`` line, libgit2's Signature)."""

    __slots__ = ("name", "email", "time", "offset")

    def __init__(self, name: str, email: str, seconds: int, offset: int) -> None:
        self.name, self.email, self.time, self.offset = name, email, seconds, offset

    def at(self, other: Person) -> Person:
        """This person at ``other``'s time (a committer dated as its author)."""
        return Person(self.name, self.email, other.time, other.offset)

    def __repr__(self) -> str:
        return f"Person({self.name!r}, {self.email!r}, {self.time}, {self.offset})"


def now_person(name: str, email: str) -> Person:
    """``name <email>`` now by the entries' clock (``model.clock()``: a commit is never
    dated before the entry it records), in the writer's zone."""
    from ctx import model
    seconds = int(model.clock())
    return Person(name, email, seconds, local_offset(seconds))


def _env(author: Person, committer: Person) -> dict[str, str]:
    env = clean_git_env()
    env.update(GIT_AUTHOR_NAME=author.name, GIT_AUTHOR_EMAIL=author.email,
               GIT_AUTHOR_DATE=date(author.time, author.offset),
               GIT_COMMITTER_NAME=committer.name, GIT_COMMITTER_EMAIL=committer.email,
               GIT_COMMITTER_DATE=date(committer.time, committer.offset))
    return env


def _git(root: StrPath, args: Sequence[str], env: dict[str, str] | None = None, data: bytes | None = None) -> Ran:
    git = program()
    if git is None:
        raise GitError("git is not on PATH")
    argv = [git, "-C", os.fspath(root), *OWN_SETTINGS, *args]
    try:
        return run(argv, data, env if env is not None else clean_git_env(), _note if _noting else None)
    except OSError as exc:
        raise GitError(f"git could not be run ({exc.strerror or exc})") from None


def _locked(done: Ran) -> bool:
    """git stopped at a lock file another git holds (``index.lock``, a ref's ``.lock``)."""
    text = done.stderr.decode("utf-8", "replace")
    return ".lock" in text and ("File exists" in text or "Unable to create" in text or "cannot lock" in text)


def _retrying(root: StrPath, args: Sequence[str], env: dict[str, str] | None = None,
              data: bytes | None = None) -> Ran:
    """``_git``, run again while another git holds a lock file (``CTX_GIT_RETRY_SECONDS``)."""
    deadline = time.monotonic() + settings.seconds("CTX_GIT_RETRY_SECONDS")
    pause = 0.01
    while True:
        done = _git(root, args, env, data)
        if not _locked(done) or time.monotonic() >= deadline:
            return done
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def _failed(what: str, done: Ran, root: StrPath | None = None) -> GitError:
    said = done.said()
    if root is not None and ("sign" in said.lower() or "gpg" in said.lower()):
        return GitError(f"signing the commit failed: {_signer(root)}: {said.removeprefix('error: ')}; "
                        "nothing was written")
    return GitError(f"{what} failed: git said: {said}")


def _config(root: StrPath, name: str) -> str | None:
    done = _git(root, ["config", "--get", name])
    value = done.stdout.decode("utf-8", "replace").strip()
    return value if done.returncode == 0 and value else None


def _signer(root: StrPath) -> str:
    """The program git signs with here and its format, for the message of a failed signing
    (asked only then: a commit never reads git's settings itself)."""
    form = (_config(root, "gpg.format") or "openpgp").lower()
    default = {"openpgp": "gpg", "ssh": "ssh-keygen", "x509": "gpgsm"}.get(form, "?")
    program = _config(root, f"gpg.{form}.program") or (_config(root, "gpg.program") if form == "openpgp" else None)
    return f"{program or default} (gpg.format {form})"


def status(root: StrPath) -> list[str]:
    """Every path whose content differs between HEAD, the index and the work tree, or
    that git does not track yet (untracked files listed one by one), ignored ones not."""
    # --no-optional-locks: asking writes nothing (git's status would keep what it refreshed
    # in the index: tests/reliability/test_hostile_remote.py holds a refused sync to no change)
    done = _retrying(root, ["--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all",
                            "--no-renames", "--ignored=no"])
    if done.returncode != 0:
        raise _failed("reading the repository's status", done)
    out = []
    for record in done.stdout.split(b"\0"):
        if len(record) > 3:
            out.append(os.fsdecode(record[3:]))
    return out


def tracked(root: StrPath) -> list[str]:
    """Every path git's index holds."""
    done = _retrying(root, ["ls-files", "-z"])
    if done.returncode != 0:
        raise _failed("reading the index", done)
    return [os.fsdecode(p) for p in done.stdout.split(b"\0") if p]


def unstage(root: StrPath, paths: Sequence[str], born: bool) -> None:
    """Put ``paths`` in the index back as HEAD has them (``born``: HEAD exists; else out),
    after a commit that failed; never raises (the write's own error is the one said)."""
    try:
        if born:
            _retrying(root, ["reset", "--quiet", "--", *paths])
        else:
            _retrying(root, ["rm", "--cached", "--quiet", "--ignore-unmatch", "-r", "--", *paths])
    except GitError:
        pass


def add(root: StrPath, paths: Sequence[str]) -> None:
    """Stage ``paths`` as they are on disk (a missing one as its removal), whatever ignore
    rules say (``--force``: the operator's core.excludesFile, a .gitignore a remote brought);
    ctx has decided what it commits (``repo.commit_paths``; tests/git/test_git_settings.py)."""
    done = _retrying(root, ["add", "--force", "-A", "--", *paths])
    if done.returncode != 0:
        raise _failed("staging the files", done)


def untrack(root: StrPath, paths: Sequence[str]) -> None:
    """Take ``paths`` out of the index, leaving the files on disk."""
    done = _retrying(root, ["rm", "--cached", "--quiet", "--ignore-unmatch", "--", *paths])
    if done.returncode != 0:
        raise _failed("untracking local state", done)


def commit(root: StrPath, paths: Sequence[str], message: str, author: Person, committer: Person,
           index_is_head: bool = False) -> bool:
    """Commit ``paths`` as they are on disk (``git commit --only``: nothing else the index
    holds), on HEAD's branch; False when they are as HEAD has them. Each path must be
    known to git (in HEAD or staged: ``add``). Signed when git's settings say so.

    ``index_is_head``: the caller knows the index holds just what HEAD does (``index_is_head()``
    said so and nothing touched the index since). ``--only`` hashes each file twice, into the
    index and into a temporary index made from HEAD; ``--include`` commits the same tree
    from the index alone (tests/git/test_write_cost.py)."""
    way = "--include" if index_is_head else "--only"
    done = _retrying(root, ["commit", "--quiet", "--cleanup=verbatim", "--allow-empty-message", "-F", "-",
                            way, "--", *paths], _env(author, committer), message.encode("utf-8"))
    phases.lap("commit")
    if done.returncode == 0:
        return True
    if done.returncode == 1 and not done.stderr.strip():
        return False  # "nothing to commit" (said on standard output)
    raise _failed("committing", done, root)


def index_is_head(root: StrPath) -> bool:
    """Whether git's index holds exactly what HEAD's tree does (nothing staged, nothing
    unmerged); False when git cannot tell (no HEAD yet)."""
    done = _retrying(root, ["diff-index", "--cached", "--quiet", "HEAD", "--"])
    return done.returncode == 0


def configured(root: StrPath, names: Sequence[str]) -> bool:
    """Whether any configuration git reads here (system, global, local, includes) sets one
    of ``names`` (git matches the pattern against its lowercased names)."""
    pattern = "^(" + "|".join(name.lower().replace(".", r"\.") for name in names) + ")$"
    done = _git(root, ["config", "--get-regexp", pattern])
    if done.returncode not in (0, 1):
        raise _failed("reading git's configuration", done)
    return done.returncode == 0


def set_local(root: StrPath, name: str, value: str) -> None:
    """Set ``name`` in the repository's own configuration."""
    done = _retrying(root, ["config", "--local", name, value])
    if done.returncode != 0:
        raise _failed("setting the repository's configuration", done)


def write_tree(root: StrPath) -> str:
    done = _retrying(root, ["write-tree"])
    if done.returncode != 0:
        raise _failed("writing the tree", done)
    return done.stdout.decode().strip()


def commit_tree(root: StrPath, tree: str, parents: Sequence[str], message: str, author: Person,
                committer: Person, sign: bool) -> str:
    """A commit object of ``tree`` with ``parents`` (no ref moves); signed by git as its
    settings say when ``sign`` (``git commit-tree`` reads ``gpg.*`` and
    ``user.signingkey``, but not ``commit.gpgsign``: the caller does)."""
    args = ["commit-tree", *(["-S"] if sign else []), tree]
    for parent in parents:
        args += ["-p", parent]
    done = _git(root, [*args, "-F", "-"], _env(author, committer), message.encode("utf-8"))
    if done.returncode != 0:
        raise _failed("committing", done, root)
    return done.stdout.decode().strip()


def advance(root: StrPath, ref: str, new: str, old: str | None, log: str) -> None:
    """Move ``ref`` to ``new`` if it is still at ``old`` (None: if it does not exist yet)."""
    done = _retrying(root, ["update-ref", "-m", log, ref, new, old or "0" * 40])
    if done.returncode != 0:
        raise _failed("moving the branch", done)


def read_tree(root: StrPath, tree: str) -> None:
    """git's index holds exactly ``tree`` (unmerged entries dropped; the work tree untouched,
    ctx writes the files itself), in the form git's settings give it (``core.splitIndex``,
    ``index.version``: tests/git/test_git_settings.py); then the index's file data is
    refreshed from disk, so a ``git status`` need not read the files again."""
    done = _retrying(root, ["read-tree", "--reset", tree])
    if done.returncode != 0:
        raise _failed("updating the index", done)
    _retrying(root, ["update-index", "-q", "--refresh"])  # (a refresh that fails changes no content)


def point_head(root: StrPath, ref: str, log: str) -> None:
    """HEAD names the branch ``ref`` (a clone's HEAD was the remote's branch)."""
    done = _retrying(root, ["symbolic-ref", "-m", log, "HEAD", ref])
    if done.returncode != 0:
        raise _failed("pointing HEAD at the branch", done)
