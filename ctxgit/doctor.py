"""``ctx doctor``: find what is out of order in a context, and repair what is safe.

Safe repairs: create the repository, add missing ``.gitignore`` lines, commit
files changed outside ctx, take a committed lock file out of the index, pack
loose objects. A store file that is not valid JSON is reported and left
exactly as it is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ctx.errors import StoreError
from ctx.model import STORES
from ctx.ops import Context
from ctx.store import context_lock, read_store
from hooks.guard import IGNORE_LINES, forbidden

from . import pack
from .recorder import broken_store
from .repo import dirty_paths, open_repo

LOOSE_WARN_BYTES = 64 * 1024 * 1024


@dataclass
class Finding:
    problem: str
    repaired: bool = False
    fixable: bool = True

    def line(self) -> str:
        mark = "repaired" if self.repaired else ("needs attention" if not self.fixable else "repairable")
        return f"[{mark}] {self.problem}"


def loose_bytes(git_dir: Path) -> tuple[int, int]:
    """The count and total size of loose objects."""
    count = size = 0
    objects = git_dir / "objects"
    try:
        folders = [d for d in os.scandir(objects) if len(d.name) == 2]
    except FileNotFoundError:
        return 0, 0
    for folder in folders:
        for item in os.scandir(folder.path):
            count += 1
            size += item.stat().st_size
    return count, size


def examine(ctx: Context, repair: bool) -> list[Finding]:
    root = ctx.root
    findings: list[Finding] = []
    if not root.is_dir():
        return [Finding(f"no context root at {root} (run `ctx init`)", fixable=False)]
    for name in STORES:
        try:
            store = read_store(root, name)
        except StoreError as exc:
            findings.append(Finding(f"{exc}", fixable=False))
            continue
        if store.exists and store.data.get("version") != "1":
            findings.append(Finding(f"memory/{name}.json has format version "
                                    f"{store.data.get('version')!r}: read-only to ctx", fixable=False))
    repo = open_repo(root)
    if repo is None:
        findings.append(Finding("the context root has no repository"))
    else:
        text = (root / ".gitignore").read_text(encoding="utf-8") if (root / ".gitignore").exists() else ""
        missing = [line for line in IGNORE_LINES if line not in {x.strip() for x in text.splitlines()}]
        if missing:
            findings.append(Finding(f".gitignore lacks {', '.join(missing)}"))
        dirty = [p for p in dirty_paths(repo) if not broken_store(root, p)]
        if dirty:
            findings.append(Finding(f"changed outside ctx and not committed: {', '.join(dirty)}"))
        tracked = [e.path for e in repo.index if forbidden(e.path)]
        if tracked:
            findings.append(Finding(f"in the index but never to be committed: {', '.join(tracked)}"))
        count, size = loose_bytes(Path(repo.path))
        if size > LOOSE_WARN_BYTES:
            findings.append(Finding(f"{count} loose objects take {size / 1e6:.0f} MB (packing shrinks them)"))
    if repair and any(f.fixable for f in findings):
        with context_lock(root):
            ctx.recorder.prepare()  # creates the repository, .gitignore lines, commits outside changes
            repo = open_repo(root)
            if repo is not None:
                index = repo.index
                removed = [e.path for e in list(index) if forbidden(e.path)]
                for path in removed:
                    index.remove(path)
                if removed:
                    index.write()
                ctx.recorder.flush("doctor: repository repaired")
        for finding in findings:
            if finding.fixable and "loose objects" not in finding.problem:
                finding.repaired = True
        if repo is not None and any("loose objects" in f.problem for f in findings):
            started = pack.start_gc(root)
            for f in findings:
                if "loose objects" in f.problem:
                    f.repaired = started
    return findings
