"""Sync one context between machines through any git remote: no server of ctx's own.

``pull`` fetches (outside the lock: the network can be slow), then under the
context lock either fast-forwards, or merges entry by entry (``treemerge``)
and commits the merge with both parents through the one write path. A pull
never rewrites local history. ``push`` sends ``main`` and sets its upstream,
so a plain ``git pull`` in the root knows where to pull from. ``sync`` pulls,
pushes, and pulls again when someone pushed in between.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pygit2
from pygit2.enums import CredentialType

from ctx.errors import Conflict, ContextRootError, GitError, InvalidArgument, NotFound
from ctx.model import STORES
from ctx.changes import Edit, Outcome
from ctx.context import Context
from ctx.storage.files import StoreFile, atomic_write
from ctx.storage.lock import context_lock

from ctxgit.recorder import recorder_for
from ctxgit.sync import transport
from ctxgit.porcelain.commits import entries_at
from ctxgit.plumbing.locks import lock_error, locked_file, remote_operation
from ctx.entrymerge import parse as parse_store_side
from ctxgit.plumbing.gitenv import clean_git_env
from ctxgit.plumbing.repo import BRANCH, ensure_repo, open_repo
from ctxgit.sync.treemerge import flatten, merge_trees

LOCAL_REF = f"refs/heads/{BRANCH}"
PUSH_RETRIES = 3


class Callbacks(pygit2.RemoteCallbacks):
    """SSH keys from the agent, passwords from git's credential helper; a clear
    error after a few refusals instead of a loop."""

    def __init__(self) -> None:
        super().__init__()  # noqa: the credential helper is asked only when the remote asks
        self.tries = 0
        self.rejected: dict[str, str] = {}

    def credentials(self, url, username_from_url, allowed_types):
        self.tries += 1
        if self.tries > 3:
            raise GitError(f"{url}: authentication failed (tried the SSH agent and git's credential helper)")
        if allowed_types & CredentialType.SSH_KEY:
            return pygit2.KeypairFromAgent(username_from_url or "git")
        if allowed_types & CredentialType.USERPASS_PLAINTEXT:
            found = _credential_fill(url, username_from_url)
            if found:
                return pygit2.UserPass(*found)
        if allowed_types & CredentialType.USERNAME:
            return pygit2.Username(username_from_url or "git")
        raise GitError(f"{url}: needs credentials ctx cannot supply; "
                       "set up an SSH agent or a git credential helper")

    def push_update_reference(self, refname, message):
        if message:
            self.rejected[refname] = message


def _credential_fill(url: str, user: str | None) -> tuple[str, str] | None:
    """Ask ``git credential fill`` (the operator's helper); never prompt."""
    if not url.startswith(("http://", "https://")):
        return None
    from urllib.parse import urlsplit
    parts = urlsplit(url)
    request = f"protocol={parts.scheme}\nhost={parts.netloc}\npath={parts.path.lstrip('/')}\n"
    if user:
        request += f"username={user}\n"
    env = dict(clean_git_env(), GIT_TERMINAL_PROMPT="0")
    try:
        out = subprocess.run(["git", "credential", "fill"], input=request + "\n", env=env,
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    fields = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    if "username" in fields and "password" in fields:
        return fields["username"], fields["password"]
    return None


# --- remotes ---------------------------------------------------------------------

def _repo(ctx: Context) -> pygit2.Repository:
    ctx.init()
    with context_lock(ctx.root):
        return ensure_repo(ctx.root)[0]


def add_remote(ctx: Context, name: str, url: str) -> None:
    repo = _repo(ctx)
    if name in [r.name for r in repo.remotes]:
        raise InvalidArgument(f"a remote named {name!r} exists already ({repo.remotes[name].url})")
    try:
        repo.remotes.create(name, _normalise_url(url))
    except (pygit2.GitError, ValueError) as exc:
        raise InvalidArgument(f"cannot add remote {name!r}: {exc}") from None


def list_remotes(ctx: Context) -> list[tuple[str, str]]:
    repo = open_repo(ctx.root)
    return [] if repo is None else [(r.name, r.url) for r in repo.remotes]


def _normalise_url(url: str) -> str:
    """Local paths become absolute, so the remote works from any directory."""
    if "://" in url or (":" in url.split("/")[0] and not os.path.exists(url)):
        return url
    return str(Path(url).expanduser().absolute())


def pick_remote(repo: pygit2.Repository, name: str | None) -> pygit2.Remote:
    names = [r.name for r in repo.remotes]
    if name is None:
        config = repo.config
        upstream = config[f"branch.{BRANCH}.remote"] if f"branch.{BRANCH}.remote" in config else None
        name = upstream or ("origin" if "origin" in names else names[0] if len(names) == 1 else None)
        if name is None:
            raise InvalidArgument("no remote to use: add one with `ctx remote add NAME URL`"
                                  if not names else f"several remotes ({', '.join(names)}): name one")
    if name not in names:
        raise NotFound(f"no remote named {name!r} (have: {', '.join(names) or 'none'})")
    return repo.remotes[name]


def fetch(repo: pygit2.Repository, remote: pygit2.Remote, warnings: list[str] | None = None
          ) -> pygit2.Oid | None:
    """Fetch the remote's ``main``; its commit id, or None when it has none yet."""
    with remote_operation(Path(repo.workdir)) as operation:
        _recovered(operation.removed, warnings)
        if transport.use_git():
            transport.git_fetch(Path(repo.workdir), remote.name, remote.url, operation.fd)
            return remote_head(repo, remote.name)
        try:
            remote.fetch(callbacks=Callbacks())
        except (pygit2.GitError, GitError) as exc:
            lock = locked_file(str(exc))
            if lock:
                raise lock_error(f"cannot fetch from {remote.name}", lock) from None
            raise GitError(f"cannot fetch from {remote.name} ({remote.url}): {exc}") from None
    return remote_head(repo, remote.name)


def _recovered(removed: list[str], warnings: list[str] | None) -> None:
    if removed and warnings is not None:
        shown = ", ".join(path if path.startswith("/") else f".git/{path}" for path in removed)
        warnings.append(f"warning: removed {shown} left by an interrupted ctx sync")


def remote_head(repo: pygit2.Repository, name: str) -> pygit2.Oid | None:
    for ref in (f"refs/remotes/{name}/{BRANCH}",):
        if ref in repo.references:
            return repo.references[ref].target
    branches = [r for r in repo.references if r.startswith(f"refs/remotes/{name}/") and not r.endswith("/HEAD")]
    if len(branches) == 1:  # a context pushed from another tool under another branch name
        return repo.references[branches[0]].target
    return None


# --- pull ------------------------------------------------------------------------------

@dataclass
class PullResult:
    kind: str  # "up to date", "fast-forward", "merge", "nothing to pull"
    commit: str | None = None
    value_conflicts: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    text_conflicts: list[str] = field(default_factory=list)
    entries: int = 0


def _check_stores(files: dict[str, bytes]) -> None:
    """The remote's store files (a flattened tree), checked as a merge checks them: JSON,
    no key written twice, the format version ctx writes (``merge.parse``)."""
    for store in STORES:
        path = f"memory/{store}.json"
        if path in files:
            parse_store_side(files[path], path, "the remote")


def fast_forward(ctx: Context, repo: pygit2.Repository, target: pygit2.Oid) -> None:
    """Move ``main`` to ``target``; the files change first, then the index, then the ref,
    so an interruption leaves changes the next write commits, never a lost one."""
    head = None if repo.head_is_unborn else repo.head.peel(pygit2.Commit)
    new_tree = repo[target].peel(pygit2.Commit).tree
    new = flatten(repo, new_tree, "the remote")
    _check_stores(new)
    old = flatten(repo, head.tree if head is not None else None, "here")
    for path in sorted(set(old) | set(new)):
        if old.get(path) == new.get(path):
            continue
        full = ctx.root / path
        if path in new:
            full.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            atomic_write(full, new[path])
        else:
            full.unlink(missing_ok=True)
    index = repo.index
    index.read(True)
    index.read_tree(new_tree)
    index.write()
    repo.references.create(LOCAL_REF, target, force=True)
    if repo.head_is_unborn or repo.head.name != LOCAL_REF:
        repo.set_head(LOCAL_REF)


def pull(ctx: Context, remote_name: str | None = None) -> PullResult:
    repo = _repo(ctx)
    remote = pick_remote(repo, remote_name)
    theirs = fetch(repo, remote, ctx.recorder.warnings)
    if theirs is None:
        return PullResult("nothing to pull")
    with context_lock(ctx.root):
        ctx.recorder.prepare()  # outside edits become a commit of their own first
        repo = open_repo(ctx.root)
        if repo.head_is_unborn:
            fast_forward(ctx, repo, theirs)
            return PullResult("fast-forward", str(theirs))
        head = repo.head.target
        if head == theirs or repo.descendant_of(head, theirs):
            return PullResult("up to date", str(head))
        if repo.descendant_of(theirs, head):
            fast_forward(ctx, repo, theirs)
            return PullResult("fast-forward", str(theirs))
        return merge_into(ctx, theirs, f"{remote.name}/{BRANCH}")


def merge_into(ctx: Context, theirs: pygit2.Oid, label: str) -> PullResult:
    """Merge commit ``theirs`` into ``main`` through the one write path."""
    result = PullResult("merge")

    def mutate(stores: dict[str, StoreFile]) -> Outcome:
        repo = open_repo(ctx.root)
        ours = repo.head.peel(pygit2.Commit)
        their_commit = repo[theirs].peel(pygit2.Commit)
        base_id = repo.merge_base(ours.id, their_commit.id)
        base = repo[base_id].peel(pygit2.Commit) if base_id is not None else None
        blobs: dict = {}  # merge.parse checks each store file the merge takes from the remote
        merged = merge_trees(repo, base.tree if base else None, ours.tree, their_commit.tree, blobs)
        edits: list[Edit] = []
        for name, store in stores.items():
            path = f"memory/{name}.json"
            if path not in merged.files:
                continue  # a store file removed outside ctx on one side stays here
            # the file on disk is ours (prepare committed every outside change)
            before = dict(store.entries) if store.exists else entries_at(repo, ours, name)
            data = json.loads(merged.files[path])
            after = data.get("entries", {})
            if data == store.data:
                continue
            changed = [Edit(name, k, before.get(k), after.get(k)) for k in
                       dict.fromkeys(list(before) + list(after)) if before.get(k) != after.get(k)]
            if changed:
                store.data.clear()
                store.data.update(data)
                prepared[name] = merged.files[path]
                edits += changed
            else:  # only top-level keys changed: the merged file is written as it is
                files_to_write[path] = merged.files[path]
        ours_files = flatten(repo, ours.tree, "here", blobs)
        for path in set(ours_files) | set(merged.files):
            if path.startswith("memory/") and path.endswith(".json") and path.count("/") == 1:
                continue
            if ours_files.get(path) != merged.files.get(path):
                files_to_write[path] = merged.files.get(path)
        result.value_conflicts = merged.value_conflicts
        result.renamed = merged.renamed
        result.text_conflicts = merged.text_conflicts
        result.entries = len(edits)
        lines = [f"merge {label}: {len(edits)} entries changed"]
        if merged.value_conflicts:
            lines.append("")
            lines.append("Both sides changed these values; the later timestamp won, "
                         "the other value stays in history:")
            lines += [f"- {key}" for key in merged.value_conflicts]
        if merged.renamed:
            lines.append("")
            lines += [f"Summary {a} from both sides: one kept as {b}" for a, b in merged.renamed]
        if merged.text_conflicts:
            lines.append("")
            lines += [f"CONFLICT in {p}: both sides changed the same lines; markers left in the file"
                      for p in merged.text_conflicts]
        trailers = [("Ctx-Merge-Of", str(theirs))]
        trailers += [("Ctx-Conflict", key) for key in merged.value_conflicts]
        return Outcome(edits, dict(files_to_write), [str(theirs)], "\n".join(lines), trailers, splice=False,
                       raw=prepared)

    files_to_write: dict[str, bytes | None] = {}
    prepared: dict[str, bytes] = {}
    ctx.transact("merge", STORES, mutate)
    repo = open_repo(ctx.root)
    result.commit = str(repo.head.target)
    return result


# --- push, sync, clone ----------------------------------------------------------------------

def push(ctx: Context, remote_name: str | None = None) -> str:
    repo = _repo(ctx)
    remote = pick_remote(repo, remote_name)
    if repo.head_is_unborn:
        raise NotFound("nothing to push: the context has no commits yet")
    behind = transport.Behind(f"{remote.name} has changes this machine lacks: run `ctx sync`")
    theirs = fetch(repo, remote, ctx.recorder.warnings)
    head = repo.head.target
    if theirs is not None and theirs != head and not repo.descendant_of(head, theirs):
        raise behind
    with remote_operation(ctx.root, (remote.url, str(head))) as operation:
        _recovered(operation.removed, ctx.recorder.warnings)
        if transport.use_git():
            try:
                transport.git_push(ctx.root, remote.name, remote.url, f"{LOCAL_REF}:{LOCAL_REF}", operation.fd)
            except transport.Behind:
                raise behind from None
        else:
            _libgit2_push(remote, behind)
        try:
            repo.references.create(f"refs/remotes/{remote.name}/{BRANCH}", repo.head.target, force=True)
        except (pygit2.GitError, OSError) as exc:  # a lock file: OSError
            lock = locked_file(str(exc))
            raise (lock_error(f"pushed to {remote.name}, but", lock) if lock else
                   GitError(f"pushed to {remote.name}, but: {exc}")) from None
    config = repo.config
    config[f"branch.{BRANCH}.remote"] = remote.name
    config[f"branch.{BRANCH}.merge"] = LOCAL_REF
    return remote.name


def _libgit2_push(remote: pygit2.Remote, behind: transport.Behind) -> None:
    callbacks = Callbacks()
    try:
        remote.push([f"{LOCAL_REF}:{LOCAL_REF}"], callbacks=callbacks, threads=0)  # 0: one per core
    except (pygit2.GitError, GitError) as exc:
        text = str(exc)
        if any(word in text for word in transport.BEHIND_WORDS + ("rejected",)):
            raise behind from None
        lock = locked_file(text)
        if lock:
            raise lock_error(f"cannot push to {remote.name}", lock) from None
        raise GitError(f"cannot push to {remote.name} ({remote.url}): {text}") from None
    for message in callbacks.rejected.values():
        lock = locked_file(message)
        if lock:  # the remote's ref is locked: not a race that retrying wins
            raise lock_error(f"{remote.name} could not take the push", lock)
    if callbacks.rejected:
        raise Conflict(f"{remote.name} refused the push: {callbacks.rejected}")


def sync(ctx: Context, remote_name: str | None = None) -> tuple[PullResult, str]:
    last: Exception | None = None
    for _ in range(PUSH_RETRIES):
        result = pull(ctx, remote_name)
        try:
            return result, push(ctx, remote_name)
        except transport.Behind as exc:  # someone pushed between our fetch and our push
            last = exc
    raise Conflict(f"the remote kept moving; try again ({last})")


def clone(url: str, root: Path) -> tuple[Context, PullResult]:
    """A ready context root from a remote: files, hooks, merge driver, upstream.

    Works from a fresh bare repository whose HEAD names a branch that does
    not exist, and from an empty one (a new context that pushes there).
    """
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
    try:  # libgit2's clone: a local path is cloned by linking its objects, not by packing them
        repo = pygit2.clone_repository(_normalise_url(url), str(root), callbacks=Callbacks())
    except (pygit2.GitError, GitError) as exc:
        raise GitError(f"cannot clone {url}: {exc}") from None
    ctx = Context(root=root, recorder_factory=recorder_for)
    (root / "memory").mkdir(mode=0o700, exist_ok=True)
    if not repo.head_is_unborn:
        _check_stores(flatten(repo, repo.head.peel(pygit2.Commit).tree, "the remote"))  # links refused
    theirs = remote_head(repo, "origin")
    if theirs is not None and (repo.head_is_unborn or repo.head.name != LOCAL_REF):
        with context_lock(root):  # the remote's HEAD named another branch (or none): take main
            fast_forward(ctx, repo, theirs)
    if theirs is None:  # an empty remote: a new context, on main whatever the remote's HEAD says
        repo.references.create("HEAD", LOCAL_REF, force=True)
    result = PullResult("fast-forward", str(theirs)) if theirs is not None else PullResult("nothing to pull")
    from hooks.install import install
    install(root)
    ctx.init()  # .gitignore, .gitattributes, RULES.md when the remote had none
    config = open_repo(root).config
    config[f"branch.{BRANCH}.remote"] = "origin"
    config[f"branch.{BRANCH}.merge"] = LOCAL_REF
    return ctx, result


def run_merge_driver(base: str, ours: str, theirs: str, path: str) -> int:
    """git's merge driver protocol: merge %O %B into %A in place; 0 when merged."""
    from ctx.entrymerge import merge_store_bytes

    def read(name: str) -> bytes | None:
        data = Path(name).read_bytes()
        return data if data.strip() else None
    try:
        merged, conflicts = merge_store_bytes(read(base), read(ours), read(theirs), path)
    except Conflict as exc:
        print(f"ctx merge-driver: {exc}", file=sys.stderr)
        return 1
    Path(ours).write_bytes(merged or b"")
    for key in conflicts:
        print(f"ctx merge-driver: {path}: both sides changed {key}; the later timestamp won", file=sys.stderr)
    return 0

