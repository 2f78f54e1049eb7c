"""The handover at a session's end (the spec's sixth principle, "hand over in writing";
§7's summary), decided from what a harness's hooks say and what this machine noted.

- This machine's notes of the sessions its harnesses' hooks started (when, and the commit
  the context was at): one small JSON file
  in the state folder (the front door names it: ``ctxgit/gitfiles/layout.py``'s
  ``SESSIONS``), never committed, never synced, bounded (the newest ``KEPT`` sessions).
  ``ctx start --harness NAME`` notes a session's start (the earliest, so a compaction's or
  a resume's SessionStart keeps it); the Stop hook notes that it asked, so it asks once.
- ``ask_reason``: whether the Stop hook blocks the stop, and the reason it gives the
  model, from facts the front door gathers (the commits since the session began are
  git's: ``ctxgit/porcelain/authored.py``).

The kept compaction summary is ``compaction.py``'s.
"""

from __future__ import annotations

import os

from ctx.hookpayload import session_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctx.storage.files import StrPath

KEPT = 64               # sessions the notes file keeps; the oldest started is dropped first
FILE_BOUND = 64 * 1024  # a notes file larger than this was not written by ctx: read as empty

REASON = ("Before you stop: this session wrote to ctx, the shared memory, and no session summary "
          "has been written since it began. Write one now with `ctx summary new --from-stdin` "
          "(Markdown on stdin): '## Done' (what was built, found or decided, each with the ctx keys "
          "that hold it) and '## Open' (each item still open, restated in full; '- None' if nothing "
          "is). Then stop. This is asked once per session.")


def read_notes(path: StrPath) -> dict[str, dict[str, Any]]:
    """The notes: session id -> {"started": seconds, "harness", "author", "asked"}; {} when
    the file is missing, too big or not ctx's JSON (a hand-edited file is never trusted)."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(FILE_BOUND + 1)
    except OSError:
        return {}
    if len(raw) > FILE_BOUND:
        return {}
    import json
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(data, dict):
        return {}
    kept: dict[str, dict[str, Any]] = {}
    for key, note in data.items():
        if session_id(key) and isinstance(note, dict) and _seconds(note.get("started")) is not None:
            kept[key] = note
    return kept


def _seconds(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def started(notes: dict[str, dict[str, Any]], session: str) -> int | None:
    note = notes.get(session)
    return _seconds(note.get("started")) if note else None


def asked(notes: dict[str, dict[str, Any]], session: str) -> bool:
    note = notes.get(session)
    return bool(note and note.get("asked") is True)


def _change(path: StrPath, session: str, change: Any) -> bool:
    """Read, change and write the notes under their own lock (two sessions' hooks may run at
    once); False when the folder is missing or the write failed (a hook never fails)."""
    import fcntl
    folder = os.path.dirname(os.fspath(path))
    if not os.path.isdir(folder):
        return False
    try:
        fd = os.open(os.fspath(path) + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        notes = read_notes(path)
        if not change(notes):
            return False
        if len(notes) > KEPT:
            for old in sorted(notes, key=lambda k: notes[k]["started"])[:len(notes) - KEPT]:
                del notes[old]
        import json

        from ctx.storage.files import atomic_write
        atomic_write(path, (json.dumps(notes, indent=1, sort_keys=True) + "\n").encode("utf-8"), durable=False)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def head_at_start(notes: dict[str, dict[str, Any]], session: str) -> str | None:
    """The commit the context was at when ``session`` started (None: not noted)."""
    note = notes.get(session)
    head = note.get("head") if note else None
    return head if isinstance(head, str) and len(head) == 40 and all(c in "0123456789abcdef" for c in head) \
        else None


def note_start(path: StrPath, session: str, when: int, harness: str, author: str | None,
               head: str | None = None) -> bool:
    """Note that ``session`` started at ``when`` (seconds), the context at commit ``head``; a
    session noted already keeps its first start (a compaction's or a resume's SessionStart
    is the same session)."""
    def change(notes: dict[str, dict[str, Any]]) -> bool:
        if session in notes:
            return False
        notes[session] = {"started": int(when), "head": head, "harness": harness, "author": author,
                          "asked": False}
        return True
    return _change(path, session, change)


def note_asked(path: StrPath, session: str, when: int, harness: str, author: str | None) -> bool:
    """Note that the Stop hook asked ``session`` for its summary; False when it had already
    (two Stop hooks at once: only one asks)."""
    def change(notes: dict[str, dict[str, Any]]) -> bool:
        note = notes.setdefault(session, {"started": int(when), "harness": harness, "author": author})
        if note.get("asked") is True:
            return False
        note["asked"] = True
        return True
    return _change(path, session, change)


def ask_reason(*, enabled: bool, hook_active: bool, already_asked: bool, wrote: bool,
               summarized: bool) -> str | None:
    """The reason the Stop hook gives when it blocks the stop once, or None to let it through:
    only when handover-on-stop is on, the harness is not already continuing because of a
    Stop hook, this session was not asked before, it wrote to the context, and it wrote no
    summary since it began."""
    if not enabled or hook_active or already_asked or not wrote or summarized:
        return None
    return REASON
