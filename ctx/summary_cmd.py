"""Writing and reading session summaries (spec §7).

``new_summary`` builds a summary for today's local date from the §7
template and the text given, checks it (an ``## Open`` section; each open
item's first line at most 150 characters; no credential), and commits it
as ``sessions/<date><suffix>_session.md`` through the one write path
(operation ``summary``). The name is chosen under the context lock, so two
writers never take the same one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date as Date
from pathlib import Path
from typing import Any

from .errors import CredentialRefused, InvalidArgument, NotFound
from .secrets import scan
from .summaries import Summary, list_summaries, next_summary_name, open_items

OPEN_ITEM_LIMIT = 150
SECTIONS = ("Done", "Decisions", "Open", "Commits")
_AGENT_LINE = re.compile(r"\*\*Agent:\*\*\s*(.*?)\s*(?:·|$)", re.M)
_OPEN_HEADING = re.compile(r"^## open\s*$", re.M | re.I)

SECTION_HINTS = {
    "Done": "- What was built, found or decided, each with the ctx keys that hold it.",
    "Decisions": "- Each decision the operator made, in a line.",
    "Open": "- Each item still open, restated in full (first line under 150 characters).",
    "Commits": "- Hashes and one line each, when the work is under version control.",
}


def today() -> str:
    """Today's local date, YYYY-MM-DD (§7: the local date the session started)."""
    return Date.today().isoformat()


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
    if not _OPEN_HEADING.search(text):
        raise InvalidArgument("the summary has no '## Open' section; §7 requires one "
                              "(list each open item as a '- ' bullet, or '- None')")
    for item in open_items(text):
        if len(item) > OPEN_ITEM_LIMIT:
            raise InvalidArgument(
                f"an open item's first line is {len(item)} characters, over {OPEN_ITEM_LIMIT}: "
                f"{item[:60]!r}…; shorten it and put the details on the lines below it")
    if force:
        return
    findings = scan(text)
    if findings:
        first = findings[0]
        raise CredentialRefused(
            f"the summary looks like it holds a credential ({first.description} at line "
            f"{first.line}: {first.preview}); credentials must not be stored in ctx. "
            "Use --force if it is not a secret", findings)


def focus_line(context) -> str | None:
    """The first line of shared/current_focus, cut to one line, or None."""
    from .model import value_text
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
    from .ops import Outcome
    names: list[str] = []

    def mutate(_stores) -> Outcome:
        name = next_summary_name(context.root, day)
        names.append(name)
        return Outcome([], files={f"sessions/{name}": text.encode("utf-8")},
                       subject=f"summary: {name}")
    context.transact("summary", [], mutate, forced=force)
    return names[0], text


@dataclass
class SummaryInfo:
    name: str
    path: Path
    agent: str | None
    open: int

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "path": str(self.path), "date": self.name[:10],
                "agent": self.agent, "open": self.open}


def info(summary: Summary) -> SummaryInfo:
    text = summary.read()
    match = _AGENT_LINE.search(text)
    return SummaryInfo(summary.name, summary.path, match.group(1) if match else None,
                       len(open_items(text)))


def summaries(root: Path) -> list[SummaryInfo]:
    """Every summary, oldest first (byte order of the names, §7)."""
    return [info(s) for s in list_summaries(root)]


def find_summary(root: Path, name: str | None = None) -> Summary:
    """The summary named NAME (with or without ``_session.md``), or the newest."""
    found = list_summaries(root)
    if name is None:
        if not found:
            raise NotFound(f"no session summary in {root / 'sessions'}")
        return found[-1]
    wanted = name if name.endswith(".md") else f"{name}_session.md"
    for summary in found:
        if summary.name in (name, wanted):
            return summary
    raise NotFound(f"no session summary {name!r} in {root / 'sessions'} (`ctx summary list`)")
