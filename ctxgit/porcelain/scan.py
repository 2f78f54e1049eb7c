"""``ctx scan``: credentials in the current context, and in every commit.

The current scan reads store files entry by entry, the summaries and
RULES.md. The history scan reads each distinct blob once (a store file that
did not change between commits is not read again) and every commit message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import SortMode

from ctx import progress
from ctx.credentials import scan
from ctx.errors import StoreError
from ctx.storage.files import read_text
from ctxgit.gitfiles.trailers import names_blanked
from ctxgit.plumbing.repo import open_repo
from hooks.scanner import Hit, is_store_path, scan_store_text, scan_text


@dataclass
class Report:
    hit: Hit
    commit: str | None = None

    def line(self) -> str:
        where = f"{self.commit[:8]} " if self.commit else ""
        return where + self.hit.describe()  # (visible text: Hit.describe)

    def as_json(self) -> dict:
        return {"commit": self.commit, "path": self.hit.path, "line": self.hit.line,
                "entry": self.hit.where or None, "rule": self.hit.finding.rule,
                "kind": self.hit.finding.description, "preview": self.hit.finding.preview}


def _scanned(name: str) -> bool:
    return name == "RULES.md" or is_store_path(name) or (name.startswith("sessions/") and name.endswith(".md"))


def scan_current(root: Path) -> list[Report]:
    out: list[Report] = []
    paths = [root / "RULES.md"] + sorted((root / "memory").glob("*.json")) + sorted((root / "sessions").glob("*.md"))
    for path in paths:
        try:  # a link is never read through (doctor names it), as nowhere else in ctx
            text = read_text(path, errors="replace", follow=False)
        except (OSError, StoreError):  # (missing, a folder, a link, not a regular file)
            continue
        rel = path.relative_to(root).as_posix()
        hits = scan_store_text(rel, text) if is_store_path(rel) else scan_text(rel, text)
        out += [Report(h) for h in hits]
    return out


def scan_history(root: Path) -> list[Report]:
    repo = open_repo(root)
    if repo is None or repo.head_is_unborn:
        return []
    seen: set = set()
    out: list[Report] = []
    for number, commit in enumerate(repo.walk(repo.head.target, SortMode.TOPOLOGICAL | SortMode.REVERSE), 1):
        if number % 100 == 0:
            progress.count(number, None, "commits scanned")
        cid = str(commit.id)
        for finding in scan(names_blanked(commit.message)):  # ctx's own trailer names are no assignments
            out.append(Report(Hit("(commit message)", finding.line, finding), cid))
        stack = [("", commit.tree)]
        while stack:
            prefix, tree = stack.pop()
            for item in tree:
                name = prefix + (item.name or "")
                if isinstance(item, pygit2.Tree):
                    stack.append((name + "/", item))
                    continue
                if not isinstance(item, pygit2.Blob) or item.id in seen or not _scanned(name):
                    continue
                seen.add(item.id)
                text = item.data.decode("utf-8", "replace")
                hits = scan_store_text(name, text) if is_store_path(name) else scan_text(name, text)
                out += [Report(h, cid) for h in hits]
    return out
