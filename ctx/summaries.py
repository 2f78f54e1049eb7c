"""Session summaries (§7): which files are summaries, the newest, its Open items."""

from __future__ import annotations

import re
from pathlib import Path

SUMMARY_NAME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}([b-z]|z+[a-z])?_session\.md")


class Summary:
    __slots__ = ("name", "path")

    def __init__(self, name: str, path: Path) -> None:
        self.name, self.path = name, path

    def __repr__(self) -> str:
        return f"Summary({self.name!r})"

    @property
    def relpath(self) -> str:
        return f"sessions/{self.name}"

    def read(self) -> str:
        return self.path.read_text(encoding="utf-8", errors="replace")


def list_summaries(root: Path) -> list[Summary]:
    """Every file in ``sessions/`` named as a summary, oldest first (byte order)."""
    directory = root / "sessions"
    try:
        names = [p.name for p in directory.iterdir() if SUMMARY_NAME.fullmatch(p.name) and p.is_file()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    names.sort(key=lambda n: n.encode("utf-8"))
    return [Summary(n, directory / n) for n in names]


def newest_summary(root: Path) -> Summary | None:
    """The last summary file name in byte order (the C locale), or None."""
    summaries = list_summaries(root)
    return summaries[-1] if summaries else None


def open_items(text: str) -> list[str]:
    """The first line of each top-level bullet of the first ``## Open`` section.

    The section starts at the first line that is exactly ``## Open`` (any case,
    nothing after it but whitespace) and runs to the next ``## `` heading.
    """
    items: list[str] = []
    inside = False
    for line in text.splitlines():
        if not inside:
            if line.rstrip().lower() == "## open":
                inside = True
            continue
        if line.startswith("## "):
            break
        if line.startswith("- "):
            item = line[2:].strip()
            if item:
                items.append(item)
    return items


def suffix_sequence():
    """Suffixes of §7 in order: '', b … z, za … zz, zza …"""
    yield ""
    for letter in "bcdefghijklmnopqrstuvwxyz":
        yield letter
    depth = 1
    while True:
        for letter in "abcdefghijklmnopqrstuvwxyz":
            yield "z" * depth + letter
        depth += 1


def next_summary_name(root: Path, date: str) -> str:
    """The name the next summary of ``date`` (YYYY-MM-DD) takes.

    It follows the newest of that day, even past a gap, so that the newest
    summary stays the last name in byte order.
    """
    taken = {s.name for s in list_summaries(root) if s.name.startswith(date)}
    remaining = len(taken)
    for suffix in suffix_sequence():
        name = f"{date}{suffix}_session.md"
        if remaining == 0:
            return name
        if name in taken:
            remaining -= 1
