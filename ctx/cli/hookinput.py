"""What a harness's hook hands ``ctx`` on stdin, read bounded: at most ``BOUND`` bytes, within
``WAIT`` seconds for a harness that never closes the pipe. The one reader of a hook's stdin:
every ``ctx event`` and ``ctx start --harness`` read it through ``Run.hook_stdin``; what it
holds is checked field by field in the core (``ctx/hookpayload.py``: ``Hook``, ``load``). Any
fault gives None: the hook prints nothing and exits 0 (a hook never fails its harness).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BOUND = 512 * 1024   # bytes read at most (a compaction summary is the big one)
WAIT = 2.0           # seconds to wait for the harness to write and close the pipe


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
