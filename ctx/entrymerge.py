"""Entry-level three-way merge: stores merged per entry and field, never per line.

The rules, each symmetric in "ours" and "theirs" so two machines merging the
same histories compute the same bytes:

- a key on one side only is kept; a key deleted on one side and changed on
  the other keeps the change; deleted on one side and untouched on the
  other is deleted;
- a key changed on both sides is merged field by field: a field changed on
  one side only takes that change; the status fields move as one group;
  where both sides changed the same field, the side with the later
  ``timestamp`` wins (ties: the greater canonical JSON text), and a value
  lost that way is listed (it stays in history); ``created`` is the
  earliest, ``timestamp`` the latest; unknown fields survive;
- entries keep the ancestor's order, then new keys by (created, key).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctx import model
from ctx.errors import Conflict, StoreError
from ctx.model import Entry
from ctx.storage.files import FORMAT_VERSION, parse_store
from ctx.storage.textlayout import serialize_reusing

STATUS_GROUP = ("status", "status_timestamp", "status_note", "superseded_by")
_MISSING = object()


@dataclass
class StoreMerge:
    data: dict[str, Any]
    value_conflicts: list[str] = field(default_factory=list)


def _canonical(entry: Entry) -> str:
    return json.dumps(entry, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _later(a: Entry, b: Entry, ties_to_b: bool = False) -> bool:
    """True when ``a`` wins over ``b``: the later timestamp, then (``ties_to_b``: ``b``) the
    greater text."""
    ka, kb = model.ts_key(a.get("timestamp")), model.ts_key(b.get("timestamp"))
    if ka != kb:
        return ka > kb
    return False if ties_to_b else _canonical(a) >= _canonical(b)


_UNDECIDED = object()


def _settled(base: Any, ours: Any, theirs: Any) -> Any:
    """The three-way result when at most one side changed; ``_UNDECIDED`` when both did."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return _UNDECIDED


def _pick(base: Any, ours: Any, theirs: Any, winner_value: Any) -> tuple[Any, bool]:
    """Three-way pick of one value; True in the second place for a real conflict."""
    settled = _settled(base, ours, theirs)
    return (winner_value, True) if settled is _UNDECIDED else (settled, False)


def merge_entry(base: Entry | None, ours: Entry | None, theirs: Entry | None,
                *, ties_to_theirs: bool = False) -> tuple[Entry | None, bool]:
    """The merged entry (None: deleted) and whether both sides changed the value.

    ``ties_to_theirs``: on equal timestamps "theirs" wins, not the greater text. An import
    passes it: what it brings in is the newer act, though not symmetric as sync must be
    (tests/features/test_exchange.py::test_a_same_second_reimport_takes_the_file_s_value)."""
    settled = _settled(base, ours, theirs)
    if settled is not _UNDECIDED:
        return settled, False
    if ours is None:
        return theirs, False  # deleted here, changed there: the change is kept
    if theirs is None:
        return ours, False
    base = base or {}
    winner, loser = (ours, theirs) if _later(ours, theirs, ties_to_theirs) else (theirs, ours)
    names = list(winner) + [n for n in loser if n not in winner]
    merged: dict[str, Any] = {}
    value_conflict = False
    for name in names:
        if name in STATUS_GROUP:
            continue
        b, o, t = base.get(name, _MISSING), ours.get(name, _MISSING), theirs.get(name, _MISSING)
        if name == "created":  # the earliest; the same instant spelled twice: the smaller text
            present = [v for v in (o, t) if v is not _MISSING]
            value = min(present, key=lambda v: (model.ts_key(v), str(v))) if present else _MISSING
        elif name == "timestamp":
            present = [v for v in (o, t) if v is not _MISSING]
            value = max(present, key=lambda v: (model.ts_key(v), str(v))) if present else _MISSING
        else:
            value, clash = _pick(b, o, t, winner.get(name, _MISSING))
            value_conflict |= clash and name == "value"
        if value is not _MISSING:
            merged[name] = value
    groups = [tuple(e.get(n, _MISSING) for n in STATUS_GROUP) for e in (base, ours, theirs)]
    later_status = max((ours, theirs), key=lambda e: (model.ts_key(e.get("status_timestamp")),
                                                        e is winner))
    group, _ = _pick(groups[0], groups[1], groups[2],
                     tuple(later_status.get(n, _MISSING) for n in STATUS_GROUP))
    for name, value in zip(STATUS_GROUP, group, strict=True):
        if value is not _MISSING:
            merged[name] = value
    ordered = {n: merged[n] for n in names if n in merged}
    return ordered, value_conflict


def _check_version(data: dict[str, Any] | None, side: str, path: str) -> None:
    if data is not None and data.get("version") != FORMAT_VERSION:
        raise Conflict(f"{path} from {side} has format version {data.get('version')!r}, "
                       f"not {FORMAT_VERSION!r}: ctx will not merge it")


def merge_store(base: dict[str, Any] | None, ours: dict[str, Any] | None,
                theirs: dict[str, Any] | None, path: str = "store") -> StoreMerge:
    """Merge three parsed store files (None: the file is absent on that side)."""
    for data, side in ((base, "the ancestor"), (ours, "here"), (theirs, "the remote")):
        _check_version(data, side, path)
    present = [d for d in (ours, theirs, base) if d is not None]
    b_entries = (base or {}).get("entries", {})
    o_entries = (ours or {}).get("entries", {})
    t_entries = (theirs or {}).get("entries", {})
    out_entries: dict[str, Entry] = {}
    conflicts: list[str] = []
    new_keys = []
    for key in b_entries:
        merged, clash = merge_entry(b_entries.get(key), o_entries.get(key), t_entries.get(key))
        if merged is not None:
            out_entries[key] = merged
        if clash:
            conflicts.append(key)
    for key in list(o_entries) + [k for k in t_entries if k not in o_entries]:
        if key in b_entries:
            continue
        merged, clash = merge_entry(None, o_entries.get(key), t_entries.get(key))
        if merged is not None:
            new_keys.append((model.ts_key(merged.get("created")), key, merged))
        if clash:
            conflicts.append(key)
    for _, key, merged in sorted(new_keys, key=lambda row: (row[0], row[1])):
        out_entries[key] = merged
    top: dict[str, Any] = {}
    # the ancestor's order, then keys new on either side by name: the same on both machines
    names = [n for n in (base or {})] + sorted({n for d in present for n in d} - set(base or {}))
    for name in names:
        if name == "entries":
            top[name] = out_entries
        elif name == "last_updated":
            stamps = [d.get(name) for d in (ours, theirs) if d is not None and d.get(name)]
            top[name] = max(stamps, key=lambda v: (model.ts_key(v), str(v))) if stamps else None
        else:
            b = (base or {}).get(name, _MISSING)
            o = (ours or {}).get(name, _MISSING)
            t = (theirs or {}).get(name, _MISSING)
            sides = [d for d in (ours, theirs) if d is not None and name in d]
            later = max(sides, key=lambda d: (model.ts_key(d.get("last_updated")),
                                              _canonical({"v": d.get(name)}))) if sides else {}
            value, _ = _pick(b, o, t, later.get(name, _MISSING))
            if value is not _MISSING:
                top[name] = value
    top.setdefault("entries", out_entries)
    return StoreMerge(top, conflicts)


def parse(data: bytes | None, path: str, side: str = "one side") -> dict[str, Any] | None:
    """One side's store file, checked as a local one is (JSON, no NaN, no key written
    twice) and of the format version ctx writes."""
    if data is None:
        return None
    try:
        parsed = parse_store(Path(path).stem, str(path), data).data
    except StoreError as exc:
        raise Conflict(f"{path} from {side}: {exc}; ctx will not merge it") from None
    if parsed.get("version") != FORMAT_VERSION:
        raise Conflict(f"{path} from {side} has format version {parsed.get('version')!r}, not "
                       f"{FORMAT_VERSION!r}: ctx will not merge it")
    return parsed


def merge_store_sides(base: bytes | None, ours: bytes | None, theirs: bytes | None, path: str = "store",
                      parsed: list[dict[str, Any] | None] | None = None
                      ) -> tuple[bytes, list[str], dict[str, Any]]:
    """Merge three store files that all differ: the merged bytes, the value conflicts,
    and the merged data. ``parsed``: the sides already parsed (base, ours, theirs; None
    where not), not parsed again. An entry taken unchanged from a side keeps that
    side's text: only the entries the merge changed are serialized anew (the bytes are
    those ``serialize`` writes)."""
    given = parsed or [None, None, None]
    sides = [given[i] if given[i] is not None else parse(raw, path, side)
             for i, (raw, side) in enumerate(((base, "the ancestor"), (ours, "here"), (theirs, "the remote")))]
    result = merge_store(sides[0], sides[1], sides[2], path)
    reuse = [(raw, data) for raw, data in ((ours, sides[1]), (theirs, sides[2]), (base, sides[0]))
             if raw is not None and data is not None]
    return serialize_reusing(result.data, reuse), result.value_conflicts, result.data


def merge_store_bytes(base: bytes | None, ours: bytes | None, theirs: bytes | None,
                      path: str = "store") -> tuple[bytes | None, list[str]]:
    """Merge three store files' bytes; returns the merged bytes and the value conflicts."""
    if ours == theirs:
        return ours, []
    if ours == base:
        parse(theirs, path, "the remote")  # taken whole: checked as if merged
        return theirs, []
    if theirs == base:
        return ours, []
    merged, conflicts, _ = merge_store_sides(base, ours, theirs, path)
    return merged, conflicts
