"""What a write changed, as the write path hands it to the recorder (the git layer).

Plain classes, not dataclasses: a write never imports ``dataclasses`` (and with
it ``inspect``, ``ast``, ``dis``): tests/cli/test_fastcli.py: test_a_clean_write_loads_neither_json_nor_re.
"""

from __future__ import annotations

from ctx.model import Entry

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from typing import Any


class _Record:
    """``__init__`` arguments kept as attributes; equal when every field is."""

    __slots__ = ()

    def _fields(self) -> tuple[Any, ...]:
        names: tuple[str, ...] = self.__slots__
        return tuple(getattr(self, name) for name in names)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Record) and type(other) is type(self) and other._fields() == self._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, like a dataclass

    def __repr__(self) -> str:
        names: tuple[str, ...] = self.__slots__
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__name__}({shown})"


class Edit(_Record):
    """One entry a write changed: its state before and after (None: absent)."""

    __slots__ = ("store", "key", "before", "after")

    def __init__(self, store: str, key: str, before: Entry | None, after: Entry | None) -> None:
        self.store, self.key, self.before, self.after = store, key, before, after


class Change(_Record):
    """One write, as the recorder (the git layer) sees it: one commit."""

    __slots__ = ("operation", "edits", "paths", "author", "forced", "subject", "trailers", "parents",
                 "contents", "replaced")

    def __init__(self, operation: str, edits: list[Edit], paths: list[str], author: str | None,
                 forced: bool = False, subject: str | None = None,
                 trailers: list[tuple[str, str]] | None = None, parents: list[str] | None = None,
                 contents: dict[str, bytes] | None = None, replaced: dict[str, bytes] | None = None) -> None:
        self.operation, self.edits, self.paths, self.author = operation, edits, paths, author
        self.forced, self.subject = forced, subject
        self.trailers = [] if trailers is None else trailers
        self.parents = [] if parents is None else parents
        # path -> the bytes just written there (the recorder need not read them back), and
        # the bytes they replaced (a new loose blob may reuse the old one's compressed pieces)
        self.contents = {} if contents is None else contents
        self.replaced = {} if replaced is None else replaced

    @property
    def single(self) -> Edit | None:
        return self.edits[0] if len(self.edits) == 1 else None


class Outcome(_Record):
    """What a ``transact`` mutation did beyond its store edits.

    ``files``: path -> content (None removes); ``parents``: extra commit parents
    (a merge); ``splice``: True when ``edits`` name every entry that changed and
    nothing else changed (not a merge), so only those entries' text is rewritten
    (``ctx/storage/textlayout.py``). ``raw``: store name -> the store file's new bytes, as the
    mutation already serialized them (a merge) but for ``last_updated``, which is
    spliced in: the file is not serialized a second time.
    """

    __slots__ = ("edits", "files", "parents", "subject", "trailers", "splice", "raw")

    def __init__(self, edits: list[Edit], files: dict[str, bytes | None] | None = None,
                 parents: list[str] | None = None, subject: str | None = None,
                 trailers: list[tuple[str, str]] | None = None, splice: bool = True,
                 raw: dict[str, bytes] | None = None) -> None:
        self.raw = {} if raw is None else raw
        self.edits = edits
        self.files = {} if files is None else files
        self.parents = [] if parents is None else parents
        self.subject, self.splice = subject, splice
        self.trailers = [] if trailers is None else trailers
