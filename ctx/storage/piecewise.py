"""An arriving store file proved piece by piece, so a big store's sync parses only what changed.

A store file in ctx's layout (``textlayout.split_pieces``) is a head, an entries
object and a tail; inside the object, entries are separated by ``,\\n    "``, which no
JSON string can hold (no raw newline). Cut there, each piece should be one entry's
member text. A piece is *proved* when ``{"`` + piece + ``}`` parses, strictly, to one
member whose value is an object: no NaN, no key twice in any object, valid UTF-8, no
deeper than ``DEPTH``. That proof depends on the piece's bytes alone, so it is kept by
their digest (``ctxgit/sync/verified.py`` keeps the digests between syncs) and never
made twice.

When the head and tail parse as the top level around an entries object (the head
ends at the top level's ``"entries": ``), every piece is proved and no key is in two
pieces, the whole file parses (as ``entrymerge.parse`` reads it) to that top level
with the pieces' entries in order: a JSON object is its members joined by commas.
An entry whose piece is one of the base's (same digest) is the base's entry,
unchanged, and is not checked; every other entry is. Whatever cannot be proved so
(another layout, a piece that is not one whole entry, a doubt of any kind) is read
the plain way, by one whole parse, which also says what is wrong: both ways refuse
exactly the same files (``tests/reliability/test_guard_pieces.py``, a differential
test of ``changes(..., fast=True)`` against ``changes(..., fast=False)``).

Core: imports neither ctxgit nor the front door.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctx.entrymerge import parse as parse_whole
from ctx.errors import Conflict
from ctx.jsoncodec import loads
from ctx.storage.files import FORMAT_VERSION
from ctx.storage.textlayout import split_pieces

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping
    from typing import Any

# a piece nested deeper is read the plain way: the whole parse's own bound (the interpreter's
# recursion limit, which depends on the caller's stack) then decides, never this module's
DEPTH = 64


class _Doubt(Exception):
    """Something the whole parse may refuse: that parse decides."""


def _pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
    made = dict(items)
    if len(made) != len(items):
        raise _Doubt  # a key twice: the whole parse refuses it
    return made


def _constant(name: str) -> Any:
    raise _Doubt  # NaN, Infinity: not JSON


def _strict(raw: bytes) -> Any:
    """``raw`` parsed as a store file is (UTF-8, JSON, no constant, no key twice), or None."""
    try:
        return loads(raw.decode("utf-8"), object_pairs_hook=_pairs, parse_constant=_constant)
    except (ValueError, RecursionError, _Doubt):  # UnicodeDecodeError is a ValueError
        return None


def _shallow(value: Any) -> bool:
    """``value`` nests no deeper than ``DEPTH``."""
    level: list[Any] = [value]
    for _ in range(DEPTH):
        level = [item for v in level if isinstance(v, (dict, list))
                 for item in (v.values() if isinstance(v, dict) else v)]
        if not level:
            return True
    return False


def digests(pieces: list[bytes]) -> list[bytes]:
    """Each piece's name among proved pieces: its SHA-256 (a remote chooses the bytes, so no
    cheap hash; with the CPU's SHA instructions the fastest of hashlib's)."""
    import hashlib  # (here: the core's hot paths never prove a piece)
    sha256 = hashlib.sha256
    return [sha256(piece).digest() for piece in pieces]


def prove_piece(piece: bytes) -> tuple[str, Any] | None:
    """The one entry a piece holds, or None when it is not exactly one whole entry."""
    value = _strict(b'{"' + piece + b"}")
    if not isinstance(value, dict) or len(value) != 1:
        return None
    (key, entry), = value.items()
    if not isinstance(entry, dict) or not _shallow(entry):
        return None
    return key, entry


def _top(head: bytes, tail: bytes) -> dict[str, Any] | None:
    """The top level around the entries object (left empty), or None: ``head`` must end
    at the top level (``0}`` closes it) and the format version must be ctx's."""
    if not isinstance(_strict(head + b"0}"), dict):
        return None  # "entries" inside another member: not where a store keeps them
    top = _strict(head + b"{}" + tail)
    if not isinstance(top, dict) or top.get("entries") != {} or top.get("version") != FORMAT_VERSION:
        return None
    return top


@dataclass
class Proof:
    """A store file proved piece by piece."""

    digests: list[bytes]              # each piece's digest, in order
    keys: list[str]                   # each piece's entry key, in order
    fresh: dict[str, Any]             # the entries whose piece the base lacks, by key


def prove(raw: bytes, proved: Mapping[bytes, str], skip: Collection[bytes]) -> Proof | None:
    """Prove ``raw`` piece by piece: ``proved`` maps the digest of each piece proved
    before to its key; the entries of the pieces whose digest is in ``skip`` (all of
    them proved before: the base's) are not wanted, every other one is parsed and
    returned in ``fresh``. None when it cannot be proved so."""
    cut = split_pieces(raw)
    if cut is None or _top(cut[0], cut[1]) is None:
        return None
    pieces = cut[2]
    names = digests(pieces)
    # what is asked of each piece is asked of all at once (sets and maps, not a loop in
    # Python): of 10,000 pieces a sync changes a few (bench/guard.py)
    at = dict(zip(names, range(len(names)), strict=True))
    if len(at) != len(names):
        return None  # a piece written twice holds a key twice: the whole parse refuses it
    keys: list[Any] = list(map(proved.get, names))
    taken = proved.keys() if skip is proved else proved.keys() & skip
    fresh: dict[str, Any] = {}
    for index in sorted(map(at.__getitem__, at.keys() - taken)):
        found = prove_piece(pieces[index])
        if found is None:
            return None
        keys[index] = found[0]
        fresh[found[0]] = found[1]
    if len(set(keys)) != len(keys):
        return None  # a key in two pieces: the whole parse refuses it
    return Proof(names, keys, fresh)


@dataclass
class Changes:
    """What arrives in one store file: the entries to check, and what was learned."""

    changed: dict[str, Any]                       # entries the base does not hold as they are
    parsed: dict[str, Any] | None = None          # the whole file, when it was parsed whole
    proofs: list[Proof] = field(default_factory=list)  # (the base's, if made, then the file's)
    fast: bool = False                            # proved piece by piece
    base_raw: bytes | None = None                 # the base's bytes and parse, when parsed whole
    base_parsed: dict[str, Any] | None = None


def changes(raw: bytes, path: str, base: Callable[[], bytes | None], *, side: str = "the remote",
            fast: bool = True, proved: Mapping[bytes, str] | None = None,
            base_digests: Collection[bytes] | None = None, has_base: bool = True) -> Changes:
    """The entries of the arriving store file ``raw`` that the base (``base()``: its
    bytes, read only when needed; ``has_base`` False: there is none) does not hold as
    they are; ``Conflict`` when the file is not one ctx reads. ``fast``: piece by piece
    where it can be (``proved``, ``base_digests``: what is known already); else, and
    wherever that cannot prove the file, one whole parse compared entry by entry. The
    fast way may name more entries than the plain one (a piece reformatted, its value
    unchanged), never fewer: a caller whose check refuses one asks the plain way."""
    if fast:
        found = _fast(raw, base, proved or {}, base_digests, has_base)
        if found is not None:
            return found
    data = parse_whole(raw, path, side)
    assert data is not None
    entries = data.get("entries", {})
    old_raw = base() if has_base else None
    whole = None
    if old_raw is not None:
        try:
            whole = parse_whole(old_raw, path, "here")
        except Conflict:
            whole = None  # this side's file does not parse: nothing here to compare with
    if whole is None:
        return Changes(dict(entries), data)
    old = whole.get("entries", {})
    return Changes({key: entry for key, entry in entries.items() if old.get(key) != entry}, data,
                   base_raw=old_raw, base_parsed=whole)


def _fast(raw: bytes, base: Callable[[], bytes | None], proved: Mapping[bytes, str],
          base_digests: Collection[bytes] | None, has_base: bool) -> Changes | None:
    proofs: list[Proof] = []
    if not has_base:
        base_digests = None
    elif base_digests is None:  # the base was never proved: prove it first
        old_raw = base()
        if old_raw is None:
            return None
        made = prove(old_raw, proved, proved)  # (its entries are not wanted: only its pieces)
        if made is None:
            return None
        proofs.append(made)
        proved = {**proved, **dict(zip(made.digests, made.keys, strict=True))}
        base_digests = set(made.digests)
    elif not isinstance(base_digests, (set, frozenset, dict)):
        base_digests = set(base_digests)
    proof = prove(raw, proved, base_digests if base_digests is not None else ())
    if proof is None:
        return None
    proofs.append(proof)
    return Changes(proof.fresh, None, proofs, True)
