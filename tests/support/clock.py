"""A writer's clock for tests: whole-second stamps that move when the test says, not when
the wall clock does (``ctx.model.clock`` is the seam; nothing else reads the time for a
write)."""

from __future__ import annotations

import pytest

# A fixed second in the past (2026-01-01T00:00:00Z): never ahead of the real clock, which
# the checks for stamps from the future (ctx/arrival.py, ctxgit/porcelain/damage.py) read.
START = 1767225600


class Clock:
    """What ``model.clock()`` answers while it is installed; ``tick`` moves it on."""

    def __init__(self, start: int = START) -> None:
        self.seconds = start

    def __call__(self) -> float:
        return float(self.seconds)

    def tick(self, seconds: int = 1) -> int:
        self.seconds += seconds
        return self.seconds


def injected_clock(monkeypatch: pytest.MonkeyPatch, start: int = START) -> Clock:
    """A ``Clock`` in place of ``ctx.model.clock`` for the rest of the test (in this process)."""
    from ctx import model
    clock = Clock(start)
    monkeypatch.setattr(model, "clock", clock)
    return clock
