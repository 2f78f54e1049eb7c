"""The git side of ctx's one write path: one commit per write, under the lock.

``Context.transact`` calls ``prepare`` after taking the lock (commit whatever
changed on disk outside ctx, as ``system``) and ``record`` after the atomic
store write (commit the write itself, as its author).

Two ways to commit, one result: when the repository is exactly as ctx's
last commit left it and the write changed one store file, ``fastcommit``
writes the commit in plain git formats without loading libgit2; otherwise
libgit2 (pygit2) does, and repairs and records what it finds.

Either way, the author is who wrote the entry (``CTX_AUTHOR``, else the
operator) and the committer the account that committed it (this machine's git
identity, the author when none is set); when git is told to sign
(``commit.gpgsign``), the commit is signed as git signs it
(``plumbing/signing.py``), and a signer that fails fails the write.
"""

from __future__ import annotations

import os

from ctx import phases, settings
from ctx.changes import Change
from ctx.display import excerpt
from ctx.errors import CredentialRefused, GitError, StoreError
from ctx.storage.files import atomic_write, identity_of, is_link, parse_store, read_bytes, remove
from ctxgit.gitfiles import identity
from ctxgit.gitfiles.layout import BRANCH_REF, WRITING
from ctxgit.plumbing import fastcommit, slowness

TYPE_CHECKING = False  # pygit2 loads only when the fast commit cannot be used
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
    """Commits each write to the context root's own repository. The fast commit works on
    ``root`` as it is given (a ``str`` from the front door: a write needs no pathlib);
    the libgit2 way on ``path``."""

    def __init__(self, root: StrPath) -> None:
        self.root = root
        self._repo: pygit2.Repository | None = None
        self._pending: list[str] = []
        self._state: dict | None = None
        self._unsettled: set[str] = set()  # managed files prepare left unlike HEAD
        self._why_slow = ""
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
        recovered = fastcommit.recover(self.root)  # lock files a killed ctx commit left
        if recovered:
            self.warnings.append(f"warning: removed {', '.join(recovered)} left by an interrupted ctx commit")
        if settings.flag("CTX_GIT_SLOW"):
            self._why_slow = "CTX_GIT_SLOW is set"
        else:
            self._state, self._why_slow = fastcommit.check_state(self.root)
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
            self._settled_fast(repo)
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
        self._settled_fast(repo)

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

    def _settled_fast(self, repo) -> None:
        """Once what changed outside ctx is committed and nothing else is pending, the
        write's own commit can still be the fast one: record the state libgit2 left."""
        if self._pending or self._unsettled or settings.flag("CTX_GIT_SLOW"):
            return
        try:
            remember(repo)
        except OSError:
            return
        self._state, self._why_slow = fastcommit.check_state(self.root)

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
            slowness.fast(self.root)
            return
        from ctxgit.guard.install import ensure_repo
        from ctxgit.plumbing import pack
        from ctxgit.plumbing.repo import commit_paths, signature
        if self._repo is None:
            self._repo, self._pending = ensure_repo(self.path)
        repo = self._repo
        paths = list(dict.fromkeys(change.paths + self._pending))
        self._pending = []
        exempt = frozenset([f"{e.store}/{e.key}" for e in change.edits] +
                           [p for p in change.paths if not p.startswith("memory/")]) \
            if change.forced else frozenset()
        git = os.path.join(self.root, ".git")
        fastcommit.begin_commit(git, "libgit2")  # a killed process leaves this: fastcommit.recover
        try:
            oid = commit_paths(repo, paths, message_for(change), signature(repo, change.author),
                               scan=change.operation != "merge", exempt=exempt,
                               extra_parents=change.parents, edits=self._known_edits(change))
        finally:
            fastcommit.end_commit(git)
        phases.lap("commit")
        if change.edits:
            slowness.slow(self.root, self._why_slow or "the write changed more than one store file")
        try:  # the commit stands: bookkeeping that fails must not make the write look undone
            if oid is not None:
                pack.after_commit(repo, oid)
            remember(repo)
        except OSError:
            fastcommit.forget_state(self.root)

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
        """The commit without libgit2, for one changed store file; False to fall back."""
        state = self._state
        paths = [p for p in change.paths]
        if state is None or len(paths) != 1 or change.parents or not paths[0].startswith("memory/"):
            self._why_slow = self._why_slow or ("a merge" if change.parents else
                                                "the write changed a file other than one store")
            return False
        operator = state.get("operator")  # this machine's git identity: the committer
        if change.author:
            name, email = author_identity(change.author)
        elif operator:
            name, email = operator
        else:  # no identity set: the operator, as libgit2's way signs it
            name, email = identity.identity_or_operator("", "")
        content = change.contents.get(paths[0])
        if content is None:
            content = read_bytes(os.path.join(self.root, paths[0]))
        from hooks.newsecrets import Changed, refuse_new
        if not change.forced:  # the one commit check (libgit2's way makes the same)
            refuse_new([Changed(paths[0], edits=[(e.store, e.key, e.before, e.after) for e in change.edits],
                                after=content)])
        phases.lap("check")
        done = fastcommit.commit_store(self.root, state, paths[0], content, message_for(change),
                                       name, email, tuple(operator) if operator else None,
                                       change.replaced.get(paths[0]))
        phases.lap("commit")
        if done is None:
            self._why_slow = "git's lock files were held, or the store file changed while committing"
            return False
        from ctxgit.plumbing.pack import account
        try:
            account(os.path.join(self.root, ".git"), done[1])
        except OSError:
            pass
        return True


def author_identity(author: str) -> tuple[str, str]:
    """The name and email of a ``CTX_AUTHOR`` (email: ``CTX_AUTHOR_EMAIL`` or derived)."""
    return identity.author_identity(author, settings.text("CTX_AUTHOR_EMAIL"))


def remember(repo) -> None:
    """Record the repository as libgit2 just left it, for the next fast commit."""
    import pygit2
    root = repo.workdir
    try:
        if repo.head_is_unborn or repo.head.name != BRANCH_REF:
            fastcommit.forget_state(root)
            return
        head = repo.head.peel(pygit2.Commit)
        tree = head.tree
        root_tree = [[f"{e.filemode:o}", e.name, str(e.id)] for e in tree]
        memory = [[f"{e.filemode:o}", e.name, str(e.id)] for e in repo[tree["memory"].id]] \
            if "memory" in tree else []
        index = repo.index
        index.read(False)
        if any(index[p].id != _tree_blob(repo, tree, p) for p in (e.path for e in index)):
            fastcommit.forget_state(root)  # something is staged: not the state of a clean commit
            return
        blobs = {e.path: str(e.id) for e in index}
        from hooks.unsafe_paths import forbidden
        if any(forbidden(path) for path in blobs):
            fastcommit.forget_state(root)  # (a pull brought a lock or temporary file): libgit2 takes it out
            return
        from ctxgit.plumbing.repo import machine_identity
        from ctxgit.plumbing.signing import signing_config
        identity = machine_identity(repo)
        operator = list(identity) if identity else None
        fastcommit.save_state(root, str(head.id), root_tree, memory, blobs, operator,
                              signing_config(repo.config))
    except (pygit2.GitError, KeyError, OSError, ValueError):
        fastcommit.forget_state(root)


def _tree_blob(repo, tree, path: str):
    try:
        return tree[path].id
    except KeyError:
        return None


def recorder_for(root: StrPath):
    """The recorder the front door hands ``Context``: git, unless ``CTX_NO_GIT`` turns it off."""
    if settings.flag("CTX_NO_GIT"):
        from ctx.recorder import NullRecorder
        return NullRecorder()
    return GitRecorder(root)
