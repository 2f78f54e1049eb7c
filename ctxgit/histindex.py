"""Every entry's versions, indexed once: ``ctx history`` without re-reading old store files.

The index of reads (``ctx/cache.py``) also keeps, per commit, the entries it
changed. Each history read first adds the commits made since the last one
(walking from HEAD and stopping at the recorded tip), so an old version is
read from git once, ever. A commit whose trailers name one entry costs one
entry read; any other commit (outside edits, merges, reverts, imports) is
compared store by store. A tip that is no longer an ancestor of HEAD (the
history was rewritten: ``ctx purge``) drops the table and starts again.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pygit2
from pygit2.enums import SortMode

from ctx.model import STORES

from .history import (CommitInfo, SINGLE_ENTRY_OPS, Version, _blob_id, _entry_from_blob, _parse_blob,
                      commit_info)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS hist_commits(id TEXT PRIMARY KEY, seq INTEGER, time INTEGER, author TEXT,
                                        email TEXT, subject TEXT, operation TEXT, stores TEXT, keys TEXT);
CREATE TABLE IF NOT EXISTS hist_versions(store TEXT, key TEXT, seq INTEGER, commit_id TEXT, entry TEXT);
CREATE INDEX IF NOT EXISTS hist_by_key ON hist_versions(store, key, seq DESC);
CREATE TABLE IF NOT EXISTS hist_tip(one INTEGER PRIMARY KEY CHECK (one = 1), tip TEXT, seq INTEGER);
"""


def _changes(repo: pygit2.Repository, commit: pygit2.Commit, info: CommitInfo) -> list[tuple[str, str, dict | None]]:
    """The entries a commit changed, compared with its first parent."""
    parent = commit.parents[0] if commit.parents else None
    out = []
    single = (info.operation in SINGLE_ENTRY_OPS and len(info.keys) == 1 and len(info.stores) == 1
              and len(commit.parents) <= 1)
    for store in STORES:
        new_blob = _blob_id(commit.tree, store)
        old_blob = _blob_id(parent.tree, store) if parent is not None else None
        if new_blob == old_blob:
            continue
        if single:
            if store == info.stores[0]:
                key = info.keys[0]
                after = _entry_from_blob(repo[new_blob].data, key) if new_blob else None
                out.append((store, key, after))
            continue
        new = _parse_blob(repo[new_blob].data) if new_blob else {}
        old = _parse_blob(repo[old_blob].data) if old_blob else {}
        for key in dict.fromkeys(list(old) + list(new)):
            if old.get(key) != new.get(key):
                out.append((store, key, new.get(key)))
    return out


def _fill(db: sqlite3.Connection, repo: pygit2.Repository) -> None:
    head = repo.head.target
    db.execute("BEGIN IMMEDIATE")
    try:
        row = db.execute("SELECT tip, seq FROM hist_tip").fetchone()
        tip, base = (row[0], row[1]) if row else (None, 0)
        if tip == str(head):
            db.execute("COMMIT")
            return
        walker = repo.walk(head, SortMode.TOPOLOGICAL | SortMode.TIME)
        if tip is not None:
            try:
                known = pygit2.Oid(hex=tip)
                if known != head and not repo.descendant_of(head, known):
                    raise KeyError(tip)
                walker.hide(known)
            except (KeyError, ValueError, pygit2.GitError):
                db.execute("DELETE FROM hist_commits")
                db.execute("DELETE FROM hist_versions")
                base = 0
        fresh = list(walker)
        n = len(fresh)
        for i, commit in enumerate(fresh):
            seq = base + n - i
            info = commit_info(commit)
            db.execute("INSERT OR REPLACE INTO hist_commits VALUES (?,?,?,?,?,?,?,?,?)",
                       (info.id, seq, commit.author.time, info.author, info.email, info.subject,
                        info.operation, json.dumps(info.stores), json.dumps(info.keys)))
            db.executemany("INSERT INTO hist_versions VALUES (?,?,?,?,?)",
                           [(store, key, seq, info.id, None if entry is None else json.dumps(entry))
                            for store, key, entry in _changes(repo, commit, info)])
        db.execute("INSERT OR REPLACE INTO hist_tip VALUES (1, ?, ?)", (str(head), base + n))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def versions(root: Path, repo: pygit2.Repository, key: str, stores: list[str]) -> list[Version] | None:
    """Every version of ``key`` in ``stores``, newest first; None when the index is unavailable."""
    from ctx.cache import Index
    index = Index.open(root, writable=True)
    if index is None:
        return None
    db = index.db
    try:
        db.executescript(_SCHEMA)
        _fill(db, repo)
        marks = ",".join("?" * len(stores))
        rows = db.execute(
            f"SELECT v.store, v.entry, v.seq, c.id, c.time, c.author, c.email, c.subject, c.operation, "
            f"c.stores, c.keys FROM hist_versions v JOIN hist_commits c ON c.id = v.commit_id "
            f"WHERE v.key = ? AND v.store IN ({marks}) ORDER BY v.seq ASC", [key, *stores]).fetchall()
    except sqlite3.Error:
        return None
    finally:
        index.close()
    rows.sort(key=lambda row: (row[2], -stores.index(row[0])))  # within a commit: the stores' order
    out: list[Version] = []
    present: dict[str, bool] = {}
    for store, entry, _seq, cid, when, author, email, subject, operation, stores_json, keys_json in rows:
        after = None if entry is None else json.loads(entry)
        info = CommitInfo(id=cid, time=datetime.fromtimestamp(when, timezone.utc), author=author, email=email,
                          subject=subject, operation=operation, stores=json.loads(stores_json),
                          keys=json.loads(keys_json))
        out.append(Version(info, store, key, after, created=after is not None and not present.get(store)))
        present[store] = after is not None
    out.reverse()
    return out
