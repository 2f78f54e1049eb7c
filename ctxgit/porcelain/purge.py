"""``ctx purge``: remove one entry from the whole history, for a secret that slipped in.

Every commit is rewritten with the entry cut out of its store file (the
other entries' bytes stay exactly as they were), authors and dates kept,
and any commit message that quoted the entry's value scrubbed; a signed commit
is signed again by this machine when git is told to sign (an unsigned one stays
unsigned: a rewrite never vouches for what nobody signed). Then the old
commits are made unreachable and pruned, so ``git log -p --all`` no longer
finds the value. Remotes and old clones still hold it: the caller is told.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2
from pygit2.enums import SortMode

from ctx import progress
from ctx.context import Context
from ctx.errors import GitError, NotFound, StoreError
from ctx.model import json_text
from ctx.storage.files import atomic_write
from ctx.storage.lock import context_lock
from ctx.storage.textlayout import read_entry, remove_entry, serialize
from ctxgit.gitfiles.layout import BRANCH_REF
from ctxgit.plumbing import gitcommit, gitindex
from ctxgit.plumbing.gitcommit import Person
from ctxgit.plumbing.gitenv import clean_git_env
from ctxgit.plumbing.repo import create_signed, open_repo, signs


@dataclass
class PurgeResult:
    rewritten: int
    old_head: str
    new_head: str
    pruned: bool
    first: str | None = None
    notes: list[str] = field(default_factory=list)


def cut_entry(data: bytes, key: str) -> tuple[bytes, Any]:
    """The store file's bytes without ``key``'s entry, and the entry removed (None,
    with ``data`` as it was, when it has none).

    In ctx's layout only the entry's own text is cut out
    (``textlayout.remove_entry``): every other byte stays, and the bytes are
    those a write of the file without the entry would leave. Any other layout
    (or a cut the file, parsed again, still holds the key in: another spelling
    of it) is parsed and written whole by the store serializer.
    """
    removed = read_entry(data, key)
    if removed is None:
        return data, None
    cut = remove_entry(data, key)
    if cut is not None and key not in json.loads(cut).get("entries", {}):
        return cut, removed
    parsed = json.loads(data)
    removed = parsed["entries"].pop(key)
    return serialize(parsed), removed


def _quotes(entry: dict) -> set[str]:
    """The texts of an entry that a commit message may have quoted."""
    out = set()
    for name in ("value", "derivation", "status_note"):
        value = entry.get(name)
        if value is None:
            continue
        text = value if isinstance(value, str) else json_text(value)
        out.add(text)
        out.update(line for line in text.splitlines() if len(line) >= 8)
        words = " ".join(text.split())
        out.add(words)
        out.update(words[:n] for n in range(8, min(len(words), 80) + 1, 1))
    return {q for q in out if len(q) >= 6}


def _replace_blob(repo: pygit2.Repository, tree: pygit2.Tree, path: str, blob: pygit2.Oid) -> pygit2.Oid:
    head, _, rest = path.partition("/")
    builder = repo.TreeBuilder(tree)
    if rest:
        sub = repo[tree[head].id].peel(pygit2.Tree)
        builder.insert(head, _replace_blob(repo, sub, rest, blob), pygit2.enums.FileMode.TREE)
    else:
        builder.insert(head, blob, tree[head].filemode)
    return builder.write()


def purge(ctx: Context, key: str, store: str) -> PurgeResult:
    root = ctx.root
    path = f"memory/{store}.json"
    with context_lock(root):
        ctx.recorder.prepare()
        repo = open_repo(root)
        if repo is None or repo.head_is_unborn:
            raise NotFound(f"the context at {root} has no history")
        gitindex.refuse_what_libgit2_cannot(repo)  # (before any commit is rewritten)
        old_head = repo.head.peel(pygit2.Commit).id
        how = signs(repo)  # a signed commit is signed again when rewritten (by git)
        commits = list(repo.walk(old_head, SortMode.TOPOLOGICAL | SortMode.REVERSE))
        mapping: dict[pygit2.Oid, pygit2.Oid] = {}
        cut_cache: dict[pygit2.Oid, pygit2.Oid] = {}
        quotes: set[str] = set()
        rewritten = 0
        first = None
        for number, commit in enumerate(commits, 1):
            if number % 100 == 0:
                progress.count(number, len(commits), "rewriting commits")
            tree = commit.tree
            new_tree_id = tree.id
            try:
                blob = tree[path]
            except KeyError:
                blob = None
            if isinstance(blob, pygit2.Blob):
                if blob.id not in cut_cache:
                    data, removed = cut_entry(blob.data, key)
                    cut_cache[blob.id] = repo.create_blob(data) if removed is not None else blob.id
                    if isinstance(removed, dict):
                        quotes |= _quotes(removed)
                if cut_cache[blob.id] != blob.id:
                    new_tree_id = _replace_blob(repo, tree, path, cut_cache[blob.id])
            message = commit.message
            for quote in sorted(quotes, key=len, reverse=True):
                if quote in message:
                    message = message.replace(quote, "[purged]")
            parents = [mapping.get(p, p) for p in commit.parent_ids]
            if new_tree_id == tree.id and message == commit.message and parents == list(commit.parent_ids):
                mapping[commit.id] = commit.id
                continue
            first = first or str(commit.id)
            mapping[commit.id] = _rewritten(repo, commit, message, new_tree_id, parents,
                                            how and bool(commit.gpg_signature[0]))
            rewritten += 1
        if first is None:
            raise NotFound(f"no entry {key!r} in {store!r} anywhere in the history")
        new_head = mapping[old_head]
        # the file on disk and the index follow the rewritten HEAD; the branch moves last
        disk = root / path
        before = disk.read_bytes() if disk.is_file() else None
        try:
            if before is not None:
                data, removed = cut_entry(before, key)
                if removed is not None:
                    atomic_write(disk, data)
            gitindex.index_to(repo, repo[new_head].peel(pygit2.Commit).tree_id)
            gitindex.move_branch(repo, BRANCH_REF, new_head, old_head, f"purge: {store}/{key} cut from the history")
        except Exception:
            _put_back(repo, disk, before, old_head)
            raise
        progress.step("pruning the old commits (git gc)")
        pruned = _prune(root)
    notes = ["remotes still hold the old commits: push with --force to replace them",
             "clones made before now still hold the value: re-clone them"]
    if not pruned:
        notes.insert(0, "git was not found: the old objects stay on disk until `git gc --prune=now`")
    return PurgeResult(rewritten, str(old_head), str(new_head), pruned, first, notes)


def _rewritten(repo: pygit2.Repository, commit: pygit2.Commit, message: str, tree: pygit2.Oid,
               parents: list[pygit2.Oid], sign: bool) -> pygit2.Oid:
    """``commit`` again with ``tree``, ``parents`` and ``message``, its author and committer
    kept: made by git where it is on PATH (signed again when ``sign``), else by libgit2."""
    if sign:
        return create_signed(repo, commit.author, commit.committer, message, tree, parents)
    if gitcommit.program() is None:
        return repo.create_commit(None, commit.author, commit.committer, message, tree, parents)
    author, committer = (Person(s.name, s.email, s.time, s.offset) for s in (commit.author, commit.committer))
    made = gitcommit.commit_tree(repo.workdir, str(tree), [str(p) for p in parents], message, author,
                                 committer, False)
    return pygit2.Oid(hex=made)


def _put_back(repo: pygit2.Repository, disk: Path, before: bytes | None, head: pygit2.Oid) -> None:
    """A purge that failed before its branch moved: the store file and the index as they were
    (never raises: the failure is the one said)."""
    try:
        if before is not None:
            atomic_write(disk, before)
        gitindex.index_to(repo, repo[head].peel(pygit2.Commit).tree_id)
    except (GitError, OSError, StoreError):
        pass


def _prune(root: Path) -> bool:
    git = shutil.which("git")
    if git is None:
        return False
    for orig in ("ORIG_HEAD", "FETCH_HEAD"):
        (root / ".git" / orig).unlink(missing_ok=True)
    env = clean_git_env()
    for args in (["reflog", "expire", "--expire=now", "--all"], ["gc", "--prune=now", "--quiet"]):
        # stdin: never ctx's own (git's pack-objects reads revisions from it, whatever it holds)
        result = subprocess.run([git, "-C", str(root), *args], env=env, capture_output=True, text=True,
                                stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise GitError(f"git {' '.join(args)}: {result.stderr.strip()}")
    return True
