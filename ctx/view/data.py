"""What the operator's view shows, as plain records, and what of a value is safe to show.

The git layer fills these (``ctxgit/porcelain/viewdata.py``); ``page.py``
renders them. Entries are written by agents, so nothing here is trusted:

* a value written with ``--force`` past the credential check is never shown
  whole, only ``redact``'s preview (its first characters and its length),
  in the version that wrote it and in every later version of the entry
  until the entry is deleted (an amend keeps the old value under its note);
* every other text shown (values, notes, keys, tags, subjects, summaries) is
  scanned (``ctx.credentials.scan``) and each finding replaced by its
  ``redact``ed preview.

Escaping for HTML is the renderer's, at the last moment (``page.esc``).
"""

from __future__ import annotations

from datetime import datetime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

from ctx import model
from ctx.credentials import redact, scan
from ctx.model import Entry

FORCED_NOTE = "stored with --force: not shown"
FORCED_SUBJECT = "(value not quoted: stored with --force)"
FREE_TEXT = ("value", "status_note", "derivation")  # the fields a forced write may have put a secret in


class Commit:
    """One commit of the audit: who, when, which operation on which entries."""

    __slots__ = ("id", "time", "author", "email", "operation", "stores", "keys", "subject", "forced")

    def __init__(self, id: str, time: datetime, author: str, email: str, operation: str,
                 stores: list[str], keys: list[str], subject: str, forced: bool = False) -> None:
        self.id, self.time, self.author, self.email, self.operation = id, time, author, email, operation
        self.stores, self.keys, self.subject, self.forced = stores, keys, subject, forced

    @property
    def short(self) -> str:
        return self.id[:8]

    def where(self) -> str:
        """``store/key`` for a commit that names one entry; else what its trailers name."""
        if len(self.keys) == 1:
            key = self.keys[0]
            return key if "/" in key and not self.stores else f"{(self.stores or ['?'])[0]}/{key}"
        if self.keys:
            return f"{len(self.keys)} entries"
        return ""


class Version:
    """One version of an entry: the commit that made it, the entry after it (None: deleted)
    and before it (None: created). ``known`` is False when only the commit's trailers say
    that this commit changed the entry (its fields were not read: ``ctx history KEY``
    shows them); ``forced``: its free text came from a write made with ``--force``."""

    __slots__ = ("commit", "store", "key", "entry", "before", "known", "forced")

    def __init__(self, commit: Commit, store: str, key: str, entry: Entry | None,
                 before: Entry | None, known: bool = True) -> None:
        self.commit, self.store, self.key, self.entry, self.before = commit, store, key, entry, before
        self.known, self.forced = known, False

    @property
    def event(self) -> str:
        if self.known and self.entry is None:
            return "deleted"
        if self.known and self.before is None:
            return "created"
        return self.commit.operation or "changed"


class Sync:
    """The upstream: its remote and branch, commits ahead and behind (None: never fetched),
    and the last sync: when, and how it ended when ctx recorded it. ``remote`` None: no
    remote can be chosen, and ``problem`` says why."""

    __slots__ = ("remote", "branch", "ahead", "behind", "last", "result", "problem")

    def __init__(self, remote: str | None, branch: str | None, ahead: int | None, behind: int | None,
                 last: datetime | None, result: str | None = None, problem: str | None = None) -> None:
        self.remote, self.branch, self.ahead, self.behind, self.last = remote, branch, ahead, behind, last
        self.result, self.problem = result, problem


class ViewData:
    """Everything the page shows from git, at one commit (``head``; None: no commit yet).

    ``entries``: store -> key -> entry at ``head``; ``versions``: (store, key) -> its
    versions newest first, for every entry the walk saw (deleted ones too);
    ``commits``: the commits the page lists (``since``/``author`` applied), newest
    first; ``total``: every commit reachable from HEAD.
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self.head: Commit | None = None
        self.entries: dict[str, dict[str, Entry]] = {s: {} for s in model.STORES}
        self.versions: dict[tuple[str, str], list[Version]] = {}
        self.commits: list[Commit] = []
        self.total = 0
        self.empty = 0           # commits naming one entry that changed nothing (after a purge)
        self.read_versions = 0   # versions whose fields were read from git
        self.sync: Sync | None = None
        self.since: datetime | None = None
        self.author: str | None = None
        self.notes: list[str] = []
        # (store, key) -> (sessions it reached, when last): the shown log (ctx/shown.py)
        self.shown: dict[tuple[str, str], tuple[int, str]] = {}

    def counts(self) -> dict[str, int]:
        return {s: len(self.entries.get(s, {})) for s in model.STORES}


# --- what is safe to show -----------------------------------------------------------------

_SCANNED: set[str] = set()   # texts scanned already, alone or in a batch
_SECRETS: set[str] = set()   # what the scans found
_BATCH = 1 << 20             # characters scanned in one call


def reset() -> None:
    """Forget what was scanned (a page starts from nothing)."""
    _SCANNED.clear()
    _SECRETS.clear()


def prescan(texts: Iterable[str]) -> None:
    """Scan many texts in a few calls (joined by blank lines): ``clean`` then only
    replaces what was found. A credential is found in the joined text wherever it would
    be found alone; what a join finds besides is redacted too, never shown."""
    batch: list[str] = []
    size = 0
    pending: set[str] = set()  # each text once: a value stands in its entry and in its versions
    for text in texts:
        if text and text not in _SCANNED and text not in pending:
            pending.add(text)
            batch.append(text)
            size += len(text)
            if size >= _BATCH:
                _scan_batch(batch)
                batch, size = [], 0
    if batch:
        _scan_batch(batch)


def _scan_batch(batch: list[str]) -> None:
    _SECRETS.update(f.secret for f in scan("\n\n".join(batch)) if f.secret)
    _SCANNED.update(batch)


def clean(text: str) -> str:
    """``text`` with every credential ``scan`` finds replaced by its redacted preview."""
    if not text:
        return text
    if text not in _SCANNED:
        _SECRETS.update(f.secret for f in scan(text) if f.secret)
        if len(_SCANNED) > 200_000:
            _SCANNED.clear()
        _SCANNED.add(text)
    if _SECRETS:
        for secret in sorted(_SECRETS, key=len, reverse=True):  # the longest first: a part never hides it
            if secret in text:
                text = text.replace(secret, redact(secret))
    return text


def texts(data: ViewData) -> Iterator[str]:
    """The texts of ``data`` the page may show (for ``prescan``)."""
    value_text = model.value_text
    entries = [e for store in data.entries.values() for e in store.values()]
    entries += [e for vs in data.versions.values() for v in vs if v.known for e in (v.entry, v.before) if e]
    for entry in entries:
        for name in FREE_TEXT:
            field = entry.get(name)
            if field is not None:
                yield field if isinstance(field, str) else value_text(field)
        tags = entry.get("tags")
        if tags and isinstance(tags, list):
            yield from map(str, tags)
    for store in data.entries.values():
        yield from store  # the keys
    for c in data.commits:
        yield c.subject
        yield c.author


def forced_preview(value: Any) -> str:
    """What is shown of a value written with ``--force``: a preview, never the value."""
    return f"{redact(model.value_text(value))} ({FORCED_NOTE})"


def shown(value: Any, forced: bool) -> str:
    """A field's text as the page shows it: a preview when forced, else cleaned."""
    if value is None:
        return ""
    if forced:
        return forced_preview(value)
    return clean(model.value_text(value))


def subject_forced(subject: str, operation: str | None, where: str) -> bool:
    """The subject of a write made with ``--force`` (``recorder.message_for`` never quotes
    its value, nor an amend's note)."""
    if subject.endswith(FORCED_SUBJECT):
        return True
    return operation == "amend" and subject == f"amend {where}"


def mark_forced(versions: list[Version]) -> None:
    """Set ``forced`` on each version (newest first) whose free text a ``--force`` write
    made: that write's version and every later one that kept its value (an amend, a
    resolve, a basis), until a ``set`` without ``--force`` (which passed the credential
    check) or a deletion."""
    tainted = False
    for version in reversed(versions):
        c = version.commit
        if version.known and version.entry is None:
            tainted = False
        elif c.forced and _names(c, version.store, version.key):
            tainted = True
        elif c.operation == "resolve" and version.known and version.entry is not None \
                and version.entry.get("status_note") and c.subject == f"resolve {version.store}/{version.key}":
            tainted = True  # a resolve whose note the subject left out: written with --force
        elif c.operation == "set":
            tainted = False
        version.forced = tainted


def _names(commit: Commit, store: str, key: str) -> bool:
    """The forced commit wrote this entry (a forced commit of several entries taints them all)."""
    return not commit.keys or key in commit.keys or f"{store}/{key}" in commit.keys
