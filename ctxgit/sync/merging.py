"""Taking in what a fetch brought: fast-forward, or merge entry by entry, or wait.

Under the context lock, after the recorder committed any outside change:
when this side has nothing of its own, ``main`` fast-forwards; otherwise the
two trees merge (``treemerge``) and the merge is committed with both parents
through the one write path. A text file both sides changed on the same lines
is never committed with conflict markers: the merge waits for a human
(``waiting.py``), or, for auto-sync, is not started at all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from ctx.changes import Edit, Outcome
from ctx.context import Context
from ctx.errors import Conflict, GitError, NotFound, StoreError
from ctx.model import STORES
from ctx.storage.files import StoreFile, atomic_write
from ctx.storage.lock import context_lock
from ctxgit.gitfiles import waiting
from ctxgit.gitfiles.layout import BRANCH_REF
from ctxgit.plumbing import gitindex
from ctxgit.plumbing.repo import existing_repo
from ctxgit.porcelain.commits import entries_at
from ctxgit.sync import incoming
from ctxgit.sync.arrived import Arrived, refuse_weaker, what_arrived
from ctxgit.sync.treemerge import flatten, merge_trees

LOCAL_REF = BRANCH_REF


@dataclass
class PullResult:
    kind: str  # "up to date", "fast-forward", "merge", "nothing to pull", "conflict"
    commit: str | None = None
    value_conflicts: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    text_conflicts: list[str] = field(default_factory=list)
    entries: int = 0
    received: int = 0            # commits this side did not have
    remote_head: str | None = None  # the remote's main as fetched
    waiting: bool = False        # text_conflicts wait in the work tree for a human
    remote: str | None = None    # the remote's name
    arrived: Arrived = field(default_factory=Arrived)  # besides entries: RULES.md, deletions, config

    def add(self, later: PullResult) -> PullResult:
        """This pull and a later one (a sync that pulled again), as one report."""
        kinds = ("conflict", "merge", "fast-forward", "up to date", "nothing to pull")
        kind = min((self.kind, later.kind), key=lambda k: kinds.index(k) if k in kinds else len(kinds))
        return PullResult(kind, later.commit or self.commit, self.value_conflicts + later.value_conflicts,
                          self.renamed + later.renamed, later.text_conflicts, self.entries + later.entries,
                          self.received + later.received, later.remote_head, later.waiting,
                          later.remote or self.remote, self.arrived.add(later.arrived))


def count_commits(repo: pygit2.Repository, tip: pygit2.Oid, known: pygit2.Oid | None) -> int:
    """Commits reachable from ``tip`` and not from ``known``."""
    walker = repo.walk(tip, pygit2.enums.SortMode.NONE)
    if known is not None:
        try:
            walker.hide(known)
        except (KeyError, ValueError, pygit2.GitError):
            pass
    return sum(1 for _ in walker)


def fast_forward(ctx: Context, repo: pygit2.Repository, target: pygit2.Oid, whole: bool = False,
                 read: dict[str, bytes] | None = None, why: str = "pull") -> None:
    """Move ``main`` to ``target``, which passed ``incoming.check``: the files change first,
    then git's index (``gitindex.index_to``), then the ref, last, in one reflog line ``why:
    fast-forward``. A failure before the ref moved puts the files and the index back as
    they were; a kill leaves changes the next write commits, never a lost one
    (tests/git/test_git_settings.py, tests/git/test_sync.py). ``whole``: every file of
    ``target`` is written (a clone's work tree is empty, whatever its HEAD says). ``read``:
    files of ``target`` read already, by path (``incoming.Received.raw``: a big store file
    is unpacked once)."""
    read = read or {}
    gitindex.refuse_what_libgit2_cannot(repo)  # (a split index without git: before any file changes)
    head = None if whole or repo.head_is_unborn else repo.head.peel(pygit2.Commit)
    new_tree = repo[target].peel(pygit2.Commit).tree
    if head is not None:  # only what changed is read and written: a big store once
        paths = _changed_paths(repo, head.tree, new_tree)
        new = {p: read[p] if p in read else repo[new_tree[p].id].peel(pygit2.Blob).data
               for p in paths if _in_tree(new_tree, p)}
        old = {p: None for p in paths}
    else:
        new = flatten(repo, new_tree, "the remote")
        old = {}
    was = gitindex.branch_at(repo, LOCAL_REF)
    written: dict[str, bytes | None] = {}  # each file changed, as it was without a HEAD
    indexed = False
    try:
        for path in sorted(set(old) | set(new)):
            full = ctx.root / path
            written[path] = _on_disk(full) if head is None else None
            if path in new:
                full.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                atomic_write(full, new[path])
            else:
                full.unlink(missing_ok=True)
        gitindex.index_to(repo, new_tree.id)
        indexed = True
        gitindex.move_branch(repo, LOCAL_REF, target, was, f"{why}: fast-forward")
    except Exception:
        _put_back(ctx, repo, written, head, indexed)
        raise


def _held(repo: pygit2.Repository, commit: pygit2.Commit, path: str) -> bytes | None:
    tree = commit.tree
    return repo[tree[path].id].peel(pygit2.Blob).data if _in_tree(tree, path) else None


def _on_disk(full: Path) -> bytes | None:
    try:
        return full.read_bytes() if full.is_file() and not full.is_symlink() else None
    except OSError:
        return None


def _put_back(ctx: Context, repo: pygit2.Repository, written: dict[str, bytes | None],
              head: pygit2.Commit | None, indexed: bool) -> None:
    """A fast-forward that failed undone: the files as ``head`` has them (None: as they were
    on disk, ``written``), the index too when it was changed; never raises (the failure is
    the one said)."""
    for path, data in written.items():
        full = ctx.root / path
        try:
            if head is not None:
                data = _held(repo, head, path)
            if data is None:
                full.unlink(missing_ok=True)
            else:
                atomic_write(full, data)
        except (OSError, StoreError):
            pass
    if indexed and head is not None:
        try:
            gitindex.index_to(repo, head.tree_id)
        except GitError:
            pass


def _in_tree(tree: pygit2.Tree, path: str) -> bool:
    try:
        return tree[path].filemode != pygit2.enums.FileMode.TREE
    except KeyError:
        return False


def _changed_paths(repo: pygit2.Repository, old: pygit2.Tree, new: pygit2.Tree) -> list[str]:
    """Files that differ between two trees (added, removed, changed), not forbidden ones."""
    from hooks.unsafe_paths import forbidden
    paths: set[str] = set()
    for delta in old.diff_to_tree(new).deltas:
        for path in (delta.old_file.path, delta.new_file.path):
            if path and not forbidden(path):
                paths.add(path)
    return sorted(paths)


def integrate(ctx: Context, label: str, theirs: pygit2.Oid | None, auto: bool = False,
              lock_wait: float | None = None, accept_weaker: bool = False) -> PullResult:
    """Take in ``theirs`` (the fetched remote main): fast-forward, merge, or wait.
    A commit turning a protection off is refused first unless ``accept_weaker``
    (``arrived.refuse_weaker``); what arrived besides entries is in ``arrived``."""
    if theirs is None:
        return PullResult("nothing to pull")
    with context_lock(ctx.root, lock_wait):
        ctx.recorder.prepare()  # outside edits become a commit of their own first
        repo = existing_repo(ctx.root)
        if repo.head_is_unborn:
            received = count_commits(repo, theirs, None)
            checked = incoming.check(repo, theirs, None)  # before anything is written
            fast_forward(ctx, repo, theirs, read=checked.raw)
            return PullResult("fast-forward", str(theirs), received=received, remote_head=str(theirs))
        head_commit = repo.head.peel(pygit2.Commit)
        head = head_commit.id
        if head == theirs or repo.descendant_of(head, theirs):
            return PullResult("up to date", str(head), remote_head=str(theirs))
        received = count_commits(repo, theirs, head)
        checked = incoming.check(repo, theirs, head)  # before anything is written, merge or fast-forward
        refuse_weaker(repo, theirs, head, label, accept_weaker)
        if repo.descendant_of(theirs, head):
            fast_forward(ctx, repo, theirs, read=checked.raw)
            result = PullResult("fast-forward", str(theirs), received=received, remote_head=str(theirs))
        else:
            result = merge_into(ctx, theirs, label, auto, received=checked)
            result.received, result.remote_head = received, str(theirs)
        if result.kind in ("fast-forward", "merge"):
            after = existing_repo(ctx.root).head.peel(pygit2.Commit).tree
            result.arrived = what_arrived(repo, head_commit.tree, after, theirs, head, checked.keys)
        return result


def merge_into(ctx: Context, theirs: pygit2.Oid, label: str, auto: bool = False,
               resolved: dict[str, bytes | None] | None = None,
               received: incoming.Received | None = None) -> PullResult:
    """Merge commit ``theirs`` into ``main`` through the one write path. A text conflict
    is not committed: the merge waits for a human (``auto``: it is not started at all).
    ``resolved``: the files a human merged (``ctx sync --continue``), taken as they are.
    ``received``: what ``incoming.check`` read and parsed of ``theirs`` and the merge base
    (a store file changed on both sides is parsed once, by the guard)."""
    result = PullResult("merge")

    def mutate(stores: dict[str, StoreFile]) -> Outcome:
        repo = existing_repo(ctx.root)
        ours = repo.head.peel(pygit2.Commit)
        their_commit = repo[theirs].peel(pygit2.Commit)
        base_id = repo.merge_base(ours.id, their_commit.id)
        base = repo[base_id].peel(pygit2.Commit) if base_id is not None else None
        blobs: dict = dict(received.blobs) if received is not None else {}  # contents by blob id, read once
        # this side's store files as the write path read and parsed them: not again
        local = {f"memory/{name}.json": (store.raw, store.data) for name, store in stores.items()
                 if store.exists and store.raw}
        merged = merge_trees(repo, base.tree if base else None, ours.tree, their_commit.tree, blobs, local,
                             received.parsed if received is not None else None)
        by_hand = sorted(resolved or {})
        for path, chosen in sorted((resolved or {}).items()):
            if chosen is None:
                merged.files.pop(path, None)
            else:
                merged.files[path] = chosen
        conflicts = [p for p in merged.text_conflicts if p not in by_hand]
        result.value_conflicts = merged.value_conflicts
        result.renamed = merged.renamed
        result.text_conflicts = conflicts
        if conflicts:  # never committed, never pushed: a human merges these
            result.kind = "conflict"
            result.value_conflicts, result.renamed = [], []
            if not auto:
                waiting.begin(ctx.root, str(theirs), label, {p: merged.files[p] for p in conflicts})
                result.waiting = True
            return Outcome([])
        edits: list[Edit] = []
        for name, store in stores.items():
            path = f"memory/{name}.json"
            if path not in merged.files:
                continue  # a store file removed outside ctx on one side stays here
            # the file on disk is ours (prepare committed every outside change)
            if store.exists and merged.files[path] == store.raw:
                continue  # this side's file is the merge's
            before = dict(store.entries) if store.exists else entries_at(repo, ours, name)
            data = merged.stores.get(path)
            if data is None:
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
            if ours_files.get(path) != merged.files.get(path) or path in by_hand:
                files_to_write[path] = merged.files.get(path)
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
        if by_hand:
            lines.append("")
            lines += [f"{p}: both sides changed the same lines; merged by hand" for p in by_hand]
        trailers = [("Ctx-Merge-Of", str(theirs))]
        trailers += [("Ctx-Conflict", key) for key in merged.value_conflicts]
        return Outcome(edits, dict(files_to_write), [str(theirs)], "\n".join(lines), trailers, splice=False,
                       raw=prepared)

    files_to_write: dict[str, bytes | None] = {}
    prepared: dict[str, bytes] = {}
    ctx.transact("merge", STORES, mutate)
    if result.kind == "merge":
        result.commit = str(existing_repo(ctx.root).head.target)
    return result


# --- a merge that waits: continue, abort ----------------------------------------------------

def continue_merge(ctx: Context) -> tuple[PullResult, list[str]]:
    """Commit the waiting merge with the files as the human left them (no markers any
    more); the result and those files."""
    found = waiting.read(ctx.root)
    if found is None:
        raise NotFound("no merge waits here: nothing to continue (`ctx sync` syncs)")
    marked = [p for p in found.paths if (ctx.root / p).is_file()
              and waiting.marker_lines((ctx.root / p).read_bytes())]
    if marked:
        raise Conflict(f"{', '.join(marked)} still holds conflict markers: {found.next_step()}")
    repo = existing_repo(ctx.root)
    theirs = pygit2.Oid(hex=found.theirs)
    if repo.descendant_of(repo.head.target, theirs) or repo.head.target == theirs:
        waiting.clear(ctx.root)  # merged already (a run stopped before it cleared the state)
        return PullResult("up to date", str(repo.head.target)), found.paths
    incoming.check(repo, theirs, repo.head.peel(pygit2.Commit).id)  # as at the merge's start: merge.json is a file
    resolved = {p: (ctx.root / p).read_bytes() if (ctx.root / p).is_file() else None for p in found.paths}
    result = merge_into(ctx, theirs, found.label, resolved=resolved)
    if result.kind == "merge":
        waiting.clear(ctx.root)
    return result, found.paths


def abort_merge(ctx: Context) -> list[str]:
    """Drop the waiting merge: its files back as this machine last committed them."""
    found = waiting.read(ctx.root)
    if found is None:
        raise NotFound("no merge waits here: nothing to abort")
    with context_lock(ctx.root):
        repo = existing_repo(ctx.root)
        tree = None if repo.head_is_unborn else repo.head.peel(pygit2.Commit).tree
        for path in found.paths:
            full = ctx.root / path
            if tree is not None and _in_tree(tree, path):
                atomic_write(full, repo[tree[path].id].peel(pygit2.Blob).data)
            else:
                full.unlink(missing_ok=True)
        waiting.clear(ctx.root)
    return found.paths
