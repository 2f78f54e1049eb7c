"""The start payload (§5.1): RULES.md, the brief, the newest session summary, and its budget.

Without a budget the payload is §5.1's, whole: RULES.md and the summary byte
for byte. With one (``ctx start --max-chars N``, a context window the agent
runtime names, or ``ctx config start-max-chars``) the output is at most N
characters, always: it is filled in a fixed order of importance with whole
items only (one oversized item that does not fit is left out alone, never every later
one) — RULES.md, the brief's header, focus, instructions, letters for
you, what is due, what changed since your last session, open items,
decisions, recent changes, then the
summary (its Open section before the rest) — and where anything is left out
one line says how much, and the command that shows it. A harness cuts an
over-long hook output on its own terms (Claude Code keeps a 2 KB preview);
this way the agent gets the most important part whole.
"""

from __future__ import annotations

import os

from ctx.brief import DEFAULT_CHANGES, DEFAULT_DAYS, Section, brief_sections, build_brief
from ctx.errors import StoreError
from ctx.storage.files import read_text
from ctx.storage.root import RULES_NAME
from ctx.summaries import open_section

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctx.brief import Since
    from ctx.context import Context
    from ctx.summaries import Summary

WINDOW_SHARE = 0.05       # of the agent's context window, when the runtime names it
CHARS_PER_TOKEN = 4       # the runtime's own rule of thumb (CTX_CONTEXT_WINDOW_TOKENS)
FULL = "ctx start --max-chars 0"
# Longer than any line the brief makes (each is bounded: names at display.NAME_BOUND, values at
# their excerpt's bound): only a file's text, or what no bound held, is longer.
OVERSIZED = 1000


def _verbatim(text: str) -> str:
    """A file's text as it is, ending with one newline (none is added when it has one), but
    for a control character (ESC, BEL, a lone CR, a bidi control), shown as its escape
    (``display.visible``): RULES.md and a summary may have come from a remote, and §5.1's
    "verbatim" is for the text a person wrote, which holds none (its lines and tabs are kept).
    Held by tests/reliability/test_visible_fields.py."""
    from ctx.display import visible
    text = visible(text, lines=True)
    return text if text.endswith("\n") else text + "\n"


def rules_section(ctx: Context) -> Section:
    head = f"=== RULES ({RULES_NAME}) ===\n"
    try:
        text = read_text(os.path.join(ctx.where, RULES_NAME), errors="replace", follow=False)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
        text = f"(no {RULES_NAME} in {ctx.where}: run `ctx init` to create the context)\n"
    except StoreError:  # a link (to a dotfile, a key) is never shown: tests/reliability/test_root_links.py
        text = (f"({RULES_NAME} is a symbolic link or not a regular file: not read; "
                "`ctx doctor` names it)\n")
    return Section("rules", head, [_verbatim(text)], FULL, always=True)


def summary_sections(summary: Summary | None, budgeted: bool, text: str | None = None) -> list[Section]:
    """The newest summary (the brief's: ``Brief.summary``): whole and verbatim; with a
    budget, its Open section first, then the rest of it. ``text``: its text, read already."""
    if summary is None:
        return [Section("summary", "\n=== SESSION SUMMARY ===\n",
                        ["(no session summary yet: end this session with one in sessions/, see RULES.md)\n"],
                        "ctx summary show", always=True)]
    from ctx.display import name
    head = f"\n=== SESSION SUMMARY ({name(summary.relpath)}) ===\n"
    text = _verbatim(summary.read() if text is None else text)
    opened = open_section(text) if budgeted else None
    if not opened or opened == text:
        return [Section("summary", head, [text], "ctx summary show")]
    rest = text.replace(opened, "", 1)
    return [Section("summary", head, [_verbatim(opened), f"\n(the rest of {name(summary.relpath)}:)\n" + rest],
                    "ctx summary show")]


def compaction_sections(ctx: Context, summary: Summary | None) -> list[Section]:
    """The newest compaction a harness wrote (``ctx/compaction.py``), when no summary
    (``summary``: the newest) was written after it (the summary file's time: a summary
    written or pulled later hides it);
    the next session then sees what the last one had done. Held by
    tests/features/test_events.py, test_the_next_start_shows_a_kept_compaction."""
    from ctx import compaction, model
    try:
        found = compaction.newest(ctx)
    except Exception:  # an unreadable store is the brief's to report; start never fails here
        return []
    if found is None:
        return []
    key, entry = found
    if summary is not None:
        try:
            if os.stat(summary.path).st_mtime >= model.ts_seconds(entry.get("timestamp")):
                return []
        except OSError:
            pass
    from ctx.display import name
    head = (f"\n=== LAST COMPACTION ({compaction.STORE}/{name(key)}, {name(str(entry.get('timestamp')))}: "
            "no session summary since) ===\n")
    return [Section("compaction", head, [_verbatim(model.value_text(entry.get("value")))],
                    f"ctx get {key} --store {compaction.STORE}")]


def sections(ctx: Context, days: int, changes: int, commit: str | None, since: Since | None,
             notices: list[str] | None = None, sync: str | None = None,
             entries: list[tuple[str, str]] | None = None) -> tuple[list[Section], Summary | None]:
    """The notices, RULES.md and the brief, and the newest summary the brief found (its
    sections come from ``summary_sections``: the sessions folder is listed once).
    ``notices``: one line each above the rules (a merge that waits, the local context shown
    because the remote did not answer); ``sync``: the sync state for the brief's header."""
    brief = build_brief(ctx, days=days, changes=changes, since=since)
    if entries is not None:  # the entries the brief names (the caller keeps those the payload shows)
        entries += _named(brief)
    brief.commit = commit
    brief.sync = sync
    parts = brief_sections(brief)
    parts[0].head = "\n"  # a blank line between the rules and the brief's header
    above = [Section("notices", "", [f"[ctx: {n}]\n" for n in notices], FULL)] if notices else []
    return above + [rules_section(ctx)] + parts, brief.summary


def _named(brief: Any) -> list[tuple[str, str]]:
    """Every (store, key) an item of the brief names."""
    items = [brief.focus, *brief.instructions, *brief.decisions, *brief.changes, *brief.for_you, *brief.due]
    found = []
    for item in items:
        store, key = getattr(item, "store", None), getattr(item, "key", None)
        if isinstance(store, str) and isinstance(key, str):
            found.append((store, key))
    return list(dict.fromkeys(found))


def shown_in(payload: str, named: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The entries of ``named`` whose key the payload holds as a word (a budget may have left some
    out). String methods, no re: the start path loads none (tests/cli/test_fastcli.py)."""
    def word(ch: str) -> bool:
        return ch.isalnum() or ch in "_-."

    def holds(key: str) -> bool:
        at = payload.find(key)
        while at >= 0:
            end = at + len(key)
            after = payload[end:end + 1]
            ends = not after or not word(after) or after == "." and not word(payload[end + 1:end + 2] or " ")
            if (at == 0 or not word(payload[at - 1])) and ends:
                return True
            at = payload.find(key, at + 1)
        return False
    return [(store, key) for store, key in named if holds(key)]


def render(parts: list[Section]) -> str:
    return "".join(s.head + "".join(s.items) for s in parts if s.items or s.always)


def elision(left_items: int, left_chars: int, budget: int, commands: list[str]) -> str:
    """The one line that says what was left out, and where to read it."""
    see = ", ".join(dict.fromkeys(commands))
    return f"\n[ctx: {left_items} more items ({left_chars:,} chars) cut to fit {budget:,}; see {see}]\n"


def fit(parts: list[Section], budget: int) -> str:
    """At most ``budget`` characters: whole items in order until one does not fit, then
    the elision line. If even the first item does not fit, as much of it as does.

    An item longer than ``OVERSIZED`` that does not fit is left out alone and the items after
    it still get their turn: one oversized item (a hand-written entry, a summary's part) never
    cuts every later section (tests/core/test_start.py). Bounded items keep the strict order
    of importance: none is printed after one that was left out (tests/core/test_for_you.py)."""
    commands = [s.command for s in parts if s.items]
    total = sum(len(s.items) for s in parts)
    reserve = len(elision(total, sum(len(s.head) + sum(map(len, s.items)) for s in parts), budget, commands))
    room = budget - reserve
    out: list[str] = []
    used = 0
    left_items = left_chars = 0
    missed: list[str] = []
    stopped = False
    for section in parts:
        headed = False  # a section's heading comes with the first of its items printed
        counted = False  # its heading counted as left out (the first item, cut): never twice
        left_here = left_items
        for item in section.items:
            piece = ("" if headed else section.head) + item
            if not stopped and used + len(piece) <= room:
                out.append(piece)
                used += len(piece)
                headed = True
                continue
            if not stopped and out and len(piece) > OVERSIZED:  # left out alone: the next may fit
                left_items += 1
                left_chars += len(item)
                missed.append(section.command)
                continue
            if not stopped and not out:  # the first item alone is too long: as much as fits
                cut = max(0, room - used)
                head = piece[:cut]
                head = head[:head.rfind("\n") + 1] if "\n" in head else head
                out.append(head)
                used += len(head)
                left_chars += len(piece) - len(head)
                left_items += 1
                missed.append(section.command)
                stopped = counted = True
                continue
            stopped = True
            left_items += 1
            left_chars += len(item)
            missed.append(section.command)
        if left_items > left_here and not headed and not counted:  # its heading, left out once
            left_chars += len(section.head)
    text = "".join(out) + elision(left_items, left_chars, budget, missed)
    return text[:budget] if len(text) > budget else text


def start_payload(ctx: Context, days: int = DEFAULT_DAYS, changes: int = DEFAULT_CHANGES,
                  commit: str | None = None, since: Since | None = None, max_chars: int | None = None,
                  notices: list[str] | None = None, sync: str | None = None,
                  shown: list[tuple[str, str]] | None = None) -> str:
    """§5.1's payload, within ``max_chars`` when given (None or 0: whole). Reads only.
    ``notices`` and ``sync``: see ``sections`` (the front door reads them from git).
    ``shown``: filled with the (store, key) of each entry the payload shows (the shown log)."""
    named: list[tuple[str, str]] | None = [] if shown is not None else None
    parts, summary = sections(ctx, days, changes, commit, since, notices, sync, named)
    text = _payload(ctx, parts, summary, max_chars)
    if shown is not None and named:
        shown += shown_in(text, named)
    return text


def _payload(ctx: Context, parts: list[Section], summary: Summary | None, max_chars: int | None) -> str:
    kept = compaction_sections(ctx, summary)
    text = summary.read() if summary is not None else None  # (once: both layouts show the same text)
    whole = render(parts + summary_sections(summary, False, text) + kept)
    if not max_chars or len(whole) <= max_chars:
        return whole
    return fit(parts + summary_sections(summary, True, text) + kept, max_chars)


def budget_from(max_chars: int | None, max_tokens: int | None, window_chars: int | None,
                window_tokens: int | None, configured: int | None) -> int | None:
    """Where the budget comes from, the first that is set: the option (characters, or tokens
    at 4 characters each), 5% of the context window the runtime names, the per-machine
    setting. None: no budget (0 given explicitly also means none)."""
    if max_chars is not None:
        return max_chars or None
    if max_tokens is not None:
        return max_tokens * CHARS_PER_TOKEN or None
    if window_chars:
        return int(window_chars * WINDOW_SHARE)
    if window_tokens:
        return int(window_tokens * CHARS_PER_TOKEN * WINDOW_SHARE)
    return configured or None
