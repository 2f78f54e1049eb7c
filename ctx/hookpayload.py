"""Reading a harness hook's JSON payload, which is never trusted: a field is text of a bounded
length at a path of objects, or absent (the harness modules, ``ctx/harness/``, read their
events with these; ``ctx start --harness`` its session id). Plain functions, no imports: the
start path loads this."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_FIELD = 64 * 1024  # characters of one field ctx reads (a longer one is cut)
MAX_SESSION = 128


def field(payload: dict[str, Any], *path: str) -> str | None:
    """The text at ``path`` of a hook's payload (cut at ``MAX_FIELD``), or None when a step is
    missing or not of its type."""
    value: Any = payload
    for step in path:
        if not isinstance(value, dict):
            return None
        value = value.get(step)
    return value[:MAX_FIELD] if isinstance(value, str) else None


def session_of(payload: dict[str, Any]) -> str:
    """The payload's session id, when it is a short line of printable text ("" otherwise)."""
    session = field(payload, "session_id") or ""
    return session if len(session) <= MAX_SESSION and session.isprintable() else ""
