"""Export of the stores to one JSON file, and import from one (spec §10, optional).

An export file is::

    {"format": "ctx-export", "version": "1", "exported": "<RFC 3339>",
     "stores": {"<store>": {"type": ..., "version": "1", "last_updated": ...,
                            "entries": {...}, <other top-level keys>}}}

Each store's object is its store file's top-level object as it is on disk.

Import merges entry by entry with the rules sync uses (``ctx.entrymerge``),
but an import has no common ancestor, so nothing in it can be read as a
deletion:

- a key only in the context is kept (an import never deletes);
- a key only in the file is added, as it is in the file;
- a key on both sides with the same content is kept;
- a key on both sides with different content is merged field by field by
  ``merge_entry(None, ours, theirs)``, as sync merges a key both sides
  added: a field present on one side only is taken; where both sides hold
  different values, the side with the later ``timestamp`` wins, the file's
  on a tie (a lost value is reported as a conflict); ``created`` is the earliest and
  ``timestamp`` the latest. A status set on either side is kept: without
  an ancestor, a cleared status cannot be told from one never set.

Only the stores' entries are imported; other top-level keys are exported
for reference and left as they are in the context.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctx import arrival, model
from ctx.credentials import scan
from ctx.errors import CredentialRefused, InvalidArgument
from ctx.model import STORES, Entry

FORMAT = "ctx-export"
VERSION = "1"
SCANNED_FIELDS = ("value", "derivation", "status_note")


def export_data(context, store: str | None = None) -> dict[str, Any]:
    """The export object of every store, or of one (reads only)."""
    stores = {s.name: s.data for s in context.stores(store)}
    return {"format": FORMAT, "version": VERSION, "exported": model.now(), "stores": stores}


def export_bytes(context, store: str | None = None) -> bytes:
    return (json.dumps(export_data(context, store), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def parse_export(raw: bytes, source: str = "the file") -> dict[str, dict[str, Entry]]:
    """The entries of each store in an export file; refuses what it does not know."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidArgument(f"{source}: not a JSON export file ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise InvalidArgument(f"{source}: format {found!r} is not {FORMAT!r}; ctx imports only "
                              "files written by `ctx export`")
    if data.get("version") != VERSION:
        raise InvalidArgument(f"{source}: export version {data.get('version')!r} is not "
                              f"{VERSION!r}; this ctx does not know it")
    stores = data.get("stores")
    if not isinstance(stores, dict):
        raise InvalidArgument(f"{source}: 'stores' is not an object")
    out: dict[str, dict[str, Entry]] = {}
    for name, body in stores.items():
        if name not in STORES:
            raise InvalidArgument(f"{source}: unknown store {name!r}: use one of {', '.join(STORES)}")
        if not isinstance(body, dict) or not isinstance(body.get("entries", {}), dict):
            raise InvalidArgument(f"{source}: store {name!r} has no 'entries' object")
        if body.get("version", VERSION) != VERSION:
            raise InvalidArgument(f"{source}: store {name!r} has format version "
                                  f"{body.get('version')!r}, not {VERSION!r}")
        entries = body.get("entries", {})
        for key, entry in entries.items():
            try:
                model.validate_key(key)
            except InvalidArgument as exc:
                raise InvalidArgument(f"{source}: {name}/{key!r}: {exc}") from None
            if not isinstance(entry, dict) or "value" not in entry:
                raise InvalidArgument(f"{source}: {name}/{key} is not an entry (an object with a value)")
        out[name] = entries
    arrival.check_stores(out, side=source)  # as a remote's entries are: no future time, one-line fields
    return out


@dataclass
class ImportPlan:
    """What an import does, per store: the merged entries and what changed."""

    added: list[tuple[str, str]] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    results: dict[tuple[str, str], tuple[Entry | None, Entry]] = field(default_factory=dict)

    def as_json(self, dry_run: bool) -> dict[str, Any]:
        def rows(pairs):
            return [{"store": s, "key": k} for s, k in pairs]
        return {"dry_run": dry_run, "added": rows(self.added), "changed": rows(self.changed),
                "kept": rows(self.kept), "conflicts": rows(self.conflicts)}


def plan_import(current: dict[str, dict[str, Entry]],
                incoming: dict[str, dict[str, Entry]]) -> ImportPlan:
    """Merge ``incoming`` into ``current`` (store -> entries), without changing either."""
    from ctx.entrymerge import merge_entry
    plan = ImportPlan()
    for store in STORES:
        for key, theirs in incoming.get(store, {}).items():
            ours = current.get(store, {}).get(key)
            where = (store, key)
            if ours is None:
                plan.added.append(where)
                plan.results[where] = (None, theirs)
                continue
            merged, clash = merge_entry(None, ours, theirs, ties_to_theirs=True)
            assert merged is not None
            if merged == ours:
                plan.kept.append(where)
                continue
            plan.changed.append(where)
            plan.results[where] = (ours, merged)
            if clash:
                plan.conflicts.append(where)
    return plan


def refuse_credentials(plan: ImportPlan) -> None:
    """Refuse an import that would bring in a credential (§11)."""
    for (store, key), (before, after) in plan.results.items():
        for name in SCANNED_FIELDS:
            content = after.get(name)
            if content is None or (before is not None and before.get(name) == content):
                continue
            findings = scan(model.value_text(content))
            if findings:
                raise CredentialRefused(
                    f"{store}/{key}: the imported {name} looks like it holds a credential "
                    f"({findings[0].description}: {findings[0].preview}); credentials must not be "
                    "stored in ctx. Use --force if it is not a secret", findings)


def typed_by_the_importer(context, plan: ImportPlan) -> None:
    """What an agent (``CTX_AUTHOR`` set) imports is the agent's write, as a ``ctx set`` of
    it would be: each entry it adds or changes gets the agent as its ``author``, and passes
    the store policy (``enforce-stores``, ``ctx/policy.py``) with the source it has.

    The ``source`` an entry has in the file is kept, ``operator`` included. §3.4 separates
    the two fields: ``source`` says whose knowledge it is, ``author`` who typed it in, and
    "an agent records an instruction the operator gave" is exactly ``source: operator`` with
    the agent as ``author``; §3.1 lets an agent write the operator store with that source.
    Making it ``agent`` would say the operator's words are the agent's when an agent moves
    the operator's own export between contexts, and ``system`` (§3.4: a tool on its own) is
    not what happened either: an agent chose to import. The author is what keeps it honest:
    the brief names who typed every standing instruction an agent wrote
    (tests/reliability/test_operator_voice.py). An import by the operator (no
    ``CTX_AUTHOR``) keeps the file's authors: the operator vouches for the file.
    """
    if not context.author:
        return
    for where, (before, after) in list(plan.results.items()):
        stamped = dict(after)
        stamped["author"] = context.author
        context.check_policy(where[0], stamped.get("source") if isinstance(stamped.get("source"), str) else None)
        plan.results[where] = (before, stamped)


def run_import(context, incoming: dict[str, dict[str, Entry]], *, dry_run: bool = False,
               force: bool = False) -> ImportPlan:
    """Import as one commit (operation ``import``); with ``dry_run``, write nothing."""
    if dry_run:
        current = {s.name: s.entries for s in context.stores()}
        plan = plan_import(current, incoming)
        typed_by_the_importer(context, plan)
        if not force:
            refuse_credentials(plan)
        return plan
    from ctx.changes import Edit, Outcome
    done: list[ImportPlan] = []

    def mutate(stores) -> Outcome:
        plan = plan_import({name: s.entries for name, s in stores.items()}, incoming)
        typed_by_the_importer(context, plan)
        if not force:
            refuse_credentials(plan)
        edits = []
        for (store, key), (before, after) in plan.results.items():
            stores[store].entries[key] = after
            edits.append(Edit(store, key, before, after))
        done.append(plan)
        subject = f"import: {len(plan.added)} added, {len(plan.changed)} changed"
        return Outcome(edits, subject=subject)

    names = [s for s in STORES if s in incoming]
    context.transact("import", names, mutate, forced=force)
    return done[0] if done else ImportPlan()


def read_import_file(path: str) -> tuple[bytes, str]:
    """The bytes of FILE and the name to report it by (``-``, stdin, is the front door's to read)."""
    try:
        return Path(path).read_bytes(), path
    except FileNotFoundError:
        from ctx.errors import NotFound
        raise NotFound(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InvalidArgument(f"{path}: is a directory, not an export file") from None
