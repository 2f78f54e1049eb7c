"""What one author committed to the context since a moment: the Stop hook's question
(``ctx event stop``: did this session write, and did it write its summary?).

Read cheaply: from HEAD back along first parents, as loose objects read from
``.git/objects`` (the commits a session just made are loose), stopping at the first
commit older than the moment; only when a commit is packed does pygit2 walk instead.
"""

from __future__ import annotations

import os

from ctxgit.gitfiles import objects
from ctxgit.gitfiles.refs import head_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.storage.files import StrPath

STEPS = 500             # commits read at most: a session's own writes, and then some
SUMMARY_OPERATION = "summary"
KEPT_PREFIX = "compaction_"  # ctx's own note of a compaction (ctx/compaction.py): not the session's writing


class Written:
    """Whether ``author`` committed since the moment (``wrote``), and whether one of those
    commits was a session summary (``summarized``)."""

    __slots__ = ("wrote", "summarized")

    def __init__(self, wrote: bool = False, summarized: bool = False) -> None:
        self.wrote, self.summarized = wrote, summarized

    def __repr__(self) -> str:
        return f"Written(wrote={self.wrote}, summarized={self.summarized})"


def _fields(body: bytes) -> tuple[str | None, str, int, str] | None:
    """(first parent, author name, committer time, message) of a commit's body."""
    head, _, message = body.partition(b"\n\n")
    parent = None
    author = None
    when = None
    try:
        for line in head.split(b"\n"):
            if line.startswith(b"parent ") and parent is None:
                parent = line[7:].decode("ascii")
            elif line.startswith(b"author "):
                author = line[7:].decode("utf-8", "replace").partition("<")[0].strip()
            elif line.startswith(b"committer "):
                when = int(line.rsplit(b">", 1)[1].split()[0])
    except (ValueError, IndexError):
        return None
    if author is None or when is None:
        return None
    return parent, author, when, message.decode("utf-8", "replace")


def _operation(message: str) -> tuple[str, str]:
    """The commit's ``Ctx-Operation`` trailer and its subject line."""
    operation = ""
    for line in message.splitlines():
        if line.startswith("Ctx-Operation:"):
            operation = line.partition(":")[2].strip()
    return operation, message.partition("\n")[0]


def _count(found: Written, name: str | None, author: str, message: str) -> None:
    if name is not None and author != name:
        return
    operation, subject = _operation(message)
    if not operation:
        return  # not a ctx write (a merge, a commit by hand)
    if operation == SUMMARY_OPERATION:
        found.summarized = found.wrote = True
    elif not subject.startswith(f"set agent/{KEPT_PREFIX}"):
        found.wrote = True


def written_since(root: StrPath, since: int, author: str | None, after: str | None = None) -> Written:
    """What ``author`` (the name its commits carry; None: anyone) committed at or after
    ``since`` (seconds), and after the commit ``after`` (HEAD when the session began: the
    walk stops there, so a commit of the same second from before is not counted)."""
    found = Written()
    current = head_id(root)
    git = os.path.join(root, ".git")
    for _ in range(STEPS):
        if current is None or current == after:
            return found
        read = objects.read(git, current)
        if read is None or read[0] != b"commit":
            return _walk(root, current, since, author, found, after)
        fields = _fields(read[1])
        if fields is None:
            return found
        parent, name, when, message = fields
        if when < since:
            return found
        _count(found, author, name, message)
        current = parent
    return found


def _walk(root: StrPath, start: str, since: int, author: str | None, found: Written,
          after: str | None) -> Written:
    """The rest with pygit2, newest first, from ``start`` (a packed commit)."""
    from pathlib import Path

    import pygit2
    from pygit2.enums import SortMode

    from ctx.errors import GitError
    from ctxgit.plumbing.repo import open_repo
    try:
        repo = open_repo(Path(root))
        if repo is None:
            return found
        walker = repo.walk(pygit2.Oid(hex=start), SortMode.TIME)
        walker.simplify_first_parent()
        for steps, commit in enumerate(walker):
            if commit.commit_time < since or steps >= STEPS or str(commit.id) == after:
                break
            _count(found, author, commit.author.name, commit.message)
    except (GitError, pygit2.GitError, ValueError, KeyError, OSError):
        pass
    return found
