"""Sync one context between machines through any git remote: no server of ctx's own.

``pull`` fetches (outside the lock: the network can be slow), then under the
context lock fast-forwards, merges entry by entry, or leaves a text conflict
waiting for a human (``merging.py``). A pull never rewrites local history.
``push`` sends ``main`` and sets its upstream, so a plain ``git pull`` in the
root knows where to pull from. ``sync`` pulls and pushes; a push that loses a
race to another machine's (the remote moved on, or its branch was being
updated) is retried after a fetch and a merge, with a jittered pause, for as
long as the sync's time allows; a remote's refusal (a hook, permissions, a
protected branch) is reported once, with its reason.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pygit2

from ctx import progress
from ctx.context import Context
from ctx.errors import Conflict, ContextRootError, GitError, InvalidArgument, NotFound
from ctx.storage.lock import context_lock, wait_for_flock
from ctxgit.gitfiles import waiting
from ctxgit.gitfiles.layout import BRANCH, state_dir, tracking_ref
from ctxgit.guard.install import ensure_repo
from ctxgit.guard.trust import refuse_untrusted
from ctxgit.plumbing import gitconfig, gitindex
from ctxgit.plumbing.gitconfig import upstream
from ctxgit.plumbing.locks import lock_error, locked_file, remote_operation
from ctxgit.plumbing.repo import existing_repo
from ctxgit.recorder import recorder_for
from ctxgit.sync import causes, incoming, transport
from ctxgit.sync.arrived import refuse_agent_accepting
from ctxgit.sync.callbacks import Callbacks, bounded
from ctxgit.sync.merging import (
    LOCAL_REF,
    PullResult,
    abort_merge,
    continue_merge,
    count_commits,
    fast_forward,
    integrate,
    merge_into,
)
from ctxgit.sync.urls import has_password, redact, without_password

__all__ = ["PullResult", "PushResult", "abort_merge", "add_remote", "clone", "continue_merge", "fast_forward",
           "fetch", "list_remotes", "merge_into", "pick_remote", "pull", "push", "remote_head", "sync"]

SYNC_TIMEOUT = 60.0   # seconds a sync keeps retrying a push that lost a race
LOCK_PATIENCE = 5.0   # seconds a remote's branch lock may stay held before it is named
FIRST_PAUSE = 0.05    # the first pause between attempts; doubled up to MAX_PAUSE, jittered
MAX_PAUSE = 1.0


# --- remotes ---------------------------------------------------------------------

def _repo(ctx: Context, pulling: bool = False) -> pygit2.Repository:
    """The root's repository, made (with the root's layout) when missing; outside edits
    committed first. ``pulling``: the pull that follows commits those itself, so a root
    already laid out is not recorded again (a sync saves a commit check)."""
    root = ctx.root
    if not (pulling and (root / ".git").is_dir() and (root / "RULES.md").exists()
            and (root / "memory").is_dir() and (root / "sessions").is_dir()):
        ctx.init()
    with context_lock(ctx.root):
        return ensure_repo(ctx.root)[0]


def add_remote(ctx: Context, name: str, url: str) -> None:
    refuse_password(url)
    repo = _repo(ctx)
    if name in [name_of(r) for r in repo.remotes]:
        raise InvalidArgument(f"a remote named {name!r} exists already ({redact(url_of(repo.remotes[name]))})")
    try:
        repo.remotes.create(name, _normalise_url(url))
    except (pygit2.GitError, ValueError) as exc:
        raise InvalidArgument(f"cannot add remote {name!r}: {exc}") from None
    gitconfig.keep(ctx.root)


def list_remotes(ctx: Context) -> list[tuple[str, str]]:
    """Each remote's name and URL, a password in it (set by hand) shown as ``***``."""
    repo = existing_repo(ctx.root)
    return [] if repo is None else [(name_of(r), redact(url_of(r))) for r in repo.remotes]


def refuse_password(url: str) -> None:
    """A password in a URL would sit in .git/config in plain text and show wherever the
    URL does: refused, with the way git keeps one instead."""
    if has_password(url):
        raise InvalidArgument(f"{redact(url)}: a password in the URL would be kept in .git/config in plain "
                              f"text; give {without_password(url)} and let {causes.HELPERS} keep the password "
                              f"(or a token): run `git ls-remote {without_password(url)}` once in a terminal "
                              "to store it")


def _normalise_url(url: str) -> str:
    """Local paths become absolute, so the remote works from any directory."""
    if "://" in url or (":" in url.split("/")[0] and not os.path.exists(url)):
        return url
    return str(Path(url).expanduser().absolute())


def pick_remote(repo: pygit2.Repository, name: str | None) -> pygit2.Remote:
    """The remote ``name``, or with None the one ``ctxgit/gitfiles/config.py``'s rule picks."""
    chosen = upstream(Path(repo.workdir), name, keep=True)
    if chosen.remote is None or chosen.remote not in [name_of(r) for r in repo.remotes]:
        problem = chosen.problem or f"no remote named {chosen.remote!r}"
        raise NotFound(problem) if name is not None else InvalidArgument(problem)
    return repo.remotes[chosen.remote]


def fetch(repo: pygit2.Repository, remote: pygit2.Remote, warnings: list[str] | None = None,
          deadline: transport.Deadline | None = None) -> pygit2.Oid | None:
    """Fetch the remote's ``main``; its commit id, or None when it has none yet.
    ``deadline``: the fetch (and the wait for another one in this root) ends by then."""
    progress.step(f"fetching from {name_of(remote)}")
    wait = deadline.left() if deadline is not None else None
    with remote_operation(Path(repo.workdir), wait=wait, why=deadline.why if deadline else None,
                          remote=name_of(remote)) as operation:
        _recovered(operation.removed, warnings)
        if transport.use_git():
            transport.git_fetch(Path(repo.workdir), name_of(remote), url_of(remote), operation.fd,
                                deadline.limit() if deadline is not None else None)
            return remote_head(repo, name_of(remote))
        callbacks = Callbacks(url_of(remote))
        try:
            bounded(lambda: remote.fetch(callbacks=callbacks), callbacks, "fetch", deadline)
        except transport.NoAnswer:
            raise
        except (pygit2.GitError, GitError) as exc:
            lock = locked_file(str(exc))
            if lock:
                raise lock_error(f"cannot fetch from {name_of(remote)}", lock) from None
            raise GitError(f"cannot fetch from {name_of(remote)} ({redact(url_of(remote))}): "
                           f"{callbacks.explain(exc)}") from None
    return remote_head(repo, name_of(remote))


def _recovered(removed: list[str], warnings: list[str] | None) -> None:
    if removed and warnings is not None:
        shown = ", ".join(path if path.startswith("/") else f".git/{path}" for path in removed)
        warnings.append(f"warning: removed {shown} left by an interrupted ctx sync")


def name_of(remote: pygit2.Remote) -> str:
    return remote.name or "origin"


def url_of(remote: pygit2.Remote) -> str:
    return remote.url or ""


def remote_head(repo: pygit2.Repository, name: str) -> pygit2.Oid | None:
    for ref in (tracking_ref(name),):
        if ref in repo.references:
            return repo.references[ref].peel(pygit2.Commit).id
    branches = [r for r in repo.references if r.startswith(f"refs/remotes/{name}/") and not r.endswith("/HEAD")]
    if len(branches) == 1:  # a context pushed from another tool under another branch name
        return repo.references[branches[0]].peel(pygit2.Commit).id
    return None


# --- pull ------------------------------------------------------------------------------

def _refuse_while_waiting(ctx: Context) -> None:
    found = waiting.read(ctx.root)
    if found is not None:
        raise Conflict(f"a merge with {found.label} waits: {found.next_step()}")


def pull(ctx: Context, remote_name: str | None = None, *, auto: bool = False,
         deadline: transport.Deadline | None = None, ready: bool = False,
         accept_weaker: bool = False) -> PullResult:
    """Fetch and take in the remote's main. ``ready``: the caller (a sync) has made sure
    the root and its repository are in order already. ``accept_weaker``: the operator
    takes a remote commit that turns a protection off (never auto-sync, never an agent)."""
    if accept_weaker:
        refuse_agent_accepting(ctx.author)
    accept_weaker = accept_weaker and not auto
    repo = existing_repo(ctx.root) if ready else _repo(ctx)
    remote = pick_remote(repo, remote_name)
    _refuse_while_waiting(ctx)
    theirs = fetch(repo, remote, ctx.recorder.warnings, deadline)
    refuse_untrusted(ctx.root, repo, theirs, f"{name_of(remote)}/{BRANCH}")  # require-signed: before any merge
    progress.step(f"merging {name_of(remote)}/{BRANCH}")
    result = integrate(ctx, f"{name_of(remote)}/{BRANCH}", theirs, auto,
                       deadline.left() if deadline is not None else None, accept_weaker)
    result.remote = name_of(remote)
    return result


# --- push, sync, clone ----------------------------------------------------------------------

@dataclass
class PushResult:
    remote: str
    sent: int  # commits the remote did not have (0: it had everything)


def push(ctx: Context, remote_name: str | None = None, *, known: str | None = None, fetched: bool = False,
         deadline: transport.Deadline | None = None) -> PushResult:
    """Push main. A plain push fetches first and is refused (``Behind``) when the remote
    has commits this side lacks; a sync's push (``fetched``) trusts the remote's main it
    just fetched (``known``: None when the remote had none) and lets the remote refuse."""
    repo = existing_repo(ctx.root) if fetched else _repo(ctx)
    remote = pick_remote(repo, remote_name)
    if repo.head_is_unborn:
        raise NotFound("nothing to push: the context has no commits yet")
    behind = transport.Behind(f"{name_of(remote)} has changes this machine lacks: run `ctx sync`")
    if fetched:
        theirs = pygit2.Oid(hex=known) if known else None
    else:
        theirs = fetch(repo, remote, ctx.recorder.warnings, deadline)
    head = repo.head.peel(pygit2.Commit).id
    if theirs is not None and theirs != head and not repo.descendant_of(head, theirs):
        raise behind
    if theirs == head:
        _set_upstream(repo, name_of(remote))
        return PushResult(name_of(remote), 0)
    sent = count_commits(repo, head, theirs)
    progress.step(f"sending {sent:,} commit{'s' if sent != 1 else ''} to {name_of(remote)}")
    wait = deadline.left() if deadline is not None else None
    with remote_operation(ctx.root, (url_of(remote), str(head)), wait=wait,
                          why=deadline.why if deadline else None, remote=name_of(remote)) as operation:
        _recovered(operation.removed, ctx.recorder.warnings)
        if transport.use_git():
            transport.git_push(ctx.root, name_of(remote), url_of(remote), f"{LOCAL_REF}:{LOCAL_REF}", operation.fd,
                               deadline.limit() if deadline is not None else None)
        else:
            _libgit2_push(ctx.root, remote, behind, deadline)
        tracking = tracking_ref(name_of(remote))
        try:
            gitindex.set_ref(repo, tracking, head, gitindex.branch_at(repo, tracking), "update by push")
        except GitError as exc:
            lock = locked_file(str(exc))
            raise (lock_error(f"pushed to {name_of(remote)}, but", lock) if lock else
                   GitError(f"pushed to {name_of(remote)}, but: {exc}")) from None
    _set_upstream(repo, name_of(remote))
    return PushResult(name_of(remote), sent)


def _set_upstream(repo: pygit2.Repository, name: str) -> None:
    """main's upstream, written only when it changes (a config write costs the next
    write its one-commit way: git is asked what changed)."""
    config = repo.config
    for key, value in ((f"branch.{BRANCH}.remote", name), (f"branch.{BRANCH}.merge", LOCAL_REF)):
        if key not in config or config[key] != value:
            config[key] = value
    gitconfig.keep(repo.workdir)


@contextmanager
def _local_remote_lock(url: str) -> Iterator[None]:
    """libgit2 updates a local remote's branch without checking its old value: pushes
    through it to one directory take turns (a flock on the remote's refs/heads)."""
    path = Path(url[len("file://"):] if url.startswith("file://") else url)
    heads = path / "refs" / "heads" if not (path / ".git").is_dir() else path / ".git" / "refs" / "heads"
    if "://" in url and not url.startswith("file://") or not heads.is_dir():
        yield
        return
    from ctx import settings
    fd = os.open(heads, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        wait_for_flock(fd, settings.seconds("CTX_REMOTE_WAIT_SECONDS"), f"another push to {url} held it; "
                       "gave up waiting (CTX_REMOTE_WAIT_SECONDS)")
        yield
    finally:
        os.close(fd)


def _libgit2_push(root: Path, remote: pygit2.Remote, behind: transport.Behind,
                  deadline: transport.Deadline | None = None) -> None:
    callbacks = Callbacks(url_of(remote))
    with _local_remote_lock(url_of(remote)):
        try:
            bounded(lambda: remote.push([f"{LOCAL_REF}:{LOCAL_REF}"], callbacks=callbacks, threads=0),  # 0: a
                    callbacks, "push", deadline)  # thread per core
        except transport.NoAnswer:
            raise
        except (pygit2.GitError, GitError) as exc:
            text = str(exc)
            if any(word in text for word in transport.BEHIND_WORDS + ("rejected",)):
                raise behind from None
            lock = transport.remote_lock(text, root, name_of(remote))
            if lock is not None:
                raise lock from None
            raise GitError(f"cannot push to {name_of(remote)} ({redact(url_of(remote))}): "
                           f"{callbacks.explain(exc)}") from None
    for message in callbacks.rejected.values():
        lock = transport.remote_lock(message, root, name_of(remote))
        if lock is not None:  # the remote's branch is being updated: a race, for a while
            raise lock
    if callbacks.rejected:
        said = "; ".join(callbacks.rejected.values())
        raise Conflict(f"{name_of(remote)} refused the push ({said})")


def sync(ctx: Context, remote_name: str | None = None, timeout: float | None = None, *,
         auto: bool = False, accept_weaker: bool = False) -> tuple[PullResult, PushResult | None]:
    """Pull, then push; a push that lost a race is tried again (fetch, merge, push) with a
    jittered pause until ``timeout`` seconds have passed (default 60; given, it bounds each
    git process too). A text conflict waits for a human (``auto``: is left alone): no push."""
    if accept_weaker:
        refuse_agent_accepting(ctx.author)  # before anything is fetched
    limit = SYNC_TIMEOUT if timeout is None else timeout
    deadline = transport.Deadline(limit, "ctx sync --timeout" if not auto else "sync-timeout")
    bounded = deadline if timeout is not None else None
    pause = FIRST_PAUSE
    busy_since: float | None = None
    report: PullResult | None = None
    attempts = 0
    _repo(ctx, pulling=True)
    while True:
        attempts += 1
        pulled = pull(ctx, remote_name, auto=auto, deadline=bounded, ready=True, accept_weaker=accept_weaker)
        report = pulled if report is None else report.add(pulled)
        if pulled.kind == "conflict":
            return report, None
        try:
            return report, push(ctx, remote_name, known=pulled.remote_head, fetched=True, deadline=bounded)
        except transport.RemoteBusy as exc:
            busy_since = busy_since or time.monotonic()
            if time.monotonic() - busy_since >= min(LOCK_PATIENCE, limit) or deadline.passed():
                raise exc.lock from None
            last: Exception = exc
        except transport.Raced as exc:
            busy_since = None
            last = exc
        progress.step(f"{last}; trying again (attempt {attempts + 1})")
        time.sleep(min(deadline.left(), random.uniform(pause / 2, pause)))
        pause = min(pause * 2, MAX_PAUSE)
        if deadline.passed():
            if isinstance(last, transport.RemoteBusy):
                raise last.lock from None
            raise Conflict(f"the remote kept moving: other machines' pushes came first {attempts} "
                           f"times in {limit:g} s; run `ctx sync` again, or give it longer "
                           f"(`ctx sync --timeout SECONDS`) ({last})") from None


def clone(url: str, root: Path) -> tuple[Context, PullResult]:
    """A ready context root from a remote: files, hooks, merge driver, upstream.

    Works from a fresh bare repository whose HEAD names a branch that does
    not exist, and from an empty one (a new context that pushes there).
    """
    refuse_password(url)
    root = root.expanduser().absolute()
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise ContextRootError(f"{root} exists and is not empty; clone into a new directory")
    existed = root.exists()
    try:
        return _clone(url, root)
    except BaseException:
        # leave nothing that would block a rerun: the directory was new or empty
        shutil.rmtree(root / ".git", ignore_errors=True)
        for child in list(root.iterdir()) if root.is_dir() else []:
            shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink(missing_ok=True)
        if not existed:
            shutil.rmtree(root, ignore_errors=True)
        raise


def _clone(url: str, root: Path) -> tuple[Context, PullResult]:
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    progress.step(f"cloning {url}")
    if transport.use_git():  # the operator's ssh and credential set-up, as fetch and push
        transport.git_clone(_normalise_url(url), root)
        repo = pygit2.Repository(str(root))
    else:  # libgit2: a fetch into a new repository, so nothing is checked out before the guard
        callbacks = Callbacks(url)
        try:
            repo = pygit2.init_repository(str(root), initial_head=BRANCH)
            origin = repo.remotes.create("origin", _normalise_url(url))
            bounded(lambda: origin.fetch(callbacks=callbacks), callbacks, "clone")
        except transport.NoAnswer:
            raise
        except (pygit2.GitError, GitError, ValueError) as exc:
            raise GitError(f"cannot clone {redact(url)}: {callbacks.explain(exc)}") from None
    ctx = Context(root=root, recorder_factory=recorder_for, state_of=state_dir)
    (root / "memory").mkdir(mode=0o700, exist_ok=True)
    theirs = remote_head(repo, "origin")
    if theirs is not None:  # main at the remote's, every file written: after the guard, never before
        incoming.check(repo, theirs, None)
        with context_lock(root):
            fast_forward(ctx, repo, theirs, whole=True, why="clone")
    else:  # an empty remote: a new context, on main whatever the remote's HEAD says
        gitindex.name_branch(repo, LOCAL_REF, "clone: an empty remote")
    result = PullResult("fast-forward", str(theirs)) if theirs is not None else PullResult("nothing to pull")
    from hooks.install import install
    install(root)
    ctx.init()  # .gitignore, .gitattributes, RULES.md when the remote had none
    config = existing_repo(root).config
    config[f"branch.{BRANCH}.remote"] = "origin"
    config[f"branch.{BRANCH}.merge"] = LOCAL_REF
    gitconfig.keep(root)
    return ctx, result


def run_merge_driver(base: str, ours: str, theirs: str, path: str) -> int:
    """git's merge driver protocol: merge %O %B into %A (replaced); 0 when merged."""
    from ctx.entrymerge import merge_store_bytes

    def read(name: str) -> bytes | None:
        data = Path(name).read_bytes()
        return data if data.strip() else None
    try:
        merged, conflicts = merge_store_bytes(read(base), read(ours), read(theirs), path)
    except Conflict as exc:
        print(f"ctx merge-driver: {exc}", file=sys.stderr)
        return 1
    # %A replaced whole (git reads it back by name once the driver exits): a write that
    # fails leaves ours as it was, never a part of the merge for git to take as the result
    from ctx.storage.files import atomic_write
    atomic_write(Path(ours).resolve(), merged or b"", durable=False)
    for key in conflicts:
        print(f"ctx merge-driver: {path}: both sides changed {key}; the later timestamp won", file=sys.stderr)
    return 0

