"""What a harness's hook hands ``ctx`` on stdin: one JSON object, never trusted.

Read bounded (``BOUND`` bytes, a time limit for a harness that never closes the pipe),
parsed, and only known fields taken, each checked for its type and size: ``Hook``. Any
fault gives None: the hook prints nothing and exits 0 (a hook never fails its harness).
The fields are those Claude Code, Codex CLI and Gemini CLI share (``session_id``,
``transcript_path``, ``hook_event_name``, ``cwd``) and those of the events ctx runs at
(``source``, ``stop_hook_active``, ``reason``, ``trigger``, ``compact_summary``). The one
reader of a hook's stdin: every ``ctx event`` and ``ctx start --harness`` read it through
``Run.hook_stdin`` (``ctx event failure`` takes the object whole, ``load``, for the fields
of its harness's tool event).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BOUND = 512 * 1024   # bytes read at most (a compaction summary is the big one)
WAIT = 2.0           # seconds to wait for the harness to write and close the pipe
TEXT_BOUND = 200     # a short field (an event, a source, a reason) longer than this is dropped
PATH_BOUND = 4096


class Hook:
    """The checked fields of one hook's input (None: absent or not valid)."""

    __slots__ = ("session_id", "event", "source", "stop_hook_active", "reason", "trigger",
                 "compact_summary", "transcript_path", "cwd")

    def __init__(self, data: dict[str, Any]) -> None:
        from ctx.compaction import INPUT_BOUND
        from ctx.handover import valid_session_id
        self.session_id = valid_session_id(data.get("session_id"))
        self.event = _short(data.get("hook_event_name"))
        self.source = _short(data.get("source"))
        self.reason = _short(data.get("reason"))
        self.trigger = _short(data.get("trigger"))
        active = data.get("stop_hook_active")
        self.stop_hook_active = active is True
        summary = data.get("compact_summary")
        self.compact_summary = summary if isinstance(summary, str) and len(summary) <= INPUT_BOUND else None
        self.transcript_path = _path(data.get("transcript_path"))
        self.cwd = _path(data.get("cwd"))


def _short(value: Any) -> str | None:
    if isinstance(value, str) and 0 < len(value) <= TEXT_BOUND and value.isprintable():
        return value
    return None


def _path(value: Any) -> str | None:
    if isinstance(value, str) and 0 < len(value) <= PATH_BOUND and value.isprintable() and os.path.isabs(value):
        return value
    return None


def read_raw(stream: Any = None, bound: int = BOUND, wait: float = WAIT) -> bytes | None:
    """At most ``bound`` bytes of ``stream`` (stdin's bytes), within ``wait`` seconds; None
    when it is a terminal, says more than ``bound``, or does not end in time."""
    import select
    import time
    stream = sys.stdin.buffer if stream is None else stream
    try:
        if stream.isatty():
            return None
    except (OSError, ValueError, AttributeError):
        return None
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):  # not a file (a test's stream): read it as it is
        try:
            whole = stream.read(bound + 1)
        except (OSError, ValueError):
            return None
        return whole if isinstance(whole, bytes) and len(whole) <= bound else None
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + wait
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        try:
            ready, _, _ = select.select([fd], [], [], left)
        except (OSError, ValueError):
            return None
        if not ready:
            return None
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return None
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > bound:
            return None
        chunks.append(chunk)


def load(raw: bytes | str | None) -> dict[str, Any] | None:
    """The JSON object in ``raw`` (its fields still unchecked: a harness module reads its
    event's own fields with ``ctx.hookpayload``), or None when it is not one: too long, not
    UTF-8, not JSON, not an object."""
    if raw is None:
        return None
    import json
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def parse(raw: bytes | str | None) -> Hook | None:
    """The hook input in ``raw``, or None when it is not one JSON object."""
    data = load(raw)
    return Hook(data) if data is not None else None
