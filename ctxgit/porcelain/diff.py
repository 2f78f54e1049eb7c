"""Entry-level differences between two states of a context (``ctx diff``).

A state is the entries of each store at a commit, or on disk. The diff
names entries added, removed, and changed with each field's old and new
value, never a line diff of the JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pygit2

from ctx.model import STORES, Entry, changed_fields
from ctx.storage.files import read_store
from ctxgit.porcelain.commits import commit_before, entries_at, require_repo, resolve_rev

State = dict[str, dict[str, Entry]]


@dataclass
class EntryDiff:
    store: str
    key: str
    before: Entry | None
    after: Entry | None

    @property
    def kind(self) -> str:
        return "added" if self.before is None else "removed" if self.after is None else "changed"

    def fields(self) -> dict[str, tuple[Any, Any]]:
        return changed_fields(self.before, self.after)

    def as_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {"store": self.store, "key": self.key, "change": self.kind}
        if self.kind == "changed":
            row["fields"] = {n: {"old": o, "new": v} for n, (o, v) in self.fields().items()}
        else:
            row["entry"] = self.after if self.after is not None else self.before
        return row


@dataclass
class Diff:
    source: str
    target: str
    entries: list[EntryDiff] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"from": self.source, "to": self.target,
                "changes": [e.as_json() for e in self.entries]}


def state_at(repo: pygit2.Repository, commit: pygit2.Commit | None, stores: list[str]) -> State:
    return {s: entries_at(repo, commit, s) for s in stores}


def state_on_disk(root: Path, stores: list[str]) -> State:
    return {s: read_store(root, s).entries for s in stores}


def compare(before: State, after: State) -> list[EntryDiff]:
    out: list[EntryDiff] = []
    for store in before.keys() | after.keys():
        old, new = before.get(store, {}), after.get(store, {})
        for key in list(dict.fromkeys(list(old) + list(new))):
            if old.get(key) != new.get(key):
                out.append(EntryDiff(store, key, old.get(key), new.get(key)))
    out.sort(key=lambda d: (STORES.index(d.store) if d.store in STORES else 9, d.key))
    return out


def diff(root: Path, rev: str | None = None, rev2: str | None = None, *,
         store: str | None = None, since: datetime | None = None) -> Diff:
    """From REV (or the last commit before ``since``, or HEAD) to REV2 (or the disk)."""
    repo = require_repo(root)
    stores = [store] if store else list(STORES)
    if since is not None and rev is None:
        base = commit_before(repo, since)
        source = base.short_id if base is not None else "(empty)"
    else:
        base = resolve_rev(repo, rev or "HEAD")
        source = base.short_id
    before = state_at(repo, base, stores)
    if rev2 is None:
        after, target = state_on_disk(root, stores), "working tree"
    else:
        tip = resolve_rev(repo, rev2)
        after, target = state_at(repo, tip, stores), tip.short_id
    return Diff(source, target, compare(before, after))
