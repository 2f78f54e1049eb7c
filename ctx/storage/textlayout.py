"""The bytes of a store file (§8.2), owned here and nowhere else.

A store file is ``json.dumps(data, indent=2, ensure_ascii=False) + "\\n"``
(``serialize``, through ``dumps``: the same text as ``json`` writes, made
faster). In that layout every top-level member starts a line with two
spaces, ``"entries"`` opens with ``\\n  "entries": {`` and closes at the
first ``\\n  }`` after it, every entry starts a line with four spaces and
ends at the first ``\\n    }`` after its key, and no JSON string holds a raw
newline. So one entry's text is found without parsing the file:

* ``find_entry`` / ``entry_text`` / ``read_entry``: where an entry is, its
  text, the entry itself (only that entry is parsed);
* ``replace_entry`` / ``insert_entry`` / ``remove_entry``: the file with one
  entry's text changed and every other byte kept, exactly the bytes
  ``serialize`` would write for the changed data (``splice`` applies a
  write's edits: the write path);
* ``entry_line``: the line an entry starts on (the credential scanner);
* ``unique_by_layout``: the layout alone shows no key is written twice.

Any other layout (another indent, escapes that could spell a key another
way, an entry that is not an object, a key written twice) gets None where a
position or new bytes were asked for: the caller parses the whole file, and
writes it with ``serialize``. Nothing here imports more than ``ctx.jsoncodec``:
the write path loads it at every start.
"""

from __future__ import annotations

from ctx.jsoncodec import dumps, encode, escape, loads, member_name, raw_decode

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any, TypeVar

    Text = TypeVar("Text", str, bytes)  # a file's text or its bytes: what goes in comes out

def serialize(data: dict[str, Any]) -> bytes:
    """A store file's bytes: two-space indentation, entries in stored order, non-ASCII
    as itself (§8.2), a final newline: ``json.dumps(data, indent=2, ensure_ascii=False)``."""
    return (dumps(data) + "\n").encode("utf-8")


# --- where an entry is -------------------------------------------------------------------

class _Marks:
    """The layout's landmarks, as ``str`` or as ``bytes`` (a file's text or its bytes)."""

    __slots__ = ("start", "top", "open", "empty", "close", "outdent", "after_close", "next_top",
                 "entry", "entry_end", "next_entry", "fields", "escapes", "comma", "colon", "newline")

    def __init__(self, conv: Callable[[str], Any]) -> None:
        self.start = conv('{\n  "')              # the first top-level member
        self.top = conv('\n  "')                 # a top-level member
        self.open = conv('\n  "entries": {')     # the entries object opens
        self.empty = conv("{}")                  # an object with nothing in it
        self.close = conv("\n  }")               # the entries object closes
        self.outdent = conv("\n  ")              # ... its closing line, before the brace
        self.after_close = conv("\n}")           # ... as the last member of the file
        self.next_top = conv(',\n  "')           # ... or followed by another member
        self.entry = conv('\n    "')             # an entry's key
        self.entry_end = conv("\n    }")         # an entry's object closes
        self.next_entry = conv(',\n    "')       # another entry follows
        self.fields = conv('{\n      "')         # an entry's first field
        self.escapes = (conv("\\u"), conv("\\/"))  # escapes that spell a character another way
        self.comma = conv(",")
        self.colon = conv(":")
        self.newline = conv("\n")


_TEXT = _Marks(str)
_BYTES = _Marks(lambda text: text.encode("utf-8"))
_UPDATED = '\n  "last_updated": '
MAX_EDITS = 64  # past this, one full serialization is cheaper than many splices


def _marks(data: Any) -> _Marks:
    return _TEXT if isinstance(data, str) else _BYTES


def _needle(key: str, marks: _Marks) -> Any:
    """An entry's key line as the serializer starts it: ``\\n    "key": ``."""
    text = "\n    " + escape(key) + ": "
    return text if marks is _TEXT else text.encode("utf-8", "surrogatepass")


_last_region: tuple[Any, Any] = (None, None)  # (the bytes or text, its region): a write asks several times


def _keep_region(data: Any, region: tuple[int, int] | None) -> None:
    """Remember ``data``'s region (one tuple, replaced whole: a reader never sees half)."""
    global _last_region
    _last_region = (data, region)


def _region(data: Any, marks: _Marks) -> tuple[int, int] | None:
    """``(body, close)``: the inside of the entries object, ``data[body:close]``
    (``body == close`` when it is ``{}``); None when ``data`` is not in ctx's layout."""
    kept = _last_region
    if kept[0] is data:
        return kept[1]  # (the search for its close reads the whole file)
    found = _find_region(data, marks)
    _keep_region(data, found)
    return found


def _entries_body(data: Any, marks: _Marks) -> int | None:
    """Where the entries object's members begin (just after its opening brace), or None."""
    if not data.startswith(marks.start):
        return None
    opened = data.find(marks.open)
    return None if opened < 0 else opened + len(marks.open)


def _find_region(data: Any, marks: _Marks) -> tuple[int, int] | None:
    body = _entries_body(data, marks)
    if body is None:
        return None
    if data.startswith(marks.empty, body - 1):
        close, after = body, body + 1
    elif data.startswith(marks.entry, body):
        close = data.find(marks.close, body)
        if close < 0:
            return None
        after = close + len(marks.close)
    else:
        return None  # entries on one line, or another indent
    if data.startswith(marks.after_close, after) or data.startswith(marks.next_top, after):
        return body, close
    return None  # an inner object closing at two spaces: not ctx's layout


def _plain(data: Any, body: int, close: int, marks: _Marks) -> bool:
    """No key inside the entries can be spelled other than as ``encode_basestring``
    spells it (ctx writes ``\\u`` only for control characters, ``\\/`` never)."""
    return all(data.find(escaped, body, close) < 0 for escaped in marks.escapes)


def _locate(data: Any, key: str, marks: _Marks, absent: bool = False,
            once: bool = False) -> tuple[int, int, int, int, int] | None:
    """``(body, close, at, value, end)``: the entries' inside ``[body, close)``, the
    entry's member text ``[at, end)`` and its object from ``value``; ``at == -1`` when
    the layout proves there is no such entry (``absent``: a parse of these very bytes
    found none, so escapes that could spell it need not be ruled out; ``once``: a parse of
    these very bytes found no key twice, so none is searched for). None: not ctx's
    layout, or it cannot tell (escapes that may spell the key, the key twice, an entry
    not an object)."""
    region = _region(data, marks)
    if region is None:
        return None
    body, close = region
    needle = _needle(key, marks)
    at = data.find(needle, body, close) if close > body else -1
    if at < 0:
        return (body, close, -1, -1, -1) if close == body or absent or _plain(data, body, close, marks) else None
    value = at + len(needle)
    if not once and data.find(needle, value, close) >= 0:
        return None  # written twice: JSON keeps the last, a reader must parse it all
    if data.startswith(marks.empty, value):
        end = value + len(marks.empty)
    elif data.startswith(marks.fields, value):
        end = data.find(marks.entry_end, value, close)
        if end < 0:
            return None
        end += len(marks.entry_end)
    else:
        return None
    if end != close and not data.startswith(marks.next_entry, end):
        return None
    if at > body and data[at - 1:at] != marks.comma:
        return None
    return body, close, at, value, end


def find_entry(data: str | bytes, key: str) -> tuple[int, int] | None:
    """``(start, end)``: the span of ``key``'s member text in a store file's text or
    bytes, from the newline before its key to the ``}`` closing its object (no comma).
    None when the file has no such entry, or is not in ctx's layout (parse it all)."""
    found = _locate(data, key, _marks(data))
    return None if found is None or found[2] < 0 else (found[2], found[4])


def entry_text(data: Text, key: str) -> Text | None:
    """The text of ``key``'s entry object (``{...}``), of the type of ``data``; None as
    for ``find_entry``."""
    found = _locate(data, key, _marks(data))
    return None if found is None or found[2] < 0 else data[found[3]:found[4]]


def read_entry(data: str | bytes, key: str,
               parse: Callable[[Any], dict[str, Any]] | None = None) -> Any:
    """``key``'s entry in a store file, or None when it has none.

    In ctx's layout only that entry's text is parsed (and a file whose
    layout proves the key absent is not parsed at all); otherwise the whole
    file is, by ``parse`` when given (``data`` -> the entries object: a
    cached parse) and by ``json.loads`` if not.
    """
    found = _locate(data, key, _marks(data))
    if found is not None:
        if found[2] < 0:
            return None
        try:
            return loads(data[found[3]:found[4]])
        except (ValueError, RecursionError):
            pass  # the layout was misread: the whole file decides
    if parse is not None:
        return parse(data).get(key)
    try:
        whole = loads(data)
    except (ValueError, RecursionError):
        return None
    entries = whole.get("entries") if isinstance(whole, dict) else None
    return entries.get(key) if isinstance(entries, dict) else None


def entry_line(text: str | bytes, key: str) -> int:
    """The line (from 1) where ``key``'s entry starts: its key line in ctx's layout,
    else the first ``"key":`` anywhere, else 1."""
    marks = _marks(text)
    at = -1
    region = _region(text, marks)
    if region is not None and region[1] > region[0]:
        at = text.find(_needle(key, marks), *region)
        at = at + 1 if at >= 0 else -1
    if at < 0:
        quoted = escape(key)
        at = text.find((quoted if marks is _TEXT else quoted.encode("utf-8", "surrogatepass")) + marks.colon)
    return text.count(marks.newline, 0, at) + 1 if at >= 0 else 1


def unique_by_layout(raw: str | bytes, top_level: int, entries: int) -> bool:
    """True when the layout alone shows that no top-level key and no entry key is
    written twice: one two-space member line per top-level key (``top_level`` parsed)
    and one four-space line per entry (``entries`` parsed). False: parse to find out."""
    marks = _marks(raw)
    return raw.count(marks.top) == top_level and raw.count(marks.entry) == entries


_MEMBER_LEAD = b'\n    "'     # an entry's member text starts so (then its key)
MEMBER_NEXT = b',\n    "'     # ... and the next one follows so: no string holds a raw newline


def entry_members(raw: bytes, keys: Iterable[str]) -> list[bytes] | None:
    """Each entry's member text in a store file's bytes, without its leading
    ``\\n    "`` (so ``key": {...}``), for its entry keys as parsed, in order: one
    split, no parsing. None when the bytes are not in ctx's layout (or not that many
    entries)."""
    region = _region(raw, _BYTES)
    if region is None:
        return None
    body, close = region
    if close == body or not raw.startswith(_MEMBER_LEAD, body):
        return None
    pieces = raw[body + len(_MEMBER_LEAD):close].split(MEMBER_NEXT)
    keys = list(keys)
    if len(pieces) != len(keys):
        return None
    for index in (0, len(keys) - 1):  # the ends agree with the parse (the middle follows: same count)
        if not pieces[index].startswith((escape(keys[index])[1:] + ": ").encode("utf-8")):
            return None
    return pieces


def piece_bounds(raw: bytes) -> tuple[int, int, int, int] | None:
    """Where a store file's bytes are cut where ctx's layout separates entries, without
    cutting them: ``(brace, after, first, stop)``, the head ``raw[:brace]`` running to
    ``"entries": `` (its brace not included), the tail ``raw[after:]`` following the
    entries object's closing brace, and the pieces in ``raw[first:stop]``, split at
    ``MEMBER_NEXT`` (``first`` -1: the entries object is ``{}``, no piece). Each piece is
    one entry's member text without its leading ``\n    "`` (``entry_members``). Nothing
    is parsed: a piece is only where an entry should be, and the cut only where the layout
    says the parts are (``ctx/storage/piecewise.py`` proves they are, or reads the file
    whole). The entries object is the last member ctx writes, so its closing line is looked
    for from the end (the last ``\n  }``): the entries are not searched through for it.
    None for another layout."""
    body = _entries_body(raw, _BYTES)
    if body is None:
        return None
    if raw.startswith(_BYTES.empty, body - 1):
        return body - 1, body + 1, -1, -1
    close = raw.rfind(_BYTES.close)
    if close < body or not raw.startswith(_MEMBER_LEAD, body):
        return None
    return body - 1, close + len(_BYTES.close), body + len(_MEMBER_LEAD), close


def serialize_reusing(data: dict[str, Any], sources: Iterable[tuple[bytes, dict[str, Any]]]) -> bytes:
    """``serialize(data)``, where an entry object of ``data`` that is the very object a
    source (its bytes and its parse) holds under the same key is copied from that
    source's text instead of being encoded again (a merge keeps most entries as one
    side had them)."""
    entries = data.get("entries")
    if not isinstance(entries, dict) or not entries:
        return serialize(data)
    known: dict[int, tuple[str, bytes]] = {}
    for number, (raw, parsed) in enumerate(sources):
        theirs = parsed.get("entries") if isinstance(parsed, dict) else None
        if not isinstance(theirs, dict) or not theirs:
            continue
        if number and sum(1 for k, v in theirs.items() if entries.get(k) is v) <= MAX_EDITS:
            continue  # a few entries: encoding them costs less than finding them
        pieces = entry_members(raw, theirs)
        if pieces is None:
            continue
        for (key, entry), piece in zip(theirs.items(), pieces, strict=False):
            known.setdefault(id(entry), (key, piece))
    lead = len(_MEMBER_LEAD)
    texts: list[bytes] = []
    for key, entry in entries.items():
        hit = known.get(id(entry))
        texts.append(hit[1] if hit is not None and hit[0] == key
                     else member(key, entry).encode("utf-8")[lead:])
    parts: list[bytes] = [b"{"]
    for number, (name, value) in enumerate(data.items()):
        parts.append(b"\n  " if number == 0 else b",\n  ")
        parts.append((member_name(name) + ": ").encode("utf-8"))
        if value is entries:
            parts += [b"{", _MEMBER_LEAD, MEMBER_NEXT.join(texts), b"\n  }"]
        else:
            encoded: list[str] = []
            encode(value, "\n  ", encoded)
            parts.append("".join(encoded).encode("utf-8"))
    parts.append(b"\n}\n")
    return b"".join(parts)


# --- one entry's text replaced, inserted or removed --------------------------------------

def member(key: str, entry: Any) -> str:
    """One entry as ``serialize`` writes it inside the entries object: ``\\n    "key": {...}``."""
    parts = ["\n    ", member_name(key), ": "]
    encode(entry, "\n    ", parts)
    return "".join(parts)


def _member(key: str, entry: Any, marks: _Marks) -> Any:
    text = member(key, entry)
    return text if marks is _TEXT else text.encode("utf-8")


def _replaced(data: Any, found: tuple, key: str, entry: Any, marks: _Marks) -> Any:
    _, _, at, _, end = found
    return data[:at] + _member(key, entry, marks) + data[end:]


def _inserted(data: Any, found: tuple, key: str, entry: Any, marks: _Marks) -> Any:
    """The entry added last, as a write of the data with it added last would write it."""
    body, close = found[0], found[1]
    if close == body:  # the first entry of an empty object
        return data[:body] + _member(key, entry, marks) + marks.outdent + data[body:]
    return data[:close] + marks.comma + _member(key, entry, marks) + data[close:]


def _removed(data: Any, found: tuple, marks: _Marks) -> Any:
    body, close, at, _, end = found
    if end < close:    # not the last entry: its comma goes with it
        return data[:at] + data[end + 1:]
    if at > body:      # the last of several: the comma before it goes
        return data[:at - 1] + data[end:]
    return data[:body] + data[close + len(marks.outdent):]  # the only one: "entries": {}


def replace_entry(data: Text, key: str, entry: Any) -> Text | None:
    """``data`` (text or bytes) with ``key``'s entry written as ``entry``, every other
    byte kept; None when it has no such entry or is not in ctx's layout."""
    marks = _marks(data)
    found = _locate(data, key, marks)
    if found is None or found[2] < 0:
        return None
    return _replaced(data, found, key, entry, marks)


def insert_entry(data: Text, key: str, entry: Any) -> Text | None:
    """``data`` with ``entry`` added as the last entry, every other byte kept; None
    when the layout does not prove ``key`` absent."""
    marks = _marks(data)
    found = _locate(data, key, marks)
    if found is None or found[2] >= 0:
        return None
    return _inserted(data, found, key, entry, marks)


def remove_entry(data: Text, key: str) -> Text | None:
    """``data`` without ``key``'s entry (and the comma that went with it), every other
    byte kept: the only entry leaves ``"entries": {}``, as a write would. None when it
    has no such entry or is not in ctx's layout."""
    marks = _marks(data)
    found = _locate(data, key, marks)
    if found is None or found[2] < 0:
        return None
    return _removed(data, found, marks)


def splice(raw: bytes, edits: Iterable[tuple[str, Any, Any]], last_updated: Any) -> bytes | None:
    """``raw`` with each ``(key, before, after)`` applied (``before`` None: a new entry,
    ``after`` None: a removed one) and ``last_updated`` set; exactly the bytes
    ``serialize`` writes for the changed data. None when it cannot be done safely:
    another layout, an entry that is not ``before``, more than ``MAX_EDITS`` edits."""
    edits = list(edits)
    if len(edits) > MAX_EDITS:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    for key, before, after in edits:
        edited = _apply(text, key, before, after)
        if edited is None:
            return None
        text = edited
    return _set_updated(text, last_updated)


def _apply(text: str, key: str, before: Any, after: Any) -> str | None:
    found = _locate(text, key, _TEXT)
    if found is None:
        return None
    if before is None:
        if found[2] >= 0 or after is None:
            return None
        return _inserted(text, found, key, after, _TEXT)
    if found[2] < 0:
        return None
    try:
        if loads(text[found[3]:found[4]]) != before:
            return None
    except (ValueError, RecursionError):
        return None
    if after is None:
        return _removed(text, found, _TEXT)
    return _replaced(text, found, key, after, _TEXT)


def _set_updated(text: str, value: Any) -> bytes | None:
    """``last_updated``, a member before the entries, set to ``value``."""
    at = text.find(_UPDATED, 0, text.find(_TEXT.open) + 1)
    if at < 0:
        return None
    begin = at + len(_UPDATED)
    try:
        _, end = raw_decode(text, begin)
    except ValueError:
        return None
    parts = [text[:begin]]
    encode(value, "\n  ", parts)
    parts.append(text[end:])
    return "".join(parts).encode("utf-8")



def layout_keys(raw: bytes) -> list[str] | None:
    """The entry keys of a store file's bytes, in order, from the layout alone (each entry
    starts a line ``    "KEY": ``, at four spaces, where nothing else in the entries does);
    None for any other layout. Only for a file this side holds (a sync's count of
    deletions, ``ctxgit/sync/arrived.py``): a remote's file is parsed, since a crafted one
    could put a four-space member inside an entry."""
    region = _region(raw, _BYTES)
    if region is None or not _plain(raw, region[0], region[1], _BYTES):
        return None
    body, close = region
    if close == body:
        return []
    if not raw.startswith(_MEMBER_LEAD, body):
        return None
    import re  # (here: the write path loads this module at every start)
    found = re.compile(rb'\n    "((?:[^"\\\n]|\\.)*)": ').findall(raw, body, close)
    try:
        return [k.decode("utf-8") if b"\\" not in k else loads(b'"' + k + b'"') for k in found]
    except ValueError:  # UnicodeDecodeError included
        return None
