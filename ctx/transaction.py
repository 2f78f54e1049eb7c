"""The one write path: lock, settle the disk, read, change, atomic write, commit.

``transact`` takes the context lock, lets the recorder prepare (commit what
changed on disk outside ctx), reads the stores (through the read index when
it describes the files on disk: only the entries a write changes are read),
lets the caller change them, writes them atomically, and hands the change to
the recorder before the lock is released. When the commit fails, every file
written is put back as it was. ``Context.transact`` is its door.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from collections.abc import Callable

    from ctx.changes import Change, Edit, Outcome
    from ctx.recorder import Recorder
    from ctx.storage.cache import ReadCache
    from ctx.storage.files import StrPath
    from ctx.storage.index import Index

from ctx import model, phases
from ctx.errors import InvalidArgument, StoreError
from ctx.storage.files import (
    StoreFile,
    atomic_write,
    check_writable,
    keep_old,
    put_back,
    read_bytes,
    read_known,
    read_store,
    remove,
    sweep_temporaries,
    write_store,
)
from ctx.storage.lock import context_lock
from ctx.storage.root import ensure_layout


def transact(root: StrPath, author: str | None, recorder: Recorder, cache: ReadCache, operation: str,
             names: list[str], mutate: Callable[[dict[str, StoreFile]], list[Edit] | Outcome], *,
             forced: bool = False, subject: str | None = None,
             trailers: list[tuple[str, str]] | None = None) -> list[Edit]:
    """Write ``names`` (valid store names) of ``root`` through ``mutate`` (``Context.transact``
    says what it may do), as ``author``, recorded by ``recorder``; ``cache``'s index is kept
    in step. The root and memory/ exist already (the lock file is in memory/)."""
    with context_lock(root):
        # what a killed write left, whatever its age: memory/'s temporaries are made only under
        # this lock, so none is a live write's (tests/core/test_store.py)
        sweep_temporaries(os.path.join(root, "memory"), older_than=0)
        recorder.prepare()
        index = cache.for_write()
        phases.lap("prepare")
        try:
            return _locked(root, author, recorder, operation, names, mutate, index, forced, subject, trailers)
        finally:
            cache.release(index)


def _locked(root: StrPath, author: str | None, recorder: Recorder, operation: str, names: list[str], mutate,
            index: Index | None, forced: bool, subject: str | None,
            trailers: list[tuple[str, str]] | None) -> list[Edit]:
    """``transact`` under the lock, the recorder prepared."""
    try:
        stores_read = {name: _read_for_write(root, index, name) for name in names}
        phases.lap("parse")
        result = mutate(stores_read)
    except BaseException:
        recorder.settle()  # what prepare set up is committed, not left lying
        raise
    from ctx.changes import Change, Outcome
    outcome = result if isinstance(result, Outcome) else Outcome(list(result))
    edits = [e for e in outcome.edits if e.before != e.after]
    if not edits and not outcome.files and not outcome.parents:
        recorder.settle()
        return []
    created = ensure_layout(root).created
    changed = list(dict.fromkeys(e.store for e in edits))
    written: list[tuple[str, bytes | None, str | None]] = []  # (path, old bytes, old file's kept name)
    # the commit this write will be, told to the recorder before each file takes its name: a
    # write killed before its commit is committed later as its own, not as an outside change
    # (tests/reliability/test_failed_writes.py)
    own = Change(operation, edits, [], author, forced, outcome.subject or subject,
                 outcome.trailers or trailers or [], outcome.parents)
    try:
        stamp = model.now()
        for name in changed:
            check_writable(stores_read[name])
        old_identity = {}
        replaced_raw: dict[str, bytes | None] = {}
        for name in changed:
            store = stores_read[name]
            old = store.raw if store.exists else None
            replaced_raw[name] = old
            old_identity[name] = store.identity
            store.top["last_updated"] = stamp
            # a second name for the old file: put back by a rename, which a full disk allows
            written.append((store.path, old, keep_old(store.path) if store.exists else None))
            intend = _intent(recorder, own, f"memory/{name}.json")
            if name in outcome.raw:  # serialized by the mutation: only last_updated changes
                store.raw = outcome.raw[name]
                write_store(store, [], intend)
            else:
                write_store(store, [(e.key, e.before, e.after) for e in edits if e.store == name]
                            if outcome.splice else None, intend)
        for rel, content in outcome.files.items():
            _write_file(root, rel, content, written, _intent(recorder, own, rel))
        phases.lap("write")
        paths = ([f"memory/{n}.json" for n in changed] + list(outcome.files)
                 + [p for p in created if not p.endswith("/")])
        contents = {f"memory/{n}.json": stores_read[n].raw for n in changed}
        replaced = {f"memory/{n}.json": old for n in changed if (old := replaced_raw.get(n)) is not None}
        own.paths, own.contents, own.replaced = paths, contents, replaced
        recorder.record(own)
    except BaseException:
        _restore(written)  # a write that is not committed is not made
        raise
    for _path, _old, kept in written:
        if kept is not None:
            try:
                remove(kept)
            except OSError:
                pass  # litter the next write sweeps: the write itself stands
    _index_writes(index, stores_read, changed, old_identity, edits)
    phases.lap("index")
    return edits


def _read_for_write(root: StrPath, index: Index | None, name: str) -> StoreFile:
    """A store as a write reads it. When the index describes the file on disk (parsed
    and checked when indexed, or written by ctx since), its entries are not parsed:
    the write reads and splices only the entries it changes (``files.read_known``).
    Otherwise the file changed outside ctx: it is parsed whole, and indexed again so
    that the next write need not."""
    if index is None:
        return read_store(root, name)
    from ctx.storage.index import sqlite3  # (the module the index connects through)
    index.forget()
    store = read_known(root, name, lambda identity, raw: index.described(name, identity, raw),
                       lambda key: index.get(name, key))
    if store.known is None and not index.fresh([name]):
        try:  # (no file yet: indexed as none, so the write's own rows are applied to that)
            index.rebuild(name, store.entries if store.exists else None, store.identity, store.raw)
        except sqlite3.Error:
            pass
    return store


def _index_writes(index: Index | None, stores: dict[str, StoreFile], changed: list[str],
                  old_identity: dict, edits: list) -> None:
    """Keep the index in step with this write (it is rebuilt later if this fails)."""
    if index is None:
        return
    from ctx.storage.index import sqlite3  # (the module the index connects through)
    try:
        for name in changed:
            store = stores[name]
            assert store.identity is not None  # written just now (``write_store``)
            touched = [(e.key, e.after) for e in edits if e.store == name]
            index.apply(name, old_identity.get(name), store.identity, store.raw, touched,
                        store.count)
    except sqlite3.Error:
        pass


def _intent(recorder: Recorder, change: Change, rel: str) -> Callable[[tuple], None]:
    return lambda identity: recorder.intend(change, rel, identity)


def _write_file(root: StrPath, rel: str, content: bytes | None,
                written: list[tuple[str, bytes | None, str | None]],
                intend: Callable[[tuple], None]) -> None:
    """Write (or with None, remove) one file of the root atomically; its old state is
    added to ``written`` before it is replaced."""
    path = os.path.join(root, rel)
    if os.path.islink(path):
        raise StoreError(f"{path}: is a symbolic link; ctx never writes through a link")
    inside = os.path.realpath(root)
    if os.path.commonpath([os.path.realpath(path), inside]) != inside:
        raise InvalidArgument(f"{rel}: outside the context root")
    try:
        old: bytes | None = read_bytes(path)
    except FileNotFoundError:
        old = None
    written.append((path, old, keep_old(path) if old is not None else None))
    if content is None:
        remove(path)
    else:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        atomic_write(path, content, before_replace=intend)


def _restore(written: list[tuple[str, bytes | None, str | None]]) -> None:
    """Put back files a failed write had replaced, by their kept names where there are
    (no room is needed: a full disk is the likeliest cause); never mask the original error."""
    for path, old, kept in reversed(written):
        try:
            put_back(path, old, kept)
        except OSError:
            pass
