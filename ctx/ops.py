"""The operations of spec §4 over one context root, with one write path.

Every write goes through ``Context._write``: take the lock, let the recorder
settle what is on disk, read the store, change it, write it atomically, and
hand the change to the recorder (the git layer commits it) before the lock
is released. Reads take no lock and write nothing (§4.6).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

from . import model
from .errors import CredentialRefused, InvalidArgument, NotFound, StoreError
from .layout import LayoutReport, author_from_env, check_root, ensure_layout, resolve_root
from .model import DEFAULT_STORE, STORES, Entry
from .secrets import scan
from .store import StoreFile, atomic_write, check_writable, context_lock, read_store, write_store


@dataclass
class Edit:
    """One entry a write changed: its state before and after (None: absent)."""

    store: str
    key: str
    before: Entry | None
    after: Entry | None


@dataclass
class Change:
    """One write, as the recorder (the git layer) sees it: one commit."""

    operation: str
    edits: list[Edit]
    paths: list[str]
    author: str | None
    forced: bool = False
    subject: str | None = None
    trailers: list[tuple[str, str]] = field(default_factory=list)

    parents: list[str] = field(default_factory=list)

    @property
    def single(self) -> Edit | None:
        return self.edits[0] if len(self.edits) == 1 else None


@dataclass
class Outcome:
    """What a ``transact`` mutation did beyond its store edits."""

    edits: list[Edit]
    files: dict[str, bytes | None] = field(default_factory=dict)  # path -> content; None removes
    parents: list[str] = field(default_factory=list)              # extra commit parents (a merge)
    subject: str | None = None
    trailers: list[tuple[str, str]] = field(default_factory=list)


class Recorder(Protocol):
    """What the write path calls around each write, inside the lock."""

    def prepare(self) -> None: ...

    def record(self, change: Change) -> None: ...

    def settle(self) -> None: ...


class NullRecorder:
    """The recorder when version control is off (``CTX_NO_GIT=1``)."""

    def prepare(self) -> None:
        return None

    def settle(self) -> None:
        return None

    def record(self, change: Change) -> None:
        return None


@dataclass
class Result:
    """One entry found by get, search or list: it names its store and key (§4.6)."""

    store: str
    key: str
    entry: Entry


@dataclass
class Filters:
    """The filters of §4.6, combined with AND."""

    store: str | None = None
    tags: tuple[str, ...] = ()
    source: str | None = None
    status: str | None = None
    scope: str | None = None
    since: datetime | None = None
    prefix: str | None = None

    def passes(self, store: str, key: str, entry: Entry) -> bool:
        if self.store and store != self.store:
            return False
        if self.prefix and not key.startswith(self.prefix):
            return False
        if self.tags:
            tags = entry.get("tags")
            if not isinstance(tags, list) or not any(t in tags for t in self.tags):
                return False
        if self.source and entry.get("source") != self.source:
            return False
        if self.status:
            status = entry.get("status")
            if self.status == "current":
                if status:
                    return False
            elif status != self.status:
                return False
        if self.scope and entry.get("scope", "global") != self.scope:
            return False
        if self.since and model.ts_key(entry.get("timestamp")) < self.since:
            return False
        return True


def result_order(result: Result) -> tuple:
    """Newest ``timestamp`` first, then store (operator, shared, agent), then key."""
    moment = model.ts_key(result.entry.get("timestamp"))
    return (-moment.timestamp(), STORES.index(result.store), result.key)


def _default_recorder(root: Path) -> Recorder:
    if os.environ.get("CTX_NO_GIT", "").strip() not in ("", "0"):
        return NullRecorder()
    from ctxgit.recorder import GitRecorder  # lazy: pygit2 only on the write path

    return GitRecorder(root)


class Context:
    """One context root and the operations of §4 on it."""

    def __init__(self, root: Path | None = None, author: str | None = None, *,
                 recorder_factory: Callable[[Path], Recorder] | None = None) -> None:
        self.root = resolve_root() if root is None else Path(root)
        self.author = author_from_env() if author is None else (author.strip() or None)
        self._recorder_factory = recorder_factory or _default_recorder
        self._recorder: Recorder | None = None

    @property
    def warnings(self) -> list[str]:
        """What the last writes had to say besides their result (for stderr)."""
        return list(getattr(self._recorder, "warnings", []) or [])

    @property
    def recorder(self) -> Recorder:
        if self._recorder is None:
            self._recorder = self._recorder_factory(self.root)
        return self._recorder

    # --- reads -------------------------------------------------------------

    def read(self, store: str) -> StoreFile:
        check_root(self.root)
        return read_store(self.root, model.validate_store(store))

    def stores(self, only: str | None = None) -> list[StoreFile]:
        names = [model.validate_store(only)] if only else list(STORES)
        return [self.read(name) for name in names]

    def get(self, key: str, store: str = DEFAULT_STORE) -> Entry:
        entry = self.read(store).entries.get(key)
        if entry is None:
            raise NotFound(f"no entry {key!r} in store {store!r}")
        return entry

    def get_all(self, key: str) -> list[Result]:
        found = [Result(s.name, key, s.entries[key]) for s in self.stores() if key in s.entries]
        if not found:
            raise NotFound(f"no entry {key!r} in any store")
        return found

    def select(self, filters: Filters, pattern: str | None = None,
               limit: int | None = None) -> list[Result]:
        """search (with a pattern) and list (without): filtered, ordered, cut."""
        if limit is not None and limit < 0:
            raise InvalidArgument("--limit must be 0 or more")
        needle = pattern.lower() if pattern else ""
        results: list[Result] = []
        for store in self.stores(filters.store):
            for key, entry in store.entries.items():
                if not filters.passes(store.name, key, entry):
                    continue
                if needle and needle not in key.lower() and \
                        needle not in model.value_text(entry.get("value")).lower():
                    continue
                results.append(Result(store.name, key, entry))
        results.sort(key=result_order)
        return results if limit is None else results[:limit]

    def counts(self) -> dict[str, int]:
        return {s.name: len(s.entries) for s in self.stores()}

    # --- the write path --------------------------------------------------------

    def _refuse_credentials(self, fields: dict[str, Any], force: bool) -> None:
        if force:
            return
        for name, content in fields.items():
            if content is None:
                continue
            findings = scan(model.value_text(content))
            if findings:
                kinds = ", ".join(sorted({f.description for f in findings}))
                raise CredentialRefused(
                    f"the {name} looks like it holds a credential ({kinds}: "
                    f"{findings[0].preview}); credentials must not be stored in ctx. "
                    "Use --force if it is not a secret", findings)

    def transact(self, operation: str, stores: Iterable[str],
                 mutate: Callable[[dict[str, StoreFile]], "list[Edit] | Outcome"], *,
                 forced: bool = False, subject: str | None = None,
                 trailers: list[tuple[str, str]] | None = None) -> list[Edit]:
        """The one write path: lock, settle the disk, read, change, write, record.

        ``mutate`` runs under the lock, after the recorder has committed any
        change made outside ctx; it changes the stores' entries in place and
        returns the edits it made, or an ``Outcome`` that also names other
        files to write and extra commit parents (a merge). When nothing
        changed, nothing is written and nothing committed. When the commit
        fails, every file written is put back as it was.
        """
        names = [model.validate_store(s) for s in stores]
        self._make_root()
        with context_lock(self.root):
            self.recorder.prepare()
            try:
                stores_read = {name: read_store(self.root, name) for name in names}
                result = mutate(stores_read)
            except BaseException:
                self.recorder.settle()  # what prepare set up is committed, not left lying
                raise
            outcome = result if isinstance(result, Outcome) else Outcome(list(result))
            edits = [e for e in outcome.edits if e.before != e.after]
            if not edits and not outcome.files and not outcome.parents:
                self.recorder.settle()
                return []
            created = ensure_layout(self.root).created
            changed = list(dict.fromkeys(e.store for e in edits))
            written: list[tuple[Path, bytes | None]] = []
            try:
                stamp = model.now()
                for name in changed:
                    check_writable(stores_read[name])
                for name in changed:
                    store = stores_read[name]
                    old = store.raw if store.exists else None
                    store.data["last_updated"] = stamp
                    write_store(store)
                    written.append((store.path, old))
                for rel, content in outcome.files.items():
                    written.append(_write_file(self.root, rel, content))
                paths = ([f"memory/{n}.json" for n in changed] + list(outcome.files)
                         + [p for p in created if not p.endswith("/")])
                self.recorder.record(Change(operation, edits, paths, self.author, forced,
                                            outcome.subject or subject,
                                            outcome.trailers or trailers or [], outcome.parents))
            except BaseException:
                _restore(written)  # a write that is not committed is not made
                raise
            return edits

    def _write(self, operation: str, store: str, key: str,
               change: Callable[[Entry | None], Entry | None], *, forced: bool = False) -> Entry | None:
        """One entry's write, through ``transact``; returns the entry after it."""
        result: list[Entry | None] = []

        def mutate(files: dict[str, StoreFile]) -> list[Edit]:
            entries = files[store].entries
            before = entries.get(key)
            after = change(before)
            result.append(after)
            if after is None:
                entries.pop(key, None)
            else:
                entries[key] = after
            return [Edit(store, key, before, after)]
        self.transact(operation, [store], mutate, forced=forced)
        return result[0]

    def _make_root(self) -> LayoutReport:
        """The root and memory/ must exist before the lock file can be taken."""
        return ensure_layout(self.root, memory_only=True)

    def init(self) -> LayoutReport:
        """Create what is missing of the root's layout and record it (``ctx init``)."""
        first = self._make_root()
        with context_lock(self.root):
            self.recorder.prepare()
            report = ensure_layout(self.root)
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
            derivation: str | None = None, force: bool = False) -> Entry:
        model.validate_key(key)
        self._refuse_credentials({"value": value, "derivation": derivation}, force)
        # validate the choices before taking the lock, so a typo costs nothing
        model.apply_set(None, value, author=self.author, when=model.now(), source=source,
                        basis=basis, scope=scope, tags=tags, derivation=derivation)

        def change(before: Entry | None) -> Entry:
            return model.apply_set(before, value, author=self.author, when=model.now(),
                                   source=source, basis=basis, scope=scope, tags=tags,
                                   derivation=derivation)
        result = self._write("set", store, key, change, forced=force)
        assert result is not None
        return result

    def _status(self, operation: str, status: str, key: str, store: str, note: str | None,
                by: str | None, force: bool) -> Entry:
        self._refuse_credentials({"note": note}, force)
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
        if by not in self.read(store).entries:
            warnings.append(f"warning: {by!r} does not exist in store {store!r} (yet)")
        return self._status("supersede", "superseded", key, store, note, by, force), warnings

    def resolve(self, key: str, *, note: str | None = None, store: str = DEFAULT_STORE,
                force: bool = False) -> Entry:
        return self._status("resolve", "resolved", key, store, note, None, force)

    def set_basis(self, key: str, basis: str, *, store: str = DEFAULT_STORE) -> Entry:
        require = self._existing(store, key)
        if basis not in model.BASES:
            raise InvalidArgument(f"invalid basis {basis!r}: use one of {', '.join(model.BASES)}")

        def change(before: Entry | None) -> Entry:
            return model.apply_basis(require(before), basis, author=self.author)
        result = self._write("basis", store, key, change)
        assert result is not None
        return result

    def delete(self, key: str, *, store: str = DEFAULT_STORE) -> Entry:
        removed: list[Entry] = []

        def change(before: Entry | None) -> None:
            removed.append(self._existing(store, key)(before))
            return None
        self._write("delete", store, key, change)
        return removed[0]


def _write_file(root: Path, rel: str, content: bytes | None) -> tuple[Path, bytes | None]:
    """Write (or with None, remove) one file of the root atomically; returns its old state."""
    path = root / rel
    if path.is_symlink():
        raise StoreError(f"{path}: is a symbolic link; ctx never writes through a link")
    if not path.resolve().is_relative_to(root.resolve()):
        raise InvalidArgument(f"{rel}: outside the context root")
    try:
        old: bytes | None = path.read_bytes()
    except FileNotFoundError:
        old = None
    if content is None:
        path.unlink(missing_ok=True)
    else:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write(path, content)
    return path, old


def _restore(written: list[tuple[Path, bytes | None]]) -> None:
    """Put back files a failed write had replaced; never mask the original error."""
    for path, old in reversed(written):
        try:
            if old is not None:
                atomic_write(path, old)
            else:
                path.unlink(missing_ok=True)
        except OSError:
            pass


def iter_entries(stores: Iterable[StoreFile]) -> Iterable[Result]:
    for store in stores:
        for key, entry in store.entries.items():
            yield Result(store.name, key, entry)


__all__ = ["Change", "Context", "Edit", "Outcome", "Filters", "NullRecorder", "Recorder", "Result",
           "StoreError", "iter_entries", "result_order"]
