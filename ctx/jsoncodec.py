"""JSON text in and out, as ``json`` reads and writes it, without loading ``json``.

Importing ``json`` imports ``re`` and compiles six expressions, in every process
that loads it, when a write needs one entry decoded and one encoded (a clean
write loads neither: tests/cli/test_fastcli.py,
test_a_clean_write_loads_neither_json_nor_re). CPython's accelerator ``_json``,
which ``json`` itself calls, does the decoding and the escaping; this module uses it directly. ``json`` is loaded
only when it must speak: on an interpreter without ``_json``, and for a text
that does not decode, so that the error raised is ``json``'s own, message and
position alike.

- ``loads``: ``json.loads`` (the options ctx uses: ``parse_constant``,
  ``parse_float``, ``object_pairs_hook``).
- ``escape``: a string as ``json`` writes it with ``ensure_ascii=False``.
- ``encode`` / ``dumps`` / ``compact``: ``json.dumps`` with ``indent=2`` or
  with ``separators=(",", ":")``, ``ensure_ascii=False``, byte for byte.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    Scanner = Callable[[str, int], tuple[Any, int]]

try:
    from _json import encode_basestring as escape
    from _json import encode_basestring_ascii as escape_ascii
except ImportError:  # not CPython's accelerator: json's own functions (they load re)
    from json.encoder import py_encode_basestring as escape
    from json.encoder import py_encode_basestring_ascii as escape_ascii

_SPACE = " \t\n\r"  # what JSON allows around a value
_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
_FLOAT_SPECIAL = {float("inf"): "Infinity", float("-inf"): "-Infinity"}


class _Decoder:
    """What the accelerator's scanner reads of a ``json.JSONDecoder``: its options."""

    __slots__ = ("strict", "object_hook", "object_pairs_hook", "parse_float", "parse_int",
                 "parse_constant", "memo")

    def __init__(self, parse_constant: Callable[[str], Any] | None = None,
                 parse_float: Callable[[str], Any] | None = None,
                 object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> None:
        self.strict, self.object_hook, self.object_pairs_hook = True, None, object_pairs_hook
        self.parse_float, self.parse_int = parse_float or float, int
        self.parse_constant = parse_constant or _CONSTANTS.__getitem__
        self.memo: dict[str, str] = {}


def scanner(decoder: _Decoder) -> Scanner | None:
    """The accelerator's scanner with ``decoder``'s options; None without the accelerator,
    or one that asks a decoder for more than this one has (``json`` decodes then)."""
    try:
        from _json import make_scanner
        made: Scanner = make_scanner(decoder)  # type: ignore[arg-type]  # (it reads the options only)
    except Exception:  # ImportError, or an AttributeError from a newer _json
        return None
    return made


_PLAIN = scanner(_Decoder())  # keeps nothing between calls


def loads(data: str | bytes | bytearray, *, parse_constant: Callable[[str], Any] | None = None,
          parse_float: Callable[[str], Any] | None = None,
          object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> Any:
    """``json.loads(data, ...)``: the same value, or the same error."""
    text = data if isinstance(data, str) else _utf8(data)
    scan = _PLAIN
    if text is not None and scan is not None and (parse_constant or parse_float or object_pairs_hook):
        scan = scanner(_Decoder(parse_constant, parse_float, object_pairs_hook))
    if text is not None and scan is not None:
        try:
            value, end = scan(text, len(text) - len(text.lstrip(_SPACE)))
        except (StopIteration, SystemError):
            pass  # no value where one starts, or an error _json reports through json.decoder
        else:
            if end == len(text) or not text[end:].strip(_SPACE):
                return value
    import json
    return json.loads(data, parse_constant=parse_constant, parse_float=parse_float,
                      object_pairs_hook=object_pairs_hook)


def raw_decode(text: str, begin: int) -> tuple[Any, int]:
    """``json.JSONDecoder().raw_decode(text, begin)``: the value that starts at ``begin``
    and the index after it, or the same error."""
    if _PLAIN is not None:
        try:
            return _PLAIN(text, begin)
        except (StopIteration, SystemError):
            pass
    import json
    return json.JSONDecoder().raw_decode(text, begin)


def _utf8(data: bytes | bytearray) -> str | None:
    """``data`` decoded as ``json.loads`` decodes bytes, when they are UTF-8 without a mark
    (``json.detect_encoding``); None for anything else (``json`` decides)."""
    if not data or data[0] in (0, 0xEF, 0xFE, 0xFF) or (len(data) > 1 and data[1] == 0):
        return None
    return data.decode("utf-8", "surrogatepass")


# --- writing ----------------------------------------------------------------------------

def dumps(obj: Any) -> str:
    """``json.dumps(obj, indent=2, ensure_ascii=False)``, byte for byte."""
    parts: list[str] = []
    encode(obj, "\n", parts)
    return "".join(parts)


def compact(obj: Any, ascii: bool = False) -> str:
    """``json.dumps(obj, ensure_ascii=ascii, separators=(",", ":"))``, byte for byte
    (``ascii``: every other character as a ``\\u`` escape, a lone surrogate too)."""
    parts: list[str] = []
    encode(obj, None, parts, escape_ascii if ascii else escape)
    return "".join(parts)


def scalar(obj: Any, quote: Callable[[str], str] = escape) -> str | None:
    """The text of a string (quoted by ``quote``), number, boolean or null; None for
    anything else."""
    if isinstance(obj, str):
        return quote(obj)
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


def encode(obj: Any, newline: str | None, out: list[str], quote: Callable[[str], str] = escape) -> None:
    """Append ``obj``'s text to ``out``: indented two spaces a level, ``newline`` being the
    current line's start (``"\\n"`` plus its indentation), or compact when it is None;
    strings quoted by ``quote``."""
    text = scalar(obj, quote)
    if text is not None:
        out.append(text)
        return
    members: Iterable[tuple[Any, Any]]
    if isinstance(obj, dict):
        opening, closing, members = "{", "}", obj.items()
    elif isinstance(obj, (list, tuple)):
        opening, closing, members = "[", "]", ((None, value) for value in obj)
    else:
        raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")
    if not obj:
        out.append(opening + closing)
        return
    inner = None if newline is None else newline + "  "
    first_lead, lead, colon = ("", ",", ":") if inner is None else (inner, "," + inner, ": ")
    out.append(opening)
    first = True
    for name, value in members:  # an array's members come with no name
        out.append(first_lead if first else lead)
        first = False
        if opening == "{":
            out.append(member_name(name, quote))
            out.append(colon)
        text = scalar(value, quote)
        if text is not None:
            out.append(text)
        else:
            encode(value, inner, out, quote)
    out.append(closing if newline is None else newline + closing)


def member_name(name: Any, quote: Callable[[str], str] = escape) -> str:
    """A member name as ``json`` writes it (a number, boolean or null name as its text)."""
    if isinstance(name, str):
        return quote(name)
    if name is None or isinstance(name, (int, float)):
        return '"' + scalar(name) + '"'  # type: ignore[operator]
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(name).__name__}")
