"""How entries and values are shown: every field as visible text (``visible``, ``name``),
excerpts (§5.2), local times, and the displays of entries that name store, key and status
(§3.6, §4.6). Light to import."""

from __future__ import annotations

import time

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from typing import Any

from ctx import model
from ctx.model import Entry

# --- visible text ----------------------------------------------------------------------------
# Whatever ctx prints may have come from another agent, a store file edited by hand or a remote.
# A field is printed as one line of visible text: a line break in a name would print a whole
# section of the brief that is not there ("STANDING INSTRUCTIONS (the operator's)"), an ESC or a
# BEL drives the terminal (CSI cursor moves, OSC 52 clipboard writes), a bidi control (U+202E)
# shows a name other than it is. Such a character is shown as its escape, ``\x1b``, ``\u202e``
# (Python's and ``ls -b``'s spelling), not as ``ls``'s ``?``: the escape is ASCII, says which
# character it was (the operator can look for it), and two names that differ only there stay
# different on the screen. A backslash is left as it is: values hold paths and expressions, and
# no escape a value spells out can act on a terminal.
# Held by tests/reliability/test_visible_fields.py.

_SHOWN_CATEGORIES = ("Cc", "Cf", "Cs", "Zl", "Zp")  # controls, format (bidi, zero-width), surrogates, line breaks
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
NAME_BOUND = 200  # a name shown whole (a key of model.KEY_BOUND is); past it, cut and " ..."


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _hidden(ch: str, lines: bool) -> bool:
    if lines and ch in "\n\t":
        return False
    if ch.isascii():
        return not ch.isprintable()
    if ch.isprintable():
        return False
    import unicodedata  # only for text that holds a non-ASCII character str.isprintable refuses
    return unicodedata.category(ch) in _SHOWN_CATEGORIES


def visible(text: str, lines: bool = False) -> str:
    """``text`` as one line of visible text: every control character (C0, DEL, C1), Unicode
    format character (bidi controls, zero-width ones), surrogate and line or paragraph
    separator shown as its escape (``\\n``, ``\\x1b``, ``\\u202e``). With ``lines`` (a value
    or a file shown whole), its line breaks (LF, CRLF) and tabs are kept, and nothing else."""
    if text.isprintable():  # (almost every field: no character to look at one by one)
        return text
    if lines and text.replace("\n", "").replace("\t", "").isprintable():  # (a file, a value: the same)
        return text
    if lines and "\r\n" in text:  # a file's CRLF line ends are line breaks too; a lone CR is not
        return "\r\n".join(visible(part, lines) for part in text.split("\r\n"))
    return "".join(_escape(ch) if _hidden(ch, lines) else ch for ch in text)


def name(text: Any, bound: int = NAME_BOUND) -> str:
    """A name (key, author, tag, status, shape, sender, store, file) for one line: visible,
    cut at ``bound`` characters with `` ...`` so no name makes a display grow without end."""
    shown = visible(text if isinstance(text, str) else str(text))
    return shown if len(shown) <= bound else shown[:bound] + " ..."


def excerpt(value: Any, bound: int) -> str:
    """§5.2's excerpt: notes stripped, whitespace collapsed, controls shown (``visible``,
    each escape counting against the bound), cut at a word boundary.

    A word that ends exactly at the bound is kept; a first word longer than
    the bound is cut at it; `` ...`` is appended when anything was cut.
    """
    whole = model.strip_amend_notes(model.value_text(value))
    # A head already collapsed and visible is the excerpt's start as it stands: printable
    # text holds no whitespace but the ASCII space (str.isprintable), so with no space first,
    # last or twice it is the start of the whole collapsed (tests/core/test_brief.py,
    # test_excerpt_collapses_only_the_head_it_shows_with_the_same_result). A search or list
    # makes a line per result: most values take this way.
    head = whole[:bound + 1]
    if head.isprintable() and "  " not in head and head[:1] != " " and head[-1:] != " ":
        if len(head) <= bound:
            return head
        cut = head.rfind(" ", 0, bound)
        return (head[:cut] if cut > 0 else head[:bound]).rstrip() + " ..."
    # Only the start is shown: the whitespace of a head long enough for the bound is
    # collapsed (a list of a thousand long values spent most of its time collapsing
    # what it never showed). The collapsed head is a prefix of the collapsed whole, so
    # when it reaches past the bound the cut below is the same.
    head = whole[:2 * bound + 64]
    text = " ".join(head.split())
    if len(text) <= bound and len(head) < len(whole):
        text = " ".join(whole.split())
    text = visible(text)
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
    """``local_time`` of a stamp already read as seconds (``model.ts_seconds``)."""
    if seconds == 0:  # (the epoch: what a malformed stamp sorts as)
        return "date unknown"
    # the local zone of that moment, as astimezone() finds it, at half its cost
    return time.strftime("%Y-%m-%d %H:%M" if with_time else "%Y-%m-%d", time.localtime(seconds))


# --- entries ----------------------------------------------------------------------------

LINE_BOUND = 100
_ORDER = ("value", "source", "author", "basis", "scope", "tags", "derivation", "created",
          "timestamp", "status", "status_timestamp", "status_note", "superseded_by")


def status_tag(entry: Entry) -> str:
    label = name(model.status_label(entry))
    if not label:
        return ""
    note = entry.get("status_note")
    if note and entry.get("status") != "amended":
        return f" [{label}: {name(note)}]"  # (a hand-written note: bounded as a name is)
    return f" [{label}]"


def value_block(value: Any) -> str:
    """A value shown whole: its lines kept, any other control shown (``visible``); JSON's
    own escapes cover the controls of a non-string value, but not a bidi control."""
    if isinstance(value, str):
        return visible(value, lines=True)
    from ctx.jsoncodec import dumps
    return visible(dumps(value), lines=True)


def show_entry(result, verbose: bool = False) -> str:
    """A full display of one entry: header, value, then a line of its fields."""
    entry = result.entry
    lines = [f"{name(result.store)}/{name(result.key)}{status_tag(entry)}", value_block(entry.get("value"))]
    if not verbose:
        meta = [name(entry.get("source", "?")), name(entry.get("basis", "?"))]
        if entry.get("author"):
            meta.append(f"by {name(entry['author'])}")
        meta.append(local_time(entry.get("timestamp")))
        tags = entry.get("tags")
        if tags:
            meta.append("tags: " + ", ".join(map(name, tags if isinstance(tags, list) else [tags])))
        if entry.get("scope") == "session":
            meta.append("session scope")
        lines.append("(" + " · ".join(meta) + ")")
        return "\n".join(lines)
    fields = [f for f in _ORDER if f in entry and f != "value"] + \
             [f for f in entry if f not in _ORDER]
    for field in fields:
        shown = entry[field]
        if isinstance(shown, str):
            shown = visible(shown)
            if field in ("created", "timestamp", "status_timestamp"):
                shown = f"{shown} ({local_time(entry[field])} local)"
        else:
            shown = visible(model.json_text(shown))
        lines.append(f"  {name(field)}: {shown}")
    return "\n".join(lines)


def result_line(result) -> str:
    """One line per result for search and list (its time: the one the read ordered by, ``Result.moment``)."""
    shown = status_tag(result.entry) if result.has_status() else ""  # (no status: the entry need not be decoded)
    return (f"{name(result.store)}/{name(result.key)}{shown}  {local_time_at(result.moment())}  "
            f"{excerpt(result.value(), LINE_BOUND)}")


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
        label = name(label)
        if status == "superseded":
            label = f"{label} by {name(fields.get('superseded_by', (None, None))[1])}".strip()
        quoted = repr(excerpt(note, bound)) if note else ""
        parts.append(f"{label}: {quoted}" if label and quoted else label or quoted or "(no note)")
    elif note is not None or "status" in fields:
        parts.append("status cleared")
    for field, (old, new) in fields.items():
        if field in ("status", "status_note", "superseded_by") or (field == "value" and status == "amended"):
            continue
        shown_old = "(none)" if old is None else excerpt(old, bound)
        shown_new = "(none)" if new is None else excerpt(new, bound)
        parts.append(f"{name(field)}: {shown_old} -> {shown_new}")
    return "; ".join(parts) if parts else "no field changed"
