"""A merge that waits for a human: a text file both sides changed on the same lines.

A store file never needs one (entries merge one by one), but RULES.md or a
summary can. Such a merge is never committed and never pushed: the file gets
git's conflict markers in the work tree only, ``.git/MERGE_HEAD`` names the
other side (so plain git sees a merge in progress too) and
``.git/ctx/merge.json`` names the files that wait. Meanwhile writes go on as
usual on this machine's side (those files stay out of their commits, so the
markers are never committed by the way), sync and auto-sync stop with the
next step, and ``ctx start`` and ``ctx doctor`` say so. ``ctx sync
--continue`` merges again with the edited files taken as they are (they must
hold no markers any more) and commits; ``ctx sync --abort`` puts them back as
this machine last committed them.
"""

from __future__ import annotations

import os

from ctx.errors import StoreError
from ctx.storage.files import make_dir, read_text, remove
from ctxgit.gitfiles.layout import DIR, MANAGED_FILES
from ctxgit.gitfiles.layout import MERGE as STATE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.storage.files import StrPath

MERGE_HEAD = "MERGE_HEAD"


class Waiting:
    """The merge that waits: the other side's commit, its label ("origin/main") and
    the files a human must edit."""

    __slots__ = ("theirs", "label", "paths")

    def __init__(self, theirs: str, label: str, paths: list[str]) -> None:
        self.theirs, self.label, self.paths = theirs, label, paths

    def files(self) -> str:
        from ctx.display import name  # (names a remote's tree chose: shown visibly)
        return ", ".join(map(name, self.paths)) or "the merged files"

    def next_step(self) -> str:
        return (f"edit {self.files()} (keep what both sides meant, remove the <<<<<<< ======= >>>>>>> "
                "lines), then run `ctx sync --continue`; or `ctx sync --abort` to drop the merge")


def read(root: StrPath) -> Waiting | None:
    """The merge that waits in ``root``, or None (plain file reads: cheap)."""
    git = os.path.join(root, ".git")
    try:
        theirs = read_text(os.path.join(git, MERGE_HEAD)).split()[0]
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    try:
        import json  # only when a merge waits: ctx start reads this module on every session with a remote
        data = json.loads(read_text(os.path.join(git, STATE)))
        label = str(data.get("label") or "the remote")
        paths = [str(p) for p in data.get("paths", [])]
    except (OSError, ValueError, AttributeError):
        label, paths = "another branch (a merge git started)", []
    return Waiting(theirs, label, paths)


def held_paths(root: StrPath) -> set[str]:
    """Files a waiting merge holds: no commit takes them until it ends."""
    waiting = read(root)
    return set(waiting.paths) if waiting is not None else set()


def begin(root: StrPath, theirs: str, label: str, files: dict[str, bytes]) -> Waiting:
    """Leave ``files`` (merged, with markers) in the work tree and record the merge
    (call holding the context lock)."""
    import json

    from ctx.storage.files import atomic_write
    for path, data in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), mode=0o700, exist_ok=True)
        atomic_write(full, data)
    git = os.path.join(root, ".git")
    make_dir(os.path.join(git, DIR), 0o700)
    atomic_write(os.path.join(git, STATE), (json.dumps({"theirs": theirs, "label": label, "paths": sorted(files)},
                                                       indent=2) + "\n").encode("utf-8"))
    atomic_write(os.path.join(git, MERGE_HEAD), f"{theirs}\n".encode("ascii"))
    return Waiting(theirs, label, sorted(files))


def clear(root: StrPath) -> None:
    git = os.path.join(root, ".git")
    for name in (MERGE_HEAD, "MERGE_MSG", "MERGE_MODE", STATE):
        remove(os.path.join(git, name))


def marker_lines(data: bytes) -> list[int]:
    """The line numbers (from 1) of git's conflict markers in a text, when it has a
    whole conflict (an opening and a closing marker); [] otherwise. A lone ``=======``
    is a Markdown heading's underline, not a marker."""
    lines = data.split(b"\n")
    opening = [n for n, line in enumerate(lines, 1) if line.startswith(b"<<<<<<<")]
    closing = [n for n, line in enumerate(lines, 1) if line.startswith(b">>>>>>>")]
    if not opening or not closing or max(closing) < min(opening):
        return []
    return sorted(opening + closing)


def text_files(root: StrPath) -> list[str]:
    """The context's text files (RULES.md, .gitignore, .gitattributes, config.json,
    summaries), relative to the root."""
    found = [name for name in MANAGED_FILES if os.path.isfile(os.path.join(root, name))]
    try:
        with os.scandir(os.path.join(root, "sessions")) as entries:
            found += sorted(f"sessions/{e.name}" for e in entries
                            if e.is_file() and e.name.endswith(".md") and e.name != ".md")
    except OSError:
        pass
    return found


def files_with_markers(root: StrPath) -> dict[str, list[int]]:
    """Every text file of the context that holds conflict markers, with their lines. A link
    (RULES.md or a summary made a link to a file outside) is never read through: doctor
    names it a link (tests/reliability/test_visible_printers.py)."""
    out: dict[str, list[int]] = {}
    for rel in text_files(root):
        try:  # (surrogateescape: the bytes as they are, whatever their encoding)
            text = read_text(os.path.join(root, rel), errors="surrogateescape", follow=False)
        except (OSError, StoreError):
            continue
        lines = marker_lines(text.encode("utf-8", "surrogateescape"))
        if lines:
            out[rel] = lines
    return out
