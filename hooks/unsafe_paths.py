"""Repository guards: paths that must never be committed to a context's repository.

The lock file, ctx's temporary files and rebuildable caches are local state:
committing them would spread a stale lock or a half-written file to every
clone. ctx checks this in-process before each commit (libgit2 runs no git
hooks), and the pre-commit hook runs the same check for a manual ``git commit``.
"""

from __future__ import annotations

import re

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(^|/)memory/\.lock$"), "the context lock file"),
    (re.compile(r"(^|/)memory/\.[^/]*\.tmp$"), "a temporary file of an unfinished write"),
    (re.compile(r"\.tmp$|~$|\.swp$"), "a temporary file"),
    (re.compile(r"(^|/)\.ctx-cache(/|$)"), "a rebuildable cache"),
    (re.compile(r"(^|/)memory/[^/]*\.(db|sqlite|sqlite3|idx)(-wal|-shm|-journal)?$"), "a rebuildable index"),
)

IGNORE_LINES: tuple[str, ...] = (
    "memory/.lock",
    "memory/.*.tmp",
    "*.tmp",
    ".ctx-cache/",
)


def forbidden(path: str) -> str | None:
    """Why ``path`` (relative, with ``/``) must not be committed, or None."""
    for pattern, reason in _RULES:
        if pattern.search(path):
            return reason
    return None
