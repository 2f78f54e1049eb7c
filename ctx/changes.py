"""What a write changed, as the write path hands it to the recorder (the git layer).

Only writes import this module (dataclasses cost milliseconds at start-up).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import Entry


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
    # True: ``edits`` name every entry that changed and nothing else changed (not a
    # merge), so only those entries' text is rewritten (ctx/splice.py)
    splice: bool = True
