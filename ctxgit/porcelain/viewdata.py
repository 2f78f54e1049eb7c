"""What the operator's view shows, read from git in one walk (``gather``).

Only what HEAD reaches is read: the entries as HEAD holds them, and the
commits from HEAD down (a purged entry, rewritten out of every commit, stays
gone; objects no ref reaches are never looked at).

Every entry's versions come from that one walk, never from a walk per entry:

* a commit whose trailers name one entry (every ordinary write: ``set``,
  ``amend``, ``supersede``, ``resolve``, ``basis``, ``delete``) is a version of
  that entry; only its store file's blob id is compared with its parent's
  (the same: it changed nothing, as a purge leaves the commits of the entry
  it removed, and it is left off the page);
* any other commit (init, import, cleanup, revert, merge, outside changes) is
  compared with its first parent by the store files' blob ids, and a store
  file that changed is parsed whole, each entry that differs being a version
  with both its sides.

Then each entry's versions are linked. Every version is a change against
its commit's first parent, so a version's entry "before" is the "after" of
the nearest version of that entry down its commit's first-parent line, and
the entry at HEAD is the "after" of the nearest one down HEAD's (``_Lines``:
in a linear history, simply the next older version). What the links cannot
give is read from store files, and one store file gives many: in a linear
history, the entry a version left stands unchanged in every commit from it
up to the entry's next version, so a file read at any commit of that stretch
gives it. The commits to read are chosen to cover as many stretches as
possible each (greedy), and reading stops at ``read_limit`` files or
``read_seconds`` (a store file of 10,000 entries costs a tenth of a second or
more to read out of a deep delta chain). With merges in the history, each
version is read at its own commit. A version left unread is shown from its
commit alone (who, when, subject) and the page names ``ctx history KEY`` for
its fields.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from datetime import datetime
from pathlib import Path

import pygit2

from ctx.errors import CtxError
from ctx.model import STORES, Entry, parse_ts
from ctx.storage.textlayout import read_entry
from ctx.view.data import Commit, Sync, Version, ViewData, mark_forced, subject_forced
from ctxgit.gitfiles.layout import BRANCH, tracking_ref
from ctxgit.plumbing.gitconfig import upstream
from ctxgit.plumbing.repo import open_repo
from ctxgit.porcelain.commits import (
    SINGLE_ENTRY_OPS,
    CommitInfo,
    _parse_blob,
    blob_id,
    commit_info,
    entries_at,
    walk,
)

READ_LIMIT = 400     # store files read at most to fill in what the chain cannot give
READ_SECONDS = 0.3   # ... and for at most this long
WHOLE = 8            # past this many entries wanted from one store file, it is parsed whole
_UNREAD: Entry = {"\x00unread": True}  # a marker: this side of a version is not known yet


def _commit(info: CommitInfo) -> Commit:
    where = f"{info.stores[0]}/{info.keys[0]}" if len(info.keys) == 1 and len(info.stores) == 1 else ""
    return Commit(info.id, info.time, info.author, info.email, info.operation or "commit",
                  info.stores, info.keys, info.subject,
                  forced=subject_forced(info.subject, info.operation, where))


def _single(info: CommitInfo, commit: pygit2.Commit) -> tuple[str, str] | None:
    """The one entry a commit's trailers name, when they prove it changed only that one."""
    if len(commit.parents) > 1 or info.operation not in SINGLE_ENTRY_OPS:
        return None
    if len(info.keys) != 1 or len(info.stores) != 1 or info.stores[0] not in STORES:
        return None
    return info.stores[0], info.keys[0]


def _compare(repo: pygit2.Repository, commit: pygit2.Commit, c: Commit,
             found: dict[tuple[str, str], list[Version]]) -> None:
    """The versions of a commit the trailers do not explain: its store files against its
    first parent's, entry by entry."""
    parent = commit.parents[0] if commit.parents else None
    for store in STORES:
        if blob_id(commit.tree, store) == blob_id(parent.tree if parent is not None else None, store):
            continue
        after, before = entries_at(repo, commit, store), entries_at(repo, parent, store)
        for key in list(after) + [k for k in before if k not in after]:
            a, b = after.get(key), before.get(key)
            if a != b:
                found.setdefault((store, key), []).append(Version(c, store, key, a, b, known=True))


class _Lines:
    """The history's first-parent lines. Every version is a change against its commit's
    first parent, so the entry a commit holds is the "after" of the nearest version of
    that entry down its first-parent line (none: the entry is absent there). The lines
    are numbered paths (the first one: HEAD's own, to the root), each commit at a step
    along its path; a path that forks off another ``attach``es to the commit it forks
    from. A linear history is one path, in walk order."""

    def __init__(self, commits: list[pygit2.Commit]) -> None:
        self.first: dict[str, str | None] = {}
        for c in commits:
            self.first[str(c.id)] = str(c.parent_ids[0]) if c.parent_ids else None
        self.path: dict[str, int] = {}
        self.step: dict[str, int] = {}
        self.attach: list[str | None] = []
        for c in commits:  # children before parents: a path starts at its newest commit
            at: str | None = str(c.id)
            if at in self.path:
                continue
            number, step = len(self.attach), 0
            while at is not None and at not in self.path:
                self.path[at], self.step[at] = number, step
                step += 1
                at = self.first.get(at)
            self.attach.append(at)

    def previous(self, commit: str | None, rows: dict[int, tuple[list[int], list[Version]]]) -> Version | None:
        """Of one entry's versions (``rows``: path -> steps and versions, by step), the
        nearest at or below ``commit`` down its first-parent line."""
        while commit is not None:
            number = self.path[commit]
            row = rows.get(number)
            if row is not None:
                at = bisect_left(row[0], self.step[commit])
                if at < len(row[0]):
                    return row[1][at]
            commit = self.attach[number]
        return None

    def links(self, versions: list[Version], head: str) -> tuple[dict[int, Version | None], Version | None]:
        """Each version's predecessor (by ``id``), and the version HEAD holds."""
        rows: dict[int, tuple[list[int], list[Version]]] = {}
        for v in sorted(versions, key=lambda v: self.step[v.commit.id]):
            steps, found = rows.setdefault(self.path[v.commit.id], ([], []))
            steps.append(self.step[v.commit.id])
            found.append(v)
        return ({id(v): self.previous(self.first[v.commit.id], rows) for v in versions},
                self.previous(head, rows))


def _link(versions: list[Version], before: dict[int, Version | None], held: Version | None,
          now: Entry | None) -> None:
    """Fill the unknown sides that a neighbour gives: HEAD's entry is the "after" of the
    version it holds; a version's "before" is its predecessor's "after", and the other
    way round."""
    if held is not None and held.entry is _UNREAD:
        held.entry = now
    for _ in range(2):  # a side filled late in the first round fills another in the second
        for v in versions:
            older = before[id(v)]
            if older is None:
                if v.before is _UNREAD:
                    v.before = None  # nothing down its line: the entry was not there
            elif v.before is _UNREAD and older.entry is not _UNREAD:
                v.before = older.entry
            elif older.entry is _UNREAD and v.before is not _UNREAD:
                older.entry = v.before


class _Stretch:
    """A version whose "after" is to be read: the entry ``store/key`` as any commit from
    ``low`` to ``high`` (walk positions, 0 = HEAD) holds it."""

    __slots__ = ("low", "high", "version")

    def __init__(self, low: int, high: int, version: Version) -> None:
        self.low, self.high, self.version = low, high, version


def _stretches(found: dict[tuple[str, str], list[Version]], position: dict[str, int],
               linear: bool) -> dict[str, list[_Stretch]]:
    """By store, the "after"s still unknown, each with the commits that hold it: in a
    linear history, from its own commit up to the next version's; else its own commit."""
    out: dict[str, list[_Stretch]] = {}
    for (store, _key), versions in found.items():
        for n, v in enumerate(versions):
            if v.entry is _UNREAD:
                at = position[v.commit.id]
                low = position[versions[n - 1].commit.id] + 1 if linear and n else at
                out.setdefault(store, []).append(_Stretch(low, at, v))
    return out


def _best(stretches: list[_Stretch], size: int) -> int:
    """The commit position inside the most stretches (the newest of equals)."""
    starts = [0] * (size + 1)
    for s in stretches:
        starts[s.low] += 1
        starts[s.high + 1] -= 1
    best, count, running = 0, -1, 0
    for at in range(size):
        running += starts[at]
        if running > count:
            best, count = at, running
    return best


def _read(repo: pygit2.Repository, commits: list[pygit2.Commit], found: dict[tuple[str, str], list[Version]],
          linear: bool, read_limit: int, read_seconds: float) -> int:
    """Read store files to fill the sides the chain leaves unknown; the number read."""
    position = {str(c.id): n for n, c in enumerate(commits)}
    pending = _stretches(found, position, linear)
    reads = 0
    deadline = time.monotonic() + read_seconds
    while pending and reads < read_limit and time.monotonic() < deadline:
        store = max(pending, key=lambda s: len(pending[s]))
        stretches = pending[store]
        at = _best(stretches, len(commits))
        blob = blob_id(commits[at].tree, store)
        data = repo[blob].read_raw() if blob is not None else b""
        reads += 1
        left = [s for s in stretches if not s.low <= at <= s.high]
        covered = [s for s in stretches if s.low <= at <= s.high]
        whole = _parse_blob(data) if data and len(covered) > WHOLE else None  # one parse for many
        for s in covered:
            entry = whole.get(s.version.key) if whole is not None else \
                read_entry(data, s.version.key, _parse_blob) if data else None
            s.version.entry = entry if isinstance(entry, dict) else None
        if left:
            pending[store] = left
        else:
            del pending[store]
    return reads


_Links = tuple[dict[int, "Version | None"], "Version | None"]  # each version's predecessor; HEAD's version


def _settle(found: dict[tuple[str, str], list[Version]], links: dict[tuple[str, str], _Links],
            heads: dict[str, dict[str, Entry]]) -> set[str]:
    """Link once more after the reads; what is still unknown is shown from its commit. A
    version that turns out to change nothing (the commits a purge left) is dropped; the
    ids of the single-entry commits dropped so are returned."""
    dropped: set[str] = set()
    for where in list(found):
        versions = found[where]
        before, held = links[where]
        _link(versions, before, held, heads.get(where[0], {}).get(where[1]))
        kept = []
        for v in versions:
            v.known = v.entry is not _UNREAD and v.before is not _UNREAD
            if v.known and v.entry == v.before:
                if len(v.commit.keys) == 1:
                    dropped.add(v.commit.id)
                continue
            if v.entry is _UNREAD:
                v.entry = None
            if v.before is _UNREAD:
                v.before = None
            kept.append(v)
        if kept:
            found[where] = kept
            mark_forced(kept)
        else:
            del found[where]
    return dropped


def _at_head(repo: pygit2.Repository, root: Path, head: pygit2.Commit, store: str) -> dict[str, Entry]:
    """A store's entries at HEAD: from the file on disk when it is byte for byte HEAD's
    (no delta chain to resolve), else from git."""
    blob = blob_id(head.tree, store)
    if blob is None:
        return {}
    try:
        raw = (root / "memory" / f"{store}.json").read_bytes()
        if pygit2.hash(raw) == blob:
            return dict(_parse_blob(raw))
    except OSError:
        pass
    return entries_at(repo, head, store)


def sync_state(repo: pygit2.Repository) -> Sync | None:
    """The remote ``ctx sync`` uses (``ctxgit/gitfiles/config.py``'s rule): commits ahead
    and behind its remote-tracking ref, and the last sync (as ``ctx sync`` recorded it;
    else when that ref last moved, by a fetch or a push). None without a remote; no
    remote chosen (several, or a stale upstream): the problem, and nothing else."""
    chosen = upstream(Path(repo.workdir or "."))
    if chosen.remote is None:
        return Sync(None, None, None, None, None, problem=chosen.problem) if chosen.remotes or chosen.stale else None
    name = chosen.remote
    ref = tracking_ref(name)
    if ref not in repo.references:
        return Sync(name, BRANCH, None, None, None)
    ahead, behind = repo.ahead_behind(repo.head.target, repo.references[ref].target)
    last, result = _last_sync(repo, ref)
    return Sync(name, BRANCH, ahead, behind, last, result)


def _last_sync(repo: pygit2.Repository, ref: str) -> tuple[datetime | None, str | None]:
    try:  # the record `ctx sync` keeps in .git/ctx/ (when there is one)
        from ctxgit.gitfiles.syncrecord import last as recorded
        done = recorded(Path(repo.workdir or "."))
        if done and isinstance(done.get("time"), str):
            return parse_ts(done["time"]), str(done.get("result") or "") or None
    except (ImportError, CtxError, ValueError, TypeError):
        pass
    try:
        stamps = [e.committer.time for e in repo.references[ref].log()]
        if stamps:
            return datetime.fromtimestamp(max(stamps)).astimezone(), None
    except (pygit2.GitError, KeyError, ValueError):
        pass
    fetched = Path(repo.path) / "FETCH_HEAD"
    if fetched.exists():
        return datetime.fromtimestamp(fetched.stat().st_mtime).astimezone(), None
    return None, None


def gather(root: Path, since: datetime | None = None, author: str | None = None,
           read_limit: int = READ_LIMIT, read_seconds: float = READ_SECONDS) -> ViewData:
    """The view's data at HEAD (an empty ``ViewData`` when there is no commit yet);
    ``since`` and ``author`` choose the commits listed (``ctx log``'s filters)."""
    data = ViewData(str(root))
    data.since, data.author = since, author
    repo = open_repo(root)
    if repo is None or repo.head_is_unborn:
        return data
    head = repo.head.peel(pygit2.Commit)
    for store in STORES:
        data.entries[store] = _at_head(repo, root, head, store)
    found: dict[tuple[str, str], list[Version]] = {}
    objects: list[pygit2.Commit] = []
    commits: list[Commit] = []
    linear = True
    for commit in walk(repo):
        info = commit_info(commit)
        c = _commit(info)
        objects.append(commit)
        linear = linear and len(commit.parents) <= 1
        one = _single(info, commit)
        if one is None:
            commits.append(c)
            _compare(repo, commit, c, found)
            continue
        parent = commit.parents[0].tree if commit.parents else None
        if blob_id(commit.tree, one[0]) == blob_id(parent, one[0]):
            data.empty += 1  # it changed nothing (left so by a purge): not a write to show
            continue
        commits.append(c)
        gone = info.operation == "delete"
        found.setdefault(one, []).append(Version(c, one[0], one[1], None if gone else _UNREAD, _UNREAD,
                                                 known=False))
    lines = _Lines(objects)
    links = {where: lines.links(versions, str(head.id)) for where, versions in found.items()}
    for (store, key), versions in found.items():
        before, held = links[(store, key)]
        _link(versions, before, held, data.entries[store].get(key))
    data.read_versions = _read(repo, objects, found, linear, read_limit, read_seconds)
    dropped = _settle(found, links, data.entries)
    data.empty += len(dropped)
    commits = [c for c in commits if c.id not in dropped]
    data.versions = found
    data.head = _commit(commit_info(head))
    data.total = len(objects)
    wanted = author.lower() if author else None
    data.commits = [c for c in commits
                    if (since is None or c.time >= since)
                    and (wanted is None or wanted in c.author.lower() or wanted in c.email.lower())]
    data.sync = sync_state(repo)
    return data
