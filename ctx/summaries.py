"""Session summaries (§7): which files are summaries, the newest, its Open items, and
writing and reading them (``ctx summary``)."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from typing import Any

    from ctx.storage.files import StrPath

from ctx.errors import CredentialRefused, InvalidArgument, NotFound

# (string methods, not expressions, and str paths: the brief reaches here, and it imports
# neither re nor pathlib: tests/cli/test_fastcli.py: test_the_reads_load_neither_re_nor_pathlib)

SUMMARY_SUFFIX = "_session.md"
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def is_summary_name(name: str) -> bool:
    """Whether ``name`` is a summary's file name (§7): ``YYYY-MM-DD`` (ASCII digits), then
    nothing, a letter b-z, or one or more z and a letter, then ``_session.md``."""
    if not name.endswith(SUMMARY_SUFFIX):
        return False
    stem = name[:-len(SUMMARY_SUFFIX)]
    digits = stem[:4] + stem[5:7] + stem[8:10]
    if len(stem) < 10 or stem[4] + stem[7] != "--" or not (digits.isascii() and digits.isdigit()):
        return False
    suffix = stem[10:]
    if len(suffix) <= 1:
        return suffix == "" or suffix in _LETTERS[1:]
    return suffix[:-1] == "z" * (len(suffix) - 1) and suffix[-1] in _LETTERS


class Summary:
    __slots__ = ("name", "path")

    def __init__(self, name: str, path: str) -> None:
        self.name, self.path = name, path

    def __repr__(self) -> str:
        return f"Summary({self.name!r})"

    @property
    def relpath(self) -> str:
        return f"sessions/{self.name}"

    def read(self) -> str:
        """The text; a link put here since it was listed is refused (``StoreError``), never
        followed (tests/reliability/test_root_links.py)."""
        from ctx.storage.files import read_text
        return read_text(self.path, errors="replace", follow=False)


def list_summaries(root: StrPath) -> list[Summary]:
    """Every regular file in ``sessions/`` named as a summary, oldest first (byte order).

    A symbolic link is not a summary: what a summary holds reaches every session's start,
    and a link would bring any file the user can read (``ctx doctor`` names it)."""
    directory = os.path.join(root, "sessions")
    try:
        with os.scandir(directory) as found:
            names = [e.name for e in found if is_summary_name(e.name) and e.is_file(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        return []
    names.sort(key=lambda n: n.encode("utf-8"))
    return [Summary(n, os.path.join(directory, n)) for n in names]


FUTURE_DAYS = 1  # a summary dated past tomorrow (local) is not taken as the newest


def latest_date() -> str:
    """The last date a summary may carry and still be the newest: tomorrow, local time
    (a day's grace for time zones and clocks a little ahead)."""
    import time
    return time.strftime("%Y-%m-%d", time.localtime(time.time() + FUTURE_DAYS * 86400))


def from_the_future(summaries: list[Summary], latest: str | None = None) -> list[Summary]:
    """The summaries named for a date after ``latest_date()``: listed, never the newest
    (a name like ``2099-12-31_session.md`` would otherwise be every session's newest)."""
    latest = latest or latest_date()
    return [s for s in summaries if s.name[:10] > latest]


def newest_of(summaries: list[Summary]) -> Summary | None:
    """The last in byte order (the C locale) of those not from the future, or None."""
    latest = latest_date()
    for summary in reversed(summaries):
        if summary.name[:10] <= latest:
            return summary
    return None


def newest_summary(root: StrPath) -> Summary | None:
    """The newest summary of ``root`` (``newest_of``), or None."""
    return newest_of(list_summaries(root))


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


def open_section(text: str) -> str | None:
    """The first ``## Open`` section whole, heading included (the same bounds as
    ``open_items``), or None when there is none."""
    lines = text.splitlines(keepends=True)
    for start, line in enumerate(lines):
        if line.rstrip().lower() == "## open":
            end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
            return "".join(lines[start:end])
    return None


def suffix_sequence():
    """Suffixes of §7 in order: '', b … z, za … zz, zza …"""
    yield ""
    yield from _LETTERS[1:]
    depth = 1
    while True:
        for letter in _LETTERS:
            yield "z" * depth + letter
        depth += 1


def next_summary_name(root: StrPath, date: str) -> str:
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
    raise AssertionError("suffix_sequence never ends")  # pragma: no cover


# --- writing and reading summaries (ctx summary new, list, show) --------------------------

OPEN_ITEM_LIMIT = 150
SECTIONS = ("Done", "Decisions", "Open", "Commits")
_AGENT_LINE = r"(?m)\*\*Agent:\*\*\s*(.*?)\s*(?:·|$)"

SECTION_HINTS = {
    "Done": "- What was built, found or decided, each with the ctx keys that hold it.",
    "Decisions": "- Each decision the operator made, in a line.",
    "Open": "- Each item still open, restated in full (first line under 150 characters).",
    "Commits": "- Hashes and one line each, when the work is under version control.",
}


def today() -> str:
    """Today's local date, YYYY-MM-DD (§7: the local date the session started)."""
    from datetime import date
    return date.today().isoformat()


def header(day: str, agent: str, focus: str | None) -> str:
    line = f"**Agent:** {agent}" + (f" · **Focus:** {focus}" if focus else "")
    return f"# Session {day}\n\n{line}\n"


def template(day: str, agent: str, focus: str | None) -> str:
    """The §7 template, for an editor to fill."""
    body = "\n".join(f"## {name}\n{SECTION_HINTS[name]}\n" for name in SECTIONS)
    return f"{header(day, agent, focus)}\n{body}"


def compose(body: str, day: str, agent: str | None, focus: str | None) -> str:
    """The summary: ``body`` as it is when it has its own ``# `` title, else under the header."""
    text = body.replace("\r\n", "\n").strip("\n")
    if text.startswith("# "):
        return text + "\n"
    if not agent:
        raise InvalidArgument("a summary is headed with its agent's name: give --agent NAME "
                              "or set CTX_AUTHOR (§6)")
    return f"{header(day, agent, focus)}\n{text}\n"


def check(text: str, force: bool = False) -> None:
    """The checks of §7 and §11: Open section, item length, no credential."""
    if open_section(text) is None:
        raise InvalidArgument("the summary has no '## Open' section; §7 requires one "
                              "(list each open item as a '- ' bullet, or '- None')")
    for item in open_items(text):
        if len(item) > OPEN_ITEM_LIMIT:
            raise InvalidArgument(
                f"an open item's first line is {len(item)} characters, over {OPEN_ITEM_LIMIT}: "
                f"{item[:60]!r}…; shorten it and put the details on the lines below it")
    if force:
        return
    from ctx.credentials import scan
    findings = scan(text)
    if findings:
        first = findings[0]
        raise CredentialRefused(
            f"the summary looks like it holds a credential ({first.description} at line "
            f"{first.line}: {first.preview}); credentials must not be stored in ctx. "
            "Use --force if it is not a secret", findings)


def focus_line(context) -> str | None:
    """The first line of shared/current_focus, cut to one line, or None."""
    from ctx.model import value_text
    entry = context.read("shared").entries.get("current_focus")
    if not entry:
        return None
    first = value_text(entry.get("value")).strip().split("\n", 1)[0].strip()
    return (first[:97] + "…") if len(first) > 100 else (first or None)


def new_summary(context, body: str, *, agent: str | None = None, focus: str | None = None,
                day: str | None = None, force: bool = False) -> tuple[str, str]:
    """Check and commit a new summary; returns its file name and text."""
    day = day or today()
    text = compose(body, day, agent or context.author, focus)
    check(text, force)
    from ctx.changes import Outcome
    names: list[str] = []

    def mutate(_stores) -> Outcome:
        name = next_summary_name(context.root, day)
        names.append(name)
        return Outcome([], files={f"sessions/{name}": text.encode("utf-8")},
                       subject=f"summary: {name}")
    context.transact("summary", [], mutate, forced=force)
    return names[0], text


class SummaryInfo:
    """One summary as ``ctx summary list`` shows it."""

    __slots__ = ("name", "path", "agent", "open")

    def __init__(self, name: str, path: str, agent: str | None, open: int) -> None:
        self.name, self.path, self.agent, self.open = name, path, agent, open

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "date": self.name[:10],
                "agent": self.agent, "open": self.open}


def info(summary: Summary) -> SummaryInfo:
    """A summary's agent and number of open items, read from its text."""
    import re
    text = summary.read()
    match = re.search(_AGENT_LINE, text)
    return SummaryInfo(summary.name, summary.path, match.group(1) if match else None,
                       len(open_items(text)))


def summaries(root: StrPath) -> list[SummaryInfo]:
    """Every summary, oldest first (byte order of the names, §7)."""
    return [info(s) for s in list_summaries(root)]


def find_summary(root: StrPath, name: str | None = None) -> Summary:
    """The summary named NAME (with or without ``_session.md``), or the newest."""
    found = list_summaries(root)
    if name is None:
        newest = newest_of(found)
        if newest is None:
            raise NotFound(f"no session summary in {os.path.join(root, 'sessions')}")
        return newest
    wanted = name if name.endswith(".md") else f"{name}_session.md"
    for summary in found:
        if summary.name in (name, wanted):
            return summary
    raise NotFound(f"no session summary {name!r} in {os.path.join(root, 'sessions')} (`ctx summary list`)")
