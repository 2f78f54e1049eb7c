"""Read HEAD's commit id from the files of ``.git``, without pygit2.

``ctx start`` and ``ctx brief`` name the commit they were built from; they
must stay fast and write nothing, so they read the refs as plain files.
"""

from __future__ import annotations

import os

from ctx.storage.files import read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.storage.files import StrPath


def head_id(root: StrPath) -> str | None:
    """The full id of the commit HEAD names, or None (no repository, unborn)."""
    git = os.path.join(root, ".git")
    try:
        head = read_text(os.path.join(git, "HEAD")).strip()
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return None
    for _ in range(5):  # follow a short chain of symbolic refs
        if not head.startswith("ref: "):
            return head if len(head) >= 40 else None
        name = head[5:].strip()
        try:
            head = read_text(os.path.join(git, name)).strip()
            continue
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
            pass
        return _packed(git, name)
    return None


def _packed(git: str, name: str) -> str | None:
    try:
        lines = read_text(os.path.join(git, "packed-refs")).splitlines()
    except (FileNotFoundError, PermissionError):
        return None
    for line in lines:
        if line.endswith(" " + name) and not line.startswith(("#", "^")):
            return line.split(" ", 1)[0]
    return None


def ref_id(root: StrPath, name: str) -> str | None:
    """The commit id a plain ref names (``refs/remotes/origin/main``), or None."""
    git = os.path.join(root, ".git")
    try:
        value = read_text(os.path.join(git, name)).strip()
        return value if len(value) >= 40 else None
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
        return _packed(git, name)


def head_short_id(root: StrPath) -> str | None:
    full = head_id(root)
    return full[:8] if full else None
