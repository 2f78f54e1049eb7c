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

from ctx import settings
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
from ctxgit.plumbing import gitcommit
from ctxgit.plumbing.gitcommit import Person, now_person
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

def _person(name: str, email: str) -> Person:
    # dated by the entries' clock in the writer's zone: libgit2's and git's own clocks may
    # lag it, and a commit must never be dated before the entry timestamp it records
    return now_person(*identity_or_operator(name, email))


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


def signature(repo: pygit2.Repository | None, author: str | None) -> Person:
    """The author of a write: CTX_AUTHOR, else the operator's git identity.

    Never fails: without a configured identity the operator is ``operator``.
    """
    if author:
        return _person(*author_identity(author, settings.text("CTX_AUTHOR_EMAIL")))
    name, email = machine_identity(repo) or (OPERATOR_NAME, f"{OPERATOR_NAME}@{EMAIL_DOMAIN}")
    return _person(name, email)


def committer_of(identity: tuple[str, str] | list[str] | None, author: Person) -> Person:
    """The committer of a write: the account that commits it (this machine's git
    identity, ``machine_identity``), at the author's time; the author itself when no
    identity is set."""
    if not identity:
        return author
    return Person(clean(identity[0]) or OPERATOR_NAME, clean(identity[1]) or author.email,
                  author.time, author.offset)


def signature_of(name: str, email: str) -> Person:
    """A commit's author as a name and email recorded earlier (``recorder.GitRecorder.intend``)."""
    return _person(name, email)


def system_signature() -> Person:
    return _person(SYSTEM_NAME, f"{SYSTEM_NAME}@{EMAIL_DOMAIN}")


def _libgit2(person: Person) -> pygit2.Signature:
    return pygit2.Signature(person.name, person.email, person.time, person.offset)


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
    """Managed files whose content on disk differs from HEAD (or the index): asked of
    git where it commits (libgit2 cannot read every index git writes), else of libgit2."""
    if _by_git(repo):
        found = gitcommit.status(repo.workdir)
        _STAGED_STRAY[repo.workdir] = sorted(p for p in found if forbidden(p))  # for the commit that follows
        return sorted(p for p in found if is_managed(p))
    _refuse_what_libgit2_cannot(repo)
    status = repo.status(untracked_files="all", ignored=False)
    return sorted(path for path, flags in status.items()
                  if flags != FileStatus.CURRENT and not flags & FileStatus.IGNORED
                  and is_managed(path))


def _by_git(repo: pygit2.Repository) -> bool:
    """Whether git itself commits here: it is on PATH (a merge that waits too: then the
    commit is made from the index, ``git commit --only`` refusing a partial commit during a
    merge; tests/git/test_git_settings.py)."""
    return gitcommit.program() is not None


def _merge_waits(repo: pygit2.Repository) -> bool:
    return os.path.exists(os.path.join(repo.path, "MERGE_HEAD"))


def _refuse_what_libgit2_cannot(repo: pygit2.Repository) -> None:
    """A setting libgit2 cannot honour stops the write with one line naming it, before
    anything is written (tests/git/test_git_settings.py)."""
    refuse_split_index(repo)
    try:
        signs = "commit.gpgsign" in repo.config and repo.config.get_bool("commit.gpgsign")
    except (pygit2.GitError, ValueError):
        return
    if signs:
        raise GitError("commit.gpgsign: commits here are to be signed, which only git does, and git "
                       "is not on PATH; nothing was written")


def refuse_split_index(repo: pygit2.Repository, then: str = "nothing was written") -> None:
    """GitError naming ``core.splitIndex`` when the index is split: libgit2 reads and writes
    every other index git makes (call where git is not on PATH; ``then``: what that means
    for the caller, after the reason)."""
    try:
        split = "core.splitIndex" in repo.config and repo.config.get_bool("core.splitIndex")
    except (pygit2.GitError, ValueError):
        split = False
    if split or os.path.exists(os.path.join(repo.path, "sharedindex")) or \
            any(n.startswith("sharedindex.") for n in os.listdir(repo.path)):
        raise GitError("core.splitIndex: this repository's index is split, which libgit2 cannot read "
                       f"or write, and git is not on PATH; {then} (install git, or run "
                       "`git update-index --no-split-index` where git is)")


def blob_data(repo: pygit2.Repository, oid: pygit2.Oid) -> bytes:
    """The bytes of the blob ``oid`` (``ValueError`` if it names another kind of object)."""
    return repo[oid].peel(pygit2.Blob).data


def head_commit(repo: pygit2.Repository) -> pygit2.Commit | None:
    if repo.head_is_unborn:
        return None
    return repo.head.peel(pygit2.Commit)


def refuse_credentials(repo: pygit2.Repository, old: pygit2.Tree | None, root: Path, paths: Iterable[str],
                       exempt: frozenset[str] = frozenset(),
                       edits: dict[str, list[tuple[str, str, Any, Any]]] | None = None) -> None:
    """The in-process pre-commit check: no commit may add a credential that is new
    (``hooks/newsecrets.py``, the check every commit makes).

    ``paths`` are the files to commit, as they are under ``root``. ``edits`` (path ->
    ``(store, key, before, after)``) names the store files a ctx write changed and
    nothing else did since ``old``: only those entries are read. Every other file that
    differs is compared whole with its version in ``old``. A secret the parent commit
    already held is not new; ``exempt`` names entries (``store/key``) and paths whose
    credentials this write was told to keep (``--force``).
    """
    from hooks.newsecrets import Changed, refuse_new
    edits = edits or {}
    changes = []
    for path in paths:
        full = root / path
        if not full.is_file():
            continue  # a deletion adds nothing
        if path in edits:
            changes.append(Changed(path, edits=edits[path], after=full.read_bytes))
            continue
        after = full.read_bytes()
        if b"\0" in after[:8000]:
            continue  # binary: never a file ctx writes
        before = _blob_bytes(repo, old, path)
        if before != after:
            changes.append(Changed(path, before=before, after=after))
    refuse_new(changes, exempt)


def _blob_bytes(repo: pygit2.Repository, tree: pygit2.Tree | None, path: str) -> bytes | None:
    if tree is None:
        return None
    try:
        return blob_data(repo, tree[path].id)
    except (KeyError, ValueError):
        return None


def commit_paths(repo: pygit2.Repository, paths: Iterable[str], message: str,
                 author: Person, committer: Person | None = None, *,
                 scan: bool = True, exempt: frozenset[str] = frozenset(),
                 extra_parents: list[str] | None = None,
                 edits: dict[str, list[tuple[str, str, Any, Any]]] | None = None,
                 untrack: bool = False) -> bool:
    """Commit ``paths`` as they are on disk; False if nothing changed.

    A forbidden path (the lock file, a temporary file) or a link is never staged; with
    ``untrack`` (``ctx doctor``), a forbidden one a manual ``git add`` put in the index
    is taken out (the libgit2 way always does). With ``scan``,
    what the commit adds is checked for credentials first (``refuse_credentials``;
    ``edits`` as it says). git commits where ``_by_git``; libgit2 elsewhere.
    """
    root = Path(repo.workdir)
    wanted = [p for p in dict.fromkeys(paths) if not forbidden(p) and not (root / p).is_symlink()]
    stray = _forbidden_entries(repo, untrack)
    committer = committer or committer_of(machine_identity(repo), author)
    parent = head_commit(repo)
    if scan:
        refuse_credentials(repo, parent.tree if parent is not None else None, root, wanted, exempt, edits)
    if not _by_git(repo):
        try:
            return _commit_libgit2(repo, wanted, stray, message, author, committer, parent, extra_parents)
        except pygit2.GitError as exc:
            raise GitError(f"the repository refused the commit: {exc}") from None
    if stray:
        gitcommit.untrack(root, stray)
    simple = parent is not None and not extra_parents and not stray
    if simple and parent is not None and not any(_differs(repo, parent.tree, root, p) for p in wanted):
        return False  # (asked of git, it would still write .git/COMMIT_EDITMSG)
    simple = simple and not _merge_waits(repo)
    if parent is not None and simple and all(_in_tree(parent.tree, p) for p in wanted):
        return gitcommit.commit(root, wanted, message, author, committer) if wanted else False
    if wanted:
        gitcommit.add(root, wanted)
    try:
        return _commit_staged(repo, root, wanted, message, author, committer, parent, extra_parents, simple)
    except GitError:
        gitcommit.unstage(root, wanted, parent is not None)  # the index as it was: nothing was written
        raise


def _commit_staged(repo: pygit2.Repository, root: Path, wanted: list[str], message: str, author: Person,
                   committer: Person, parent: pygit2.Commit | None, extra_parents: list[str] | None,
                   simple: bool) -> bool:
    if simple:
        return gitcommit.commit(root, wanted, message, author, committer)
    # a first commit, a merge, local state taken out: the tree is the index's
    tree = gitcommit.write_tree(root)
    if parent is not None and str(parent.tree_id) == tree and not extra_parents:
        return False
    parents = ([str(parent.id)] if parent is not None else []) + list(extra_parents or [])
    made = gitcommit.commit_tree(root, tree, parents, message, author, committer, signs(repo))
    subject = message.split("\n", 1)[0]
    kind = "commit (initial)" if not parents else "commit (merge)" if len(parents) > 1 else "commit"
    gitcommit.advance(root, "HEAD", made, str(parent.id) if parent is not None else None, f"{kind}: {subject}")
    return True


def _differs(repo: pygit2.Repository, tree: pygit2.Tree, root: Path, path: str) -> bool:
    """Whether ``path`` on disk is not what ``tree`` holds (by blob id)."""
    full = root / path
    try:
        held = tree[path].id
    except KeyError:
        return full.is_file()
    if not full.is_file():
        return True
    return pygit2.hashfile(str(full)) != held


def _in_tree(tree: pygit2.Tree, path: str) -> bool:
    try:
        tree[path]
        return True
    except KeyError:
        return False


_STAGED_STRAY: dict[str, list[str]] = {}  # work tree -> forbidden paths its last git status named


def _forbidden_entries(repo: pygit2.Repository, everywhere: bool) -> list[str]:
    """Forbidden paths git's index holds (a manual ``git add`` of local state, a pull that
    brought one): taken out. Those HEAD holds, and those ``dirty_paths`` saw staged; with
    ``everywhere``, all the index holds (``git ls-files``: libgit2 cannot read every index).
    The libgit2 way takes them out of its index itself."""
    if not _by_git(repo):
        return []
    if everywhere:
        return sorted(p for p in gitcommit.tracked(repo.workdir) if forbidden(p))
    out = set(_STAGED_STRAY.pop(repo.workdir, []))
    head = head_commit(repo)
    stack = [("", head.tree)] if head is not None else []
    while stack:
        prefix, tree = stack.pop()
        for entry in tree:
            path = prefix + (entry.name or "")
            if entry.type_str == "tree":
                stack.append((path + "/", repo[entry.id].peel(pygit2.Tree)))
            elif forbidden(path):
                out.add(path)
    return sorted(out)


def _commit_libgit2(repo: pygit2.Repository, paths: list[str], stray: list[str], message: str,
                    author: Person, committer: Person, parent: pygit2.Commit | None,
                    extra_parents: list[str] | None) -> bool:
    """The commit through libgit2, where git is not on PATH (or ``CTX_GIT_SLOW``)."""
    _refuse_what_libgit2_cannot(repo)
    root = Path(repo.workdir)
    index = repo.index
    index.read(True)  # drop what an earlier, refused attempt staged in memory
    for path in paths:
        if (root / path).is_file():
            index.add(path)
        elif path in index:
            index.remove(path)
    for entry in list(index):
        if forbidden(entry.path):
            index.remove(entry.path)
    tree = index.write_tree()
    if parent is not None and parent.tree_id == tree and not extra_parents:
        _retry(index.write, "updating the index")
        return False
    if parent is None and len(repo[tree].peel(pygit2.Tree)) == 0:
        return False
    parents = ([parent.id] if parent is not None else []) + [pygit2.Oid(hex=p) for p in extra_parents or []]
    _wait_for_index(Path(repo.path))  # no commit unless its index can follow it
    _retry(lambda: repo.create_commit("HEAD", _libgit2(author), _libgit2(committer), message, tree, parents),
           "committing")
    try:
        _retry(index.write, "updating the index")
    except GitError:
        pass  # the commit stands; the next write finds the index behind and sets it right
    return True


def signs(repo: pygit2.Repository) -> bool:
    """Whether git is told to sign commits here (``commit.gpgsign``)."""
    try:
        return "commit.gpgsign" in repo.config and repo.config.get_bool("commit.gpgsign")
    except (pygit2.GitError, ValueError):
        return False


def create_signed(repo: pygit2.Repository, author: pygit2.Signature, committer: pygit2.Signature,
                  message: str, tree: pygit2.Oid, parents: list) -> pygit2.Oid:
    """A commit object signed by git as its settings say (``git commit-tree``); no ref
    moves. Where git is missing: GitError naming ``commit.gpgsign`` (libgit2 cannot sign)."""
    if gitcommit.program() is None:
        _refuse_what_libgit2_cannot(repo)
    made = gitcommit.commit_tree(repo.workdir, str(tree), [str(p) for p in parents], message,
                                 Person(author.name, author.email, author.time, author.offset),
                                 Person(committer.name, committer.email, committer.time, committer.offset), True)
    return pygit2.Oid(hex=made)
