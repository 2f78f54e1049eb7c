"""What reads find (§4.6): a result names its store and key; the filters of
``search`` and ``list``, in Python (``passes``) and as the index's SQL (``where``).
"""

from __future__ import annotations

from ctx import model
from ctx.model import STORES, Entry
from ctx.storage.rows import joined, value_of

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from datetime import datetime


class Result:
    """One entry found by get, search or list: it names its store and key (§4.6).

    A result the read index found (``kept``: the row's body, value and status columns)
    decodes its entry at the first use of ``entry``; ``value`` and ``has_status`` answer
    a result line without it (ctx/storage/rows.py)."""

    __slots__ = ("store", "key", "_entry", "seconds", "_kept")

    def __init__(self, store: str, key: str, entry: Entry | None, seconds: float | None = None,
                 kept: tuple[bytes, bytes | None, str | None] | None = None) -> None:
        """``seconds``: ``model.ts_seconds`` of the entry's timestamp, when the read had it
        already (the index's ``ts``); None: worked out from the entry when needed (``moment``)."""
        self.store, self.key, self._entry, self.seconds, self._kept = store, key, entry, seconds, kept

    @property
    def entry(self) -> Entry:
        entry = self._entry
        if entry is None and self._kept is not None:
            entry = self._entry = joined(self._kept[0], self._kept[1])
        return entry  # type: ignore[return-value]  # (None only when the caller gave None)

    @entry.setter
    def entry(self, entry: Entry) -> None:
        self._entry, self._kept = entry, None

    def value(self) -> object:
        """The entry's value (``entry.get("value")``)."""
        if self._entry is None and self._kept is not None:
            return value_of(self._kept[1])
        return self.entry.get("value")

    def has_status(self) -> bool:
        """Whether the entry has a status (``entry.get("status")`` is not empty): the index's
        status column is NULL exactly when it has none (``ctx/storage/index.py``, ``row_for``)."""
        if self._entry is None and self._kept is not None:
            return self._kept[2] is not None
        return bool(self.entry.get("status"))

    def moment(self) -> float:
        """The entry's timestamp in seconds since the epoch (0: malformed), as the index orders by."""
        seconds = self.seconds
        return model.ts_seconds(self.entry.get("timestamp")) if seconds is None else seconds

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Result) and (self.store, self.key, self.entry) == \
            (other.store, other.key, other.entry)

    def __repr__(self) -> str:
        return f"Result({self.store!r}, {self.key!r}, {self.entry!r})"


class Filters:
    """The filters of §4.6, combined with AND."""

    __slots__ = ("store", "tags", "source", "status", "scope", "since", "prefix")

    def __init__(self, store: str | None = None, tags: tuple[str, ...] = (), source: str | None = None,
                 status: str | None = None, scope: str | None = None, since: datetime | None = None,
                 prefix: str | None = None) -> None:
        self.store, self.tags, self.source, self.status = store, tuple(tags), source, status
        self.scope, self.since, self.prefix = scope, since, prefix

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

    def where(self, needle: str = ""):
        """The SQL the index narrows by: never stricter than ``passes``."""
        from ctx.storage.index import Where
        where = Where()
        if self.prefix:
            where.add("substr(key, 1, ?) = ?", len(self.prefix), self.prefix)
        where.tags(self.tags)
        if self.source:
            where.add("source = ?", self.source)
        if self.status == "current":
            where.add("status IS NULL")
        elif self.status:
            where.add("status = ?", self.status)
        if self.scope:
            where.add("scope = ?", self.scope)
        if self.since:
            where.add("ts >= ?", self.since.timestamp() - 0.001)
        if needle:
            where.add("(instr(lkey, ?) > 0 OR instr(lvalue, ?) > 0)", needle, needle)
        # By store and tags alone, the SQL is ``passes`` itself: the store is a column, and the
        # tag table holds a row for each text tag of an entry whose tags are a list, as
        # ``passes`` asks (a tag that is not text equals no tag given); the other filters'
        # SQL only narrows (tests/core/test_entrytags.py, the differential tests)
        where.decides = not (needle or self.prefix or self.source or self.status or self.scope or self.since)
        return where


def result_order(result: Result) -> tuple:
    """Newest ``timestamp`` first, then store (operator, shared, agent), then key."""
    moment = model.ts_key(result.entry.get("timestamp"))
    return (-moment.timestamp(), STORES.index(result.store), result.key)
