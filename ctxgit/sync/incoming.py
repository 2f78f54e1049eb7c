"""The one guarded way for commits to arrive: every path a remote brings is checked here
before anything is written (fast-forward, merge, pull, clone, a joined context).

A remote is data, not code. Each commit received (each one this side does not
have) is compared with its first parent, or taken whole when it has none, and
every tree entry it adds or changes must be:

- a name git itself would check out: not empty, not ``.`` or ``..``, not ``.git``
  in any case, with trailing dots or spaces, or as the NTFS short name ``git~1``,
  no NUL, no backslash (a path is never absolute: its names hold no ``/``);
- a directory, or a regular file (mode 100644 or 100755: never a link, a gitlink
  or another mode), whose blob is present;
- a file a context holds (``layout.holds``): the lock file and the temporary files
  a careless remote carries are let pass and never written (``unsafe_paths``);
- no larger than the bound for its kind (``BOUNDS``).

Then each store file the tip changed against the side already here (this side's
head, or the merge base) is read as a merge reads it (``entrymerge.parse``) and
its changed entries checked by ``ctx.arrival``. A bad commit is refused whole
(``Conflict``: exit 4), by its short id and the path or store/key, nothing
written. ``tests/reliability/test_hostile_remote.py`` holds each rule.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field

import pygit2
from pygit2.enums import FileMode, ObjectType

from ctx import arrival
from ctx.display import name
from ctx.entrymerge import parse as parse_store_side
from ctx.errors import Conflict
from ctx.storage import piecewise
from ctxgit.gitfiles.layout import holds
from ctxgit.sync import verified
from hooks.unsafe_paths import forbidden

REGULAR = (FileMode.BLOB, FileMode.BLOB_EXECUTABLE)
MiB = 1 << 20
# the largest file of each kind taken from a remote: a store of 100,000 entries is ~50 MB
BOUNDS: dict[str, int] = {"store": 128 * MiB, "sessions": 1 * MiB, "RULES.md": 1 * MiB,
                          "config.json": 64 * 1024, ".gitignore": 64 * 1024, ".gitattributes": 64 * 1024}
SIDE = "the remote"
LINE = 256  # received commits followed parent by parent before git's walk is asked


def bound(path: str) -> int:
    """The size bound of a file a context holds."""
    if path.startswith("memory/"):
        return BOUNDS["store"]
    if path.startswith("sessions/"):
        return BOUNDS["sessions"]
    return BOUNDS[path]


def unsafe_name(name: str) -> str | None:
    """Why git would never check out a tree entry named ``name``, or None (git's
    ``verify_path``: its ``.git`` rules for every file system it knows)."""
    if not name:
        return "has an empty name"
    if name in (".", ".."):
        return f"has a {name!r} in its path"
    if "\0" in name or "\\" in name or "/" in name:
        return "has a NUL, a backslash or a slash in a name"
    folded = name.lower().rstrip(". ")
    if folded == ".git" or folded == "git~1":
        return "names a .git directory"
    return None


def refuse_mode(path: str, mode: int, side: str = SIDE) -> None:
    """A link, a gitlink or any mode but a regular file's is refused."""
    if mode not in REGULAR:
        raise Conflict(f"{name(path)} from {side} is not a regular file (mode {mode:o}); "
                       "ctx refuses links and special files from a remote")


@dataclass
class Received:
    """What the guard read of what it found in order."""

    raw: dict[str, bytes] = field(default_factory=dict)    # path -> its bytes (read once: fast_forward)
    blobs: dict[pygit2.Oid, bytes] = field(default_factory=dict)   # blob -> its bytes, when parsed whole
    parsed: dict[pygit2.Oid, dict] = field(default_factory=dict)   # blob -> its parse (read once: the merge)
    # store blob -> its entry keys in order, as the whole parse reads them (the tip's and the base's,
    # proved or parsed here): the announcements count deletions from them (``arrived.what_arrived``)
    keys: dict[pygit2.Oid, list[str]] = field(default_factory=dict)


def check(repo: pygit2.Repository, tip: pygit2.Oid, known: pygit2.Oid | None, *,
          now: float | None = None) -> Received:
    """Check every commit reachable from ``tip`` and not from ``known`` (this side's head;
    None when this side has no commit), then the tip's changed entries; ``Conflict``
    for the first thing wrong. ``now``: this machine's time, in epoch seconds (tests)."""
    received, descends = _received(repo, tip, known)
    stores: set[str] = set()
    commits: list[pygit2.Commit] = []
    # trees read, by id, and each received commit's tree id: a commit's trees are most often its
    # child's parent trees (the next commit here), read once (bench/guard.py)
    seen: dict[pygit2.Oid, pygit2.Tree] = {}
    tree_of: dict[pygit2.Oid, pygit2.Oid] = {}
    for commit in received:
        commits.append(commit)
        tree_of[commit.id] = commit.tree_id
        parent = None
        if commit.parent_ids:
            parent_tree = tree_of.get(commit.parent_ids[0])
            parent = _tree(repo, parent_tree, seen) if parent_tree is not None else None
            if parent is None:
                parent = commit.parents[0].tree
                tree_of[commit.parent_ids[0]], seen[parent.id] = parent.id, parent  # (known's, most often)
        tree = _tree(repo, commit.tree_id, seen)
        try:
            _compare(repo, parent, commit.tree if tree is None else tree, "", stores, seen)
        except _Bad as bad:
            raise Conflict(f"{bad.path} from {SIDE} {bad.why} (commit {str(commit.id)[:10]}); "
                           "ctx refused the commit whole: nothing here changed") from None
    trees = _Trees(repo, seen, tree_of)
    return _check_entries(repo, tip, known, sorted(stores), commits, now, descends, trees)


@dataclass
class _Trees:
    """Commits' trees read already (the walk's), by commit id."""

    repo: pygit2.Repository
    seen: dict[pygit2.Oid, pygit2.Tree]
    tree_of: dict[pygit2.Oid, pygit2.Oid]

    def of(self, commit: pygit2.Oid) -> pygit2.Tree:
        tree_id = self.tree_of.get(commit)
        found = self.seen.get(tree_id) if tree_id is not None else None
        return found if found is not None else self.repo[commit].peel(pygit2.Commit).tree


def _received(repo: pygit2.Repository, tip: pygit2.Oid, known: pygit2.Oid | None) -> tuple[list[pygit2.Commit], bool]:
    """The commits reachable from ``tip`` and not from ``known``, parents first, and whether
    ``tip`` descends from ``known``. A line of single-parent commits down to ``known`` (a
    fast-forward's, most often) is followed as it is; any other history is git's walk."""
    if tip == known:
        return [], False
    line: list[pygit2.Commit] = []
    try:
        commit = repo[tip]
        while isinstance(commit, pygit2.Commit) and len(line) < LINE:
            line.append(commit)
            parents = commit.parent_ids
            if len(parents) != 1:
                if known is None and not parents:
                    return line[::-1], False  # the root: the whole history, one line
                break  # a merge, or a root that is not ``known``'s (histories apart): git walks it
            if parents[0] == known:
                return line[::-1], True
            commit = repo[parents[0]]
    except (KeyError, ValueError, pygit2.GitError):
        pass  # git's walk says what is wrong
    walker = repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    if known is not None:
        walker.hide(known)
    commits = list(walker)
    # a commit received whose parent is ``known`` is on a path from the tip down to it, and
    # every such path has one (the commit just above ``known`` is not reachable from it)
    return commits, known is not None and any(known in commit.parent_ids for commit in commits)


class _Bad(Exception):
    def __init__(self, path: str, why: str) -> None:
        super().__init__(why)
        self.path, self.why = name(path), why


def _tree(repo: pygit2.Repository, oid: pygit2.Oid, seen: dict[pygit2.Oid, pygit2.Tree]) -> pygit2.Tree | None:
    """The tree ``oid`` (read once: ``seen``), or None when it is missing or not a tree."""
    found = seen.get(oid)
    if found is None:
        got = repo.get(oid)
        if isinstance(got, pygit2.Tree):
            seen[oid] = found = got
    return found


def _compare(repo: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree, prefix: str,
             stores: set[str], seen: dict[pygit2.Oid, pygit2.Tree]) -> None:
    """The entries of ``new`` that ``old`` (the parent's tree here) lacks or holds otherwise."""
    before = {item.name: item for item in old} if old is not None else {}
    for item in new:
        name = item.name or ""
        was = before.get(name)
        if was is not None and was.id == item.id and was.filemode == item.filemode:
            continue
        path = prefix + name
        why = unsafe_name(name)
        if why:
            raise _Bad(path, why)
        if item.filemode == FileMode.TREE:
            sub = _tree(repo, item.id, seen)
            if sub is None:
                raise _Bad(path, "is a directory whose tree is missing")
            older = _tree(repo, was.id, seen) if was is not None and was.filemode == FileMode.TREE else None
            _compare(repo, older, sub, path + "/", stores, seen)
            continue
        if forbidden(path):
            continue  # local state a remote carried by mistake: never written (fast_forward, flatten)
        if item.filemode not in REGULAR:
            raise _Bad(path, f"is not a regular file (mode {item.filemode:o}): a link or a special file")
        if not holds(path):
            raise _Bad(path, "is not a file a context holds (memory/<store>.json, RULES.md, "
                             "sessions/*.md, config.json, .gitignore, .gitattributes)")
        try:
            kind, size = repo.odb.read_header(item.id)
        except (KeyError, pygit2.GitError):
            raise _Bad(path, "has no content here (its blob is missing)") from None
        if kind != ObjectType.BLOB:
            raise _Bad(path, "is not a file's content (not a blob)")
        if size > bound(path):
            raise _Bad(path, f"is {size:,} bytes, over the {bound(path):,} a context takes for it")
        if path.startswith("memory/"):
            stores.add(path)


def _blob_at(repo: pygit2.Repository, tree: pygit2.Tree | None, path: str) -> pygit2.Oid | None:
    if tree is None:
        return None
    try:
        item = tree[path]
    except KeyError:
        return None
    return item.id if item.filemode in REGULAR else None


def _check_entries(repo: pygit2.Repository, tip: pygit2.Oid, known: pygit2.Oid | None, paths: list[str],
                   commits: list[pygit2.Commit], now: float | None, descends: bool, trees: _Trees) -> Received:
    """The tip's store files that differ from the side already here, read and their
    changed entries checked; a bad entry is named by the first commit that brought it.
    ``descends``: the tip descends from ``known`` (a fast-forward: the base is ``known``);
    ``trees``: the commits' trees the walk read.
    A file a merge will merge (changed here too) is parsed whole and handed on, with its
    base (``Received.parsed``); any other is proved piece by piece where it can be
    (``ctx/storage/piecewise.py``, the pieces known from ``verified.py``)."""
    received = Received()
    if not paths:
        return received
    tip_tree = trees.of(tip)
    base_id = None
    ours_tree = None
    if known is not None:
        if descends:
            base_id = known
        else:
            base_id = repo.merge_base(known, tip)
            ours_tree = trees.of(known)
    base_tree = trees.of(base_id) if base_id is not None else None
    proofs: verified.Verified | None = None
    for path in paths:
        theirs = _blob_at(repo, tip_tree, path)
        before = _blob_at(repo, base_tree, path)
        if theirs is None or theirs == before:
            continue
        raw = _blob_bytes(repo, theirs)
        received.raw[path] = raw
        merged = ours_tree is not None and _blob_at(repo, ours_tree, path) not in (before, theirs)
        if not merged and proofs is None:
            proofs = verified.Verified(repo)
        found = _changes(repo, raw, path, before, None if merged else proofs, commits)
        store = path[len("memory/"):-len(".json")]
        try:
            try:
                arrival.check_entries(store, found.changed, side=SIDE, now=now)
            except Conflict:
                if not found.fast:
                    raise
                found = _changes(repo, raw, path, before, None, commits)  # the plain way decides
                arrival.check_entries(store, found.changed, side=SIDE, now=now)
        except Conflict as exc:
            culprit = _first_with_it(repo, commits, path, list(found.changed), now) or str(tip)
            raise Conflict(f"{exc} (commit {culprit[:10]}); ctx refused the commit whole: "
                           "nothing here changed") from None
        _learn_keys(received.keys, found, theirs, before, proofs)
        if found.parsed is not None:
            received.blobs[theirs] = raw
            received.parsed[theirs] = found.parsed
            if before is not None and found.base_parsed is not None and found.base_raw is not None:
                received.blobs[before] = found.base_raw
                received.parsed[before] = found.base_parsed
        if found.fast and proofs is not None:
            for blob, proof in zip(([before] if len(found.proofs) == 2 else []) + [theirs], found.proofs,
                                   strict=True):
                if blob is not None:
                    proofs.record(blob, proof)
    return received


def _learn_keys(keys: dict[pygit2.Oid, list[str]], found: piecewise.Changes, theirs: pygit2.Oid,
                before: pygit2.Oid | None, proofs: verified.Verified | None) -> None:
    """What ``found`` says of the keys of the tip's blob ``theirs`` and the base's ``before``."""
    if found.fast:
        keys[theirs] = found.proofs[-1].keys
        if before is not None:
            if len(found.proofs) == 2:
                keys[before] = found.proofs[0].keys
            elif proofs is not None and (kept := proofs.pieces(before)) is not None:
                keys[before] = kept.keys
        return
    if found.parsed is not None:
        entries = found.parsed.get("entries")
        if isinstance(entries, dict):
            keys[theirs] = list(entries)
    if before is not None and found.base_parsed is not None:
        entries = found.base_parsed.get("entries")
        if isinstance(entries, dict):
            keys[before] = list(entries)


def _changes(repo: pygit2.Repository, raw: bytes, path: str, before: pygit2.Oid | None,
             proofs: verified.Verified | None, commits: list[pygit2.Commit]) -> piecewise.Changes:
    """``piecewise.changes`` of one arriving store file against the base's blob ``before``
    (None: no base): piece by piece with ``proofs``, the plain way without."""
    proved: dict[bytes, str] | None = None
    base: Collection[bytes] | None = None
    kept: piecewise.Proof | None = None
    if proofs is not None:
        kept = proofs.pieces(before)
        if kept is not None and not kept.whole():
            proved = kept.proved()
            base = proved  # the base's pieces are the ones proved (then ``prove`` asks no more)
        elif kept is None and before is not None:
            proved = proofs.known()  # a base never taken in (written here): its pieces mostly were
    try:
        return piecewise.changes(
            raw, path, lambda: _base_bytes(repo, before, path) if before is not None else None, side=SIDE,
            fast=proofs is not None, proved=proved, base_digests=base, has_base=before is not None,
            base_proof=kept)
    except Conflict as exc:
        named = f" (commit {str(commits[-1].id)[:10]})" if commits else ""
        raise Conflict(f"{exc}{named}") from None


def _base_bytes(repo: pygit2.Repository, oid: pygit2.Oid, path: str) -> bytes:
    """The base side's store file: this side's file on disk when it is that blob (a
    fast-forward's base is HEAD, and the write path committed every outside edit before),
    else read from git (unpacked through its deltas: the slower way)."""
    try:
        with open(os.path.join(repo.workdir or "", path), "rb") as file:
            data = file.read()
        if pygit2.hash(data) == oid:
            return data
    except OSError:
        pass
    return _blob_bytes(repo, oid)


def _blob_bytes(repo: pygit2.Repository, oid: pygit2.Oid) -> bytes:
    """A blob's bytes, from the object database (a ``Blob``'s ``data`` unpacks it again)."""
    return repo.odb.read(oid)[1]


def _first_with_it(repo: pygit2.Repository, commits: list[pygit2.Commit], path: str, keys: list[str],
                   now: float | None) -> str | None:
    """The first received commit (oldest first) whose store file already held a bad entry
    among ``keys`` (the entries the tip changed)."""
    store = path[len("memory/"):-len(".json")]
    for commit in commits:
        oid = _blob_at(repo, commit.tree, path)
        if oid is None:
            continue
        try:
            entries = (parse_store_side(repo[oid].peel(pygit2.Blob).data, path, SIDE) or {}).get("entries", {})
            arrival.check_entries(store, {k: entries[k] for k in keys if k in entries}, side=SIDE, now=now)
        except Conflict:
            return str(commit.id)
    return None
