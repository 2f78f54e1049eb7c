"""A harness hook's JSON payload, which is never trusted: the one home of its field rules.

A field is text of a bounded length at a path of objects, or absent. The harness modules
(``ctx/harness/``) read their tool events' own fields with ``field``; every ``ctx event``
and ``ctx start --harness`` take the fields all three harnesses share (``session_id``,
``transcript_path``, ``hook_event_name``, ``cwd``) and those of the events ctx runs at
(``source``, ``stop_hook_active``, ``reason``, ``trigger``, ``compact_summary``) as a
``Hook``. Reading stdin is the front door's (``ctx/cli/hookinput.py``). Plain functions, no
imports at load: the start path loads this (tests/cli/test_fastcli.py)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_FIELD = 64 * 1024  # characters of one field ctx reads (a longer one is cut)
ID_BOUND = 200         # a session id longer than this is not one (Claude Code's is a UUID)
TEXT_BOUND = 200       # a short field (an event, a source, a reason) longer than this is dropped
PATH_BOUND = 4096


def field(payload: dict[str, Any], *path: str) -> str | None:
    """The text at ``path`` of a hook's payload (cut at ``MAX_FIELD``), or None when a step is
    missing or not of its type."""
    value: Any = payload
    for step in path:
        if not isinstance(value, dict):
            return None
        value = value.get(step)
    return value[:MAX_FIELD] if isinstance(value, str) else None


def session_id(value: Any) -> str | None:
    """A session id as a harness gives it (a UUID, a thread id): printable ASCII, no space,
    bounded; None for anything else."""
    if not isinstance(value, str) or not 0 < len(value) <= ID_BOUND:
        return None
    if not all(33 <= ord(c) < 127 for c in value):
        return None
    return value


def session_of(payload: dict[str, Any]) -> str:
    """The payload's session id by ``session_id``'s rule ("" when it has none)."""
    return session_id(payload.get("session_id")) or ""


def short(value: Any) -> str | None:
    """A short one-line field (an event's name, a source, a reason), or None."""
    if isinstance(value, str) and 0 < len(value) <= TEXT_BOUND and value.isprintable():
        return value
    return None


def absolute_path(value: Any) -> str | None:
    """An absolute path of printable text within ``PATH_BOUND``, or None."""
    import os
    if isinstance(value, str) and 0 < len(value) <= PATH_BOUND and value.isprintable() and os.path.isabs(value):
        return value
    return None


class Hook:
    """The checked fields of one hook's input (None: absent or not valid)."""

    __slots__ = ("session_id", "event", "source", "stop_hook_active", "reason", "trigger",
                 "compact_summary", "transcript_path", "cwd")

    def __init__(self, data: dict[str, Any]) -> None:
        from ctx.compaction import INPUT_BOUND
        self.session_id = session_id(data.get("session_id"))
        self.event = short(data.get("hook_event_name"))
        self.source = short(data.get("source"))
        self.reason = short(data.get("reason"))
        self.trigger = short(data.get("trigger"))
        self.stop_hook_active = data.get("stop_hook_active") is True
        summary = data.get("compact_summary")
        self.compact_summary = summary if isinstance(summary, str) and len(summary) <= INPUT_BOUND else None
        self.transcript_path = absolute_path(data.get("transcript_path"))
        self.cwd = absolute_path(data.get("cwd"))


def load(raw: bytes | str | None) -> dict[str, Any] | None:
    """The JSON object in ``raw`` (its fields still unchecked: a harness module reads its
    event's own fields with ``field``), or None when it is not one: not UTF-8, not JSON,
    not an object."""
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
