"""The write path's splice: a store file's bytes changed where a write changed them.

``textlayout`` finds entries and writes their text; here a write that the read
index describes (a full parse of these very bytes is on record) is applied to
the bytes without decoding them whole: ``top_level`` reads the top-level members
around the entries, ``splice_known`` replaces, adds or removes entries and sets
``last_updated`` in one join. The region of the entries (the one search that
reads the whole file) is kept with the bytes: ``region_of`` gives it to the
index, ``known_region`` takes it back from there, and a splice derives the new
file's from the old one's.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

from ctx.jsoncodec import encode, loads
from ctx.storage.textlayout import _BYTES, _UPDATED, MAX_EDITS, _keep_region, _locate, _member, _region


def region_of(raw: bytes) -> tuple[int, int] | None:
    """``(body, close)`` of a store file's bytes (see ``_region``), for the read index to keep."""
    return _region(raw, _BYTES)


def known_region(raw: bytes, body: int, close: int) -> bool:
    """Take ``(body, close)`` as the region of ``raw``'s entries without searching for it
    (the read index kept it for these very bytes), once its landmarks are where it says."""
    marks = _BYTES
    if not 0 < body <= close < len(raw) or not raw.startswith(marks.open, body - len(marks.open)):
        return False
    if close == body:
        ok, after = raw.startswith(marks.empty, body - 1), body + 1
    else:
        ok, after = raw.startswith(marks.entry, body) and raw.startswith(marks.close, close), close + len(marks.close)
    if not ok or not (raw.startswith(marks.after_close, after) or raw.startswith(marks.next_top, after)):
        return False
    _keep_region(raw, (body, close))
    return True



def top_level(raw: bytes) -> dict[str, Any] | None:
    """The top-level object of a store file in ctx's layout, its entries left out
    (``"entries": {}``): the head and tail around the entries object, parsed; None when
    the bytes are not in ctx's layout."""
    region = _region(raw, _BYTES)
    if region is None:
        return None
    body, close = region
    try:
        top = loads(b"".join((memoryview(raw)[:body], memoryview(raw)[close:])))
    except (ValueError, RecursionError):
        return None
    if not isinstance(top, dict) or top.get("entries") != {}:
        return None
    return top


def splice_known(raw: bytes, edits: Iterable[tuple[str, Any, Any]], last_updated: Any) -> bytes | None:
    """``splice`` for the bytes of a store file that a full parse described (the read
    index): each edit's ``before`` is what that parse found under its key (None: no such
    key). The bytes are never decoded whole: the layout finds each entry, its text must
    parse to ``before`` (a layout misread never reaches the disk), and the file is
    joined once around the changed spans. The same bytes as ``splice``; None when the
    layout disagrees with the parse (write the parsed data whole instead)."""
    edits = list(edits)
    if not edits or len(edits) > MAX_EDITS:
        return None
    data = raw
    last: tuple[int, int, bytes] | None = None
    for number, (key, before, after) in enumerate(edits):
        span = _span(data, key, before, after)
        if span is None:
            return None
        if number < len(edits) - 1:
            data = _joined(data, [span])
        else:
            last = span
    assert last is not None
    updated = _updated_span(data, last_updated)
    if updated is None or updated[1] > last[0]:
        return None
    return _joined(data, [updated, last])


def _span(data: bytes, key: str, before: Any, after: Any) -> tuple[int, int, bytes] | None:
    """``(start, stop, replacement)``: the one change to ``data`` that edits ``key``."""
    marks = _BYTES
    found = _locate(data, key, marks, absent=before is None, once=True)  # (bytes a parse described)
    if found is None:
        return None
    body, close, at, value, end = found
    if before is None:
        if at >= 0 or after is None:
            return None
        text = _member(key, after, marks)
        return (body, body, text + marks.outdent) if close == body else (close, close, marks.comma + text)
    if at < 0:
        return None
    try:
        if loads(data[value:end]) != before:
            return None
    except (ValueError, RecursionError):
        return None
    if after is not None:
        return at, end, _member(key, after, marks)
    if end < close:
        return at, end + 1, b""
    if at > body:
        return at - 1, end, b""
    return body, close + len(marks.outdent), b""


def _updated_span(data: bytes, value: Any) -> tuple[int, int, bytes] | None:
    """The span of the top-level ``last_updated`` value (a member before the entries, on
    one line) and its new text."""
    marks = _BYTES
    key = _UPDATED.encode("utf-8")
    at = data.find(key, 0, data.find(marks.open) + 1)
    if at < 0:
        return None
    begin = at + len(key)
    stop = data.find(marks.newline, begin)
    line = data[begin:stop]
    if line.endswith(marks.comma):
        line = line[:-1]
    try:
        old = loads(line)
    except (ValueError, RecursionError):
        return None
    if isinstance(old, (dict, list)):
        return None
    parts: list[str] = []
    encode(value, "\n  ", parts)
    return begin, begin + len(line), "".join(parts).encode("utf-8")


def _joined(data: bytes, spans: list[tuple[int, int, bytes]]) -> bytes:
    """``data`` with each ``(start, stop, replacement)`` (in order, apart) applied: one copy.
    The entries' region of the result is known from ``data``'s (no search)."""
    view = memoryview(data)
    pieces: list[Any] = []
    done = 0
    for start, stop, replacement in spans:
        pieces += [view[done:start], replacement]
        done = stop
    pieces.append(view[done:])
    out = b"".join(pieces)
    region = _region(data, _BYTES)
    if region is not None:
        body, close = region
        to_body = to_close = 0
        for start, stop, replacement in spans:  # (in ``data``'s positions)
            moved = len(replacement) - (stop - start)
            if stop <= body:        # before the entries (last_updated)
                to_body += moved
                to_close += moved
            elif body < close and body <= start and stop <= close:  # an entry replaced, removed or added
                to_close += moved
            else:                   # the only entry removed, or the first added: search again
                region = None
                break
        if region is not None and not known_region(out, body + to_body, close + to_close):
            _keep_region(None, None)
    return out
