"""The lines of each tag, kept ready in the read index: what ``ctx list --tag T`` prints.

A row of ``tag_lines`` is one entry under one of its tags: the tag, the entry's
time (``model.ts_seconds``) and order (store rank, key), and the two parts of its
result line that depend on the entry alone (``display.line_parts``: name and status,
then the excerpt). A list by tag walks one range of the table in result order and
adds each line's local time: it decodes no entry and tests none in Python. The
rows are Python's own answer, made from each entry when it is written, so the
tag's SQL test is exact (elsewhere the index only narrows and Python decides).

They are valid for a store while ``tag_meta`` names the same file as ``meta`` (the
identity and CRC of ``ctx/storage/index.py``) and the same ``display.LINE_FORMAT``.
A ctx write keeps them in step (``Index.apply`` calls ``change`` for each entry, in
its transaction); a rebuild of the store's rows forgets them (``forget``), and the
next list by tag makes them again from the entries' rows (``fill``): an index that
an older ctx wrote to (it keeps no tag lines) is never read wrong, only filled again.
"""

from __future__ import annotations

import marshal

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable

from ctx import display, model
from ctx.storage.indextables import SEP

_RECORD = "SELECT size, mtime, ino, digest, count FROM meta WHERE store = ?"  # what a file's rows were made from


def rows(store: str, key: str, entry: dict) -> list[tuple]:
    """The rows of one entry: one per tag it is found by (``model.text_tags``; a tag named
    twice, once)."""
    named = dict.fromkeys(model.text_tags(entry) or ())
    if not named:
        return []
    head, tail = display.line_parts(store, key, entry)
    seconds, rank = model.ts_seconds(entry.get("timestamp")), model.STORES.index(store)
    return [(tag, seconds, rank, key, head, tail) for tag in named]


def current(db: sqlite3.Connection, store: str) -> bool:
    """True when ``store``'s rows describe the file the entries' rows describe."""
    return db.execute("SELECT 1 FROM meta m JOIN tag_meta t ON t.store = m.store AND t.size IS m.size AND "
                      "t.mtime IS m.mtime AND t.ino IS m.ino AND t.digest IS m.digest "
                      "WHERE m.store = ? AND t.format = ?", (store, display.LINE_FORMAT)).fetchone() is not None


def mark(db: sqlite3.Connection, store: str) -> None:
    """Record ``store``'s rows as those of the file ``meta`` names now (in the caller's transaction)."""
    db.execute("INSERT OR REPLACE INTO tag_meta SELECT store, size, mtime, ino, digest, ? FROM meta "
               "WHERE store = ?", (display.LINE_FORMAT, store))


def forget(db: sqlite3.Connection, store: str) -> None:
    """``store``'s rows no longer hold (its entries' rows are rebuilt): the next list fills them."""
    db.execute("DELETE FROM tag_meta WHERE store = ?", (store,))


def change(db: sqlite3.Connection, store: str, key: str, entry: dict | None) -> None:
    """Bring ``store``/``key``'s rows to ``entry`` (None: deleted), while the entries' row
    still holds the version before it (``Index.apply``, in its transaction)."""
    rank = model.STORES.index(store)
    old = db.execute("SELECT ts, tags FROM entries WHERE store = ? AND key = ?", (store, key)).fetchone()
    if old is not None and old[1]:
        db.executemany("DELETE FROM tag_lines WHERE tag = ? AND ts = ? AND rank = ? AND key = ?",
                       [(tag, old[0], rank, key) for tag in old[1].split(SEP) if tag])
    if entry is not None:
        db.executemany("INSERT OR REPLACE INTO tag_lines VALUES (?,?,?,?,?,?)", rows(store, key, entry))


def fill(db: sqlite3.Connection, store: str) -> None:
    """Make ``store``'s rows again from its entries' rows. They are read and their lines made
    a batch at a time, outside any transaction (a write meanwhile
    waits for none of it), then written in one short transaction, unless the entries' rows
    changed in between (the file's record in ``meta`` moved on: the rows stay unmade)."""
    seen = db.execute(_RECORD, (store,)).fetchone()
    made: list[tuple] = []
    after = ""
    while True:
        batch = db.execute("SELECT key, body FROM entries WHERE store = ? AND key > ? AND tags != '' "
                           "ORDER BY key LIMIT 500", (store, after)).fetchall()
        if not batch:
            break
        for key, body in batch:
            made.extend(rows(store, key, marshal.loads(body)))
        after = batch[-1][0]
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute(_RECORD, (store,)).fetchone() == seen and not current(db, store):
            db.execute("DELETE FROM tag_lines WHERE rank = ?", (model.STORES.index(store),))
            db.executemany("INSERT OR REPLACE INTO tag_lines VALUES (?,?,?,?,?,?)", made)
            mark(db, store)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def lines(db: sqlite3.Connection, writable: bool, stores: list[str], tags: Iterable[str],
          limit: int | None = None) -> list[str] | None:
    """The result lines of the entries of ``stores`` holding any of ``tags``, in result
    order, cut at ``limit``; None when the rows cannot be had (a read-only index behind).
    Raises sqlite3.Error (``Index.tag_lines`` answers None then)."""
    tags = list(dict.fromkeys(tags))
    for store in stores:
        if not current(db, store):
            if not writable:
                return None
            fill(db, store)
            if not current(db, store):  # (a write came between: its rows are not to be had now)
                return None
    line_at, found = display.line_at, db.execute(*query(stores, tags, limit)).fetchall()
    if len(tags) == 1:
        return [line_at(head, seconds, tail) for seconds, head, tail, *_ in found]
    out: list[str] = []
    last = None
    for seconds, head, tail, rank, key in found:  # an entry under two tags comes twice, one after the other
        if (rank, key) != last:
            out.append(line_at(head, seconds, tail))
            last = (rank, key)
            if limit is not None and len(out) >= limit:
                break
    return out


def query(stores: list[str], tags: list[str], limit: int | None = None) -> tuple[str, list]:
    """The SQL (and its parameters) of ``lines``: for one tag, one range of the table walked
    in result order, stopping at ``limit``; for more, their rows sorted."""
    sql = (f"SELECT ts, head, tail{'' if len(tags) == 1 else ', rank, key'} FROM tag_lines "
           f"WHERE tag IN ({','.join('?' * len(tags))})")
    params: list = list(tags)
    if set(stores) != set(model.STORES):
        # (`+rank`: SQLite would otherwise sort the range it walks in order already)
        sql += f" AND +rank IN ({','.join('?' * len(stores))})"
        params += [model.STORES.index(store) for store in stores]
    sql += " ORDER BY ts DESC, rank, key"
    if limit is not None and len(tags) == 1:
        sql += " LIMIT ?"
        params.append(limit)
    return sql, params
