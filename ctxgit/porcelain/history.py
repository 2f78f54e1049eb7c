"""Reading the past: an entry's versions, the log, and as-of reads.

``history`` reads an entry's versions from the history index (``histindex``)
when there is one, else by walking the commits (``commits.walk_history``);
``log`` lists commits, filtered; ``entries_as_of`` is ``ctx get --at``. The
commits, their trailers and the store files inside them are ``commits.py``'s.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pygit2

from ctx.errors import NotFound
from ctx.model import STORES
from ctxgit.plumbing.repo import open_repo
from ctxgit.porcelain.commits import (
    CommitInfo,
    Version,
    blob_id,
    commit_info,
    entry_at,
    require_repo,
    resolve_rev,
    walk,
    walk_history,
)
from ctxgit.porcelain.histindex import versions as indexed_versions


def entries_as_of(root: Path, key: str, stores: list[str], rev: str) -> list:
    """``ctx get KEY --at REV``: the entry in each of ``stores`` as it was at ``rev``."""
    from ctx.results import Result
    repo = require_repo(root)
    commit = resolve_rev(repo, rev)
    found = [Result(s, key, e) for s in stores if (e := entry_at(repo, commit, s, key)) is not None]
    if not found:
        raise NotFound(f"no entry {key!r} in {', '.join(stores)} at {rev} ({commit.short_id})")
    return found


def history(root: Path, key: str, stores: list[str] | None = None, limit: int | None = None
            ) -> list[Version]:
    """Every version of ``key`` in ``stores``, newest first; NotFound if never seen.

    Read from the history index (``histindex``) when it can be had, else by
    walking the commits.
    """
    repo = require_repo(root)
    stores = stores or ["shared"]
    found = indexed_versions(root, repo, key, stores)
    if found is not None:
        if not found:
            raise NotFound(f"no history for {key!r} in {', '.join(stores)}")
        return found[:limit] if limit is not None else found
    return walk_history(repo, key, stores, limit)


def _touches_store(commit: pygit2.Commit, info: CommitInfo, store: str) -> bool:
    if info.stores and len(commit.parents) <= 1:
        return store in info.stores
    parent = commit.parents[0].tree if commit.parents else None
    return blob_id(commit.tree, store) != blob_id(parent, store)


def log(root: Path, *, key: str | None = None, store: str | None = None,
        author: str | None = None, since: datetime | None = None,
        limit: int | None = None) -> list[CommitInfo]:
    """Commits newest first, filtered; with a key, the commits that changed it
    (NotFound when none ever did)."""
    repo = open_repo(root)
    if repo is None or repo.head_is_unborn:
        return []
    if key is not None:  # a key no commit ever held is an error, as for `ctx history`
        rows = [v.info for v in history(root, key, [store] if store else list(STORES))]
        rows = list({r.id: r for r in rows}.values())
    else:
        rows = []
        for commit in walk(repo):
            info = commit_info(commit)
            if store and not _touches_store(commit, info, store):
                continue
            rows.append(info)
            if limit is not None and author is None and since is None and len(rows) >= limit:
                break
    wanted = author.lower() if author else None
    rows = [r for r in rows
            if (wanted is None or wanted in r.author.lower() or wanted in r.email.lower())
            and (since is None or r.time >= since)]
    return rows[:limit] if limit is not None else rows
