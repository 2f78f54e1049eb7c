"""SINCE YOUR LAST SESSION: what others changed since an author's last commit, from git.

The answer comes from the history, never from a marker file: the author's
last session ended with their newest commit, and everything others committed
after it is news to them. ``ctx brief`` and ``ctx start`` show it.

The commits are read once into a log kept in the read index's SQLite file
(``.git/ctx/``, beside ``histindex``'s versions):

* ``log_commits(seq, id, time, author, operation, merge)``: one row per commit,
  indexed by (author, merge, seq): an author's newest commit is one lookup;
* ``log_keys(seq, store, key, author, time, operation)``: one row per entry a
  commit names in its ``Ctx-Key`` trailers, indexed by (store, key, seq);
* ``log_latest(store, key, seq, author, time, operation, prev)``: each entry's
  newest change (and the operation of the one before it, which tells a new
  entry from a changed one), indexed by seq;
* ``log_state``: the tip (the HEAD the log was read up to) and the layout's version.

Besides the entries a commit's trailers name, ``log_keys`` holds what only its tree
shows (``_tree_changes``): a RULES.md change, as the pseudo-entry ("", "RULES.md")
(``SinceChange.store`` None), and, for a commit not made by a ctx entry write (a plain
git commit, a store file edited outside ctx: ``FOREIGN``), each entry it deleted.
(tests/git/test_since_files.py holds these.)

An answer is three indexed queries: the author's newest commit; the entries
whose newest change comes after it, newest first, up to the limit; and how
many there are. (An entry's newest change after the author's newest commit is
never the author's own, and merges name no entry: no filtering by author.)

``seq`` is the order in which commits entered this repository's history: a
post-order walk from HEAD, first parent first, so the commits a merge brought
in from another machine come just before the merge, after everything that was
here already. On a straight history it is commit time order, exact within a
second; and a change made elsewhere is news when it arrives here, even if it
was made before this author's last commit. (A log read from scratch orders a
fast-forward to another machine's merge by that machine's first parent.)

Freshness: when HEAD (read from .git's files: ``refs.head_id``) is the
remembered tip, the answer comes straight from the log and pygit2 is not
imported. Otherwise only the commits since the tip are read (a straight run of
loose commits from ``.git/objects`` directly; anything else with pygit2) and
appended in one transaction; a tip that is no longer an ancestor of HEAD (``ctx
purge`` rewrote the history) makes the log be read again from scratch. With
``write=False`` (``ctx start``, which writes nothing) the commits since the tip
are held in memory and combined with the stored log, and with no usable log
the whole history is read into a database in memory.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.brief import Since
    from ctx.storage.files import StrPath
    from ctx.storage.index import Index

from ctx.model import STORES
from ctx.storage import indextables
from ctx.storage.index import sqlite3  # (the module the index connects through)
from ctxgit.gitfiles import layout
from ctxgit.gitfiles.refs import head_id

VERSION = indextables.SINCE_LOG_VERSION  # the log's layout (its tables: ctx/storage/indextables.py)
LOOSE_STEPS = 1000  # commits read straight from .git/objects before pygit2 takes over
KINDS = {"amend": "amended", "supersede": "superseded", "resolve": "resolved",
         "delete": "deleted", "cleanup": "deleted"}
DELETING = frozenset({"delete", "cleanup"})
CREATING = frozenset({"set", "send", "handoff"})  # may make an entry: new when nothing came before
# Not an entry write of ctx's (a plain git commit, a file changed outside ctx, the root's set-up): its
# trailers name no entry, so the entries it deleted are read from its tree against its parent's.
FOREIGN = frozenset({"", "external", "init"})
RULES = "RULES.md"
FILE_STORE = ""  # the "store" of a file of the context's own (RULES.md): SinceChange.store None
FILE_CHANGE = "file"  # the operation of such a change in the log: kind "changed"

_UPSERT = ("INSERT INTO log_latest VALUES (?,?,?,?,?,?,NULL) ON CONFLICT(store, key) DO UPDATE SET "
           "prev = log_latest.operation, seq = excluded.seq, author = excluded.author, "
           "time = excluded.time, operation = excluded.operation")
_MISSING = object()

# A commit as the log keeps it: (id, time, author, operation, merge, [(store, key), ...]).
Row = tuple


def since_last_session(root: StrPath, author: str, limit: int = 10, write: bool = True,
                       index: Index | None = None) -> Since | None:
    """What others changed since ``author``'s last commit in the context at ``root``,
    newest first, one change per entry, at most ``limit`` (``more`` counts the rest).

    None when the root has no repository, no commit, or a history that cannot be
    read. With ``write=False`` nothing is written anywhere (the commits since the
    stored log's tip are read into memory only). ``index``: the read index of ``root``
    already open in this process (``Context.opened_index``): its connection is used, and
    left open (one connection per process); writable if ``write``.
    """
    head = head_id(root)
    if head is None:
        return None
    name = author
    if not author or author != author.strip() or any(c in "<>" or c < " " for c in author):
        from ctxgit.gitfiles.identity import author_identity  # the name as ctx commits it
        name = author_identity(author)[0]
    limit = max(limit, 0)
    own = index is None or (write and not index.writable)
    if own:
        from ctx.storage.index import Index
        index = Index.open(root, layout.state_dir(root), writable=write)
    if index is not None:
        try:
            found = (_on_disk if write else _read_only)(index.db, root, head, name, limit)
            if found is not None:
                return found
        except sqlite3.Error:
            pass
        finally:
            if own:
                index.close()
    return _in_memory(root, head, name, limit)


# --- answering -------------------------------------------------------------------------

def _answer(db: sqlite3.Connection, author: str, limit: int, new: list[Row] | None = None) -> Since:
    """The author's newest commit, then the newest change of each entry after it.

    From the stored log, three indexed queries. ``new`` (the commits since the
    stored tip, held in memory: ``write=False``) are newer than every stored
    commit, and are looked at first.
    """
    from ctx.brief import Since, SinceChange
    new = new or []
    base = db.execute("SELECT coalesce(max(seq), 0) FROM log_commits").fetchone()[0] if new else 0
    last = None
    for seq in range(len(new), 0, -1):
        row = new[seq - 1]
        if row[2] == author and not row[4]:
            last = (base + seq, row[1])
            break
    if last is None:
        last = db.execute("SELECT seq, time FROM log_commits WHERE author = ? AND merge = 0 "
                          "ORDER BY seq DESC LIMIT 1", (author,)).fetchone()
    after = last[0] if last else 0
    # the newest change of each entry among the new commits, with the one before it
    newest: dict[tuple[str, str], list] = {}
    for seq, (_, when, who, op, _merge, names) in enumerate(new, base + 1):
        for store, key, name_op in _named(names, op):
            before = newest.get((store, key))
            newest[(store, key)] = [seq, who, when, name_op, before[3] if before else _MISSING]
    found: list[tuple] = []
    overlap = 0
    for (store, key), (seq, who, when, op, prev) in sorted(newest.items(), key=lambda kv: -kv[1][0]):
        stored = None
        if after <= base or (seq > after and prev is _MISSING and op in CREATING):  # else not needed
            stored = db.execute("SELECT seq, operation FROM log_latest WHERE store = ? AND key = ?",
                                (store, key)).fetchone()
        if stored is not None and stored[0] > after:
            overlap += 1
        if seq > after:
            found.append((store, key, who, when, op, stored[1] if prev is _MISSING and stored else
                          None if prev is _MISSING else prev))
    total = len(found) - overlap + db.execute("SELECT count(*) FROM log_latest WHERE seq > ?",
                                              (after,)).fetchone()[0]
    if len(found) < limit:
        for row in db.execute("SELECT store, key, author, time, operation, prev FROM log_latest "
                              "WHERE seq > ? ORDER BY seq DESC LIMIT ?", (after, limit + len(newest))):
            if (row[0], row[1]) not in newest:
                found.append(row)
                if len(found) >= limit:
                    break
    changes = [SinceChange(store if store != FILE_STORE else None, key, who, _rfc(when), _kind(op, prev))
               for store, key, who, when, op, prev in found[:limit]]
    return Since(author, _rfc(last[1]) if last else None, changes, max(total - len(changes), 0))


def _kind(operation: str, before: str | None) -> str:
    if operation in CREATING:
        return "new" if before is None or before in DELETING else "changed"
    return KINDS.get(operation, "changed")


def _rfc(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


# --- the log on disk -------------------------------------------------------------------

def _tip(db: sqlite3.Connection) -> str | None:
    """The HEAD the stored log was read up to; None when there is no usable log."""
    try:
        state = dict(db.execute("SELECT name, value FROM log_state").fetchall())
    except sqlite3.OperationalError:  # no such table: never built
        return None
    return state.get("tip") if state.get("version") == VERSION else None


def catch_up(root: StrPath) -> bool:
    """Bring the stored log up to HEAD: after writes (``sincelag.py`` says which), so that
    ``ctx start`` (which writes nothing, and reads the commits past the log's tip into
    memory each time) finds it nearly current. False when there is no log to keep."""
    head = head_id(root)
    if head is None:
        return False
    from ctx.storage.index import Index
    index = Index.open(root, layout.state_dir(root), writable=True)
    if index is None:
        return False
    try:
        return _bring_up_to_date(index.db, root, head)
    except sqlite3.Error:
        return False
    finally:
        index.close()


def _on_disk(db: sqlite3.Connection, root: StrPath, head: str, author: str, limit: int) -> Since | None:
    """Bring the stored log up to HEAD (in one transaction), then answer from it."""
    if not _bring_up_to_date(db, root, head):
        return None
    db.execute("BEGIN")  # one snapshot for every query
    try:
        return _answer(db, author, limit)
    finally:
        db.execute("COMMIT")


def _bring_up_to_date(db: sqlite3.Connection, root: StrPath, head: str) -> bool:
    """Append the commits since the stored tip (or read the whole log again); False when
    the history cannot be read."""
    if _tip(db) is None:  # no usable log (none, another layout, a half-made one): read it all again
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'log_state'").fetchone() and \
                db.execute("SELECT value FROM log_state WHERE name = 'version'").fetchone() != (VERSION,):
            indextables.drop(db, indextables.SINCE_LOG)
        indextables.create(db, indextables.SINCE_LOG)
    for attempt in range(3):  # another process may bring it up to date meanwhile: then use its work
        if attempt:
            head = head_id(root) or head
        tip = _tip(db)
        if tip == head:
            break
        found = _new_commits(root, head, tip)
        if found is None:
            return False
        rows, reset = found
        db.execute("BEGIN IMMEDIATE")
        try:
            if _tip(db) != tip:
                db.execute("ROLLBACK")
                continue
            if reset:
                for table in ("log_commits", "log_keys", "log_latest"):
                    db.execute(f"DELETE FROM {table}")
            _insert(db, rows)
            db.executemany("INSERT OR REPLACE INTO log_state VALUES (?, ?)",
                           [("version", VERSION), ("tip", head)])
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        break
    else:
        return False
    return True


def _read_only(db: sqlite3.Connection, root: StrPath, head: str, author: str, limit: int) -> Since | None:
    """The stored log as it is, and the commits since its tip held in memory."""
    for _ in range(3):
        db.execute("BEGIN")
        try:
            tip = _tip(db)
            if tip == head:
                return _answer(db, author, limit)
        finally:
            db.execute("COMMIT")
        if tip is None:
            return None
        found = _new_commits(root, head, tip)
        if found is None:
            return None
        rows, reset = found
        if reset:
            return _in_memory(root, head, author, limit, rows)
        db.execute("BEGIN")
        try:
            if _tip(db) == tip:  # else the stored log moved on meanwhile: start again from it
                return _answer(db, author, limit, rows)
        finally:
            db.execute("COMMIT")
    return None


def _in_memory(root: StrPath, head: str, author: str, limit: int, rows: list[Row] | None = None) -> Since | None:
    """The whole history read into a database in memory: no index to use or to write."""
    if rows is None:
        found = _new_commits(root, head, None)
        if found is None:
            return None
        rows = found[0]
    db = sqlite3.connect(":memory:", isolation_level=None)
    try:
        indextables.create(db, indextables.SINCE_LOG)
        _insert(db, rows)
        return _answer(db, author, limit)
    finally:
        db.close()


def _insert(db: sqlite3.Connection, rows: list[Row]) -> None:
    """Append ``rows`` (oldest first) to the log, after its last ``seq``."""
    after = db.execute("SELECT coalesce(max(seq), 0) FROM log_commits").fetchone()[0]
    commit_rows = []
    key_rows = []
    for seq, (oid, when, who, op, merge, names) in enumerate(rows, after + 1):
        commit_rows.append((seq, oid, when, who, op, merge))
        key_rows += [(seq, store, key, who, when, name_op) for store, key, name_op in _named(names, op)]
    db.executemany("INSERT INTO log_commits VALUES (?,?,?,?,?,?)", commit_rows)
    db.executemany("INSERT OR IGNORE INTO log_keys VALUES (?,?,?,?,?,?)", key_rows)
    db.executemany(_UPSERT, [(store, key, seq, who, when, op) for seq, store, key, who, when, op in key_rows])


# --- reading the commits ---------------------------------------------------------------

def _row(oid: str, when: int, author: str, message: str, parents: int) -> Row:
    from ctxgit.gitfiles.trailers import trailers  # (not at the top: an answer from the log reads none)
    found = trailers(message)
    op = (found.get("Ctx-Operation") or [""])[0]
    merge = parents > 1 or op == "merge"
    return (oid, when, author, op, int(merge), [] if merge else _keys(found))


def _named(names: list[tuple], op: str):
    """(store, key, operation) of each name of a commit: a trailer's name takes the commit's
    operation; a name read from the tree (RULES.md, an entry deleted) carries its own."""
    for name in names:
        yield (name[0], name[1], op) if len(name) == 2 else name


def _tree_changes(repo, commit, op: str) -> list[tuple[str, str, str]]:
    """What a commit changed that its trailers do not say (pygit2): RULES.md against its
    first parent (a root commit's RULES.md is the context's set-up, not news), and for a
    commit not made by a ctx entry write (``FOREIGN``) the entries it deleted."""
    if not commit.parents:
        return []
    tree, before = commit.tree, commit.parents[0].tree
    out: list[tuple[str, str, str]] = []
    if _tree_id(tree, RULES) != _tree_id(before, RULES):
        out.append((FILE_STORE, RULES, FILE_CHANGE))
    if op in FOREIGN and _tree_id(tree, "memory") != _tree_id(before, "memory"):
        for store in STORES:
            path = f"memory/{store}.json"
            old, new = _tree_id(before, path), _tree_id(tree, path)
            if old is not None and old != new:
                kept = set(_entry_keys(repo, new))
                out += [(store, key, "delete") for key in _entry_keys(repo, old) if key not in kept]
    return out


def _tree_id(tree, path: str):
    try:
        return tree[path].id
    except KeyError:
        return None


def _entry_keys(repo, oid) -> list[str]:
    """The keys of a store file's blob (none when it is not one ctx could read)."""
    import json
    if oid is None:
        return []
    try:
        data = json.loads(repo[oid].data)
    except (ValueError, UnicodeDecodeError, KeyError, AttributeError):
        return []
    entries = data.get("entries") if isinstance(data, dict) else None
    return list(entries) if isinstance(entries, dict) else []


def _keys(trailers: dict[str, list[str]]) -> list[tuple[str, str]]:
    """The entries a commit names: ``Ctx-Store`` + ``Ctx-Key``, or ``Ctx-Key: store/key``."""
    stores = trailers.get("Ctx-Store", [])
    out: list[tuple[str, str]] = []
    for name in trailers.get("Ctx-Key", []):
        if len(stores) == 1:
            out.append((stores[0], name))
            continue
        store, sep, key = name.partition("/")
        if sep and store in STORES and key:
            out.append((store, key))
        elif name:
            out.append((stores[0] if stores else "shared", name))
    return list(dict.fromkeys(out))


def _new_commits(root: StrPath, head: str, tip: str | None) -> tuple[list[Row], bool] | None:
    """The commits HEAD has that the log read up to ``tip`` lacks, oldest first, and
    whether they replace the log (no tip, or a tip HEAD no longer descends from)."""
    found = _loose_run(os.path.join(root, ".git"), head, tip)
    if found is not None:
        return found
    return _walk(root, head, tip)


def _loose_run(git: StrPath, head: str, tip: str | None) -> tuple[list[Row], bool] | None:
    """A straight run of loose commits from HEAD back to ``tip`` (or to the first
    commit), read from .git/objects without pygit2; None for anything else: a merge, a
    commit not made by a ctx entry write (``FOREIGN``: pygit2 reads what its tree deleted).
    Each commit's RULES.md is compared with its parent's (a root tree entry: one small read)."""
    rows: list[Row] = []
    current = head
    later_rules: object = _MISSING  # RULES.md's blob id in the commit read just before (the child)
    for _ in range(LOOSE_STEPS + 1):
        commit = _read_loose(git, current)
        if commit is None:
            return None
        parents, author, when, message, tree = commit
        rules = _loose_entry(git, tree, RULES)
        if rules is _MISSING:
            return None
        if rows and rules != later_rules:  # the child changed RULES.md
            rows[-1][5].append((FILE_STORE, RULES, FILE_CHANGE))
        if current == tip:
            return rows[::-1], False
        if len(rows) == LOOSE_STEPS or len(parents) > 1:
            return None
        row = _row(current, when, author, message, len(parents))
        if row[3] in FOREIGN and parents:
            return None
        rows.append(row)
        later_rules = rules
        if not parents:
            return rows[::-1], True  # the whole history, and no tip in it: read it all again
        current = parents[0]
    return None


def _read_loose(git: StrPath, oid: str) -> tuple[list[str], str, int, str, str] | None:
    """(parents, author name, author time, message, tree id) of a loose commit object."""
    from ctxgit.gitfiles import objects  # (not at the top: an answer from the log reads none, nor zlib)
    found = objects.read(git, oid)
    if found is None or found[0] != b"commit" or not found[1].startswith(b"tree "):
        return None
    fields = objects.commit_fields(found[1])
    if fields is None:
        return None
    return (*fields, found[1][5:45].decode("ascii", "replace"))


def _loose_entry(git: StrPath, tree: str, name: str) -> object:
    """The blob id of ``name`` in the loose tree ``tree`` (None: no such entry);
    ``_MISSING`` when the tree is not a loose object this can read."""
    from ctxgit.gitfiles import objects
    found = objects.read(git, tree)
    if found is None or found[0] != b"tree":
        return _MISSING
    body, at, wanted = found[1], 0, name.encode()
    while at < len(body):
        space = body.find(b" ", at)
        nul = body.find(b"\0", space)
        if space < 0 or nul < 0 or nul + 21 > len(body):
            return _MISSING
        if body[space + 1:nul] == wanted:
            return body[nul + 1:nul + 21].hex()
        at = nul + 21
    return None


def _walk(root: StrPath, head: str, tip: str | None) -> tuple[list[Row], bool] | None:
    """With pygit2: every commit HEAD reaches and ``tip`` does not, in the order they
    entered the history (post-order from HEAD, first parent first)."""
    from pathlib import Path

    import pygit2
    from pygit2.enums import SortMode

    from ctx.errors import GitError
    from ctxgit.plumbing.repo import open_repo
    try:
        repo = open_repo(Path(root))
        if repo is None:
            return None
        start = pygit2.Oid(hex=head)
        if not isinstance(repo.get(start), pygit2.Commit):
            return None
    except (GitError, pygit2.GitError, ValueError):
        return None
    hide = None
    if tip is not None:
        try:
            hide = pygit2.Oid(hex=tip)
            if not (hide == start or repo.descendant_of(start, hide)):
                hide = None
        except (ValueError, KeyError, pygit2.GitError):
            hide = None
    if hide == start:
        return [], False
    try:
        walker = repo.walk(start, SortMode.NONE)
        if hide is not None:
            walker.hide(hide)
        new = {c.id: c for c in walker}
        return _ordered(new, start, repo), hide is None
    except (pygit2.GitError, KeyError, OSError, ValueError):
        return None  # an unreadable history: no answer, never a failed start


def _ordered(new: dict, start, repo=None) -> list[Row]:
    """``new`` (id -> commit), parents before children, each merge's other parents'
    commits just before it: a post-order walk from ``start``, first parent first. With
    ``repo``, what each commit's tree changed besides its trailers (``_tree_changes``)."""
    order: list[Row] = []
    seen = {start}
    stack = [[start, new[start].parent_ids, 0]]
    while stack:
        frame = stack[-1]
        oid, parents, at = frame
        while at < len(parents) and (parents[at] not in new or parents[at] in seen):
            at += 1
        if at < len(parents):
            frame[2] = at + 1
            parent = parents[at]
            seen.add(parent)
            stack.append([parent, new[parent].parent_ids, 0])
            continue
        stack.pop()
        commit = new[oid]
        author = commit.author
        row = _row(str(oid), author.time, author.name, commit.message, len(parents))
        if repo is not None and not row[4]:
            row[5].extend(_tree_changes(repo, commit, row[3]))
        order.append(row)
    return order
