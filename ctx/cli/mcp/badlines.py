"""What the server answers to a line of the wire that is not a JSON-RPC message.

JSON-RPC 2.0 answers a line that is not JSON with -32700 (Parse error) and JSON that is not
a request with -32600 (Invalid Request), with ``"id": null``: no id could be read from it.
The SDK's stdio transport hands such a line to the session as an exception, which logs it
and answers nothing, so a client waiting on it would wait forever; ``drain.py`` answers it
instead, and ``stdin.py`` answers the two it finds before any parsing (a line over
``LINE_LIMIT``, bytes that are not UTF-8). Each answer is one line, and never echoes the
line it answers (it may be huge, or written to be shown). Tests:
tests/mcp/test_mcp_bad_lines.py.
"""

from __future__ import annotations

from mcp import types

# The longest line read. A line is one message; the largest an honest client sends is a
# tools/call carrying a session summary or a value, far below this. A longer line is dropped
# as it arrives: the reader holds at most this much of it, whatever the line's length.
LINE_LIMIT = 16 * 1024 * 1024

_NOT_JSON = ("json_invalid", "string_unicode")  # pydantic's kinds for text that is not JSON


def refusal(code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message))


def wire_text(answer: types.JSONRPCError) -> str:
    """``answer`` as a line of the wire, as the SDK writes every message."""
    return answer.model_dump_json(by_alias=True, exclude_unset=True) + "\n"


def too_long() -> types.JSONRPCError:
    return refusal(types.PARSE_ERROR, f"Parse error: a line of more than {LINE_LIMIT >> 20} MiB; "
                                      "it was not read (one message per line, up to that size)")


def not_utf8(offset: int) -> types.JSONRPCError:
    return refusal(types.PARSE_ERROR, f"Parse error: the line is not UTF-8 text (byte {offset})")


def for_error(error: Exception) -> types.JSONRPCError:
    """The answer to a line the SDK could not read as a message (``error`` is what it raised)."""
    kinds = _kinds(error)
    if not kinds or kinds[0] in _NOT_JSON:
        return refusal(types.PARSE_ERROR, "Parse error: the line is not JSON text")
    return refusal(types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message "
                                          '(a request is an object with "jsonrpc": "2.0", a "method" and an "id")')


def _kinds(error: Exception) -> list[str]:
    errors = getattr(error, "errors", None)  # pydantic's ValidationError, without importing pydantic
    if not callable(errors):
        return []
    try:
        return [str(e.get("type", "")) for e in errors()]
    except Exception:  # not pydantic's after all: the line could not be read
        return []
