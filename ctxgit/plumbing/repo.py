"""The context root's own repository: open, create, identities, one commit.

The repository is always opened by explicit path with ``NO_SEARCH``: a root
inside a project checkout never commits to the project, and ``GIT_DIR`` or
``GIT_WORK_TREE`` in the caller's environment are ignored (libgit2 reads
them only with ``FROM_ENV``, which ctx never passes).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import pygit2
from pygit2.enums import FileStatus, RepositoryOpenFlag

from ctx import model, settings
from ctx.errors import GitError
from ctxgit.gitfiles.identity import (
    EMAIL_DOMAIN,
    OPERATOR_NAME,
    SYSTEM_NAME,
    author_identity,
    clean,
    identity_or_operator,
    made_email,
)
from ctxgit.gitfiles.layout import holds
from hooks.unsafe_paths import forbidden

T = TypeVar("T")


def is_managed(path: str) -> bool:
    """Files ctx versions: what a context holds (``layout.holds``), never local state."""
    return not forbidden(path) and holds(path)


def open_repo(root: Path) -> pygit2.Repository | None:
    """The root's own repository, or None when the root has none."""
    dot_git = root / ".git"
    if not dot_git.exists() and not dot_git.is_symlink():
        return None
    if dot_git.is_symlink() or not dot_git.is_dir():
        raise GitError(f"{dot_git} is not a directory: ctx commits only to the context root's own "
                       "repository, never through a link or a gitdir file")
    try:
        repo = pygit2.Repository(str(root), RepositoryOpenFlag.NO_SEARCH)
    except pygit2.GitError as exc:
        raise GitError(f"{root}/.git: not a usable repository ({exc})") from None
    workdir = repo.workdir
    if workdir is None or Path(workdir).resolve() != root.resolve():
        raise GitError(f"{root}/.git belongs to another work tree ({workdir}); "
                       "ctx commits only to the context root's own repository")
    return repo


def existing_repo(root: Path) -> pygit2.Repository:
    """``open_repo`` where the repository must exist (it was made or checked just before)."""
    repo = open_repo(root)
    if repo is None:
        raise GitError(f"the context at {root} has no repository (.git) yet: write something first")
    return repo


_TEMPLATE_NAMES = {"HEAD", "config", "description", "info", "hooks", "objects", "refs", "branches"}


def half_made(root: Path) -> bool:
    """True when ``root/.git`` is what ``git init`` leaves when killed part-way: a
    directory that does not open as a repository and holds nothing but the template
    (no object, ref, index, log or ctx state), so making it again loses nothing."""
    dot_git = root / ".git"
    if dot_git.is_symlink() or not dot_git.is_dir():
        return False
    try:
        pygit2.Repository(str(root), RepositoryOpenFlag.NO_SEARCH)
        return False
    except pygit2.GitError:
        pass
    for top in os.scandir(dot_git):
        name = top.name[:-5] if top.name.endswith(".lock") else top.name  # config.lock: killed writing it
        if name not in _TEMPLATE_NAMES:
            return False
        if top.name in ("objects", "refs") and top.is_dir(follow_symlinks=False):
            for _, _, files in os.walk(top.path):
                if files:
                    return False
    return True


def clear_half_made(root: Path) -> bool:
    """Remove a ``.git`` a killed first write left half made (call under the context
    lock); True when one was removed, so the next write makes the repository again."""
    if not half_made(root):
        return False
    import shutil
    shutil.rmtree(root / ".git")
    return True


# --- identities -------------------------------------------------------------------

def _signature(name: str, email: str) -> pygit2.Signature:
    # explicit time, from the entries' clock: libgit2's own may lag it, and a commit must
    # never be dated before the entry timestamp it records
    return pygit2.Signature(*identity_or_operator(name, email), int(model.clock()), 0)


def machine_identity(repo: pygit2.Repository | None) -> tuple[str, str] | None:
    """This machine's git identity for the repository (its local config, then the
    user's): ``user.name``, and ``user.email`` or an address made from the name;
    None when no name is set."""
    name = email = None
    if repo is not None:
        try:
            config = repo.config
            name = config["user.name"] if "user.name" in config else None
            email = config["user.email"] if "user.email" in config else None
        except (pygit2.GitError, KeyError, ValueError):
            pass
    name = (name or "").strip()
    if not name:
        return None
    return name, (email or "").strip() or made_email(name)


def signature(repo: pygit2.Repository | None, author: str | None) -> pygit2.Signature:
    """The author of a write: CTX_AUTHOR, else the operator's git identity.

    Never fails: without a configured identity the operator is ``operator``.
    """
    if author:
        return _signature(*author_identity(author, settings.text("CTX_AUTHOR_EMAIL")))
    name, email = machine_identity(repo) or (OPERATOR_NAME, f"{OPERATOR_NAME}@{EMAIL_DOMAIN}")
    return _signature(name, email)


def committer_signature(repo: pygit2.Repository, author: pygit2.Signature) -> pygit2.Signature:
    """The committer of a write: the account that commits it (this machine's git
    identity), at the author's time; the author itself when no identity is set."""
    identity = machine_identity(repo)
    if identity is None:
        return author
    return pygit2.Signature(clean(identity[0]) or OPERATOR_NAME, clean(identity[1]) or author.email,
                            author.time, author.offset)


def signature_of(name: str, email: str) -> pygit2.Signature:
    """A commit's author as a name and email recorded earlier (``recorder.GitRecorder.intend``)."""
    return _signature(name, email)


def system_signature() -> pygit2.Signature:
    return _signature(SYSTEM_NAME, f"{SYSTEM_NAME}@{EMAIL_DOMAIN}")


# --- committing -------------------------------------------------------------------

def _retry(action: Callable[[], T], what: str) -> T:
    """Run ``action``, waiting while another git holds a lock file (index.lock…)."""
    deadline = time.monotonic() + settings.seconds("CTX_GIT_RETRY_SECONDS")
    pause = 0.01
    while True:
        try:
            return action()
        except (pygit2.GitError, OSError) as exc:  # a locked ref comes as OSError
            message = str(exc)
            # another git's lock file, or an object directory a background gc just removed
            transient = "lock" in message.lower() or "no such file" in message.lower()
            if not transient or time.monotonic() >= deadline:
                raise GitError(f"{what}: {message}") from None
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def _wait_for_index(git_dir: Path) -> None:
    """Wait while another git holds ``index.lock``; then fail clearly, having changed nothing."""
    lock = git_dir / "index.lock"
    deadline = time.monotonic() + settings.seconds("CTX_GIT_RETRY_SECONDS")
    pause = 0.01
    while lock.exists():
        if time.monotonic() >= deadline:
            raise GitError(f"another git holds {lock} (a commit or add in progress?); "
                           "nothing was written: try again when it is done")
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def dirty_paths(repo: pygit2.Repository) -> list[str]:
    """Managed files whose content on disk differs from HEAD (or the index)."""
    status = repo.status(untracked_files="all", ignored=False)
    return sorted(path for path, flags in status.items()
                  if flags != FileStatus.CURRENT and not flags & FileStatus.IGNORED
                  and is_managed(path))


def blob_data(repo: pygit2.Repository, oid: pygit2.Oid) -> bytes:
    """The bytes of the blob ``oid`` (``ValueError`` if it names another kind of object)."""
    return repo[oid].peel(pygit2.Blob).data


def head_commit(repo: pygit2.Repository) -> pygit2.Commit | None:
    if repo.head_is_unborn:
        return None
    return repo.head.peel(pygit2.Commit)


def refuse_credentials(repo: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree,
                       exempt: frozenset[str] = frozenset(),
                       edits: dict[str, list[tuple[str, str, Any, Any]]] | None = None) -> None:
    """The in-process pre-commit check: no commit may add a credential that is new
    (``hooks/newsecrets.py``, the check the fast commit makes too).

    ``edits`` (path -> ``(store, key, before, after)``) names the store files a ctx
    write changed and nothing else did since ``old``: only those entries are read.
    Every other file that differs is compared whole with its version in ``old``. A
    secret the parent commit already held is not new; ``exempt`` names entries
    (``store/key``) and paths whose credentials this write was told to keep (``--force``).
    """
    from hooks.newsecrets import Changed, refuse_new
    edits = edits or {}
    diff = old.diff_to_tree(new) if old is not None else new.diff_to_tree(swap=True)
    changes = []
    for delta in diff.deltas:  # which files differ (by id): no line diff
        if delta.status == pygit2.enums.DeltaStatus.DELETED:
            continue
        path = delta.new_file.path
        after_id = delta.new_file.id
        if path in edits:
            changes.append(Changed(path, edits=edits[path], after=_reader(repo, after_id)))
            continue
        after = blob_data(repo, after_id)
        if b"\0" in after[:8000]:
            continue  # binary: never a file ctx writes
        before = _blob_bytes(repo, old, path)
        changes.append(Changed(path, before=before, after=after))
    refuse_new(changes, exempt)


def _reader(repo: pygit2.Repository, oid: pygit2.Oid) -> Callable[[], bytes]:
    return lambda: blob_data(repo, oid)


def _blob_bytes(repo: pygit2.Repository, tree: pygit2.Tree | None, path: str) -> bytes | None:
    if tree is None:
        return None
    try:
        return blob_data(repo, tree[path].id)
    except (KeyError, ValueError):
        return None


def commit_paths(repo: pygit2.Repository, paths: Iterable[str], message: str,
                 author: pygit2.Signature, committer: pygit2.Signature | None = None, *,
                 scan: bool = True, exempt: frozenset[str] = frozenset(),
                 extra_parents: list[str] | None = None,
                 edits: dict[str, list[tuple[str, str, Any, Any]]] | None = None) -> pygit2.Oid | None:
    """``_commit_paths``, with libgit2's own errors said in ctx's words."""
    try:
        return _commit_paths(repo, paths, message, author, committer, scan=scan, exempt=exempt,
                             extra_parents=extra_parents, edits=edits)
    except pygit2.GitError as exc:
        raise GitError(f"the repository refused the commit: {exc}") from None


def _commit_paths(repo: pygit2.Repository, paths: Iterable[str], message: str,
                 author: pygit2.Signature, committer: pygit2.Signature | None = None, *,
                 scan: bool = True, exempt: frozenset[str] = frozenset(),
                 extra_parents: list[str] | None = None,
                 edits: dict[str, list[tuple[str, str, Any, Any]]] | None = None) -> pygit2.Oid | None:
    """Stage ``paths`` as they are on disk and commit them; None if nothing changed.

    A forbidden path (the lock file, a temporary file) is never staged, and
    is taken out of the index if a manual ``git add`` put it there. With
    ``scan``, what the commit adds is checked for credentials first
    (``refuse_credentials``; ``edits`` as it says).
    """
    root = Path(repo.workdir)
    index = repo.index
    index.read(True)  # drop what an earlier, refused attempt staged in memory
    for path in paths:
        if forbidden(path):
            continue
        full = root / path
        if full.is_symlink():
            continue  # neither its target nor its removal: tests/reliability/test_root_links.py
        if full.is_file():
            index.add(path)
        elif path in index:
            index.remove(path)
    for entry in list(index):
        if forbidden(entry.path):
            index.remove(entry.path)
    tree = index.write_tree()
    parent = head_commit(repo)
    if parent is not None and parent.tree_id == tree and not extra_parents:
        _retry(index.write, "updating the index")
        return None
    new_tree = repo[tree].peel(pygit2.Tree)
    if parent is None and len(new_tree) == 0:
        return None
    if scan:
        refuse_credentials(repo, parent.tree if parent is not None else None, new_tree, exempt, edits)
    parents = ([parent.id] if parent is not None else []) + [pygit2.Oid(hex=p) for p in extra_parents or []]
    _wait_for_index(Path(repo.path))  # no commit unless its index can follow it
    committer = committer or committer_signature(repo, author)
    from ctxgit.plumbing.signing import signing_config
    how = signing_config(repo.config)
    if how is None:
        oid = _retry(lambda: repo.create_commit("HEAD", author, committer, message, tree, parents),
                     "committing")
    else:  # signed as git signs: the signer runs before anything moves
        oid = create_signed(repo, how, author, committer, message, tree, parents)
        _retry(lambda: _advance_head(repo, oid, parent, parents, message), "committing")
    try:
        _retry(index.write, "updating the index")
    except GitError:
        pass  # the commit stands; the next write finds the index behind and sets it right
    return oid


def create_signed(repo: pygit2.Repository, how: dict, author: pygit2.Signature, committer: pygit2.Signature,
                  message: str, tree: pygit2.Oid, parents: list) -> pygit2.Oid:
    """A commit object signed as ``how`` says (``signing.signing_config``); no ref moves.
    The signer fails: GitError, and nothing but the unsigned bytes was ever made."""
    from ctxgit.plumbing.signing import sign
    content = str(repo.create_commit_string(author, committer, message, tree, parents))
    signed = sign(content.encode("utf-8"), how, (committer.name, committer.email), Path(repo.workdir))
    return repo.create_commit_with_signature(content, signed.rstrip("\n"), "gpgsig")


def _advance_head(repo: pygit2.Repository, oid: pygit2.Oid, parent: pygit2.Commit | None,
                  parents: list, message: str) -> None:
    """Move the branch HEAD names (HEAD itself when detached) to ``oid``, with the reflog
    line git writes; refused when another git moved it since ``parent`` was read."""
    subject = message.split("\n", 1)[0]
    kind = "commit (initial)" if not parents else "commit (merge)" if len(parents) > 1 else "commit"
    log = f"{kind}: {subject}"
    head = repo.references["HEAD"]
    name = head.target if isinstance(head.target, str) else "HEAD"
    current = repo.references.get(name) if name != "HEAD" else head
    found = current.target if current is not None else None
    if found != (parent.id if parent is not None else None):
        raise GitError(f"{name} moved while ctx committed (another git?); nothing was committed")
    if current is None:
        repo.create_reference(name, oid, message=log)
    else:
        current.set_target(oid, log)
