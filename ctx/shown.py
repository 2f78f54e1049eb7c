"""Which entries reached which session: a local log of every start payload and every recall
at a failing command that reached a model (issue 37).

One JSON line each, appended to ``shown.log`` in the root's state folder (``Context.state``,
inside the repository: ``ctxgit/gitfiles/layout.py``'s ``SHOWN`` names it for git), never
committed, never synced: {"time", "what" (start | recall), "harness", "session", "author",
"keys": [{"store", "key"}]}. It is bounded: past ``MAX_BYTES`` the oldest lines are dropped
(the newest half is kept). Writing it is one append, no libgit2, no SQLite, and never fails
what it records (``note`` swallows every error: a start must not fail for its log;
tests/core/test_shown.py).

Nothing read back is trusted: a line that is not a JSON object of the expected fields is
skipped, and every field is shown through ``ctx.display``.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctx.storage.files import StrPath

LOG_NAME = "shown.log"
MAX_BYTES = 256 * 1024     # the whole log: past this, the oldest lines go
MAX_LINE = 8 * 1024        # one line read back (a longer one is not ctx's)
MAX_KEYS = 200             # keys noted for one payload
WHATS = ("start", "recall")


def log_path(state: StrPath | None) -> str | None:
    return os.path.join(state, LOG_NAME) if state is not None else None


def _line(what: str, harness: str, session: str, author: str, keys: list[tuple[str, str]],
          time: str | None) -> bytes:
    """One record as a line of JSON, every character past ASCII escaped (a lone surrogate in a
    key still makes valid UTF-8), through ctx's one codec (``ctx/jsoncodec.py``, which loads no
    ``json`` on a start's path: tests/cli/test_fastcli.py)."""
    from ctx.jsoncodec import compact
    from ctx.model import now
    record = {"time": time or now(), "what": what, "harness": harness[:64], "session": session[:128],
              "author": author[:128], "keys": [{"store": s, "key": k} for s, k in keys[:MAX_KEYS]]}
    return (compact(record, ascii=True) + "\n").encode("ascii")


def note(state: StrPath | None, what: str, harness: str, session: str, author: str,
         keys: list[tuple[str, str]], time: str | None = None) -> bool:
    """Append one record; False (and nothing raised) when it could not be written."""
    path = log_path(state)
    if path is None or what not in WHATS:
        return False
    try:
        if not os.path.isdir(os.path.dirname(os.path.dirname(os.path.abspath(path)))):
            return False  # no repository yet: the state folder is never made here
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        data = _line(what, harness, session, author, keys, time)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.write(fd, data)  # one write of one line: appends of two processes never interleave
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > MAX_BYTES:
            _trim(path)
        return True
    except Exception:  # the log never fails what it records
        return False


def _trim(path: str) -> None:
    """Keep the newest lines that fit in half the bound (a temporary file renamed over it).
    A line appended by another process between the read and the rename can be lost: the
    log is a record for the operator, not a store."""
    from ctx.storage.files import atomic_write, read_bytes
    data = read_bytes(path)
    keep = data[-(MAX_BYTES // 2):]
    start = keep.find(b"\n") + 1 if len(keep) < len(data) else 0
    atomic_write(path, keep[start:], mode=0o600, durable=False)


def _record(raw: bytes) -> dict[str, Any] | None:
    from ctx.jsoncodec import loads
    if len(raw) > MAX_LINE:
        return None
    try:
        data = loads(raw)
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    fields = {name: data.get(name) for name in ("time", "what", "harness", "session", "author")}
    if not all(isinstance(v, str) for v in fields.values()) or fields["what"] not in WHATS:
        return None
    keys = data.get("keys")
    if not isinstance(keys, list):
        return None
    fields["keys"] = [{"store": k["store"], "key": k["key"]} for k in keys[:MAX_KEYS]
                      if isinstance(k, dict) and isinstance(k.get("store"), str) and isinstance(k.get("key"), str)]
    return fields


def read(state: StrPath | None) -> list[dict[str, Any]]:
    """Every readable record, oldest first ([] without a log)."""
    path = log_path(state)
    if path is None:
        return []
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES * 2)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
        return []
    return [r for r in (_record(line) for line in data.splitlines() if line.strip()) if r is not None]


def reach(records: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[int, str]]:
    """Each entry shown: to how many sessions (a record without a session id counts as its
    own), and the time it was last shown."""
    sessions: dict[tuple[str, str], set[str]] = {}
    last: dict[tuple[str, str], str] = {}
    for n, record in enumerate(records):
        session = record["session"] or f"#{n}"
        for k in record["keys"]:
            where = (k["store"], k["key"])
            sessions.setdefault(where, set()).add(f"{record['harness']}\0{session}")
            if record["time"] > last.get(where, ""):
                last[where] = record["time"]
    return {where: (len(found), last[where]) for where, found in sessions.items()}


def line(record: dict[str, Any]) -> str:
    """One record for a terminal: time, what, harness, session, author, the keys."""
    from ctx.display import local_time, name
    keys = ", ".join(f"{name(k['store'])}/{name(k['key'])}" for k in record["keys"]) or "(no entry)"
    return (f"{local_time(record['time'])}  {record['what']:<6}  {name(record['harness'] or '-')}  "
            f"{name(record['session'] or '-')}  {name(record['author'] or '-')}  {keys}")
