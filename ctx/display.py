"""How entries and values are shown: excerpts (§5.2), local times, and the displays
of entries that name store, key and status (§3.6, §4.6). Light to import."""

from __future__ import annotations

import time

TYPE_CHECKING = False  # typing is for the checker; importing it costs ~3 ms at every start
if TYPE_CHECKING:
    from typing import Any

from ctx import model
from ctx.model import Entry


def excerpt(value: Any, bound: int) -> str:
    """§5.2's excerpt: notes stripped, whitespace collapsed, cut at a word boundary.

    A word that ends exactly at the bound is kept; a first word longer than
    the bound is cut at it; `` ...`` is appended when anything was cut.
    """
    whole = model.strip_amend_notes(model.value_text(value))
    # Only the start is shown: the whitespace of a head long enough for the bound is
    # collapsed (a list of a thousand long values spent most of its time collapsing
    # what it never showed). The collapsed head is a prefix of the collapsed whole, so
    # when it reaches past the bound the cut below is the same.
    head = whole[:2 * bound + 64]
    text = " ".join(head.split())
    if len(text) <= bound and len(head) < len(whole):
        text = " ".join(whole.split())
    if len(text) <= bound:
        return text
    if text[bound] == " ":
        head = text[:bound]
    else:
        cut = text.rfind(" ", 0, bound)
        head = text[:cut] if cut > 0 else text[:bound]
    return head.rstrip() + " ..."


def local_time(stamp: Any, with_time: bool = True) -> str:
    """A stored timestamp in local time (§3.3: tools display local time); a missing or
    malformed one (an entry written by hand) shows as unknown, not as 1970."""
    return local_time_at(model.ts_seconds(stamp), with_time)


def local_time_at(seconds: float, with_time: bool = True) -> str:
    """``local_time`` of a stamp already read as seconds since the epoch (``model.ts_seconds``)."""
    if seconds == 0:  # (the epoch: what a malformed stamp sorts as)
        return "date unknown"
    # the local zone of that moment, as astimezone() finds it, at half its cost
    return time.strftime("%Y-%m-%d %H:%M" if with_time else "%Y-%m-%d", time.localtime(seconds))


# --- entries ----------------------------------------------------------------------------

LINE_BOUND = 100
_ORDER = ("value", "source", "author", "basis", "scope", "tags", "derivation", "created",
          "timestamp", "status", "status_timestamp", "status_note", "superseded_by")


def status_tag(entry: Entry) -> str:
    label = model.status_label(entry)
    if not label:
        return ""
    note = entry.get("status_note")
    if note and entry.get("status") != "amended":
        return f" [{label}: {note}]"
    return f" [{label}]"


def value_block(value: Any) -> str:
    if isinstance(value, str):
        return value
    from ctx.jsoncodec import dumps
    return dumps(value)


def show_entry(result, verbose: bool = False) -> str:
    """A full display of one entry: header, value, then a line of its fields."""
    entry = result.entry
    lines = [f"{result.store}/{result.key}{status_tag(entry)}", value_block(entry.get("value"))]
    if not verbose:
        meta = [str(entry.get("source", "?")), str(entry.get("basis", "?"))]
        if entry.get("author"):
            meta.append(f"by {entry['author']}")
        meta.append(local_time(entry.get("timestamp")))
        tags = entry.get("tags")
        if tags:
            meta.append("tags: " + ", ".join(map(str, tags)))
        if entry.get("scope") == "session":
            meta.append("session scope")
        lines.append("(" + " · ".join(meta) + ")")
        return "\n".join(lines)
    fields = [f for f in _ORDER if f in entry and f != "value"] + \
             [f for f in entry if f not in _ORDER]
    for name in fields:
        shown = entry[name]
        if isinstance(shown, str):
            if name in ("created", "timestamp", "status_timestamp"):
                shown = f"{shown} ({local_time(shown)} local)"
        else:
            shown = model.json_text(shown)
        lines.append(f"  {name}: {shown}")
    return "\n".join(lines)


def result_line(result) -> str:
    """One line per result for search and list."""
    head, tail = line_parts(result.store, result.key, result.entry)
    return line_at(head, model.ts_seconds(result.entry.get("timestamp")), tail)


# The parts of a result line that depend on the entry alone: the read index keeps them for the
# entries of each tag (ctx/storage/taglines.py), made at the write, so a `list --tag` reads its
# lines ready. Bump LINE_FORMAT whenever line_parts gives other text: kept parts of another
# format are made again, never shown.
LINE_FORMAT = 1


def line_parts(store: str, key: str, entry: Entry) -> tuple[str, str]:
    """A result line's text before its time (name and status) and after it (the excerpt)."""
    return f"{store}/{key}{status_tag(entry)}", excerpt(entry.get("value"), LINE_BOUND)


def line_at(head: str, seconds: float, tail: str) -> str:
    """A result line from its ``line_parts`` and the entry's time (``model.ts_seconds``),
    shown in the local time of the reader."""
    return f"{head}  {local_time_at(seconds)}  {tail}"


def result_json(result) -> dict[str, Any]:
    return {"store": result.store, "key": result.key, "entry": result.entry}


STATUS_OPERATIONS = {"amend": "amended", "supersede": "superseded", "resolve": "resolved"}


def what_changed(fields: dict[str, tuple[Any, Any]], operation: str = "", bound: int = 60) -> str:
    """One line for what a version changed (``model.changed_fields`` of it and the version
    before, bookkeeping left out): the status and its note (the status word left out when
    ``operation`` already says it), then each other field's old and new value; an amend's
    note stands for the value it prefixed."""
    parts = []
    status = fields.get("status", (None, None))[1]
    note = fields.get("status_note", (None, None))[1]
    if status:
        label = "" if STATUS_OPERATIONS.get(operation) == status else status
        if status == "superseded":
            label = f"{label} by {fields.get('superseded_by', (None, None))[1]}".strip()
        quoted = repr(excerpt(note, bound)) if note else ""
        parts.append(f"{label}: {quoted}" if label and quoted else label or quoted or "(no note)")
    elif note is not None or "status" in fields:
        parts.append("status cleared")
    for name, (old, new) in fields.items():
        if name in ("status", "status_note", "superseded_by") or (name == "value" and status == "amended"):
            continue
        shown_old = "(none)" if old is None else excerpt(old, bound)
        shown_new = "(none)" if new is None else excerpt(new, bound)
        parts.append(f"{name}: {shown_old} -> {shown_new}")
    return "; ".join(parts) if parts else "no field changed"
