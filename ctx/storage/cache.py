"""The read index as one ``Context`` uses it: opened once, brought up to date by reads.

Each read asks the index (``ctx/storage/index.py``) first: fresh, it answers
without parsing a store file; otherwise (no state folder, stale and read-only,
SQLite trouble) the store files are parsed, as the spec describes. The mode
says what reads may do: "update" (rebuild a stale store's rows), "read" (use
the index only when it is fresh, write nothing: ``start``) or "off".
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from ctx.storage.files import StoreFile, StrPath
    from ctx.storage.index import Index

from ctx.storage.files import parse_store, store_path
from ctx.storage.root import check_root


class ReadCache:
    """The read index of ``root``, kept in the state folder ``state`` (None: no index)."""

    def __init__(self, root: StrPath, state: StrPath | None, mode: str) -> None:
        self.root, self.state, self.mode = root, state, mode
        self._index: Index | None = None
        self._opened = False

    def opened(self) -> Index | None:
        """The index file, opened at the first use (writable in "update" mode), fresh or not;
        None: off, or no index."""
        if self.mode == "off":
            return None
        if not self._opened:
            self._opened = True
            from ctx.storage.index import Index
            self._index = Index.open(self.root, self.state, writable=self.mode == "update")
        return self._index

    def forget(self) -> None:
        """Check freshness again on the next read (files may have changed since)."""
        if self._index is not None:
            self._index.forget()

    def fresh(self, stores: list[str], keep: dict[str, StoreFile] | None = None) -> Index | None:
        """The index, fresh for ``stores`` (rebuilt from the files when allowed), or None.

        ``keep``: inside a snapshot, where the stores parsed to rebuild the index are kept
        (and freshness, once checked, holds); None: freshness is checked again now."""
        index = self.opened()
        if index is None:
            return None
        if keep is None:
            index.forget()
        if index.fresh(stores):
            return index
        if not index.writable:
            return None
        from ctx.storage.files import read_raw
        from ctx.storage.index import sqlite3  # (the module the index connects through)
        try:
            for name in stores:
                if index.fresh([name]):
                    continue
                check_root(self.root)
                found = read_raw(store_path(self.root, name))
                if found is None:
                    index.rebuild(name, None, None, b"")
                else:
                    parsed = parse_store(name, store_path(self.root, name), *found)
                    if keep is not None:
                        keep[name] = parsed
                    index.rebuild(name, parsed.entries, found[1], found[0])
        except sqlite3.Error:
            return None
        return index if index.fresh(stores) else None

    def for_write(self) -> Index | None:
        """The index a write consults and keeps in step, or None (off, or no state folder).
        One the reads did not open is the write's own: ``release`` closes it."""
        if self.mode == "off":
            return None
        if self._index is not None:
            return self._index
        from ctx.storage.index import Index
        return Index.open(self.root, self.state, writable=True)

    def release(self, index: Index | None) -> None:
        """Close ``index`` (from ``for_write``) unless the reads share it."""
        if index is not None and index is not self._index:
            index.close()
