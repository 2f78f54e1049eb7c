"""How the last sync ended on this machine: ``.git/ctx/sync.json`` (never committed,
never synced). ``ctx sync``, ``pull``, ``push`` and auto-sync write it; ``ctx status``,
the brief's header and ``ctx view`` read it."""

from __future__ import annotations

import json
import time
from pathlib import Path

from ctx.errors import CtxError
from ctx.storage.files import atomic_write
from ctxgit.gitfiles.layout import DIR, SYNC_RECORD


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def record(root: Path, ok: bool, summary: str, auto: bool = False) -> None:
    """Remember how the last sync (or pull, or push) ended; never fails the sync."""
    git = Path(root) / ".git"
    if not git.is_dir():
        return
    data = {"time": now(), "ok": ok, "result": summary, "auto": auto}
    try:
        (git / DIR).mkdir(mode=0o700, exist_ok=True)
        atomic_write(git / SYNC_RECORD, (json.dumps(data) + "\n").encode("utf-8"), durable=False)
    except (OSError, CtxError):
        pass


def last(root: Path) -> dict | None:
    """The last sync's record (``time``, ``ok``, ``result``, ``auto``), or None."""
    try:
        data = json.loads((Path(root) / ".git" / SYNC_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
