"""Commits and the store files inside them: what ``history``, ``histindex``, ``diff``,
``revert`` and sync read the past with.

``walk`` gives commits newest first; ``commit_info`` reads a commit's ``Ctx-*``
trailers; ``resolve_rev`` turns a revision or a date into a commit;
``entries_at`` and ``entry_at`` read a store file as a commit holds it (one
entry alone is parsed by itself when the file is in ctx's layout:
``textlayout.read_entry``). ``walk_history`` finds every version of an entry
by walking the commits: a commit whose trailers name one entry (every
ordinary write) is skipped without reading its tree unless it names the key
asked for; other commits (outside changes, merges, reverts) are compared by
the store file's blob id, and only a changed blob is read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import pygit2
from pygit2.enums import SortMode

from ctx import model
from ctx.errors import InvalidArgument, NotFound
from ctx.model import Entry
from ctx.storage.textlayout import read_entry
from ctxgit.gitfiles.trailers import trailers
from ctxgit.plumbing.repo import blob_data, open_repo

SINGLE_ENTRY_OPS = frozenset({"set", "amend", "supersede", "resolve", "basis", "delete", "send", "remind",
                              "review"})
_HEAD_REV = re.compile(r"^(HEAD|@)(~\d+|\^+\d*)*$")


@dataclass
class CommitInfo:
    id: str
    time: datetime
    author: str
    email: str
    subject: str
    operation: str | None
    stores: list[str]
    keys: list[str]
    trailers: dict[str, list[str]] = field(default_factory=dict)
    committer: str = ""        # the account that committed it ("": the author)
    committer_email: str = ""

    @property
    def short(self) -> str:
        return self.id[:8]

    @property
    def who(self) -> str:
        """The author, and the account that committed when it is another:
        ``Agent Z via Olive Operator``."""
        name, email = self.committer or self.author, self.committer_email or self.email
        if (name, email) == (self.author, self.email):
            return self.author
        return f"{self.author} via {name if name != self.author else email}"

    def as_json(self) -> dict[str, Any]:
        return {"commit": self.id, "date": model.format_ts(self.time), "author": self.author,
                "email": self.email, "committer": self.committer or self.author,
                "committer_email": self.committer_email or self.email, "operation": self.operation,
                "stores": self.stores, "keys": self.keys, "subject": self.subject}


def commit_info(commit: pygit2.Commit) -> CommitInfo:
    message = commit.message
    found = trailers(message)
    when = datetime.fromtimestamp(commit.author.time, UTC)
    return CommitInfo(id=str(commit.id), time=when, author=commit.author.name,
                      email=commit.author.email, subject=message.split("\n", 1)[0],
                      operation=next(iter(found.get("Ctx-Operation", [])), None),
                      stores=found.get("Ctx-Store", []), keys=found.get("Ctx-Key", []),
                      trailers=found, committer=commit.committer.name,
                      committer_email=commit.committer.email)


def require_repo(root: Path) -> pygit2.Repository:
    repo = open_repo(root)
    if repo is None or repo.head_is_unborn:
        raise NotFound(f"the context at {root} has no history yet (no commits)")
    return repo


def walk(repo: pygit2.Repository, start: pygit2.Oid | None = None,
         hide: pygit2.Oid | None = None) -> Iterator[pygit2.Commit]:
    """Commits newest first (by time, parents after children), leaving out those ``hide`` reaches."""
    if repo.head_is_unborn:
        return iter(())
    walker = repo.walk(start or repo.head.target, SortMode.TOPOLOGICAL | SortMode.TIME)
    if hide is not None:
        walker.hide(hide)
    return walker


# --- store files inside commits --------------------------------------------------------

def blob_id(tree: pygit2.Tree | None, store: str) -> pygit2.Oid | None:
    """The id of ``store``'s file in ``tree``; None when the tree has none."""
    if tree is None:
        return None
    try:
        return tree[f"memory/{store}.json"].id
    except KeyError:
        return None


@lru_cache(maxsize=8)
def _parse_blob(data: bytes) -> dict[str, Entry]:
    try:
        parsed = json.loads(data.decode("utf-8"))
        entries = parsed.get("entries", {}) if isinstance(parsed, dict) else {}
        return entries if isinstance(entries, dict) else {}
    except (ValueError, UnicodeDecodeError):
        return {}


def _entry_from_blob(data: bytes, key: str) -> Entry | None:
    """One entry from a store file's bytes, parsing only that entry when it can."""
    entry = read_entry(data, key, _parse_blob)
    return entry if isinstance(entry, dict) else None


def entries_at(repo: pygit2.Repository, commit: pygit2.Commit | None, store: str) -> dict[str, Entry]:
    blob = blob_id(commit.tree if commit is not None else None, store)
    return dict(_parse_blob(blob_data(repo, blob))) if blob is not None else {}


def entry_at(repo: pygit2.Repository, commit: pygit2.Commit | None, store: str, key: str) -> Entry | None:
    blob = blob_id(commit.tree if commit is not None else None, store)
    return _entry_from_blob(blob_data(repo, blob), key) if blob is not None else None


# --- revisions -----------------------------------------------------------------------

def resolve_rev(repo: pygit2.Repository, rev: str) -> pygit2.Commit:
    """A commit id (or prefix), ``HEAD~N``, a branch, or a date/time (the last commit then)."""
    text = rev.strip()
    if not text:
        raise InvalidArgument("an empty revision")
    if not _HEAD_REV.match(text) and re.match(r"^\d{4}-\d{2}-\d{2}", text):
        moment = model.parse_ts(text)
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            moment = moment.replace(hour=23, minute=59, second=59)  # a day means its end
        return commit_at(repo, moment, rev)
    try:
        obj = repo.revparse_single(text)
        return obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise NotFound(f"no such revision {rev!r} in the context's history") from None


def commit_at(repo: pygit2.Repository, moment: datetime, label: str = "") -> pygit2.Commit:
    """The newest commit made at or before ``moment``."""
    limit = moment.timestamp()
    for commit in walk(repo):
        if commit.commit_time <= limit:
            return commit
    raise NotFound(f"the context's history starts after {label or model.format_ts(moment)}")


def commit_before(repo: pygit2.Repository, moment: datetime) -> pygit2.Commit | None:
    """The newest commit made strictly before ``moment``, or None."""
    limit = moment.timestamp()
    for commit in walk(repo):
        if commit.commit_time < limit:
            return commit
    return None


# --- an entry's versions, by walking the commits -------------------------------------

@dataclass
class Version:
    """One version of an entry: the commit that made it and the entry after it."""

    info: CommitInfo
    store: str
    key: str
    entry: Entry | None
    created: bool = False

    @property
    def deleted(self) -> bool:
        return self.entry is None

    def as_json(self) -> dict[str, Any]:
        return {**self.info.as_json(), "store": self.store, "key": self.key,
                "event": "deleted" if self.deleted else "created" if self.created else "changed",
                "status": (self.entry or {}).get("status"), "entry": self.entry}


def _may_touch(info: CommitInfo, store: str, key: str, is_merge: bool) -> bool:
    """False when the trailers prove the commit did not change ``store/key``."""
    if is_merge or info.operation not in SINGLE_ENTRY_OPS or len(info.keys) != 1:
        return True
    return info.stores == [store] and info.keys == [key]


def walk_history(repo: pygit2.Repository, key: str, stores: list[str], limit: int | None = None,
                 hide: pygit2.Oid | None = None) -> list[Version]:
    """Every version of ``key`` in ``stores``, newest first, by walking the commits
    (those ``hide`` reaches are left out); NotFound if there is none."""
    versions: list[Version] = []
    for commit in walk(repo, hide=hide):
        info = None
        is_merge = len(commit.parents) > 1
        parent = commit.parents[0] if commit.parents else None
        message = commit.message
        for store in stores:
            if "Ctx-Operation" in message:
                info = info or commit_info(commit)
                if not _may_touch(info, store, key, is_merge):
                    continue
            new_blob = blob_id(commit.tree, store)
            old_blob = blob_id(parent.tree, store) if parent is not None else None
            if new_blob == old_blob:
                continue
            after = _entry_from_blob(blob_data(repo, new_blob), key) if new_blob else None
            before = _entry_from_blob(blob_data(repo, old_blob), key) if old_blob else None
            if after == before:
                continue
            versions.append(Version(info or commit_info(commit), store, key, after,
                                     created=before is None and after is not None))
        if limit is not None and len(versions) >= limit:
            break
    if not versions:
        raise NotFound(f"no history for {key!r} in {', '.join(stores)}")
    return versions[:limit] if limit is not None else versions
