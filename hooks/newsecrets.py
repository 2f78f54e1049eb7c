"""The one credential check of a commit: refuse a credential it would add that is new.

Both ways ctx commits call ``refuse_new``: one ``git commit`` (``ctxgit/recorder.py``)
and the way through the repository (``ctxgit/plumbing/repo.py``, ``commit_paths``). Each hands over what
the commit changes, as precisely as it knows it:

- ``Changed(path, edits=...)``: the entries a ctx write changed, before and after,
  when the file was otherwise as the parent commit holds it. Only those entries
  are read, never the file: a write costs what it changes.
- ``Changed(path, before=..., after=...)``: a whole file, its bytes in the parent
  commit and now (a file changed outside ctx, a summary, RULES.md). A store file
  is compared entry by entry (both parsed: the file changed outside ctx), any
  other file as text.

A credential is new when what held it before (the entry, or the file) did not
hold the same secret: an entry stored with ``--force`` and amended since is not
refused again. ``exempt`` names what the write was told to keep (``--force``):
``store/key`` or a path. The check loads neither ``dataclasses`` nor
``subprocess``: every write runs it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

from ctx.credentials import Finding, scan
from ctx.errors import CredentialRefused
from ctx.model import is_stored_stamp, value_text  # (value_text: what a field is scanned as)

ENTRY_FIELDS = ("value", "derivation", "status_note")


class Hit:
    """A finding with where it was: a file and line, and a store entry when known."""

    __slots__ = ("path", "line", "finding", "where")

    def __init__(self, path: str, line: int, finding: Finding, where: str = "") -> None:
        self.path, self.line, self.finding, self.where = path, line, finding, where

    def _fields(self) -> tuple:
        return self.path, self.line, self.finding, self.where

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hit) and other._fields() == self._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Hit(path={self.path!r}, line={self.line}, finding={self.finding!r}, where={self.where!r})"

    def describe(self) -> str:
        """One line of visible text (``ctx scan``, ``ctx-scan``, a refusal): the path, the entry
        and the preview come from files anyone may have named and written
        (tests/reliability/test_visible_printers.py)."""
        from ctx.display import name, visible
        at = f" ({name(self.where)})" if self.where else ""
        return (f"{name(self.path)}:{self.line}{at}: {self.finding.description} "
                f"[{self.finding.rule}] {visible(self.finding.preview)}")


def is_store_path(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return len(parts) >= 2 and parts[-2] == "memory" and parts[-1].endswith(".json")


def entry_findings(key: str, entry: Any, with_key: bool = False) -> list[tuple[str, Finding]]:
    """``(field, finding)`` for every credential in one entry, field by field (``key``:
    the entry's key itself, with ``with_key``)."""
    out = [("key", f) for f in scan(key)] if with_key else []
    if not isinstance(entry, dict):
        return out + [("", f) for f in scan(value_text(entry))]
    for field in list(ENTRY_FIELDS) + [f for f in entry if f not in ENTRY_FIELDS]:
        found = entry.get(field)
        # (a time in the form ctx writes, digits and "-T:Z", holds no credential: every write
        # stamps one, and a rule's keyword such as "00" stands in it, for nothing)
        if found is not None and not (isinstance(found, str) and is_stored_stamp(found)):
            out += [(field, f) for f in scan(value_text(found))]
    return out


class Changed:
    """One file a commit changes: its entries' edits (``(store, key, before, after)``),
    or its bytes before (None: new) and after (None: removed). With ``edits``, ``after``
    is read (a function may give it) only to name the line of a credential found."""

    __slots__ = ("path", "edits", "before", "after")

    def __init__(self, path: str, edits: list[tuple[str, str, Any, Any]] | None = None,
                 before: bytes | None = None, after: bytes | Callable[[], bytes] | None = None) -> None:
        self.path, self.edits, self.before, self.after = path, edits, before, after


def new_hits(changed: Changed, exempt: frozenset[str] = frozenset()) -> list[Hit]:
    """The credentials ``changed`` adds that are new (see the module's docstring)."""
    if changed.path in exempt:
        return []
    if changed.edits is not None:
        hits = [h for store, key, before, after in changed.edits
                for h in _entry_hits(changed.path, store, key, before, after)]
    elif changed.after is None:
        return []
    else:
        after = changed.after() if callable(changed.after) else changed.after
        hits = _file_hits(changed.path, changed.before, after)
    return [h for h in hits if not (h.where and h.where.split()[0] in exempt)]


def _entry_hits(path: str, store: str, key: str, before: Any, after: Any) -> list[Hit]:
    if after is None:
        return []
    found = entry_findings(key, after, with_key=True)
    if not found:
        return []
    known = {f.secret for _, f in entry_findings(key, before, with_key=True)} if before is not None else set()
    return [Hit(path, 0, f, f"{store}/{key}" + (f" {field}" if field else ""))
            for field, f in found if f.secret not in known]


def _entries(raw: bytes | None) -> tuple[dict, dict] | None:
    """A store file's top level and entries, parsed; None when it does not parse as one."""
    if raw is None:
        return {}, {}
    import json
    try:
        data = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    entries = data.get("entries") if isinstance(data, dict) else None
    return (data, entries) if isinstance(entries, dict) else None


def _file_hits(path: str, before: bytes | None, after: bytes) -> list[Hit]:
    if is_store_path(path):
        new, old = _entries(after), _entries(before)
        if new is not None and old is not None:
            store = path.rsplit("/", 1)[-1][:-5]
            hits = []
            for name, value in new[0].items():  # top-level members another implementation keeps
                if name != "entries" and value != old[0].get(name):
                    known = {f.secret for f in scan(value_text(old[0][name]))} if name in old[0] else set()
                    hits += [Hit(path, 1, f, f"{store} (top-level {name})")
                             for f in scan(value_text(value)) if f.secret not in known]
            for key, entry in new[1].items():
                if key not in old[1] or old[1][key] != entry:
                    hits += _entry_hits(path, store, key, old[1].get(key), entry)
            return hits
    text = after.decode("utf-8", "replace")
    known = {f.secret for f in scan(before.decode("utf-8", "replace"))} if before else set()
    return [Hit(path, f.line, f) for f in scan(text) if f.secret not in known]


def refuse_new(changes: Iterable[Changed], exempt: frozenset[str] = frozenset()) -> None:
    """Raise ``CredentialRefused`` naming the first credentials ``changes`` add that are
    new; the entry they are in, when in a store, with the one command that removes it."""
    hits: list[Hit] = []
    texts: dict[str, Any] = {}
    for changed in changes:
        found = new_hits(changed, exempt)
        if found:
            hits += found
            texts[changed.path] = changed.after
    if not hits:
        return
    from ctx.storage.textlayout import entry_line
    for hit in hits:  # the line of an entry, found only now: a write that passes never counts lines
        raw = texts.get(hit.path)
        if callable(raw):
            raw = texts[hit.path] = raw()
        if hit.line == 0 and raw is not None and hit.where and "/" in hit.where:
            hit.line = entry_line(raw, hit.where.split()[0].split("/", 1)[1])
        hit.line = hit.line or 1
    shown = "; ".join(h.describe() for h in hits[:3])
    hint = ""
    named = next((h.where.split()[0] for h in hits if h.where and "/" in h.where.split()[0]), None)
    if named:
        store, _, key = named.partition("/")
        hint = f"; remove it with `ctx delete {key} --store {store}`"
    raise CredentialRefused(f"refusing to commit a credential: {shown}{hint}", hits)
