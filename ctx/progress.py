"""One updating line on stderr while long work runs: what is being done, counts, elapsed.

The front door opens a ``showing`` block around the commands that can take a
while (sync, clone, pull, push, purge, scan, reindex) when stderr is a
terminal; the work inside names its steps (``step``) and counts (``count``).
The line appears only once the work has run ``AFTER`` seconds, is redrawn in
place twice a second, and is erased when the block ends, so a quick command
prints nothing, and output to a file or a pipe never holds it. Outside a
block ``step`` and ``count`` do nothing: the core calls them freely.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import TextIO

AFTER = 2.0      # seconds of work before the line appears
REDRAW = 0.5     # seconds between redraws
WIDTH = 100      # at most this many characters (a narrow terminal would wrap)

_current: Progress | None = None


class Progress:
    def __init__(self, what: str, stream: TextIO) -> None:
        self.what, self.stream = what, stream
        self.detail = ""
        self.started = time.monotonic()
        self.shown = False
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="ctx-progress", daemon=True)

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        detail = f": {self.detail}" if self.detail else ""
        text = f"{self.what}{detail} ({elapsed:.0f} s)"
        return text if len(text) <= WIDTH else text[:WIDTH - 1] + "…"

    def _run(self) -> None:
        if self._stop.wait(AFTER):
            return
        while True:
            self._draw()
            if self._stop.wait(REDRAW):
                return

    def _draw(self) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            try:
                self.stream.write("\r" + self.line() + "\x1b[K")
                self.stream.flush()
                self.shown = True
            except (OSError, ValueError):
                self._stop.set()

    def close(self) -> None:
        with self._lock:
            self._stop.set()
            if self.shown:
                try:
                    self.stream.write("\r\x1b[K")
                    self.stream.flush()
                except (OSError, ValueError):
                    pass
        self._thread.join(timeout=1)


@contextmanager
def showing(what: str, stream: TextIO) -> Iterator[Progress | None]:
    """The progress line of ``what`` on ``stream``, if it is a terminal (else nothing)."""
    global _current
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError, OSError):
        terminal = False
    if not terminal or _current is not None:
        yield None
        return
    progress = Progress(what, stream)
    _current = progress
    progress._thread.start()
    try:
        yield progress
    finally:
        _current = None
        progress.close()


def step(text: str) -> None:
    """What is being done now ("fetching from origin")."""
    if _current is not None:
        _current.detail = text


def count(done: int, total: int | None, what: str, left: float | None = None) -> None:
    """How far a counted step is ("1,200 of 5,000 commits"), and ``left``: an estimate of the
    seconds it still needs ("about 2 min left")."""
    if _current is not None:
        _current.detail = (f"{what} {done:,}" + (f" of {total:,}" if total else "")
                           + (f", about {estimate(left)} left" if left is not None else ""))


def estimate(seconds: float) -> str:
    """``seconds`` rounded as a person says it: "10 s", "3 min", "1 h 20 min"."""
    if seconds < 60:
        return f"{max(1, round(seconds / 5) * 5 if seconds >= 10 else round(seconds))} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"
