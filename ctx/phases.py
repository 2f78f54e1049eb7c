"""Where a command's time goes, phase by phase (``python bench/run.py --phases``).

Off (``CTX_PHASES`` unset, read once when this module loads), ``lap`` is one test
of a global: the write path calls it freely. On, ``lap(name)`` charges the time
since the previous lap (or since this module loaded) to ``name``, and when the
process ends the totals (milliseconds, in the order first charged) are appended
to the file ``CTX_PHASES`` names, one JSON object per line. The phases of a
write: ``start`` (imports, arguments), ``check`` (the credential checks),
``prepare`` (the lock, what changed outside ctx), ``parse``, ``write`` (the new
bytes, fsync, rename), ``hash``, ``compress``, ``commit`` (ref, logs, git's
index), ``index`` (the read index), ``after`` (the since-log, auto-sync).
"""

from __future__ import annotations

import time

from ctx import settings

_laps: dict[str, float] | None = None
_last = 0.0


def lap(name: str) -> None:
    """Charge the time since the previous lap to ``name`` (nothing when off)."""
    global _last
    if _laps is None:
        return
    now = time.perf_counter()
    _laps[name] = _laps.get(name, 0.0) + (now - _last) * 1000
    _last = now


def _flush(path: str) -> None:
    import json
    import os
    if not _laps:
        return
    line = json.dumps({name: round(ms, 3) for name, ms in _laps.items()}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def _start() -> None:
    global _laps, _last
    where = settings.text("CTX_PHASES")
    if where:
        import atexit
        _laps, _last = {}, time.perf_counter()
        atexit.register(_flush, where)


_start()
