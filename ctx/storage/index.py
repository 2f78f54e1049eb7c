"""A rebuildable index of the stores, so reads need not parse whole store files.

One SQLite file, ``.git/ctx/index-v2.sqlite`` (inside ``.git``: never part of
the work tree, never committed), holds a row per entry: the entry in Python's
``marshal`` form (built in, so a read need not import ``json``: ~3.5 ms at
every start; the file is this machine's own cache, never shared) and the
columns that reads filter and order by. It is derived data (§8.2): each
store's rows are valid only while the store file has the identity (size,
mtime, inode) recorded with them; any other writer changes that identity
and the next read rebuilds the rows from the file.

A file written within ``RACY_NS`` of being indexed (git calls this "racily
clean") could change again without its identity changing, so its rows also
carry a CRC of the bytes, checked until the file is older than that window.

Every query the index answers is re-checked in Python by the caller: the
SQL only narrows and orders, the Python predicate decides. Any SQLite
trouble makes the index unavailable, never a read wrong.
"""

from __future__ import annotations

import marshal
import os
import sqlite3
import time
import zlib
from pathlib import Path

TYPE_CHECKING = False  # typing is for the checker; importing it costs ~3 ms at every start
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

from ctx import model
from ctx.storage.files import REQUIRED_FIELDS, Identity, read_raw, store_path

FILE = "index-v2.sqlite"
MARSHAL_VERSION = 4  # the format every Python since 3.4 reads and writes
RACY_NS = 2_000_000_000
SEP = "\x1f"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(store TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, ino INTEGER,
                                racy INTEGER, digest INTEGER, count INTEGER);
CREATE TABLE IF NOT EXISTS entries(store TEXT, key TEXT, rank INTEGER, ts REAL, source TEXT,
                                   status TEXT, scope TEXT, tags TEXT, lkey TEXT, lvalue TEXT,
                                   body BLOB, PRIMARY KEY(store, key)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS by_time ON entries(ts DESC, rank, key);
CREATE TABLE IF NOT EXISTS fts_meta(store TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, ino INTEGER);
CREATE TABLE IF NOT EXISTS layout(store TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, ino INTEGER,
                                  incomplete BLOB, body INTEGER, close INTEGER);
"""
_FTS = ("CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(store UNINDEXED, key UNINDEXED, text, "
        "tokenize='unicode61 remove_diacritics 0')")


def index_path(root: Path) -> Path:
    return root / ".git" / "ctx" / FILE


def drop(root: Path) -> bool:
    """Remove the index (``ctx reindex``); the next read rebuilds it. True if there was one."""
    found = False
    for suffix in ("", "-journal", "-wal", "-shm"):
        path = index_path(root).with_name(FILE + suffix)
        if path.exists():
            path.unlink()
            found = True
    return found


def row_for(store: str, key: str, entry: dict[str, Any]) -> tuple:
    """The indexed columns of one entry (SQL narrows on them; Python decides)."""
    tags = entry.get("tags")
    tags_text = SEP + SEP.join(t for t in tags if isinstance(t, str)) + SEP if isinstance(tags, list) else ""
    status = entry.get("status") or None
    scope = entry.get("scope", "global")
    return (store, key, model.STORES.index(store), model.ts_key(entry.get("timestamp")).timestamp(),
            entry.get("source") if isinstance(entry.get("source"), str) else None,
            status if isinstance(status, str) else ("?" if status else None),
            scope if isinstance(scope, str) else None, tags_text, key.lower(),
            model.value_text(entry.get("value")).lower(),
            marshal.dumps(entry, MARSHAL_VERSION))


class Where:
    """A SQL condition (and its parameters) that passes every entry a query wants."""

    __slots__ = ("clauses", "params")

    def __init__(self) -> None:
        self.clauses: list[str] = []
        self.params: list[Any] = []

    def add(self, clause: str, *params: Any) -> Where:
        self.clauses.append(clause)
        self.params.extend(params)
        return self

    def tags(self, tags: Iterable[str]) -> Where:
        tags = list(tags)
        if tags:
            self.add("(" + " OR ".join(["instr(tags, ?) > 0"] * len(tags)) + ")",
                     *[SEP + t + SEP for t in tags])
        return self

    def sql(self) -> str:
        return " AND ".join(self.clauses) if self.clauses else "1"


class Index:
    """The index of one context root. ``Index.open`` returns None when there is none."""

    def __init__(self, root: Path, db: sqlite3.Connection, writable: bool) -> None:
        self.root, self.db, self.writable = root, db, writable
        self._fresh: set[str] = set()

    @classmethod
    def open(cls, root: Path, writable: bool, create: bool = True) -> Index | None:
        path = index_path(root)
        try:
            if not path.exists():
                if not writable or not create or not (root / ".git").is_dir():
                    return None
                path.parent.mkdir(mode=0o700, exist_ok=True)
                for old in path.parent.glob("index-v1.sqlite*"):  # the JSON-bodied index before it
                    old.unlink()
            uri = path.as_uri() + ("" if writable else "?mode=ro")
            db = sqlite3.connect(uri, uri=True, timeout=2.0, isolation_level=None,
                                 check_same_thread=False)
            if writable:
                # a rollback journal, not WAL: a read-only reader (ctx start) then writes nothing
                db.execute("PRAGMA synchronous=OFF")
                db.executescript(_SCHEMA)
            return cls(root, db, writable)
        except (sqlite3.Error, OSError, ValueError):
            return None

    def forget(self) -> None:
        """Check freshness again on the next read (files may have changed since)."""
        self._fresh.clear()

    def close(self) -> None:
        try:
            self.db.close()
        except sqlite3.Error:
            pass

    # --- freshness ------------------------------------------------------------------

    def _meta(self, store: str) -> tuple | None:
        return self.db.execute("SELECT size, mtime, ino, racy, digest, count FROM meta WHERE store = ?",
                               (store,)).fetchone()

    def fresh(self, stores: Iterable[str]) -> bool:
        """True when every one of ``stores`` is indexed for the file on disk now."""
        try:
            return all(self._is_fresh(store) for store in stores)
        except (sqlite3.Error, OSError):
            return False

    def _is_fresh(self, store: str) -> bool:
        if store in self._fresh:
            return True
        meta = self._meta(store)
        path = store_path(self.root, store)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            ok = meta is not None and meta[0] == -1
            if ok:
                self._fresh.add(store)
            return ok
        if meta is None or (meta[0], meta[1], meta[2]) != (st.st_size, st.st_mtime_ns, st.st_ino):
            return False
        if meta[3]:  # racily indexed: the bytes must match too
            found = read_raw(path)
            if found is None or found[1] != (meta[0], meta[1], meta[2]) or zlib.crc32(found[0]) != meta[4]:
                return False
            if self.writable and time.time_ns() - st.st_mtime_ns > RACY_NS:
                self.db.execute("UPDATE meta SET racy = 0 WHERE store = ?", (store,))
        self._fresh.add(store)
        return True

    # --- writing -----------------------------------------------------------------------

    def _meta_row(self, store: str, identity: Identity | None, raw: bytes, count: int) -> tuple:
        if identity is None:
            return (store, -1, 0, 0, 0, 0, 0)
        racy = time.time_ns() - identity[1] <= RACY_NS
        return (store, identity[0], identity[1], identity[2], int(racy), zlib.crc32(raw) if racy else 0, count)

    def rebuild(self, store: str, entries: dict[str, dict] | None, identity: Identity | None,
                raw: bytes) -> None:
        """Index ``entries`` as the content of the store file with ``identity``."""
        if not self.writable:
            return
        rows = [row_for(store, k, e) for k, e in (entries or {}).items()]
        incomplete = tuple((k, ", ".join(sorted(REQUIRED_FIELDS - e.keys())))
                           for k, e in (entries or {}).items() if not REQUIRED_FIELDS <= e.keys())
        with self._transaction():
            self.db.execute("DELETE FROM entries WHERE store = ?", (store,))
            self.db.executemany("INSERT OR REPLACE INTO entries VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?,?,?,?,?,?,?)",
                            self._meta_row(store, identity, raw, len(rows)))
            self._set_layout(store, identity, incomplete, raw)
        self._fresh.add(store)

    def _set_layout(self, store: str, identity: Identity | None, incomplete: tuple, raw: bytes) -> None:
        """What a write needs of the file with ``identity``: its incomplete entries (the full
        parse's), and where its entries are in ``raw`` (None: not in ctx's layout)."""
        if identity is None:
            self.db.execute("DELETE FROM layout WHERE store = ?", (store,))
            return
        from ctx.storage.bytesplice import region_of  # (a write's, or a rebuild's: never a fresh read's)
        region = region_of(raw) or (None, None)
        self.db.execute("INSERT OR REPLACE INTO layout VALUES (?,?,?,?,?,?,?)",
                        (store, *identity[:3], marshal.dumps(incomplete, MARSHAL_VERSION), *region))

    def described(self, store: str, identity: Identity,
                  raw: bytes) -> tuple[int, tuple, tuple[int, int] | None] | None:
        """What a full parse of ``raw`` (the store file, read with ``identity``) found, when
        the index was made from one: its entry count, its incomplete entries and where its
        entries are in ``raw``; None otherwise (another file, an index an older ctx kept)."""
        try:
            meta = self._meta(store)
            kept = self.db.execute("SELECT size, mtime, ino, incomplete, body, close FROM layout "
                                   "WHERE store = ?", (store,)).fetchone()
        except sqlite3.Error:
            return None
        if meta is None or kept is None or tuple(meta[:3]) != tuple(identity) or tuple(kept[:3]) != tuple(identity):
            return None
        if meta[3] and zlib.crc32(raw) != meta[4]:  # racily indexed: the bytes decide
            return None
        return meta[5], marshal.loads(kept[3]), (kept[4], kept[5]) if kept[4] is not None else None

    def apply(self, store: str, old: Identity | None, new: Identity, raw: bytes,
              changes: list[tuple[str, dict | None]], count: int) -> bool:
        """Bring the rows of ``store`` from the file ``old`` to ``new`` (a ctx write).

        Does nothing (and returns False) unless the rows described ``old``:
        the next read then rebuilds them.
        """
        if not self.writable:
            return False
        with self._transaction():
            meta = self._meta(store)
            described = meta is not None and ((meta[0] == -1 and old is None) or
                                              (old is not None and tuple(meta[:3]) == tuple(old)))
            if not described:
                return False
            for key, entry in changes:
                if entry is None:
                    self.db.execute("DELETE FROM entries WHERE store = ? AND key = ?", (store, key))
                else:
                    self.db.execute("INSERT OR REPLACE INTO entries VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                                    row_for(store, key, entry))
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?,?,?,?,?,?,?)",
                            self._meta_row(store, new, raw, count))
            self._set_layout(store, new, (), raw)  # ctx never writes a store with an incomplete entry
        return True

    def _transaction(self):
        db = self.db

        class _Tx:
            def __enter__(self_inner):
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self_inner, kind, value, tb):
                db.execute("COMMIT" if kind is None else "ROLLBACK")
                return False
        return _Tx()

    # --- reading ---------------------------------------------------------------------------

    def fulltext(self, stores: list[str], query: list[str]) -> list[tuple[str, str]] | None:
        """Candidates holding every query word (FTS5), or None when FTS5 is not to be had."""
        try:
            if self.writable:
                self.db.execute(_FTS)
                for store in stores:
                    meta = self._meta(store)
                    done = self.db.execute("SELECT size, mtime, ino FROM fts_meta WHERE store = ?",
                                           (store,)).fetchone()
                    if meta is not None and done != tuple(meta[:3]):
                        with self._transaction():
                            self.db.execute("DELETE FROM fts WHERE store = ?", (store,))
                            self.db.execute("INSERT INTO fts(store, key, text) SELECT store, key, "
                                            "lkey || ' ' || lvalue FROM entries WHERE store = ?", (store,))
                            self.db.execute("INSERT OR REPLACE INTO fts_meta VALUES (?,?,?,?)",
                                            (store, *meta[:3]))
            for store in stores:
                meta, done = self._meta(store), self.db.execute(
                    "SELECT size, mtime, ino FROM fts_meta WHERE store = ?", (store,)).fetchone()
                if meta is None or done != tuple(meta[:3]):
                    return None
            match = " ".join('"' + word.replace('"', '""') + '"' for word in query)
            marks = ",".join("?" * len(stores))
            return list(self.db.execute(f"SELECT store, key FROM fts WHERE fts MATCH ? AND store IN ({marks})",
                                        [match, *stores]))
        except sqlite3.Error:
            return None

    def get(self, store: str, key: str) -> dict | None:
        row = self.db.execute("SELECT body FROM entries WHERE store = ? AND key = ?", (store, key)).fetchone()
        return marshal.loads(row[0]) if row else None

    def counts(self, stores: Iterable[str]) -> dict[str, int]:
        out = {}
        for store in stores:
            meta = self._meta(store)
            out[store] = meta[5] if meta and meta[0] != -1 else 0
        return out

    def ordered(self, stores: list[str], where: Where | None = None,
                limited: bool = False) -> Iterator[tuple[str, str, dict]]:
        """Entries of ``stores`` passing ``where``: newest timestamp first, then store, key.
        ``limited``: the caller stops after a few (it has a limit)."""
        where = where or Where()
        marks = ",".join("?" * len(stores))
        # Every store and a limit: `+store` keeps SQLite off the primary key (which would read
        # and sort every row), so it walks by_time in result order and stops at the caller's
        # limit (a one-word search at 10,000 entries: ~1.5 ms instead of ~60). Without a limit
        # every row is read anyway, and reading the table in its order, then sorting what
        # passed, is faster than a lookup per row from by_time (`list --tag` at 10,000: ~20 ms).
        column = "+store" if limited and set(stores) >= set(model.STORES) else "store"
        cursor = self.db.execute(
            f"SELECT store, key, body FROM entries WHERE {column} IN ({marks}) AND {where.sql()} "
            "ORDER BY ts DESC, rank, key", [*stores, *where.params])
        for store, key, body in cursor:
            yield store, key, marshal.loads(body)
