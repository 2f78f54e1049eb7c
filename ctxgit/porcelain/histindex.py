"""An entry's versions, read from git once: ``ctx history`` without re-reading old store files.

The first ``history`` of a key walks the commits (``commits.walk_history``:
trailers skip every commit that names another entry; only the commits that
changed this one have their store file read) and keeps the versions found,
with the commit they reach, in the read index (``.git/ctx/``). Later reads
add only the commits made since: an old version is read from git once. A
recorded commit that is no longer an ancestor of HEAD (the history was
rewritten: ``ctx purge``) makes the key's versions be read again.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pygit2

from ctx.storage import indextables
from ctx.storage.index import sqlite3  # (the module the index connects through)
from ctxgit.gitfiles import layout
from ctxgit.porcelain.commits import CommitInfo, Version, walk_history


def _dump(versions: list[Version]) -> str:
    return json.dumps([{"info": {**v.info.as_json(), "time": v.info.time.timestamp()}, "store": v.store,
                        "entry": v.entry, "created": v.created} for v in versions])


def _load(text: str, key: str) -> list[Version]:
    out = []
    for row in json.loads(text):
        i = row["info"]
        info = CommitInfo(id=i["commit"], time=datetime.fromtimestamp(i["time"], UTC),
                          author=i["author"], email=i["email"], subject=i["subject"],
                          operation=i["operation"], stores=i["stores"], keys=i["keys"],
                          committer=i.get("committer", ""), committer_email=i.get("committer_email", ""))
        out.append(Version(info, row["store"], key, row["entry"], row["created"]))
    return out


def versions(root: Path, repo: pygit2.Repository, key: str, stores: list[str]) -> list[Version] | None:
    """Every version of ``key`` in ``stores``, newest first ([] if none); None without an index."""
    from ctx.storage.index import Index
    index = Index.open(root, layout.state_dir(root), writable=True)
    if index is None:
        return None
    db = index.db
    scope = ",".join(stores)
    head = repo.head.target
    try:
        indextables.create(db, indextables.HISTORY)
        row = db.execute("SELECT tip, versions FROM hist_keys WHERE stores = ? AND key = ?",
                         (scope, key)).fetchone()
        known: list[Version] | None = None
        since = None
        if row is not None:
            try:
                tip = pygit2.Oid(hex=row[0])
                if tip == head or repo.descendant_of(head, tip):
                    known, since = _load(row[1], key), tip
            except (ValueError, KeyError, pygit2.GitError):
                known = None
        if known is not None and since == head:
            return known
        found = _walk(repo, key, stores, since) + (known or [])  # each compared with its own parent
        db.execute("INSERT OR REPLACE INTO hist_keys VALUES (?,?,?,?)", (scope, key, str(head), _dump(found)))
        return found
    except sqlite3.Error:
        return None
    finally:
        index.close()


def _walk(repo: pygit2.Repository, key: str, stores: list[str], since: pygit2.Oid | None) -> list[Version]:
    from ctx.errors import NotFound
    try:
        return walk_history(repo, key, stores, hide=since)
    except NotFound:
        return []
