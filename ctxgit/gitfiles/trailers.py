"""The trailers ctx writes at the end of each commit message (``Ctx-Operation``,
``Ctx-Store``, ``Ctx-Key``, ``Ctx-Status``), read back: one reader for every
tool that looks at the history (``ctxgit.recorder.message_for`` writes them)."""

from __future__ import annotations

import re

_TRAILER = re.compile(r"^(Ctx-[A-Za-z-]+): ?(.*)$", re.M)


def trailers(message: str) -> dict[str, list[str]]:
    """Each ``Ctx-*`` trailer of a commit message, with its values in order."""
    found: dict[str, list[str]] = {}
    for name, value in _TRAILER.findall(message):
        found.setdefault(name, []).append(value.strip())
    return found
