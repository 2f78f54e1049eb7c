"""The brief (§5.2): one bounded screen.

``build_brief`` selects; ``brief_sections`` lays it out as sections of whole
items (``ctx/start.py`` fits them into a budget), ``render_brief`` prints them
and ``Brief.as_json`` gives the ``--json`` shape. Each section has an item
limit and each item an excerpt bound, so the brief's length does not grow with
the store. Besides §5.2's sections, every reader sees FOR YOU (their open letters,
``ctx/letters.py``) and DUE (what is overdue or due within a week,
``ctx/resurface.py``) after the standing instructions, and an agent
(``CTX_AUTHOR`` set) sees SINCE YOUR LAST SESSION: what others changed since its
last commit, which the git layer reads (``ctxgit/porcelain/since.py``) and hands
in as a ``Since``.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

from ctx import model
from ctx.display import excerpt, local_time, name, visible
from ctx.errors import StoreError
from ctx.model import FOCUS_KEY, INSTRUCTION_TAGS, Entry
from ctx.results import Result
from ctx.summaries import newest_summary, open_items

if TYPE_CHECKING:
    from ctx.context import Context
    from ctx.summaries import Summary

FOCUS_BOUND = 600
INSTRUCTIONS = (12, 130)
# standing instructions read to put the operator's own first (see _build): four sections' worth;
# each row read is a brief's own cost, so the read stops there (bench/run.py measures the brief)
INSTRUCTIONS_READ = 4 * INSTRUCTIONS[0]
OPEN = (15, 150)
DECISIONS = (8, 120)
CHANGES_BOUND = 100
DEFAULT_DAYS = model.BRIEF_DAYS
DEFAULT_CHANGES = model.BRIEF_CHANGES
SINCE = 10  # items of SINCE YOUR LAST SESSION, then a count
FOR_YOU = (10, 80)  # open letters to the reader, then a count; first words of each
DUE = (10, 100)
SENDER_BOUND = 60  # a letter's sender and shape, an author: a name, excerpted (§5.2: the brief stays bounded)


class SinceChange:
    """One entry another writer changed since this author's last session; or, with
    ``store`` None, a file of the context's own (``key`` RULES.md)."""

    __slots__ = ("store", "key", "author", "timestamp", "kind")

    def __init__(self, store: str | None, key: str, author: str, timestamp: str, kind: str) -> None:
        self.store, self.key, self.author, self.timestamp, self.kind = store, key, author, timestamp, kind

    def as_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


class Since:
    """What others changed since ``author``'s last commit (``last``; None: their first
    session here), newest first; ``more`` changes past the limit."""

    __slots__ = ("author", "last", "changes", "more")

    def __init__(self, author: str, last: str | None, changes: list[SinceChange], more: int = 0) -> None:
        self.author, self.last, self.changes, self.more = author, last, changes, more

    def as_json(self) -> dict[str, Any]:
        return {"author": self.author, "last": self.last, "first_session": self.last is None,
                "changes": [c.as_json() for c in self.changes], "more": self.more}


class Section:
    """A part of the output: a heading printed before its first item, whole items, and
    the command that shows what a budget left out of it."""

    __slots__ = ("name", "head", "items", "command", "always")

    def __init__(self, name: str, head: str, items: list[str], command: str, always: bool = False) -> None:
        self.name, self.head, self.items, self.command, self.always = name, head, items, command, always

class Item:
    """One line of a section: an entry's excerpt, or an open item."""

    __slots__ = ("text", "key", "store", "status", "timestamp", "typed_by")

    def __init__(self, text: str, key: str | None = None, store: str | None = None,
                 status: str = "", timestamp: str | None = None, typed_by: str | None = None) -> None:
        self.text, self.key, self.store, self.status, self.timestamp = text, key, store, status, timestamp
        self.typed_by = typed_by  # a standing instruction an agent typed: the agent (its entry's author)

    def as_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__ if getattr(self, name) not in (None, "")}


class LetterItem:
    """One open letter to the reader (FOR YOU): who sent it, its shape, when, its first
    words, its key; ``new``: written since the reader's last session."""

    __slots__ = ("key", "sender", "shape", "timestamp", "text", "new")

    def __init__(self, key: str, sender: str, shape: str, timestamp: str | None, text: str, new: bool) -> None:
        self.key, self.sender, self.shape, self.timestamp, self.text, self.new = \
            key, sender, shape, timestamp, text, new

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "from": self.sender, "shape": self.shape, "timestamp": self.timestamp,
                "text": self.text, "new": self.new}


class DueLine:
    """One entry of DUE: its day, how far off, and what it says."""

    __slots__ = ("key", "store", "due", "when", "text", "status", "must_not_forget", "stale")

    def __init__(self, key: str, store: str, due: str, when: str, text: str, status: str,
                 must_not_forget: bool, stale: bool) -> None:
        self.key, self.store, self.due, self.when, self.text = key, store, due, when, text
        self.status, self.must_not_forget, self.stale = status, must_not_forget, stale

    def as_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


class Brief:
    """The brief's selection, before it is rendered as text or JSON."""

    def __init__(self, generated: str, counts: dict[str, int], days: int = DEFAULT_DAYS) -> None:
        self.generated, self.counts, self.days = generated, counts, days
        self.focus: Item | None = None
        self.instructions: list[Item] = []
        self.instructions_more = 0
        self.instructions_capped = False  # INSTRUCTIONS_READ were read: instructions_more is a floor
        self.open_from: str | None = None
        self.summary: Summary | None = None  # the newest summary as the brief found it (start shows it)
        self.open_items: list[Item] = []
        self.open_more = 0
        self.decisions: list[Item] = []
        self.changes: list[Item] = []
        self.commit: str | None = None
        self.warnings: list[str] = []
        self.since: Since | None = None
        self.reader = "operator"  # whose letters FOR YOU shows (CTX_AUTHOR, else the operator)
        self.for_you: list[LetterItem] = []
        self.for_you_more = 0
        self.due: list[DueLine] = []
        self.due_more = 0
        self.sync: str | None = None  # the sync state in a few words (the front door reads it from git)

    def as_json(self) -> dict[str, Any]:
        """The stable ``--json`` shape documented in ``ctx brief --help``."""
        def items(rows: list[Item]) -> list[dict[str, Any]]:
            return [r.as_json() for r in rows]
        return {
            "generated": self.generated,
            "commit": self.commit,
            "counts": self.counts,
            "focus": self.focus.as_json() if self.focus else None,
            "instructions": items(self.instructions),
            "instructions_more": self.instructions_more,
            "for_you": {"reader": self.reader, "items": [i.as_json() for i in self.for_you],
                        "more": self.for_you_more},
            "due": {"items": [i.as_json() for i in self.due], "more": self.due_more},
            "open": {"from": self.open_from, "items": items(self.open_items), "more": self.open_more},
            "decisions": {"days": self.days, "items": items(self.decisions)},
            "changes": items(self.changes),
            "since": self.since.as_json() if self.since is not None else None,
            "sync": self.sync,
            "warnings": self.warnings,
        }


def _item(result: Result, bound: int) -> Item:
    return Item(excerpt(result.entry.get("value"), bound), result.key, result.store,
                model.status_label(result.entry), result.entry.get("timestamp"))


def _typist(entry: Entry) -> str | None:
    """Who typed a standing instruction when it was not the operator: the entry's author
    (§3.4: an agent recording the operator's words writes source operator and its name)."""
    author = entry.get("author")
    return author if isinstance(author, str) and author.strip() else (str(author) if author else None)


def _instruction(result: Result, bound: int) -> Item:
    item = _item(result, bound)
    item.typed_by = _typist(result.entry)
    return item


def _tags(entry: Entry) -> list:
    tags = entry.get("tags")
    return tags if isinstance(tags, list) else []


def _is_decision(key: str, entry: Entry) -> bool:
    return "decision" in _tags(entry) or key.startswith("decision")


def _is_instruction(result: Result) -> bool:
    entry = result.entry
    return (entry.get("source") == "operator" and entry.get("status") != "superseded"
            and any(t in _tags(entry) for t in INSTRUCTION_TAGS) and not _is_decision(result.key, entry))


def build_brief(ctx: Context, days: int = DEFAULT_DAYS, changes: int = DEFAULT_CHANGES,
                now: datetime | None = None, since: Since | None = None) -> Brief:
    """Select the brief's sections (§5.2). Each is a bounded, ordered query, so
    with a fresh index the brief never reads the whole store."""
    with ctx.snapshot():
        return _build(ctx, days, changes, now, since)


def _build(ctx: Context, days: int, changes: int, now: datetime | None, since: Since | None) -> Brief:
    from ctx.storage.index import Where
    from ctx.storage.indextables import DECISION_ROWS, INSTRUCTION_INDEX, INSTRUCTION_ROWS
    # no datetime here: test_fastcli.py, test_the_reads_load_neither_re_nor_pathlib
    seconds = now.timestamp() if now is not None else time.time()
    warnings: list[str] = []
    usable: list[str] = []
    counts: dict[str, int] = {}
    for store in model.STORES:  # a store that cannot be read is named, and left out
        try:
            counts.update(ctx.counts([store]))
            usable.append(store)
        except StoreError as exc:
            warnings.append(str(exc))
            counts[store] = 0
    brief = Brief(time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds)), counts, days)
    brief.warnings = warnings
    brief.since = since
    printed: set[tuple[str, str]] = set()

    if "shared" in usable:
        focus = ctx.find(FOCUS_KEY, "shared")
        if focus is not None:
            brief.focus = _item(Result("shared", FOCUS_KEY, focus), FOCUS_BOUND)
            printed.add(("shared", FOCUS_KEY))

    limit, bound = INSTRUCTIONS
    # (the instructions' rows, by an index of their own: never every row of the stores, nor
    # every row the operator is the source of)
    where = Where().add(INSTRUCTION_ROWS).through(INSTRUCTION_INDEX)
    # The newest INSTRUCTIONS_READ are read, so that the operator's own come first among them,
    # then those an agent typed (``typed_by``), each newest first: thirteen an agent wrote
    # cannot push the operator's out of the section, and a cut says how many more
    # (tests/reliability/test_operator_voice.py). A bound, not every row: the brief must not
    # read more as the store grows (§5.2); past it the count is a floor ("or more").
    found = ctx.query([s for s in ("operator", "shared") if s in usable], _is_instruction, INSTRUCTIONS_READ, where)
    found.sort(key=lambda r: bool(_typist(r.entry)))  # (stable: newest first within each)
    chosen = found[:limit]
    brief.instructions_more = len(found) - len(chosen)
    brief.instructions_capped = len(found) >= INSTRUCTIONS_READ
    brief.instructions = [_instruction(r, bound) for r in chosen]
    printed.update((r.store, r.key) for r in chosen)

    if "shared" in usable:
        _for_you(ctx, brief, since, printed)
    _due(ctx, brief, usable, time.strftime("%Y-%m-%d", time.localtime(seconds)), printed)

    summary = brief.summary = newest_summary(ctx.where)
    if summary is not None:
        limit, bound = OPEN
        items = open_items(summary.read())
        brief.open_from = summary.relpath
        brief.open_items = [Item(excerpt(i, bound)) for i in items[:limit]]
        brief.open_more = max(0, len(items) - limit)

    limit, bound = DECISIONS
    horizon = seconds - 86400 * days

    def decision(r: Result) -> bool:
        return (r.entry.get("status") != "superseded" and _is_decision(r.key, r.entry)
                and model.ts_seconds(r.entry.get("timestamp")) >= horizon)
    where = Where().add("ts >= ?", horizon - 0.001) \
        .add("(status IS NULL OR status != 'superseded')").add(DECISION_ROWS).narrowing()
    chosen = ctx.query(["shared"] if "shared" in usable else [], decision, limit, where)
    brief.decisions = [_item(r, bound) for r in chosen]
    printed.update((r.store, r.key) for r in chosen)

    if since is not None:  # printed in an earlier section: RECENT CHANGES leaves them out (§5.2)
        printed.update((c.store, c.key) for c in since.changes if c.store is not None)  # None: a file
    rest = ctx.query(usable, lambda r: (r.store, r.key) not in printed, max(changes, 0))
    brief.changes = [_item(r, CHANGES_BOUND) for r in rest]
    return brief


def _for_you(ctx: Context, brief: Brief, since: Since | None, printed: set[tuple[str, str]]) -> None:
    """FOR YOU: the reader's open letters, newest first (``ctx/letters.py``)."""
    from ctx.letters import letters_to, reader_name
    brief.reader = reader_name(ctx.author)
    limit, bound = FOR_YOU
    found, brief.for_you_more = letters_to(ctx, brief.reader, limit=limit,
                                           last_session=since.last if since is not None else None)
    for letter in found:
        e = letter.entry
        brief.for_you.append(LetterItem(letter.key, letter.sender,
                                        letter.field("shape"), e.get("timestamp"),
                                        excerpt(e.get("value"), bound), letter.new))
        printed.add(("shared", letter.key))


def _due(ctx: Context, brief: Brief, usable: list[str], today: str, printed: set[tuple[str, str]]) -> None:
    """DUE: what is overdue or due within a week of ``today`` (local, ``YYYY-MM-DD``),
    soonest first (``ctx/resurface.py``)."""
    from ctx.resurface import due_items
    limit, bound = DUE
    found = due_items(ctx, usable, today, operator=not ctx.author)
    brief.due_more = max(0, len(found) - limit)
    for item in found[:limit]:
        r = item.result
        brief.due.append(DueLine(r.key, r.store, item.day.isoformat(), item.when(),
                                 excerpt(r.entry.get("value"), bound), model.status_label(r.entry),
                                 item.must_not_forget, item.stale))
        printed.add((r.store, r.key))


def _label(item: Item) -> str:
    parts = [name(item.key or "")]
    if item.store and item.store != "shared":
        parts.append(f"[{name(item.store)}]")
    if item.status:
        parts.append(f"[{name(item.status)}]")
    return " ".join(parts)


def _since_lines(since: Since) -> list[str]:
    if since.last is None and not since.changes:
        return [f"  (your first session here, {since.author}: nothing of yours in this context's history yet)\n"]
    lines = [f"  - {local_time(c.timestamp)} {name(c.key)}{_since_where(c.store)}: {c.kind} by "
             f"{name(c.author, SENDER_BOUND)}\n" for c in since.changes]
    if since.last is None:
        lines.insert(0, f"  (your first session here, {since.author}: every change by others is news)\n")
    elif not since.changes:
        lines.append("  (nothing changed by others)\n")
    if since.more:
        lines.append(f"  ... and {since.more} more: ctx log --since {since.last or '1970-01-01'}\n")
    return lines


def _since_where(store: str | None) -> str:
    """After a SINCE item's name: its store (none for shared), or that it is a file."""
    return " (file)" if store is None else "" if store == "shared" else f" [{store}]"


def _for_you_lines(brief: Brief) -> list[str]:
    lines = [f"  - {'[new] ' if i.new else ''}{local_time(i.timestamp)} from {name(i.sender, SENDER_BOUND)} "
             f"({name(i.shape, SENDER_BOUND)}): {i.text} [{name(i.key)}]\n" for i in brief.for_you]
    if brief.for_you_more:
        lines.append(f"  {brief.for_you_more} more: ctx inbox\n")
    return lines


def _due_lines(brief: Brief) -> list[str]:
    lines = []
    for i in brief.due:
        marks = "".join(f" [{m}]" for m in (i.store if i.store != "shared" else "", i.status,
                                             "must not forget" if i.must_not_forget else "",
                                             ("stale: needs you" if brief.reader == "operator" else "stale")
                                             if i.stale else "") if m)
        lines.append(f"  - {i.due} ({i.when}) {name(i.key)}{marks}: {i.text}\n")
    if brief.due_more:
        lines.append(f"  ... and {brief.due_more} more due\n")
    return lines


def brief_sections(brief: Brief) -> list[Section]:
    """The brief as sections of whole items, in §5.2's order (SINCE after the instructions)."""
    counts = ", ".join(f"{n} {c}" for n, c in brief.counts.items())
    at = f" at {brief.commit}" if brief.commit else ""
    header = [f"=== ctx brief {brief.generated}{at} === ({counts} entries; "
              "full text: ctx get <key> --store <store> -v)\n"]
    if brief.sync:
        header.append(f"  sync: {brief.sync}\n")
    header += [f"  ! {visible(warning)}\n" for warning in brief.warnings]
    if not any(brief.counts.values()):
        header.append("  (no entries yet: record one with `ctx set <key> <value>`)\n")
    sections = [Section("header", "", ["".join(header)], "ctx brief", always=True)]
    if brief.focus:
        status = f" [{brief.focus.status}]" if brief.focus.status else ""
        sections.append(Section("focus", f"\nCURRENT FOCUS{status}\n", [f"  {brief.focus.text}\n"],
                                "ctx brief"))
    instructions = [f"  - {_label(i)}: {i.text}"
                    + (f" (typed by {name(i.typed_by, SENDER_BOUND)})" if i.typed_by else "") + "\n"
                    for i in brief.instructions]
    if brief.instructions_more:
        floor = " at least" if brief.instructions_capped else ""
        instructions.append(f"  ... and {brief.instructions_more} more{floor}: ctx list --source operator "
                            + " ".join(f"--tag {t}" for t in INSTRUCTION_TAGS) + "\n")
    sections.append(Section("instructions", "\nSTANDING INSTRUCTIONS (the operator's)\n", instructions,
                            "ctx brief"))
    if brief.for_you:
        sections.append(Section("for_you", f"\nFOR YOU (open letters to {name(brief.reader, SENDER_BOUND)}; "
                                "answer: ctx send NAME TEXT --re KEY)\n", _for_you_lines(brief), "ctx inbox"))
    if brief.due:
        sections.append(Section("due", "\nDUE (overdue or within 7 days; done: ctx review KEY)\n",
                                _due_lines(brief), "ctx brief"))
    if brief.since is not None:
        when = f" ({local_time(brief.since.last)})" if brief.since.last else ""
        sections.append(Section("since", f"\nSINCE YOUR LAST SESSION{when}\n", _since_lines(brief.since),
                                "ctx brief"))
    open_items = [f"  - {i.text}\n" for i in brief.open_items]
    if brief.open_more:
        open_items.append(f"  ... and {brief.open_more} more in {name(brief.open_from)}\n")
    sections.append(Section("open", f"\nOPEN (from {name(brief.open_from)})\n", open_items, "ctx summary show"))
    sections.append(Section("decisions", f"\nDECISIONS (last {brief.days} days)\n",
                            [f"  - {local_time(i.timestamp, False)} {_label(i)}: {i.text}\n"
                             for i in brief.decisions], "ctx brief"))
    sections.append(Section("changes", "\nRECENT CHANGES\n",
                            [f"  - {local_time(i.timestamp)} {_label(i)}: {i.text}\n" for i in brief.changes],
                            "ctx brief"))
    return sections


def render_brief(brief: Brief) -> str:
    return "".join(s.head + "".join(s.items) for s in brief_sections(brief) if s.items or s.always)
