"""Write only what changed: a store file's new bytes from its old bytes and the edits.

Serializing a large store with indentation costs far more than the change
itself, and rewriting every entry would reformat a file another
implementation wrote (§8.2 asks implementations taking turns not to). So
in the two-space layout of §8.2, ctx replaces, inserts or removes only the
text of the entries a write changed, and ``last_updated``; every other
byte stays as it was. Each entry is located at its place in the layout and
checked against the entry the write started from; anything unexpected
returns None, and the caller serializes the whole file instead.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing is for the checker; importing it costs ~3 ms at every start
if TYPE_CHECKING:
    from typing import Any, Iterable

_DECODER = json.JSONDecoder()
_ENTRIES = '\n  "entries": {'
_UPDATED = '\n  "last_updated": '
MAX_EDITS = 64  # past this, one full serialization is cheaper than many splices


def member(key: str, entry: dict[str, Any]) -> str:
    """One entry as the full serializer would write it at its depth, with its newline."""
    body = json.dumps(entry, indent=2, ensure_ascii=False).replace("\n", "\n    ")
    return "\n    " + json.dumps(key, ensure_ascii=False) + ": " + body


def splice(raw: bytes, edits: Iterable[tuple[str, Any, Any]], last_updated: Any) -> bytes | None:
    """``raw`` with each ``(key, before, after)`` applied; None when it cannot be done safely."""
    edits = list(edits)
    if len(edits) > MAX_EDITS:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    start = text.find(_ENTRIES)
    if start < 0:
        return None
    body = start + len(_ENTRIES)
    for key, before, after in edits:
        text = _apply(text, body, key, before, after)
        if text is None:
            return None
    return _set_updated(text, start, last_updated)


def _close(text: str, body: int) -> int:
    """Where the entries object closes: the first two-space ``}`` line after it opens."""
    if text.startswith("}", body):
        return body  # "entries": {}
    return text.find("\n  }", body)


def _apply(text: str, body: int, key: str, before: Any, after: Any) -> str | None:
    close = _close(text, body)
    if close < 0:
        return None
    needle = "\n    " + json.dumps(key, ensure_ascii=False) + ": "
    at = text.find(needle, body, close) if close > body else -1
    if before is None:
        if at >= 0 or after is None:
            return None
        if close == body:  # the first entry of an empty object
            return text[:body] + member(key, after) + "\n  " + text[body:]
        return text[:close] + "," + member(key, after) + text[close:]
    if at < 0:
        return None
    try:
        found, end = _DECODER.raw_decode(text, at + len(needle))
    except ValueError:
        return None
    if found != before or text.find(needle, end, close) >= 0:
        return None
    if after is not None:
        return text[:at] + member(key, after) + text[end:]
    if text.startswith(",", end):           # not the last entry: its comma goes with it
        return text[:at] + text[end + 1:]
    if text[at - 1] == ",":                 # the last entry: the comma before it goes
        return text[:at - 1] + text[end:]
    if text[at - 1] == "{" and text.startswith("\n  }", end):
        return text[:at] + text[end + 3:]   # the only entry: "entries": {}
    return None


def _set_updated(text: str, start: int, value: Any) -> bytes | None:
    at = text.find(_UPDATED, 0, start + 1)
    if at < 0:
        return None
    begin = at + len(_UPDATED)
    try:
        _, end = _DECODER.raw_decode(text, begin)
    except ValueError:
        return None
    return (text[:begin] + json.dumps(value, ensure_ascii=False) + text[end:]).encode("utf-8")
