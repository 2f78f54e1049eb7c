"""The brief (§5.2) and the start payload (§5.1).

``build_brief`` selects; ``render_brief`` and ``Brief.as_json`` present. Each
section has an item limit and each item an excerpt bound, so the brief's
length does not grow with the store.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

TYPE_CHECKING = False  # typing is for the checker; importing it costs ~3 ms at every start
if TYPE_CHECKING:
    from typing import Any

from ctx import model
from ctx.display import excerpt, local_time
from ctx.errors import StoreError
from ctx.model import FOCUS_KEY, Entry
from ctx.results import Result
from ctx.storage.root import RULES_NAME
from ctx.summaries import newest_summary, open_items

if TYPE_CHECKING:
    from ctx.context import Context

FOCUS_BOUND = 600
INSTRUCTIONS = (12, 130)
OPEN = (15, 150)
DECISIONS = (8, 120)
CHANGES_BOUND = 100
DEFAULT_DAYS = 7
DEFAULT_CHANGES = 10
INSTRUCTION_TAGS = ("directive", "preference", "constraint")

class Item:
    """One line of a section: an entry's excerpt, or an open item."""

    __slots__ = ("text", "key", "store", "status", "timestamp")

    def __init__(self, text: str, key: str | None = None, store: str | None = None,
                 status: str = "", timestamp: str | None = None) -> None:
        self.text, self.key, self.store, self.status, self.timestamp = text, key, store, status, timestamp

    def as_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__ if getattr(self, name) not in (None, "")}


class Brief:
    """The brief's selection, before it is rendered as text or JSON."""

    def __init__(self, generated: str, counts: dict[str, int], days: int = DEFAULT_DAYS) -> None:
        self.generated, self.counts, self.days = generated, counts, days
        self.focus: Item | None = None
        self.instructions: list[Item] = []
        self.open_from: str | None = None
        self.open_items: list[Item] = []
        self.open_more = 0
        self.decisions: list[Item] = []
        self.changes: list[Item] = []
        self.commit: str | None = None
        self.warnings: list[str] = []

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
            "open": {"from": self.open_from, "items": items(self.open_items), "more": self.open_more},
            "decisions": {"days": self.days, "items": items(self.decisions)},
            "changes": items(self.changes),
            "warnings": self.warnings,
        }


def _item(result: Result, bound: int) -> Item:
    return Item(excerpt(result.entry.get("value"), bound), result.key, result.store,
                model.status_label(result.entry), result.entry.get("timestamp"))


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
                now: datetime | None = None) -> Brief:
    """Select the brief's sections (§5.2). Each is a bounded, ordered query, so
    with a fresh index the brief never reads the whole store."""
    with ctx.snapshot():
        return _build(ctx, days, changes, now)


def _build(ctx: Context, days: int, changes: int, now: datetime | None) -> Brief:
    from ctx.storage.index import Where
    now = now or datetime.now(timezone.utc)
    warnings: list[str] = []
    usable: list[str] = []
    counts: dict[str, int] = {}
    for name in model.STORES:  # a store that cannot be read is named, and left out
        try:
            counts.update(ctx.counts([name]))
            usable.append(name)
        except StoreError as exc:
            warnings.append(str(exc))
            counts[name] = 0
    brief = Brief(now.astimezone().strftime("%Y-%m-%d %H:%M"), counts, days)
    brief.warnings = warnings
    printed: set[tuple[str, str]] = set()

    if "shared" in usable:
        focus = ctx.find(FOCUS_KEY, "shared")
        if focus is not None:
            brief.focus = _item(Result("shared", FOCUS_KEY, focus), FOCUS_BOUND)
            printed.add(("shared", FOCUS_KEY))

    limit, bound = INSTRUCTIONS
    where = Where().add("source = 'operator'").add("(status IS NULL OR status != 'superseded')")
    chosen = ctx.query([s for s in ("operator", "shared") if s in usable], _is_instruction, limit,
                       where.tags(INSTRUCTION_TAGS))
    brief.instructions = [_item(r, bound) for r in chosen]
    printed.update((r.store, r.key) for r in chosen)

    summary = newest_summary(ctx.root)
    if summary is not None:
        limit, bound = OPEN
        items = open_items(summary.read())
        brief.open_from = summary.relpath
        brief.open_items = [Item(excerpt(i, bound)) for i in items[:limit]]
        brief.open_more = max(0, len(items) - limit)

    limit, bound = DECISIONS
    horizon = now - timedelta(hours=24 * days)

    def decision(r: Result) -> bool:
        return (r.entry.get("status") != "superseded" and _is_decision(r.key, r.entry)
                and model.ts_key(r.entry.get("timestamp")) >= horizon)
    where = Where().add("ts >= ?", horizon.timestamp() - 0.001) \
        .add("(status IS NULL OR status != 'superseded')") \
        .add("(instr(tags, ?) > 0 OR substr(key, 1, 8) = 'decision')", "\x1fdecision\x1f")
    chosen = ctx.query(["shared"] if "shared" in usable else [], decision, limit, where)
    brief.decisions = [_item(r, bound) for r in chosen]
    printed.update((r.store, r.key) for r in chosen)

    rest = ctx.query(usable, lambda r: (r.store, r.key) not in printed, max(changes, 0))
    brief.changes = [_item(r, CHANGES_BOUND) for r in rest]
    return brief


def _label(item: Item) -> str:
    parts = [item.key or ""]
    if item.store and item.store != "shared":
        parts.append(f"[{item.store}]")
    if item.status:
        parts.append(f"[{item.status}]")
    return " ".join(parts)


def render_brief(brief: Brief) -> str:
    counts = ", ".join(f"{n} {c}" for n, c in brief.counts.items())
    at = f" at {brief.commit}" if brief.commit else ""
    lines = [f"=== ctx brief {brief.generated}{at} === ({counts} entries; "
             "full text: ctx get <key> --store <store> -v)"]
    for warning in brief.warnings:
        lines.append(f"  ! {warning}")
    if not any(brief.counts.values()):
        lines.append("  (no entries yet: record one with `ctx set <key> <value>`)")
    if brief.focus:
        status = f" [{brief.focus.status}]" if brief.focus.status else ""
        lines += ["", f"CURRENT FOCUS{status}", f"  {brief.focus.text}"]
    if brief.instructions:
        lines += ["", "STANDING INSTRUCTIONS (the operator's)"]
        lines += [f"  - {_label(i)}: {i.text}" for i in brief.instructions]
    if brief.open_items:
        lines += ["", f"OPEN (from {brief.open_from})"]
        lines += [f"  - {i.text}" for i in brief.open_items]
        if brief.open_more:
            lines.append(f"  ... and {brief.open_more} more in {brief.open_from}")
    if brief.decisions:
        lines += ["", f"DECISIONS (last {brief.days} days)"]
        lines += [f"  - {local_time(i.timestamp, False)} {_label(i)}: {i.text}" for i in brief.decisions]
    if brief.changes:
        lines += ["", "RECENT CHANGES"]
        lines += [f"  - {local_time(i.timestamp)} {_label(i)}: {i.text}" for i in brief.changes]
    return "\n".join(lines) + "\n"


def start_payload(ctx: Context, days: int = DEFAULT_DAYS, changes: int = DEFAULT_CHANGES,
                  commit: str | None = None) -> str:
    """§5.1: the rules, the brief, the newest summary. Reads only; never fails on
    an empty or half-made context, so a harness hook never blocks a session."""
    parts: list[str] = []
    rules = ctx.root / RULES_NAME
    try:
        text = rules.read_text(encoding="utf-8", errors="replace")
        parts.append(f"=== RULES ({RULES_NAME}) ===\n{text.rstrip()}\n")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
        parts.append(f"=== RULES ({RULES_NAME}) ===\n(no {RULES_NAME} in {ctx.root}: "
                     "run `ctx init` to create the context)\n")
    brief = build_brief(ctx, days=days, changes=changes)
    brief.commit = commit
    parts.append(render_brief(brief))
    summary = newest_summary(ctx.root)
    if summary is None:
        parts.append("=== SESSION SUMMARY ===\n(no session summary yet: end this session "
                     "with one in sessions/, see RULES.md)\n")
    else:
        parts.append(f"=== SESSION SUMMARY ({summary.relpath}) ===\n{summary.read().rstrip()}\n")
    return "\n".join(parts)
