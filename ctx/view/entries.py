"""The entries on the operator's view: one row each, with its history.

A row holds the key, status, tags, value, store, source, basis, author and
time, and the entry's versions newest first, each with what it changed (as
``ctx history`` says it): the status and its note, each other field's old and
new value, and the value compared word by word (``words.word_diff``). A
version the walk knows only from its commit's trailers says so and names
``ctx history KEY``. Every text goes through ``data.shown`` (forced values as
a preview, credentials redacted) and then ``esc``.
"""

from __future__ import annotations

from datetime import datetime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from ctx import model
from ctx.display import excerpt
from ctx.model import BOOKKEEPING, Entry, changed_fields
from ctx.view.data import FORCED_NOTE, FREE_TEXT, Version, shown
from ctx.view.words import word_diff

STATUS_FIELDS = ("status", "status_note", "superseded_by", "status_timestamp")
FIELD_BOUND = 120    # a field other than the value, shown old -> new, cut at this many characters
VALUE_BOUND = 4000   # a value is shown whole up to this many characters


def esc(value: Any) -> str:
    """Text for an element or a double-quoted attribute: ``& < > "`` escaped (``'`` need
    not be: the page quotes every attribute with ``"``)."""
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


_WHEN: dict[Any, str] = {}


def forget() -> None:
    """Start a page with no time formatted yet (the local zone may have changed)."""
    _WHEN.clear()


def when(moment: Any) -> str:
    """A datetime or a stored timestamp, local, to the minute ("date unknown" when it is
    missing or malformed)."""
    try:
        return _WHEN[moment]
    except (KeyError, TypeError):
        pass
    stamp: datetime | None = moment if isinstance(moment, datetime) else None
    if stamp is None and isinstance(moment, str):
        try:
            stamp = datetime.fromisoformat(moment)
            stamp = stamp if stamp.tzinfo is not None else model.ts_key(moment)
        except ValueError:
            stamp = model.ts_key(moment)
    if stamp is None or stamp == model.ts_key(None):
        text = "date unknown"
    else:
        local = stamp.astimezone()
        text = f"{local.year:04d}-{local.month:02d}-{local.day:02d} {local.hour:02d}:{local.minute:02d}"
    if len(_WHEN) > 100_000:
        _WHEN.clear()
    try:
        _WHEN[moment] = text
    except TypeError:
        pass
    return text


def tags_of(entry: Entry) -> list[str]:
    tags = entry.get("tags")
    return [str(t) for t in tags] if isinstance(tags, list) else []


def diff_html(old: str, new: str, new_shown: bool) -> str:
    """A value's change, word by word; a value replaced whole shows the old text only
    when the new one is on the page already (``new_shown``: above, as the value or as
    the next version's old text)."""
    segments = word_diff(cut(old), cut(new))
    if new_shown and [k for k, _ in segments] == ["-", "+"]:
        return f"replaced, was: <del>{esc(segments[0][1])}</del>"
    out = []
    for kind, text in segments:
        if kind == "=":
            out.append(esc(text))
        elif kind == "-":
            out.append(f"<del>{esc(text)}</del>")
        elif kind == "+":
            out.append(f"<ins>{esc(text)}</ins>")
        else:
            out.append(f'<i class="gap">{esc(text)}</i>')
    return "".join(out)


def cut(text: str) -> str:
    """A value as the page shows it: whole up to ``VALUE_BOUND`` characters."""
    if len(text) <= VALUE_BOUND:
        return text
    return text[:VALUE_BOUND] + f" … ({len(text) - VALUE_BOUND} more characters: ctx get KEY -v)"


def _field(name: str, value: Any, forced: bool) -> str:
    if value is None:
        return "(none)"
    if name in FREE_TEXT and forced:
        return shown(value, True)
    return excerpt(shown(value, False), FIELD_BOUND)


def changes_html(version: Version, older_forced: bool, new_shown: bool) -> str:
    """What one version changed, as HTML."""
    if not version.known:
        return (f'{esc(shown(version.commit.subject, False))} <i class="gap">(fields not read here: '
                f"ctx history {esc(version.key)} --store {version.store})</i>")
    if version.entry is None:
        return "deleted"
    if version.before is None:
        return "created"
    fields = changed_fields(version.before, version.entry, BOOKKEEPING)
    if not fields:
        return "no field changed"
    parts = []
    status = version.entry.get("status")
    if any(name in fields for name in STATUS_FIELDS):
        label = model.status_label(version.entry) if status else "status cleared"
        note = version.entry.get("status_note") if "status_note" in fields else None
        text = f"{label}: “{_field('status_note', note, version.forced)}”" if note else label
        parts.append(f"<b>{esc(text)}</b>")
    amend = version.commit.operation == "amend" and status == "amended"
    for name, (old, new) in fields.items():
        if name in STATUS_FIELDS or (name == "value" and amend):
            continue  # an amend's note (shown above) stands for the value it prefixed
        if name == "value" and (version.forced or older_forced):
            parts.append(f'value: <i class="forced">changed ({FORCED_NOTE})</i>')
        elif name == "value" and old is not None and new is not None:
            parts.append("value: " + diff_html(shown(old, False), shown(new, False), new_shown))
        else:
            parts.append(f"{esc(name)}: <del>{esc(_field(name, old, older_forced))}</del> → "
                         f"<ins>{esc(_field(name, new, version.forced))}</ins>")
    return "<br>".join(parts)


def _changes_value(version: Version) -> bool:
    return version.known and version.entry is not None and version.before is not None \
        and version.entry.get("value") != version.before.get("value")


def history_html(versions: list[Version], current: bool) -> tuple[str, str]:
    """The versions of one entry (newest first): the words for a lone creation, added to
    the entry's line, or a list of every version. ``current``: its value is shown above."""
    if not versions:
        return " · not committed yet", ""
    if len(versions) == 1 and versions[0].known and versions[0].before is None and versions[0].entry is not None:
        c = versions[0].commit
        return f' · created <a href="#c-{c.short}">{when(c.time)}</a> by {esc(shown(c.author, False))}', ""
    rows = []
    visible = current
    for n, v in enumerate(versions):
        c = v.commit
        older_forced = versions[n + 1].forced if n + 1 < len(versions) else False
        change = changes_html(v, older_forced, visible)
        event = esc(v.event)
        if change != v.event:  # "basis: basis: a -> b" says it twice
            event = change if change.startswith(f"{event}: ") else f"{event}: {change}"
        rows.append(f'<li><a href="#c-{c.short}">{when(c.time)}</a> {esc(shown(c.author, False))} · {event}</li>')
        if not v.known:
            visible = False
        elif _changes_value(v):
            visible = True
    return "", f'<details><summary>{len(versions)} versions</summary><ol class="vs">{"".join(rows)}</ol></details>'


def reach_text(reach: tuple[int, str] | None) -> str:
    """"shown to 4 sessions, last 2026-12-02": how far an entry reached (the shown log)."""
    if reach is None:
        return ""
    sessions, last = reach
    day = when(last)
    day = day[:10] if day[:1].isdigit() else day  # the local day ("date unknown" stays whole)
    return f"shown to {sessions} session{'s' if sessions != 1 else ''}, last {day}"


def entry_html(number: int, store: str, key: str, entry: Entry | None, versions: list[Version],
               reach: tuple[int, str] | None = None) -> str:
    """One entry's row; ``entry`` None: a deleted entry (its history, and its last value).
    ``reach``: the sessions the shown log says it reached, and when last."""
    head = [f'<a href="#e{number}">{esc(shown(key, False))}</a>']
    if entry is None:
        last = versions[0].before if versions and versions[0].known else None
        forced = len(versions) > 1 and versions[1].forced
        head.append('<span class="st st-deleted">deleted</span>')
        c = versions[0].commit
        meta = f"{store} · deleted {when(c.time)} by {esc(shown(c.author, False))}"  # under "deleted entries"
        shown_value = last.get("value") if last else None
    else:
        forced = bool(versions) and versions[0].forced
        label = model.status_label(entry)
        if label:
            status = str(entry.get("status"))
            by = entry.get("superseded_by")
            text = f"{status} by {shown(by, False)}" if status == "superseded" and by else shown(label, False)
            head.append(f'<span class="st st-{esc(status)}">{esc(text)}</span>')
        head += [f'<span class="tag">{esc(shown(t, False))}</span>' for t in tags_of(entry)]
        author = shown(str(entry.get("author") or "operator"), False)
        bits = [str(entry.get("source", "?")), str(entry.get("basis", "?")), f"by {author}",
                when(entry.get("timestamp"))]
        if entry.get("scope") == "session":
            bits.append("session scope")
        if entry.get("derivation"):
            bits.append("derivation: " + _field("derivation", entry["derivation"], forced))
        if reach is not None:
            bits.append(reach_text(reach))
        meta = esc(" · ".join(bits))
        shown_value = entry.get("value")
    value = ""
    if shown_value is not None:
        text = shown(shown_value, True) if forced else cut(shown(shown_value, False))
        value = f'<p class="forced">{esc(text)}</p>' if forced else f"<p>{esc(text)}</p>"
    line, history = history_html(versions, shown_value is not None)
    return f'<li id="e{number}"><h4>{"".join(head)}</h4>{value}<small>{meta}{line}</small>{history}</li>'
