"""A rebuildable index of the stores, so reads need not parse whole store files.

One SQLite file, ``FILE`` in the root's state folder (``Context.state``: the
front door names it, inside the repository: never part of the work tree,
never committed; no folder, no index), holds a row per entry: the entry in Python's
``marshal`` form, its value apart (ctx/storage/rows.py; marshal is built in, so a read need not
import ``json``: test_fastcli.py, test_a_read_loads_only_what_it_uses; the file is this
machine's own cache, never shared) and the
columns that reads filter and order by. It is derived data (§8.2): each
store's rows are valid only while the store file has the identity (size,
mtime, inode) recorded with them; any other writer changes that identity
and the next read rebuilds the rows from the file.

A file written within ``RACY_NS`` of being indexed (git calls this "racily
clean") could change again without its identity changing, so its rows also
carry a CRC of the bytes, checked until the file is older than that window.

Every query the index answers is re-checked in Python by the caller: the
SQL only narrows and orders, the Python predicate decides, but for a filter by
store and tags alone, whose SQL is the predicate itself (``Where.decides``, held
by the differential tests of tests/core/test_entrytags.py). Any SQLite trouble
makes the index unavailable, never a read wrong.
"""

from __future__ import annotations

import marshal
import os
import time

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Iterator
    from typing import Any

    from ctx.storage.files import StrPath
else:
    try:  # the module that sqlite3 re-exports (without the package's adapters, which import datetime)
        import _sqlite3 as sqlite3
    except ImportError:  # (an interpreter without it: the package)
        import sqlite3

from ctx import model
from ctx.storage import indextables
from ctx.storage.files import REQUIRED_FIELDS, Identity, read_raw, remove, store_path
from ctx.storage.indextables import FILE, MARSHAL_VERSION, RACY_NS, SEP
from ctx.storage.rows import joined, split

# search --semantic: a word held by this share of the entries or more (in a context of COMMON_FROM
# or more) adds to no entry's word score ("the", "to": they tell nothing, and would read most rows)
COMMON = 0.125
COMMON_FROM = 64

# SQLite reads the file's pages through a mapping of this much of it, not a read call and a
# copy each (a list by tag reads a thousand entries' pages: bench/compare.py --only list). Only
# SQLite writes the file, under its locks, which remap it when its size changed; a file past
# this is read the ordinary way beyond it.
MAPPED = 256 << 20


def index_path(state: StrPath) -> str:
    """The index file in the state folder ``state`` (``Context.state``)."""
    return os.path.join(state, FILE)


def drop(state: StrPath | None) -> bool:
    """Remove the index (``ctx reindex``); the next read rebuilds it. True if there was one."""
    if state is None:
        return False
    removed = [remove(index_path(state) + suffix) for suffix in ("", "-journal", "-wal", "-shm")]  # (each one)
    return any(removed)


_URI_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")


def file_uri(path: StrPath) -> str:
    """``path`` as a ``file:`` URI (what SQLite opens with ``?mode=ro``): every byte but the
    unreserved ones escaped, as ``Path.as_uri`` does, without pathlib."""
    raw = os.fsencode(os.path.abspath(path))
    return "file://" + "".join(chr(b) if b in _URI_SAFE else f"%{b:02X}" for b in raw)


def row_for(store: str, key: str, entry: dict[str, Any]) -> tuple:
    """The indexed columns of one entry (SQL narrows on them; Python decides)."""
    tags = model.text_tags(entry)
    tags_text = "" if tags is None else SEP + SEP.join(tags) + SEP
    status = entry.get("status") or None
    scope = entry.get("scope", "global")
    due = entry.get("due")  # a due date (ctx/resurface.py): the DUE section finds them by by_due
    body, value = split(entry)
    return (store, key, model.STORES.index(store), model.ts_seconds(entry.get("timestamp")),
            entry.get("source") if isinstance(entry.get("source"), str) else None,
            status if isinstance(status, str) else ("?" if status else None),
            scope if isinstance(scope, str) else None, tags_text, key.lower(),
            model.value_text(entry.get("value")).lower(), body, due if isinstance(due, str) else None, value)


def tag_rows(store: str, key: str, entry: dict[str, Any]) -> list[tuple[str, float, int, str, str]]:
    """The ``entry_tags`` rows of one entry: (tag, its ``ts``, its ``rank``, key, store) for
    each tag ``--tag`` finds it by (``model.text_tags``), once each (a tag named twice: one
    row). Its time and rank are the ones ``row_for`` gives the entry's own row."""
    tags = model.text_tags(entry)
    if not tags:
        return []
    ts, rank = model.ts_seconds(entry.get("timestamp")), model.STORES.index(store)
    return [(tag, ts, rank, key, store) for tag in dict.fromkeys(tags)]


class Where:
    """A SQL condition (and its parameters) that passes every entry a query wants."""

    __slots__ = ("clauses", "params", "selective", "index", "tag", "decides")

    def __init__(self) -> None:
        self.clauses: list[str] = []
        self.params: list[Any] = []
        self.selective = False  # the clauses pass few rows through an index of their own (by_due)
        self.index: str | None = None  # the index SQLite must walk (``through``)
        self.tag: str | None = None  # the one tag whose rows of ``entry_tags`` are walked (``tags``)
        # the clauses pass exactly the entries the caller's predicate accepts, so the rows need
        # no test again (``Filters.where``; tests/core/test_entrytags.py holds it for tags)
        self.decides = False

    def narrowing(self) -> Where:
        """Mark the clauses as narrower than the stores: SQLite walks their index, not every row."""
        self.selective = True
        return self

    def through(self, index: str) -> Where:
        """Walk ``index`` (its clauses must let it serve): without statistics SQLite's planner
        takes by_time for an open range such as ``due > ?`` and reads every row (ctx/resurface.py's stale entries, at
        every brief; tests/core/test_cache.py, test_the_due_section_walks_the_due_index_only)."""
        self.index = index
        return self.narrowing()

    def add(self, clause: str, *params: Any) -> Where:
        self.clauses.append(clause)
        self.params.extend(params)
        return self

    def tags(self, tags: Iterable[str]) -> Where:
        """Entries under any of ``tags``, by their rows of ``entry_tags``. One tag: its rows
        are walked by the table's primary key, which is the result order, each entry found
        by its own, so no sort and a limit stops the walk (tests/core/test_entrytags.py,
        test_a_list_by_one_tag_walks_its_rows_in_result_order); several: the rows of those
        tags, then each entry by its key, then a sort (test_a_filter_by_tag_reads_the_tag_table_not_every_entry);
        when another index is walked (``through``, called first), each entry it passes is
        looked up in the table by the whole key of its row instead (tests/core/test_cache.py,
        test_the_brief_reads_instructions_and_decisions_by_indexes_of_their_own)."""
        tags = list(dict.fromkeys(tags))
        if not tags:
            return self
        marks = ",".join("?" * len(tags))
        if self.index is not None:
            return self.add(f"EXISTS (SELECT 1 FROM entry_tags WHERE tag IN ({marks}) AND tag_ts = entries.ts "
                            "AND tag_rank = entries.rank AND tag_key = entries.key AND tag_store = entries.store)",
                            *tags)
        if len(tags) == 1 and self.tag is None:
            self.tag = tags[0]
            return self.narrowing()
        return self.add(f"(store, key) IN (SELECT tag_store, tag_key FROM entry_tags WHERE tag IN ({marks}))",
                        *tags).narrowing()

    def key_prefix(self, prefix: str) -> Where:
        """Keys starting with ``prefix`` (not empty), as a range the primary key can walk."""
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        return self.add("key >= ? AND key < ?", prefix, upper)

    def sql(self) -> str:
        return " AND ".join(self.clauses) if self.clauses else "1"


class Index:
    """The index of one context root. ``Index.open`` returns None when there is none."""

    def __init__(self, root: StrPath, db: sqlite3.Connection, writable: bool) -> None:
        self.root, self.db, self.writable = root, db, writable
        self._fresh: set[str] = set()

    @classmethod
    def open(cls, root: StrPath, state: StrPath | None, writable: bool, create: bool = True) -> Index | None:
        """The index of ``root``'s stores kept in the state folder ``state``. The folder is
        made when missing, its parent never (it exists once the root has a repository)."""
        if state is None:
            return None
        path = index_path(state)
        try:
            if not os.path.exists(path):
                if not writable or not create or not os.path.isdir(os.path.dirname(os.path.abspath(state))):
                    return None
                os.makedirs(state, mode=0o700, exist_ok=True)
                import glob
                for old in glob.glob(os.path.join(glob.escape(os.fspath(state)), indextables.OLD_FILES)):
                    remove(old)  # the indexes before it (another process may remove it first)
            uri = file_uri(path) + ("" if writable else "?mode=ro")
            db = sqlite3.connect(uri, uri=True, timeout=2.0, isolation_level=None,
                                 check_same_thread=False)
            db.execute(f"PRAGMA mmap_size={MAPPED}")
            if writable:
                # a rollback journal, not WAL: a read-only reader (ctx start) then writes nothing
                db.execute("PRAGMA synchronous=OFF")
                indextables.create(db, indextables.ENTRIES)
            return cls(root, db, writable)
        except (sqlite3.Error, OSError, ValueError):
            return None

    @classmethod
    def memory(cls, root: StrPath, stores: dict[str, dict[str, dict]]) -> Index:
        """An index of ``stores`` in memory, for a search that needs SQL where no index can be kept."""
        db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        indextables.create(db, indextables.ENTRIES)
        index = cls(root, db, writable=True)
        for store, entries in stores.items():
            index.rebuild(store, entries, None, b"")
            db.execute("UPDATE meta SET size = 0, count = ? WHERE store = ?", (len(entries or {}), store))
        return index

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
            import zlib
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
        import zlib
        return (store, identity[0], identity[1], identity[2], int(racy), zlib.crc32(raw) if racy else 0, count)

    def rebuild(self, store: str, entries: dict[str, dict] | None, identity: Identity | None,
                raw: bytes) -> None:
        """Index ``entries`` as the content of the store file with ``identity``."""
        if not self.writable:
            return
        rows = [row_for(store, k, e) for k, e in (entries or {}).items()]
        tags = [t for k, e in (entries or {}).items() for t in tag_rows(store, k, e)]
        incomplete = tuple((k, ", ".join(sorted(REQUIRED_FIELDS - e.keys())))
                           for k, e in (entries or {}).items() if not REQUIRED_FIELDS <= e.keys())
        with self._transaction():
            self.db.execute("DELETE FROM entries WHERE store = ?", (store,))
            self.db.execute("DELETE FROM entry_tags WHERE tag_store = ?", (store,))
            self.db.executemany("INSERT OR REPLACE INTO entries VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            self.db.executemany("INSERT OR REPLACE INTO entry_tags VALUES (?,?,?,?,?)", tags)
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
        import zlib
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
                before = self.db.execute("SELECT body FROM entries WHERE store = ? AND key = ?",
                                         (store, key)).fetchone()
                # (the version before's rows, each by the whole primary key: its body has its tags and time)
                if before is not None:
                    self.db.executemany("DELETE FROM entry_tags WHERE tag = ? AND tag_ts = ? AND tag_rank = ? "
                                        "AND tag_key = ? AND tag_store = ?",
                                        tag_rows(store, key, marshal.loads(before[0])))
                if entry is None:
                    self.db.execute("DELETE FROM entries WHERE store = ? AND key = ?", (store, key))
                else:
                    self.db.execute("INSERT OR REPLACE INTO entries VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                                    row_for(store, key, entry))
                    self.db.executemany("INSERT OR REPLACE INTO entry_tags VALUES (?,?,?,?,?)",
                                        tag_rows(store, key, entry))
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

    def _text_table_current(self, group: str, table: str, text: str, stores: list[str]) -> bool:
        """Bring ``table`` (an FTS5 table of ``group``, with its ``<table>_meta``) up to the
        entries of ``stores``: a store's rows are copied again (``text``: the SQL of each
        entry's text) when its file's identity moved on. False when a store's rows are
        not current (a read-only index that is behind); raises sqlite3.Error without FTS5."""
        if self.writable:
            indextables.create(self.db, group)
            for store in stores:
                meta = self._meta(store)
                done = self.db.execute(f"SELECT size, mtime, ino FROM {table}_meta WHERE store = ?",
                                       (store,)).fetchone()
                if meta is not None and done != tuple(meta[:3]):
                    with self._transaction():
                        self.db.execute(f"DELETE FROM {table} WHERE store = ?", (store,))
                        self.db.execute(f"INSERT INTO {table}(store, key, text) SELECT store, key, {text} "
                                        "FROM entries WHERE store = ?", (store,))
                        self.db.execute(f"INSERT OR REPLACE INTO {table}_meta VALUES (?,?,?,?)",
                                        (store, *meta[:3]))
        for store in stores:
            meta, done = self._meta(store), self.db.execute(
                f"SELECT size, mtime, ino FROM {table}_meta WHERE store = ?", (store,)).fetchone()
            if meta is None or done != tuple(meta[:3]):
                return False
        return True

    def fulltext(self, stores: list[str], query: list[str]) -> list[tuple[str, str]] | None:
        """Candidates holding every query word (FTS5), or None when FTS5 is not to be had."""
        try:
            if not self._text_table_current(indextables.FTS, "fts", "lkey || ' ' || lvalue", stores):
                return None
            match = " ".join('"' + word.replace('"', '""') + '"' for word in query)
            marks = ",".join("?" * len(stores))
            return list(self.db.execute(f"SELECT store, key FROM fts WHERE fts MATCH ? AND store IN ({marks})",
                                        [match, *stores]))
        except sqlite3.Error:
            return None

    def ranked_words(self, stores: list[str], terms: list[str]) -> list[tuple[str, str, float, float]] | None:
        """The entries of ``stores`` holding any of ``terms`` (stemmed): (store, key, share, BM25).

        ``share`` is the part of the query's IDF the entry holds (0-1; a term no entry has
        counts as the rarest); BM25 is FTS5's (higher is better). A term that many entries hold
        adds to no entry's share (``COMMON``). None when FTS5 is not to be had or its rows
        cannot be brought up to date."""
        try:
            if not self._text_table_current(indextables.WORDS, "words", "lkey || ' ' || lvalue || ' ' || tags",
                                            stores):
                return None
            from math import log
            quoted = ['"' + term.replace('"', '""') + '"' for term in dict.fromkeys(terms)]
            total = self.db.execute("SELECT coalesce(sum(count), 0) FROM meta WHERE size != -1 "
                                    "AND store IN (SELECT store FROM words_meta)").fetchone()[0]
            weights = []
            for term in quoted:
                hits = self.db.execute("SELECT count(*) FROM words WHERE words MATCH ?", (term,)).fetchone()[0]
                weights.append((term, hits, log(1 + (total - hits + 0.5) / (hits + 0.5))))
            whole = sum(w for _, _, w in weights) or 1.0
            telling = [(term, weight / whole) for term, hits, weight in weights
                       if hits and not (total >= COMMON_FROM and hits >= total * COMMON)]
            if not telling:
                return []
            marks = ",".join("?" * len(stores))
            each = (f"SELECT store, key, ? AS share, -bm25(words) AS score FROM words "
                    f"WHERE words MATCH ? AND store IN ({marks})")
            params = [p for term, share in telling for p in (share, term, *stores)]
            if len(telling) == 1:  # SQLite would fold a lone subquery into the sum, where bm25() may not be
                return list(self.db.execute(each, params))
            return list(self.db.execute("SELECT store, key, sum(share), sum(score) FROM ("
                                        + " UNION ALL ".join([each] * len(telling)) + ") GROUP BY store, key",
                                        params))
        except sqlite3.Error:
            return None

    def texts(self, stores: list[str]) -> list[tuple[str, str, str, str, str]]:
        """(store, key, lower-case key, lower-case value, tags) of every entry, in result order."""
        marks = ",".join("?" * len(stores))
        return list(self.db.execute(f"SELECT store, key, lkey, lvalue, tags FROM entries WHERE store IN ({marks}) "
                                    "ORDER BY ts DESC, rank, key", stores))

    def store_identity(self, store: str) -> tuple | None:
        """(size, mtime, inode) of the store file the rows of ``store`` were built from."""
        meta = self._meta(store)
        return tuple(meta[:3]) if meta is not None else None

    def vector_set(self, store: str, model: str) -> tuple[tuple, bytes, bytes, bytes] | None:
        """The vectors of ``store``'s entries kept for ``model``: (the store's identity they were
        made for, keys, text digests, vectors), or None."""
        try:
            row = self.db.execute("SELECT size, mtime, ino, keys, ids, vecs FROM vector_sets "
                                  "WHERE store = ? AND model = ?", (store, model)).fetchone()
        except sqlite3.Error:
            return None
        return (tuple(row[:3]), row[3], row[4], row[5]) if row else None

    def keep_vector_set(self, store: str, model: str, identity: tuple, keys: bytes, ids: bytes,
                        vecs: bytes) -> None:
        """Keep the vectors of ``store``'s entries for ``model`` (every other model's are dropped)."""
        if not self.writable:
            return
        try:
            indextables.create(self.db, indextables.WORDS)
            with self._transaction():
                self.db.execute("DELETE FROM vector_sets WHERE store = ?", (store,))
                self.db.execute("INSERT INTO vector_sets VALUES (?,?,?,?,?,?,?,?)",
                                (store, model, *identity, keys, ids, vecs))
        except sqlite3.Error:
            pass

    def get(self, store: str, key: str) -> dict | None:
        row = self.db.execute("SELECT body, value FROM entries WHERE store = ? AND key = ?", (store, key)).fetchone()
        return joined(row[0], row[1]) if row else None

    def counts(self, stores: Iterable[str]) -> dict[str, int]:
        out = {}
        for store in stores:
            meta = self._meta(store)
            out[store] = meta[5] if meta and meta[0] != -1 else 0
        return out

    def selection(self, stores: list[str], where: Where | None = None,
                  limited: bool = False) -> tuple[str, list[Any]]:
        """The SQL (and its parameters) of ``ordered``: (store, key, body, value, status, ts) of each row."""
        where = where or Where()
        marks = ",".join("?" * len(stores))
        if where.tag is not None:  # (one tag: its rows of entry_tags in result order, each entry by its key)
            return (f"SELECT entries.store, entries.key, body, value, status, ts FROM entry_tags CROSS JOIN entries "
                    f"ON entries.store = tag_store AND entries.key = tag_key WHERE tag = ? AND tag_store IN ({marks}) "
                    f"AND {where.sql()} ORDER BY tag_ts DESC, tag_rank, tag_key", [where.tag, *stores, *where.params])
        # Every store and a limit: `+store` keeps SQLite off the primary key (which would read
        # and sort every row), so it walks by_time in result order and stops at the caller's
        # limit. Without a limit every row is read anyway, and reading the table in its order,
        # then sorting what passed, costs less than a lookup per row from by_time (bench/run.py).
        column = "+store" if where.selective or (limited and set(stores) >= set(model.STORES)) else "store"
        walked = f"INDEXED BY {where.index} " if where.index else ""
        return (f"SELECT store, key, body, value, status, ts FROM entries {walked}WHERE {column} IN ({marks}) "
                f"AND {where.sql()} ORDER BY ts DESC, rank, key", [*stores, *where.params])

    def ordered(self, stores: list[str], where: Where | None = None,
                limited: bool = False) -> Iterator[tuple[str, str, bytes, bytes | None, str | None, float]]:
        """Entries of ``stores`` passing ``where``: newest timestamp first, then store, key.
        Each as (store, key, body, value, status, ts): the entry kept as ``ctx/storage/rows.py``
        says (``joined`` of body and value), its status column (None: it has no status)
        and its ``ts`` (``model.ts_seconds`` of its timestamp). ``limited``: the caller stops
        after a few (it has a limit)."""
        return self.db.execute(*self.selection(stores, where, limited))
