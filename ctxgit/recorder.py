"""The git side of ctx's one write path: one commit per write, under the lock.

``Context._write`` calls ``prepare`` after taking the lock (commit whatever
changed on disk outside ctx, as ``system``) and ``record`` after the atomic
store write (commit the write itself, as its author).
"""

from __future__ import annotations

from pathlib import Path

from ctx.brief import excerpt
from ctx.errors import CredentialRefused, StoreError
from ctx.ops import Change
from ctx.store import parse_store

from . import pack
from .repo import commit_paths, dirty_paths, ensure_repo, open_repo, signature, system_signature

SUBJECT_BOUND = 60
STATUS_OF = {"amend": "amended", "supersede": "superseded", "resolve": "resolved"}


def message_for(change: Change) -> str:
    """A readable subject, then trailers tools can filter on.

    A value or note stored with ``--force`` is never quoted: it may be a
    secret the operator chose to keep out of the message.
    """
    op = change.operation
    trailers = [("Ctx-Operation", op)]
    edit = change.single
    if op == "merge":
        subject = change.subject or "merge"
    elif edit is None:
        subject = change.subject or (f"{op}: {len(change.edits)} entries" if change.edits
                                     else "init: context root" if op == "init" else op)
        stores = {e.store for e in change.edits}
        if len(stores) == 1:
            trailers.append(("Ctx-Store", stores.pop()))
            trailers += [("Ctx-Key", e.key) for e in change.edits]
        else:
            trailers += [("Ctx-Key", f"{e.store}/{e.key}") for e in change.edits]
    else:
        subject = change.subject or _subject(change, edit)
        trailers += [("Ctx-Store", edit.store), ("Ctx-Key", edit.key)]
        if op in STATUS_OF:
            trailers.append(("Ctx-Status", STATUS_OF[op]))
    trailers += change.trailers
    return subject + "\n\n" + "\n".join(f"{k}: {v}" for k, v in trailers) + "\n"


def _subject(change: Change, edit) -> str:
    where = f"{edit.store}/{edit.key}"
    after = edit.after or {}
    quoted = not change.forced
    op = change.operation
    if op == "set":
        return f"set {where}: {excerpt(after.get('value'), SUBJECT_BOUND)}" if quoted \
            else f"set {where} (value not quoted: stored with --force)"
    if op == "amend":
        return f"amend {where}: {excerpt(after.get('status_note', ''), SUBJECT_BOUND)}" if quoted \
            else f"amend {where}"
    if op == "supersede":
        return f"supersede {where} by {after.get('superseded_by', '?')}"
    if op == "resolve":
        note = after.get("status_note")
        return f"resolve {where}: {excerpt(note, SUBJECT_BOUND)}" if note and quoted else f"resolve {where}"
    if op == "basis":
        return f"basis {where}: {after.get('basis')}"
    return f"{op} {where}"


def external_message(paths: list[str]) -> str:
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return (f"external change: {shown}\n\nFiles changed outside ctx, committed as found "
            "before the next write.\n\nCtx-Operation: external\n")


def broken_store(root: Path, path: str) -> bool:
    """A store file that does not parse is never committed over a good version."""
    if not (path.startswith("memory/") and path.endswith(".json")):
        return False
    if not (root / path).exists():
        return False  # a deletion outside ctx is committed as found
    try:
        parse_store(path[7:-5], root / path, (root / path).read_bytes())
    except (StoreError, OSError):
        return True
    return False


class GitRecorder:
    """Commits each write to the context root's own repository."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._repo = None
        self._pending: list[str] = []
        self.warnings: list[str] = []

    def prepare(self) -> None:
        if open_repo(self.root) is None and not self._has_content():
            # a fresh root: the repository is made by the first write that happens,
            # so a write that fails leaves nothing behind
            self._repo, self._pending = None, []
            return
        repo, touched = ensure_repo(self.root)
        self._repo = repo
        self._pending = touched
        outside = [p for p in dirty_paths(repo) if p not in touched and not broken_store(self.root, p)]
        if not outside:
            return
        try:
            commit_paths(repo, outside, external_message(outside), system_signature())
        except CredentialRefused as refused:
            # Left uncommitted: a write that removes it (ctx delete) can still go through.
            places = sorted({h.path for h in refused.findings})
            kept = [p for p in outside if p not in places]
            if kept:
                commit_paths(repo, kept, external_message(kept), system_signature())
            self.warnings.append(
                f"warning: {', '.join(places)} holds a credential written outside ctx "
                f"({refused.findings[0].describe()}); it stays uncommitted until removed "
                "(`ctx scan` lists it)")

    def settle(self, subject: str = "init: repository", operation: str = "init") -> None:
        """Commit what ``prepare`` created or repaired (.gitignore, .gitattributes)
        when no write follows to carry it (a failed or empty write, doctor)."""
        if self._repo is not None and self._pending:
            commit_paths(self._repo, self._pending, f"{subject}\n\nCtx-Operation: {operation}\n",
                         system_signature())
            self._pending = []

    def _has_content(self) -> bool:
        if (self.root / "RULES.md").exists():
            return True
        return any((self.root / "memory").glob("*.json")) or any((self.root / "sessions").glob("*"))

    def record(self, change: Change) -> None:
        if self._repo is None:
            self._repo, self._pending = ensure_repo(self.root)
        repo = self._repo
        paths = list(dict.fromkeys(change.paths + self._pending))
        self._pending = []
        exempt = frozenset([f"{e.store}/{e.key}" for e in change.edits] +
                           [p for p in change.paths if not p.startswith("memory/")]) \
            if change.forced else frozenset()
        oid = commit_paths(repo, paths, message_for(change), signature(repo, change.author),
                           scan=change.operation != "merge", exempt=exempt,
                           extra_parents=change.parents)
        if oid is not None:
            pack.after_commit(repo, oid)
