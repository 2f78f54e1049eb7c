"""The operations of spec §4 over one context root: the core's public API.

Three things meet here, each in its own module: the reads answer from the read
index when it is fresh (``ctx/storage/cache.py``); every write goes through
``Context.transact``, the one write path (``ctx/transaction.py``: take the
lock, let the recorder prepare, read the stores, change them, write them
atomically, and hand the change to the recorder before the lock is released);
the rules a write must pass first are ``ctx/policy.py``'s. The recorder is handed in by the caller (the front door
gives ``ctxgit.recorder.GitRecorder``); without one, writes are files only
(``NullRecorder``). Reads take no lock and write nothing (§4.6).

Where this machine's own state of the root is kept (the read index, the
machine's settings) is the caller's to say too (``state_of``): the front door
gives ``ctxgit.gitfiles.layout.state_dir``; without it there is no such folder
(no index: every read parses the store files; machine settings at their
defaults). The core never spells where git keeps things.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path
    from typing import Any

    from ctx.storage.files import StrPath

from ctx import model, phases, settings
from ctx.errors import InvalidArgument, NotFound
from ctx.model import DEFAULT_STORE, STORES, Entry
from ctx.results import Filters, Result, result_order
from ctx.storage.cache import ReadCache
from ctx.storage.files import (
    StoreFile,
    read_store,
)
from ctx.storage.root import LayoutReport, check_root, ensure_layout

if TYPE_CHECKING:
    from ctx.changes import Edit, Outcome
    from ctx.recorder import Recorder
    from ctx.storage.index import Index


class Context:
    """One context root and the operations of §4 on it."""

    def __init__(self, root: StrPath | None = None, author: str | None = None, *,
                 recorder_factory: Callable[[str], Recorder] | None = None,
                 cache: str = "update", state_of: Callable[[str], StrPath] | None = None) -> None:
        """``cache``: "update" (reads may rebuild the index), "read" (use it only
        when it is fresh, write nothing: ``start``), or "off". ``state_of``: the
        folder of this machine's own state of a root (None: none)."""
        self.where: str = settings.home() if root is None else os.fspath(root)
        self._root: Path | None = None
        self.state: StrPath | None = state_of(self.where) if state_of is not None else None
        self.author = settings.author() if author is None else model.validate_author(author)
        self._recorder_factory = recorder_factory  # None: a NullRecorder, made at the first write
        self._recorder: Recorder | None = None
        if settings.flag("CTX_NO_CACHE"):
            cache = "off"
        self._cache = ReadCache(self.where, self.state, cache)
        self._parsed: dict[str, StoreFile] = {}
        self._snapshots = 0

    @property
    def root(self) -> Path:
        """The root as a ``Path``, made at the first use. The reads use ``where``, the same
        root as a ``str``, and never import pathlib (with the urllib.parse, ipaddress and re it
        brings): tests/cli/test_fastcli.py: test_the_reads_load_neither_re_nor_pathlib."""
        if self._root is None:
            from pathlib import Path
            self._root = Path(self.where)
        return self._root

    @property
    def warnings(self) -> list[str]:
        """What the last writes had to say besides their result (for stderr)."""
        return list(self._recorder.warnings) if self._recorder is not None else []

    @property
    def recorder(self) -> Recorder:
        if self._recorder is None:
            if self._recorder_factory is None:
                from ctx.recorder import NullRecorder
                self._recorder_factory = NullRecorder.for_root
            self._recorder = self._recorder_factory(self.where)
        return self._recorder

    # --- reads -------------------------------------------------------------
    # Each read asks the read index first (ctx/storage/cache.py), else parses the files.

    def read(self, store: str) -> StoreFile:
        """A store as parsed from its file (once per ``snapshot``)."""
        cached = self._parsed.get(store) if self._snapshots else None
        if cached is None:
            check_root(self.where)
            cached = read_store(self.where, model.validate_store(store))
            if self._snapshots:
                self._parsed[store] = cached
        return cached

    def snapshot(self) -> Snapshot:
        """``with context.snapshot():`` reads inside see each store as they first found it:
        a composite read (the brief) parses or validates each store once, and gives one
        consistent view."""
        return Snapshot(self)

    def stores(self, only: str | None = None) -> list[StoreFile]:
        names = [model.validate_store(only)] if only else list(STORES)
        return [self.read(name) for name in names]

    def fresh_index(self, stores: list[str]) -> Index | None:
        """The read index, fresh for ``stores`` (rebuilt from the files when allowed), or None."""
        return self._cache.fresh(stores, self._parsed if self._snapshots else None)

    def opened_index(self) -> Index | None:
        """The index file this context reads through, opened, fresh or not (None: off, or
        none): the since-log keeps its tables in that file and asks through this connection."""
        return self._cache.opened()

    def get(self, key: str, store: str = DEFAULT_STORE) -> Entry:
        model.validate_store(store)
        index = self.fresh_index([store])  # (without one: the parsed file)
        entry = index.get(store, key) if index is not None else self.read(store).entries.get(key)
        if entry is None:
            raise NotFound(f"no entry {key!r} in store {store!r}")
        return entry

    def find(self, key: str, store: str) -> Entry | None:
        """``get`` without the error: None when the key is absent."""
        try:
            return self.get(key, store)
        except NotFound:
            return None

    def get_all(self, key: str) -> list[Result]:
        found = [Result(s, key, e) for s in STORES if (e := self.find(key, s)) is not None]
        if not found:
            raise NotFound(f"no entry {key!r} in any store")
        return found

    def query(self, stores: list[str], test: Callable[[Result], bool], limit: int | None = None,
              where=None) -> list[Result]:
        """Entries of ``stores`` for which ``test`` holds, in result order, cut at ``limit``.

        ``where`` (a ``cache.Where``) may narrow the index's scan; it must pass
        every entry ``test`` accepts. When it ``decides`` (it passes exactly those), the
        index's rows are not tested again, so a result line decodes only what it shows
        (ctx/storage/rows.py).
        """
        if limit is not None and limit <= 0:
            return []
        index = self.fresh_index(stores)
        if index is not None:
            out: list[Result] = []
            check = None if where is not None and where.decides else test
            for store, key, body, value, status, seconds in index.ordered(stores, where, limited=limit is not None):
                result = Result(store, key, None, seconds, (body, value, status))
                if check is None or check(result):
                    out.append(result)
                    if limit is not None and len(out) >= limit:
                        break
            return out
        found = [r for s in stores for k, e in self.read(s).entries.items() if test(r := Result(s, k, e))]
        if limit is not None and limit < len(found):
            import heapq
            return heapq.nsmallest(limit, found, key=result_order)
        found.sort(key=result_order)
        return found

    def select(self, filters: Filters, pattern: str | None = None,
               limit: int | None = None) -> list[Result]:
        """search (with a pattern) and list (without): filtered, ordered, cut."""
        if limit is not None and limit < 0:
            raise InvalidArgument("--limit must be 0 or more")
        needle = pattern.lower() if pattern else ""
        stores = [model.validate_store(filters.store)] if filters.store else list(STORES)

        def test(r: Result) -> bool:
            if not filters.passes(r.store, r.key, r.entry):
                return False
            return not needle or needle in r.key.lower() or \
                needle in model.value_text(r.entry.get("value")).lower()
        return self.query(stores, test, limit, filters.where(needle))

    def counts(self, stores: list[str] | None = None) -> dict[str, int]:
        stores = list(stores or STORES)
        index = self.fresh_index(stores)
        if index is not None:
            return index.counts(stores)
        return {name: len(self.read(name).entries) for name in stores}

    @property
    def cache_mode(self) -> str:
        return self._cache.mode

    # --- the write path --------------------------------------------------------

    def check_policy(self, store: str, source: str | None) -> None:
        """The store conventions, when the operator turned them on (``ctx/policy.py``)."""
        if store == "operator" and self.author:
            from ctx.policy import check_store_policy
            check_store_policy(self.where, store, self.author, source)

    def refuse_credentials(self, fields: dict[str, Any], force: bool) -> None:
        """Refuse text that looks like a credential (``ctx/policy.py``), unless ``force``."""
        if not force:
            from ctx.policy import refuse_credentials
            refuse_credentials(fields, force)

    def transact(self, operation: str, stores: Iterable[str],
                 mutate: Callable[[dict[str, StoreFile]], list[Edit] | Outcome], *,
                 forced: bool = False, subject: str | None = None,
                 trailers: list[tuple[str, str]] | None = None) -> list[Edit]:
        """The one write path: lock, settle the disk, read, change, write, record.

        ``mutate`` runs under the lock, after the recorder has committed any
        change made outside ctx; it changes the stores' entries in place and
        returns the edits it made (every one of them: only their text is
        rewritten in the file), or an ``Outcome`` that also names other
        files to write and extra commit parents (a merge). When nothing
        changed, nothing is written and nothing committed. When the commit
        fails, every file written is put back as it was.
        """
        names = [model.validate_store(s) for s in stores]
        self.make_root()
        self._parsed.clear()
        from ctx.transaction import transact
        return transact(self.where, self.author, self.recorder, self._cache, operation, names, mutate,
                        forced=forced, subject=subject, trailers=trailers)

    def _write(self, operation: str, store: str, key: str,
               change: Callable[[Entry | None], Entry | None], *, forced: bool = False) -> Entry | None:
        """One entry's write, through ``transact``; returns the entry after it."""
        from ctx.changes import Edit
        result: list[Entry | None] = []

        def mutate(files: dict[str, StoreFile]) -> list[Edit]:
            before = files[store].entry(key)  # only this entry is read (ctx/transaction.py)
            after = change(before)
            result.append(after)
            files[store].put(key, after)
            return [Edit(store, key, before, after)]
        self.transact(operation, [store], mutate, forced=forced)
        return result[0]

    def make_root(self) -> LayoutReport:
        """The root and memory/ must exist before the lock file can be taken."""
        return ensure_layout(self.where, memory_only=True)

    def init(self) -> LayoutReport:
        """Create what is missing of the root's layout and record it (``ctx init``)."""
        from ctx.storage.lock import context_lock  # (the writes take it in ctx/transaction.py)
        first = self.make_root()
        with context_lock(self.where):
            self.recorder.prepare()
            report = ensure_layout(self.where)
            from ctx.changes import Change
            self.recorder.record(Change("init", [], ["RULES.md"], self.author))
        report.existed = first.existed
        report.created = first.created + report.created
        return report

    def _existing(self, store: str, key: str) -> Callable[[Entry | None], Entry]:
        def require(before: Entry | None) -> Entry:
            if before is None:
                raise NotFound(f"no entry {key!r} in store {store!r}")
            return before
        return require

    # --- the operations of §4 ------------------------------------------------------

    def set(self, key: str, value: Any, *, store: str = DEFAULT_STORE, source: str | None = None,
            basis: str | None = None, scope: str | None = None, tags: list[str] | None = None,
            derivation: str | None = None, force: bool = False,
            fields: dict[str, Any] | None = None) -> Entry:
        """§4.2's set; ``fields``: fields beyond §3.3's to write too (``--due``'s), None
        for one to remove."""
        phases.lap("start")
        model.validate_key(key)
        self.check_policy(store, source)
        self.refuse_credentials({"key": key, "value": value, "derivation": derivation,
                                  "tags": " ".join(tags) if tags else None}, force)
        phases.lap("check")
        # validate the choices before taking the lock, so a typo costs nothing
        model.apply_set(None, value, author=self.author, when=model.now(), source=source,
                        basis=basis, scope=scope, tags=tags, derivation=derivation)

        def change(before: Entry | None) -> Entry:
            entry = model.apply_set(before, value, author=self.author, when=model.now(),
                                    source=source, basis=basis, scope=scope, tags=tags,
                                    derivation=derivation)
            for name, extra in (fields or {}).items():  # None: the field goes
                if extra is None:
                    entry.pop(name, None)
                else:
                    entry[name] = extra
            return entry
        result = self._write("set", store, key, change, forced=force)
        assert result is not None
        return result

    def _status(self, operation: str, status: str, key: str, store: str, note: str | None,
                by: str | None, force: bool) -> Entry:
        phases.lap("start")
        self.check_policy(store, None)
        self.refuse_credentials({"note": note, "replacement key": by}, force)
        phases.lap("check")
        require = self._existing(store, key)

        def change(before: Entry | None) -> Entry:
            return model.apply_status(require(before), status, author=self.author,
                                      when=model.now(), note=note, by=by)
        result = self._write(operation, store, key, change, forced=force)
        assert result is not None
        return result

    def amend(self, key: str, note: str, *, store: str = DEFAULT_STORE, force: bool = False) -> Entry:
        if not note or not note.strip():
            raise InvalidArgument("amend needs a note")
        return self._status("amend", "amended", key, store, note, None, force)

    def supersede(self, key: str, by: str, *, note: str | None = None,
                  store: str = DEFAULT_STORE, force: bool = False) -> tuple[Entry, list[str]]:
        """Mark ``key`` superseded by ``by``; returns the entry and any warnings."""
        model.validate_key(by)
        if by == key:
            raise InvalidArgument("an entry cannot supersede itself")
        warnings = []
        if self.find(by, store) is None:
            warnings.append(f"warning: {by!r} does not exist in store {store!r} (yet)")
        return self._status("supersede", "superseded", key, store, note, by, force), warnings

    def resolve(self, key: str, *, note: str | None = None, store: str = DEFAULT_STORE,
                force: bool = False) -> Entry:
        return self._status("resolve", "resolved", key, store, note, None, force)

    def set_basis(self, key: str, basis: str, *, store: str = DEFAULT_STORE) -> Entry:
        self.check_policy(store, None)
        require = self._existing(store, key)
        if basis not in model.BASES:
            raise InvalidArgument(f"invalid basis {basis!r}: use one of {', '.join(model.BASES)}")

        def change(before: Entry | None) -> Entry:
            return model.apply_basis(require(before), basis, author=self.author)
        result = self._write("basis", store, key, change)
        assert result is not None
        return result

    def delete(self, key: str, *, store: str = DEFAULT_STORE) -> Entry:
        self.check_policy(store, None)
        removed: list[Entry] = []

        def change(before: Entry | None) -> None:
            removed.append(self._existing(store, key)(before))
            return None
        self._write("delete", store, key, change)
        return removed[0]


class Snapshot:
    """``Context.snapshot``'s ``with`` block. A class: no read imports contextlib
    (tests/cli/test_fastcli.py: test_the_reads_load_neither_re_nor_pathlib)."""

    __slots__ = ("context",)

    def __init__(self, context: Context) -> None:
        self.context = context

    def __enter__(self) -> None:
        self.context._snapshots += 1

    def __exit__(self, *_exc: object) -> None:
        context = self.context
        context._snapshots -= 1
        if not context._snapshots:
            context._parsed.clear()
            context._cache.forget()
