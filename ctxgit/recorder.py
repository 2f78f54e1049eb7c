"""The git side of ctx's one write path: one commit per write, under the lock.

``Context.transact`` calls ``prepare`` after taking the lock (commit whatever
changed on disk outside ctx, as ``system``) and ``record`` after the atomic
store write (commit the write itself, as its author).

git itself makes every commit where it is on PATH (``plumbing/gitcommit.py``):
ctx never writes git's files. When the repository is exactly as ctx's last
commit left it (``plumbing/lastcommit.py``) and the write changed one store
file git already tracks, the write is one ``git commit`` and libgit2 is not
loaded; otherwise libgit2 (pygit2) opens the repository, git says what changed
outside ctx, and that is committed first. Where git is missing, libgit2 commits.

The author is who wrote the entry (``CTX_AUTHOR``, else the operator) and the
committer the account that committed it (this machine's git identity, the author
when none is set), dated in the writer's zone; when git is told to sign
(``commit.gpgsign``), git signs, and a signer that fails fails the write.
"""

from __future__ import annotations

import os

from ctx import phases, settings
from ctx.changes import Change
from ctx.display import excerpt
from ctx.errors import CredentialRefused, GitError, StoreError
from ctx.storage.files import atomic_write, identity_of, is_link, parse_store, read_bytes, remove
from ctxgit.gitfiles import identity
from ctxgit.gitfiles.layout import WRITING
from ctxgit.plumbing import lastcommit

TYPE_CHECKING = False  # pygit2 loads only when the repository is not as ctx left it
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    import pygit2

    from ctx.storage.files import StrPath

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


def _held_by_a_waiting_merge(root: Path) -> set[str]:
    if not (root / ".git" / "MERGE_HEAD").exists():
        return set()
    from ctxgit.gitfiles.waiting import held_paths
    return held_paths(root)


def _has_conflict_markers(root: Path, path: str) -> bool:
    if path.startswith("memory/") or not (root / path).is_file():
        return False
    from ctxgit.gitfiles.waiting import marker_lines
    try:
        return bool(marker_lines((root / path).read_bytes()))
    except OSError:
        return False


def broken_store(root: Path, path: str) -> bool:
    """A store file that does not parse is never committed over a good version."""
    if not (path.startswith("memory/") and path.endswith(".json")):
        return False
    if not (root / path).exists():
        return False  # a deletion outside ctx is committed as found
    try:
        parse_store(path[7:-5], str(root / path), (root / path).read_bytes())
    except (StoreError, OSError):
        return True
    return False


class GitRecorder:
    """Commits each write to the context root's own repository. The one-``git commit``
    way works on ``root`` as it is given (a ``str`` from the front door: a write needs no
    pathlib); the way through libgit2's repository on ``path``."""

    def __init__(self, root: StrPath) -> None:
        self.root = root
        self._repo: pygit2.Repository | None = None
        self._pending: list[str] = []
        self._state: dict | None = None
        self._unsettled: set[str] = set()  # managed files prepare left unlike HEAD
        self._intent: dict[str, list[int]] = {}  # path -> identity of the file this write put there
        self.warnings: list[str] = []

    @property
    def path(self) -> Path:
        from pathlib import Path
        return Path(self.root)

    def prepare(self) -> None:
        self._state = None
        self._unsettled = set()
        # read before anything is written: a bad value stops the write, not its commit
        settings.seconds("CTX_GIT_RETRY_SECONDS")
        settings.byte_count("CTX_PACK_THRESHOLD")
        recovered = lastcommit.recover(self.root)  # lock files a killed ctx commit left
        if recovered:
            self.warnings.append(f"warning: removed {', '.join(recovered)} left by an interrupted ctx commit")
        self._state = None if settings.flag("CTX_GIT_SLOW") else lastcommit.check(self.root)[0]
        if self._state is not None:
            return  # nothing changed outside ctx since its last commit
        from ctxgit.guard.install import ensure_repo
        from ctxgit.plumbing.repo import (
            clear_half_made,
            commit_paths,
            dirty_paths,
            open_repo,
            system_signature,
        )
        root = self.path
        try:
            found = open_repo(root) is not None
        except GitError:
            if not clear_half_made(root):
                raise
            self.warnings.append("warning: removed a .git that an interrupted first write had "
                                 "half made (it held nothing); making the repository again")
            found = False
        if not found and not self._has_content():
            # a fresh root: the repository is made by the first write that happens,
            # so a write that fails leaves nothing behind
            self._repo, self._pending = None, []
            return
        repo, touched = ensure_repo(root)
        self._repo = repo
        self._pending = touched
        held = _held_by_a_waiting_merge(root)  # its conflict markers are never committed
        dirty = dirty_paths(repo)
        self._unsettled = set(dirty) - set(touched)  # what stays unlike HEAD once this is done
        outside = [p for p in dirty if p not in touched and p not in held
                   and not broken_store(root, p)]
        linked = [p for p in outside if is_link(os.path.join(self.root, p))]
        if linked:  # never committed: not the file it points to, nor as the file's deletion
            outside = [p for p in outside if p not in linked]
            self.warnings.append(f"warning: {', '.join(linked)} {'is a' if len(linked) == 1 else 'are'} "
                                 f"symbolic link{'' if len(linked) == 1 else 's'}; ctx never follows or "
                                 "commits a link (`ctx doctor` names it; put the file back)")
        outside = self._land_interrupted(repo, outside)
        marked = [p for p in outside if _has_conflict_markers(root, p)]
        if marked:  # a conflict is never committed (and so never pushed): a human resolves it first
            outside = [p for p in outside if p not in marked]
            self.warnings.append(f"warning: {', '.join(marked)} holds conflict markers; it stays "
                                 "uncommitted until they are removed (`ctx doctor` shows where)")
        if not outside:
            return
        try:
            commit_paths(repo, outside, external_message(outside), system_signature())
            self._unsettled -= set(outside)
        except CredentialRefused as refused:
            # Left uncommitted: a write that removes it (ctx delete) can still go through.
            places = sorted({h.path for h in refused.findings})
            kept = [p for p in outside if p not in places]
            if kept:
                commit_paths(repo, kept, external_message(kept), system_signature())
                self._unsettled -= set(kept)
            self.warnings.append(
                f"warning: {', '.join(places)} holds a credential written outside ctx "
                f"({refused.findings[0].describe()}); it stays uncommitted until removed "
                "(`ctx scan` lists it)")

    def intend(self, change: Change, path: str, identity: tuple) -> None:
        """Record, before ``path`` takes its new file (``identity``), the commit this write
        will make: a write killed before it commits is committed by the next one with its
        own author and message (``_land_interrupted``), not as an outside change by
        ``system``. Not fsynced: a kill loses nothing the page cache holds, and after a
        power cut the write is committed as an outside change, as before."""
        git = os.path.join(self.root, ".git")
        if change.parents or not os.path.isdir(git):
            # a merge is not one commit of files (its parents would be lost: a killed one is
            # committed as found); a fresh root's repository is made by this write's commit
            return
        self._intent[path] = list(identity)
        who = list(author_identity(change.author)) if change.author else None
        from ctx.jsoncodec import compact
        atomic_write(os.path.join(git, WRITING),
                     compact({"author": who, "message": message_for(change), "files": self._intent}).encode(),
                     durable=False)

    def _done_intending(self) -> None:
        if self._intent:
            self._intent = {}
            remove(os.path.join(self.root, ".git", WRITING))

    def _land_interrupted(self, repo, outside: list[str]) -> list[str]:
        """Commit, as the write that made them, the files among ``outside`` that a write
        killed before its commit left (each exactly as it put it there: its identity is
        the one ``intend`` recorded); the rest of ``outside`` is returned."""
        path = os.path.join(self.root, ".git", WRITING)
        try:
            from ctx.jsoncodec import loads
            record = loads(read_bytes(path).decode("utf-8"))
        except FileNotFoundError:
            return outside
        except (OSError, ValueError):
            remove(path)
            return outside
        remove(path)
        files = record.get("files") if isinstance(record, dict) else None
        message = record.get("message") if isinstance(record, dict) else None
        if not isinstance(files, dict) or not isinstance(message, str):
            return outside
        own = []
        for rel in outside:
            try:
                st = os.lstat(os.path.join(self.root, rel))
            except OSError:
                continue
            if files.get(rel) == list(identity_of(st)):
                own.append(rel)
        if not own:
            return outside
        from ctxgit.plumbing.repo import commit_paths, signature, signature_of
        who = record.get("author")
        author = signature_of(*who) if isinstance(who, list) and len(who) == 2 else signature(repo, None)
        try:
            commit_paths(repo, own, message, author)
        except CredentialRefused:
            return outside  # (a write stored with --force): committed as found, or refused, below
        self._unsettled -= set(own)
        return [p for p in outside if p not in own]

    def settle(self, subject: str = "init: repository", operation: str = "init") -> None:
        """Commit what ``prepare`` created or repaired (.gitignore, .gitattributes)
        when no write follows to carry it (a failed or empty write, doctor)."""
        if self._repo is not None and self._pending:
            from ctxgit.plumbing.repo import commit_paths, system_signature
            commit_paths(self._repo, self._pending, f"{subject}\n\nCtx-Operation: {operation}\n",
                         system_signature())
            self._pending = []

    def _has_content(self) -> bool:
        root = self.path
        if (root / "RULES.md").exists():
            return True
        return any((root / "memory").glob("*.json")) or any((root / "sessions").glob("*"))

    def record(self, change: Change) -> None:
        try:
            self._record(change)
        finally:  # (a commit that failed: the write puts its files back, which no record matches)
            self._done_intending()

    def _record(self, change: Change) -> None:
        if self._state is not None and self._record_fast(change):
            return
        from ctxgit.guard.install import ensure_repo
        from ctxgit.plumbing.repo import commit_paths, machine_identity, signature
        if self._repo is None:
            self._repo, self._pending = ensure_repo(self.path)
        repo = self._repo
        paths = list(dict.fromkeys(change.paths + self._pending))
        self._pending = []
        exempt = frozenset([f"{e.store}/{e.key}" for e in change.edits] +
                           [p for p in change.paths if not p.startswith("memory/")]) \
            if change.forced else frozenset()
        git = os.path.join(self.root, ".git")
        lastcommit.begin(git, "commit")  # a killed process leaves this: lastcommit.recover
        try:
            committed = commit_paths(repo, paths, message_for(change), signature(repo, change.author),
                                     scan=change.operation != "merge", exempt=exempt,
                                     extra_parents=change.parents, edits=self._known_edits(change))
        finally:
            lastcommit.end(git)
        phases.lap("commit")
        try:  # the commit stands: bookkeeping that fails must not make the write look undone
            if committed:
                self._account(change)
            if not self._unsettled:
                identity = machine_identity(repo)
                lastcommit.save(self.root, list(identity) if identity else None, self._index_is_head())
        except (OSError, StoreError):
            lastcommit.forget(self.root)

    def _index_is_head(self) -> bool:
        """Asked of git once a commit the slow way is made: the next writes commit from the
        index (``gitcommit.commit``'s ``index_is_head``) only while nothing else is staged."""
        from ctxgit.plumbing import gitcommit
        if gitcommit.program() is None or settings.flag("CTX_GIT_SLOW"):
            return False  # (no write takes the one-`git commit` way)
        try:
            return gitcommit.index_is_head(self.root)
        except GitError:
            return False

    def _account(self, change: Change) -> None:
        """Count what the commit added toward the next packing (``pack.account``): the
        bytes of the files it committed, an upper bound of their loose objects'."""
        from ctxgit.plumbing.pack import account
        added = 0
        for path in change.paths:
            content = change.contents.get(path)
            if content is not None:
                added += len(content)
            else:
                try:
                    added += os.stat(os.path.join(self.root, path)).st_size
                except OSError:
                    pass
        account(os.path.join(self.root, ".git"), added)

    def _known_edits(self, change: Change) -> dict[str, list[tuple[str, str, Any, Any]]]:
        """The store files this write changed and nothing else did since HEAD (prepare
        committed or found nothing outside ctx in them), with their edits: the commit's
        credential check reads only those entries."""
        if change.operation == "merge":
            return {}
        out: dict[str, list[tuple[str, str, Any, Any]]] = {}
        for edit in change.edits:
            path = f"memory/{edit.store}.json"
            if path not in self._unsettled:
                out.setdefault(path, []).append((edit.store, edit.key, edit.before, edit.after))
        return out

    def _record_fast(self, change: Change) -> bool:
        """One ``git commit`` of one store file git tracks, the repository as ctx's last
        commit left it (``self._state``); False to take the way through libgit2."""
        from ctxgit.plumbing import gitcommit
        state = self._state
        paths = change.paths
        if state is None or len(paths) != 1 or change.parents or not paths[0].startswith("memory/") \
                or paths[0] not in state["files"] or settings.flag("CTX_GIT_SLOW") or gitcommit.program() is None:
            return False
        operator = state.get("operator")  # this machine's git identity: the committer
        if change.author:
            name, email = author_identity(change.author)
        elif operator:
            name, email = operator
        else:  # no identity set: the operator
            name, email = identity.identity_or_operator("", "")
        author = gitcommit.now_person(name, email)
        committer = gitcommit.Person(*identity.identity_or_operator(*operator), author.time, author.offset) \
            if operator else author
        from hooks.newsecrets import Changed, refuse_new
        if not change.forced:  # the one commit check (the way through libgit2 makes the same)
            content = change.contents.get(paths[0])
            refuse_new([Changed(paths[0], edits=[(e.store, e.key, e.before, e.after) for e in change.edits],
                                after=content if content is not None else
                                lambda: read_bytes(os.path.join(self.root, paths[0])))])
        phases.lap("check")
        git = os.path.join(self.root, ".git")
        # the index as ctx's last commit left it (its identity unchanged): HEAD's, or not
        whole = state.get("index_is_head") is True
        lastcommit.begin(git, "git")
        try:
            committed = gitcommit.commit(self.root, paths, message_for(change), author, committer, whole)
        finally:
            lastcommit.end(git)
        try:  # the commit stands: bookkeeping that fails must not make the write look undone
            if committed:
                self._account(change)
            lastcommit.save(self.root, operator, whole)  # (a commit of the index leaves it HEAD's)
        except (OSError, StoreError):
            lastcommit.forget(self.root)
        return True


def author_identity(author: str) -> tuple[str, str]:
    """The name and email of a ``CTX_AUTHOR`` (email: ``CTX_AUTHOR_EMAIL`` or derived)."""
    return identity.author_identity(author, settings.text("CTX_AUTHOR_EMAIL"))


def recorder_for(root: StrPath):
    """The recorder the front door hands ``Context``: git, unless ``CTX_NO_GIT`` turns it off."""
    if settings.flag("CTX_NO_GIT"):
        from ctx.recorder import NullRecorder
        return NullRecorder()
    return GitRecorder(root)
