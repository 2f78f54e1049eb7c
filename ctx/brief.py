"""The brief (§5.2) and the start payload (§5.1).

``build_brief`` selects; ``render_brief`` and ``Brief.as_json`` present. Each
section has an item limit and each item an excerpt bound, so the brief's
length does not grow with the store.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from . import model
from .errors import StoreError
from .layout import RULES_NAME
from .model import FOCUS_KEY, Entry
from .ops import Context, Result, result_order
from .summaries import newest_summary, open_items

FOCUS_BOUND = 600
INSTRUCTIONS = (12, 130)
OPEN = (15, 150)
DECISIONS = (8, 120)
CHANGES_BOUND = 100
DEFAULT_DAYS = 7
DEFAULT_CHANGES = 10
INSTRUCTION_TAGS = ("directive", "preference", "constraint")

_SPACE = re.compile(r"\s+")


def excerpt(value: Any, bound: int) -> str:
    """§5.2's excerpt: notes stripped, whitespace collapsed, cut at a word boundary."""
    text = model.strip_amend_notes(model.value_text(value))
    text = _SPACE.sub(" ", text).strip()
    if len(text) <= bound:
        return text
    if text[bound] == " ":
        head = text[:bound]
    else:
        cut = text.rfind(" ", 0, bound)
        head = text[:cut] if cut > 0 else text[:bound]
    return head.rstrip() + " ..."


def local_time(stamp: Any, with_time: bool = True) -> str:
    moment = model.ts_key(stamp).astimezone()
    return moment.strftime("%Y-%m-%d %H:%M" if with_time else "%Y-%m-%d")


@dataclass
class Item:
    """One line of a section: an entry's excerpt, or an open item."""

    text: str
    key: str | None = None
    store: str | None = None
    status: str = ""
    timestamp: str | None = None


@dataclass
class Brief:
    generated: str
    counts: dict[str, int]
    focus: Item | None = None
    instructions: list[Item] = field(default_factory=list)
    open_from: str | None = None
    open_items: list[Item] = field(default_factory=list)
    open_more: int = 0
    days: int = DEFAULT_DAYS
    decisions: list[Item] = field(default_factory=list)
    changes: list[Item] = field(default_factory=list)
    commit: str | None = None
    warnings: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The stable ``--json`` shape documented in ``ctx brief --help``."""
        def items(rows: list[Item]) -> list[dict[str, Any]]:
            return [{k: v for k, v in asdict(r).items() if v not in (None, "")} for r in rows]
        return {
            "generated": self.generated,
            "commit": self.commit,
            "counts": self.counts,
            "focus": items([self.focus])[0] if self.focus else None,
            "instructions": items(self.instructions),
            "open": {"from": self.open_from, "items": items(self.open_items), "more": self.open_more},
            "decisions": {"days": self.days, "items": items(self.decisions)},
            "changes": items(self.changes),
            "warnings": self.warnings,
        }


def _item(result: Result, bound: int) -> Item:
    return Item(text=excerpt(result.entry.get("value"), bound), key=result.key, store=result.store,
                status=model.status_label(result.entry), timestamp=result.entry.get("timestamp"))


def _is_decision(key: str, entry: Entry) -> bool:
    tags = entry.get("tags") if isinstance(entry.get("tags"), list) else []
    return "decision" in tags or key.startswith("decision")


def build_brief(ctx: Context, days: int = DEFAULT_DAYS, changes: int = DEFAULT_CHANGES,
                now: datetime | None = None) -> Brief:
    """Select the brief's sections from the stores and the newest summary."""
    now = now or datetime.now(timezone.utc)
    stores = {}
    warnings = []
    for name in model.STORES:
        try:
            stores[name] = ctx.read(name).entries
        except StoreError as exc:
            warnings.append(str(exc))
            stores[name] = {}
    brief = Brief(generated=now.astimezone().strftime("%Y-%m-%d %H:%M"),
                  counts={n: len(e) for n, e in stores.items()}, days=days, warnings=warnings)
    printed: set[tuple[str, str]] = set()

    focus = stores["shared"].get(FOCUS_KEY)
    if focus is not None:
        brief.focus = _item(Result("shared", FOCUS_KEY, focus), FOCUS_BOUND)
        printed.add(("shared", FOCUS_KEY))

    def current(name: str, test) -> list[Result]:
        return [Result(name, k, e) for k, e in stores[name].items()
                if e.get("status") != "superseded" and test(k, e)]

    def instruction(key: str, entry: Entry) -> bool:
        tags = entry.get("tags") if isinstance(entry.get("tags"), list) else []
        return (entry.get("source") == "operator" and any(t in tags for t in INSTRUCTION_TAGS)
                and not _is_decision(key, entry))

    limit, bound = INSTRUCTIONS
    chosen = heapq.nsmallest(limit, current("operator", instruction) + current("shared", instruction),
                             key=result_order)
    brief.instructions = [_item(r, bound) for r in chosen]
    printed.update((r.store, r.key) for r in chosen)

    summary = newest_summary(ctx.root)
    if summary is not None:
        limit, bound = OPEN
        items = open_items(summary.read())
        brief.open_from = summary.relpath
        brief.open_items = [Item(text=excerpt(i, bound)) for i in items[:limit]]
        brief.open_more = max(0, len(items) - limit)

    limit, bound = DECISIONS
    horizon = now - timedelta(hours=24 * days)
    recent = current("shared", lambda k, e: _is_decision(k, e) and model.ts_key(e.get("timestamp")) >= horizon)
    chosen = heapq.nsmallest(limit, recent, key=result_order)
    brief.decisions = [_item(r, bound) for r in chosen]
    printed.update((r.store, r.key) for r in chosen)

    rest = (Result(n, k, e) for n in model.STORES for k, e in stores[n].items() if (n, k) not in printed)
    brief.changes = [_item(r, CHANGES_BOUND) for r in heapq.nsmallest(max(changes, 0), rest, key=result_order)]
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
