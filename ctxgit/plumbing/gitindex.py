"""git's index and branch outside the write path: set to a commit the write path did not
make (a fast-forward to what a remote brought, a purge's rewritten history), and the
index read (``ctx doctor``).

Through git where it is on PATH (``git read-tree``, ``git update-ref``: the index in
the form git's settings give it, one reflog line for the branch and HEAD); through
libgit2 where it is not, a split index refused before anything is written
(``repo.refuse_split_index``). tests/git/test_git_settings.py holds both.
"""

from __future__ import annotations

import pygit2

from ctx.errors import GitError
from ctxgit.plumbing import gitcommit
from ctxgit.plumbing.repo import refuse_split_index


def refuse_what_libgit2_cannot(repo: pygit2.Repository) -> None:
    """Where git is not on PATH, GitError naming a setting that stops ``index_to`` (call
    before the files change)."""
    if gitcommit.program() is None:
        refuse_split_index(repo)


def index_to(repo: pygit2.Repository, tree: pygit2.Oid) -> None:
    """The index holds exactly ``tree``'s files; the work tree is not touched."""
    if gitcommit.program() is not None:
        gitcommit.read_tree(repo.workdir, str(tree))
        return
    refuse_split_index(repo)
    try:
        index = repo.index
        index.read(True)
        index.read_tree(repo[tree].peel(pygit2.Tree))
        index.write()
    except (pygit2.GitError, OSError) as exc:
        raise GitError(f"updating the index: {exc}") from None


def tracked(repo: pygit2.Repository) -> list[str]:
    """Every path the index holds (GitError where it cannot be read: its reason)."""
    if gitcommit.program() is not None:
        return gitcommit.tracked(repo.workdir)
    refuse_split_index(repo, "ctx cannot read it")
    try:
        return [entry.path for entry in pygit2.Index(f"{repo.path}/index")]
    except (pygit2.GitError, OSError, ValueError) as exc:
        raise GitError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None


def move_branch(repo: pygit2.Repository, ref: str, new: pygit2.Oid, old: pygit2.Oid | None, log: str) -> None:
    """``set_ref``, then HEAD names ``ref`` if it named another branch."""
    set_ref(repo, ref, new, old, log)
    name_branch(repo, ref, log)


def set_ref(repo: pygit2.Repository, ref: str, new: pygit2.Oid, old: pygit2.Oid | None, log: str) -> None:
    """``ref`` to ``new`` if it is still at ``old`` (None: it does not exist yet), logged as
    ``log`` (GitError naming a lock file in the way: ``locks.locked_file`` reads it)."""
    if gitcommit.program() is not None:
        gitcommit.advance(repo.workdir, ref, str(new), str(old) if old is not None else None, log)
        return
    try:
        repo.create_reference_direct(ref, new, True, log)
    except (pygit2.GitError, OSError) as exc:  # a locked ref comes as OSError
        raise GitError(f"moving {ref}: {exc}") from None


def name_branch(repo: pygit2.Repository, ref: str, log: str) -> None:
    """HEAD names the branch ``ref`` (born or not), if it named another."""
    if _head_name(repo) == ref:
        return
    if gitcommit.program() is not None:
        gitcommit.point_head(repo.workdir, ref, log)
        return
    try:
        repo.references.create("HEAD", ref, force=True)
    except (pygit2.GitError, OSError) as exc:
        raise GitError(f"pointing HEAD at the branch: {exc}") from None


def _head_name(repo: pygit2.Repository) -> str | None:
    """The branch HEAD names (born or not), None when it is detached."""
    try:
        head = repo.references["HEAD"]
    except (KeyError, pygit2.GitError):
        return None
    target = head.target
    return target if isinstance(target, str) else None


def branch_at(repo: pygit2.Repository, ref: str) -> pygit2.Oid | None:
    """Where ``ref`` points now, None when it does not exist."""
    try:
        target = repo.references[ref].target
    except (KeyError, pygit2.GitError):
        return None
    return target if isinstance(target, pygit2.Oid) else None
