"""TEXTLAYOUT"""

from __future__ import annotations

import json
from json.encoder import encode_basestring  # the C escaper when the accelerator is present

TYPE_CHECKING = False  # typing is for the checker; importing it costs ~3 ms at every start
if TYPE_CHECKING:
    from typing import Any, Iterable

_FLOAT_SPECIAL = {float("inf"): "Infinity", float("-inf"): "-Infinity"}


def dumps(obj: Any) -> str:
    """``json.dumps(obj, indent=2, ensure_ascii=False)``, byte for byte."""
    parts: list[str] = []
    _encode(obj, "\n", parts)
    return "".join(parts)


def _scalar(obj: Any) -> str | None:
    if isinstance(obj, str):
        return encode_basestring(obj)
    if obj is None:
        return "null"
    if obj is True:
        return "true"
    if obj is False:
        return "false"
    if isinstance(obj, int):
        return int.__repr__(obj)
    if isinstance(obj, float):
        if obj != obj:
            return "NaN"
        return _FLOAT_SPECIAL.get(obj) or float.__repr__(obj)
    return None


def _encode(obj: Any, newline: str, out: list[str]) -> None:
    text = _scalar(obj)
    if text is not None:
        out.append(text)
        return
    inner = newline + "  "
    if isinstance(obj, dict):
        if not obj:
            out.append("{}")
            return
        out.append("{")
        first = True
        for key, value in obj.items():
            out.append(inner if first else "," + inner)
            first = False
            out.append(_key(key))
            out.append(": ")
            text = _scalar(value)
            if text is not None:
                out.append(text)
            else:
                _encode(value, inner, out)
        out.append(newline + "}")
    elif isinstance(obj, (list, tuple)):
        if not obj:
            out.append("[]")
            return
        out.append("[")
        first = True
        for value in obj:
            out.append(inner if first else "," + inner)
            first = False
            text = _scalar(value)
            if text is not None:
                out.append(text)
            else:
                _encode(value, inner, out)
        out.append(newline + "]")
    else:
        raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def _key(key: Any) -> str:
    """A member name as ``json`` writes it (a number, bool or null key as its text)."""
    if isinstance(key, str):
        return encode_basestring(key)
    if key is None or isinstance(key, (int, float)):
        return '"' + _scalar(key) + '"'  # type: ignore[operator]
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


# --- splices: one entry's bytes replaced, inserted or removed ----------------------------

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
