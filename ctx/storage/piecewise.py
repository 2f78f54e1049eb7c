"""An arriving store file proved piece by piece, so a big store's sync parses only what changed.

A store file in ctx's layout (``textlayout.piece_bounds``) is a head, an entries
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

A proof also keeps its pieces in *runs* of about ``RUN`` pieces in a row, each named by
the SHA-256 of its bytes (its pieces and the separators between them). The next file
is proved *along* them (``prove_along``): where a run's bytes recur, at a piece's start
and ending where one does, one digest shows all of its pieces the base's (the proof
depends on the bytes alone, and a separator never overlaps another), so no piece of
it is cut or named; only the stretches between recurring runs are cut, their pieces
named and looked up among the pieces of the runs they stand in for, and the others
parsed. A stretch never trusts a piece it has not named: a piece the base holds
elsewhere is parsed again (the fast way may name more entries, never fewer).

Core: imports neither ctxgit nor the front door.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import accumulate

from ctx.entrymerge import parse as parse_whole
from ctx.errors import Conflict
from ctx.jsoncodec import loads
from ctx.storage.files import FORMAT_VERSION
from ctx.storage.textlayout import MEMBER_NEXT, piece_bounds

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping
    from typing import Any

# a piece nested deeper is read the plain way: the whole parse's own bound (the interpreter's
# recursion limit, which depends on the caller's stack) then decides, never this module's
DEPTH = 64
DIGEST = 32  # bytes of a SHA-256: a proof's digests are joined, each this long
RUN = 32  # pieces in a run (a short last one joins the run before)
HEAD = 48  # a run's head: its first piece's first bytes, how a stretch finds where the run recurs
AHEAD = 8  # runs looked for one by one past a stretch's start, then ever further apart
SLACK = 1 << 16  # bytes a stretch may grow past the runs it stands in for, and its end still be found
GAP = len(MEMBER_NEXT)


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


def _sha256() -> Callable[[Any], Any]:
    import hashlib  # (here: the core's hot paths never prove a piece)
    return hashlib.sha256


def digests(pieces: list[bytes]) -> list[bytes]:
    """Each piece's name among proved pieces: its SHA-256 (a remote chooses the bytes, so no
    cheap hash; with the CPU's SHA instructions the fastest of hashlib's)."""
    sha256 = _sha256()
    return [sha256(piece).digest() for piece in pieces]


def split_digests(joined: bytes) -> list[bytes]:
    """A proof's joined digests, one by one."""
    return [joined[at:at + DIGEST] for at in range(0, len(joined), DIGEST)]


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


# a run: (its pieces, its bytes' length, their SHA-256, its head)
Run = tuple[int, int, bytes, bytes]


@dataclass
class Proof:
    """A store file proved piece by piece."""

    digests: bytes                    # each piece's digest, in order, joined (``DIGEST`` bytes each)
    keys: list[str]                   # each piece's entry key, in order
    fresh: dict[str, Any]             # the entries whose piece the base lacks, by key
    runs: list[Run] = field(default_factory=list)  # its pieces in runs, in order (none: not made)

    def proved(self) -> dict[bytes, str]:
        """Each piece's digest -> its key."""
        return dict(zip(split_digests(self.digests), self.keys, strict=True))

    def whole(self) -> bool:
        """Its runs hold its pieces exactly (a proof read back from disk is asked)."""
        return (len(self.digests) == DIGEST * len(self.keys) and bool(self.runs)
                and sum(run[0] for run in self.runs) == len(self.keys))


def _head(piece: bytes) -> bytes:
    return piece[:HEAD]


def _runs_of(raw: bytes, at: int, pieces: list[bytes], size: int = RUN) -> list[tuple[int, Run]]:
    """``pieces``, found in ``raw`` from ``at`` on, in runs of ``size`` (a short last one
    joins the one before), each with where it starts."""
    sha256, view = _sha256(), memoryview(raw)
    ends = list(range(size, len(pieces), size)) + [len(pieces)]
    if len(ends) > 1 and ends[-1] - ends[-2] < size // 2:
        del ends[-2]
    out: list[tuple[int, Run]] = []
    begin = 0
    for end in ends:
        length = sum(map(len, pieces[begin:end])) + GAP * (end - begin - 1)
        out.append((at, (end - begin, length, sha256(view[at:at + length]).digest(), _head(pieces[begin]))))
        at += length + GAP
        begin = end
    return out


def prove(raw: bytes, proved: Mapping[bytes, str], skip: Collection[bytes], *,
          runs: int = RUN) -> Proof | None:
    """Prove ``raw`` piece by piece: ``proved`` maps the digest of each piece proved
    before to its key; the entries of the pieces whose digest is in ``skip`` (all of
    them proved before: the base's) are not wanted, every other one is parsed and
    returned in ``fresh``; its runs made of ``runs`` pieces (0: none). None when it cannot
    be proved so."""
    bounds = piece_bounds(raw)
    if bounds is None or _top(raw[:bounds[0]], raw[bounds[1]:]) is None:
        return None
    first, stop = bounds[2], bounds[3]
    pieces = [] if first < 0 else raw[first:stop].split(MEMBER_NEXT)
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
    made = [run for _, run in _runs_of(raw, first, pieces, runs)] if runs and pieces else []
    return Proof(b"".join(names), keys, fresh, made)


def prove_along(raw: bytes, base: Proof, size: int = RUN) -> Proof | None:
    """Prove ``raw`` along the runs of ``base`` (a proof of the base's file, ``whole``):
    the entries of the pieces not shown to be the base's are parsed and returned in
    ``fresh``; the proof's runs are the base's that recur and new ones (of ``size``) for
    the rest. None when it cannot be proved so (the whole parse decides)."""
    bounds = piece_bounds(raw)
    if bounds is None or _top(raw[:bounds[0]], raw[bounds[1]:]) is None:
        return None
    if bounds[2] < 0:
        return Proof(b"", [], {}, [])
    return _Along(raw, base, bounds[2], bounds[3], size).walk()


class _Along:
    """One file proved along a base's runs (``prove_along``)."""

    def __init__(self, raw: bytes, base: Proof, first: int, stop: int, size: int) -> None:
        self.raw, self.view, self.base, self.first, self.stop, self.size = raw, memoryview(raw), base, first, stop, size
        self.sha256 = _sha256()
        self.runs = base.runs
        self.starts = list(accumulate((run[0] for run in base.runs), initial=0))  # each run's first piece
        self.offsets = list(accumulate((run[1] + GAP for run in base.runs), initial=0))  # ... its bytes' start
        self.parts: list[bytes] = []      # the pieces' digests, joined stretch by stretch
        self.keys: list[str] = []
        self.fresh: dict[str, Any] = {}
        self.made: list[tuple[int, Run]] = []   # the file's runs, each with where it starts

    def fits(self, index: int, at: int) -> bool:
        """The base's run ``index`` recurs at ``at`` (a piece's start), ending where a piece does."""
        _, length, digest, head = self.runs[index]
        end = at + length
        if end != self.stop and (end + GAP > self.stop or not self.raw.startswith(MEMBER_NEXT, end)):
            return False
        return self.raw.startswith(head, at) and self.sha256(self.view[at:end]).digest() == digest

    def recurring(self, index: int, at: int) -> tuple[int, int]:
        """The base's runs from ``index`` on that recur one after another from ``at``, taken:
        ``(index, at)`` of the first that does not, or ``at`` -1 at the file's last piece.
        (``fits`` inlined: a sync that changed a few entries of a big store runs this loop over
        nearly all of its runs, bench/guard.py.)"""
        raw, view, stop, runs, sha256, made = self.raw, self.view, self.stop, self.runs, self.sha256, self.made
        begin, count = index, len(runs)
        while index < count:
            run = runs[index]
            end = at + run[1]
            if end != stop and (end + GAP > stop or not raw.startswith(MEMBER_NEXT, end)):
                break
            if not raw.startswith(run[3], at) or sha256(view[at:end]).digest() != run[2]:
                break
            made.append((at, run))
            index += 1
            at = end + GAP if end != stop else -1
            if at < 0:
                break
        low, high = self.starts[begin], self.starts[index]
        self.parts.append(self.base.digests[low * DIGEST:high * DIGEST])
        self.keys += self.base.keys[low:high]
        return index, at

    def next_run(self, index: int, at: int) -> tuple[int, int, int]:
        """Where the stretch from ``at`` (the base's run ``index`` did not recur there) ends:
        ``(end, next, later)``, the stretch ``raw[at:end]``, then the base's run ``later``
        recurring at ``next``; ``(stop, -1, len(runs))`` when none does."""
        count = len(self.runs)
        since = at
        candidates = list(range(index + 1, min(index + 1 + AHEAD, count)))
        step = AHEAD
        while candidates and candidates[-1] + step < count:
            candidates.append(candidates[-1] + step)  # a long stretch gone: looked for ever further on
            step *= 2
        for later in candidates:
            head = self.runs[later][3]
            if since == at and self.fits(later, at):
                return at, at, later  # the runs before it are gone
            window = since + 2 * (self.offsets[later] - self.offsets[index]) + SLACK
            found = self.raw.find(MEMBER_NEXT + head, since, min(self.stop, window))
            if found >= 0:
                if self.fits(later, found + GAP):
                    return found, found + GAP, later
                since = found + GAP
        return self.stop, -1, count

    def stretch(self, at: int, end: int, index: int, later: int) -> bool:
        """The pieces of ``raw[at:end]``, standing in for the base's runs ``index`` to
        ``later`` (not included): each named, looked up among their pieces, else parsed."""
        pieces = self.raw[at:end].split(MEMBER_NEXT)
        names = digests(pieces)
        low, high = self.starts[index], self.starts[later]
        known = dict(zip(split_digests(self.base.digests[low * DIGEST:high * DIGEST]), range(low, high), strict=True))
        for name, piece in zip(names, pieces, strict=True):
            # popped: a piece written twice is parsed the second time, and its key is then in two
            # pieces (test_guard_runs.py: run_again)
            where = known.pop(name, None)
            if where is not None:
                self.keys.append(self.base.keys[where])
                continue
            found = prove_piece(piece)
            if found is None:
                return False
            self.keys.append(found[0])
            self.fresh[found[0]] = found[1]
        self.parts.append(b"".join(names))
        self.made += _runs_of(self.raw, at, pieces, self.size)
        return True

    def walk(self) -> Proof | None:
        at, index = self.first, 0
        while True:
            index, at = self.recurring(index, at)
            if at < 0:
                break
            end, following, later = self.next_run(index, at)
            if (end > at or following < 0) and not self.stretch(at, end, index, later):
                return None
            if following < 0:
                break
            index, at = later, following  # (``recurring`` names it again: one run's bytes)
        if len(set(self.keys)) != len(self.keys):
            return None  # a key in two pieces: the whole parse refuses it
        return Proof(b"".join(self.parts), self.keys, self.fresh, self.joined())

    def joined(self) -> list[Run]:
        """The file's runs, where two short ones side by side become one (entries added at the
        end, a sync at a time, do not leave a run for each)."""
        out: list[tuple[int, Run]] = []
        for at, run in self.made:
            if out and out[-1][1][0] + run[0] <= self.size and min(out[-1][1][0], run[0]) < self.size // 2:
                start, before = out[-1]
                length = at + run[1] - start
                out[-1] = (start, (before[0] + run[0], length,
                                   self.sha256(self.view[start:start + length]).digest(), before[3]))
                continue
            out.append((at, run))
        return [run for _, run in out]


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
            base_digests: Collection[bytes] | None = None, has_base: bool = True,
            base_proof: Proof | None = None) -> Changes:
    """The entries of the arriving store file ``raw`` that the base (``base()``: its
    bytes, read only when needed; ``has_base`` False: there is none) does not hold as
    they are; ``Conflict`` when the file is not one ctx reads. ``fast``: piece by piece
    where it can be (what is known already: ``base_proof``, the base's proof with its
    runs, else ``proved`` and ``base_digests``); else, and wherever that cannot prove the
    file, one whole parse compared entry by entry. The fast way may name more entries than
    the plain one (a piece reformatted or moved, its value unchanged), never fewer: a
    caller whose check refuses one asks the plain way."""
    if fast:
        found = _fast(raw, base, proved or {}, base_digests, has_base, base_proof)
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
          base_digests: Collection[bytes] | None, has_base: bool, base_proof: Proof | None) -> Changes | None:
    proofs: list[Proof] = []
    if not has_base:
        base_digests = base_proof = None
    elif base_proof is not None and base_proof.whole():
        base_digests = None
    elif base_digests is None:  # the base was never proved: prove it first
        old_raw = base()
        if old_raw is None:
            return None
        made = prove(old_raw, proved, proved)  # (its entries are not wanted: only its pieces)
        if made is None:
            return None
        proofs.append(made)
        if made.whole():
            base_proof = made
        else:  # (no piece: nothing to go along)
            base_proof, proved, base_digests = None, {}, ()
    elif not isinstance(base_digests, (set, frozenset, dict)):
        base_digests = set(base_digests)
    if base_proof is not None and base_proof.whole():
        proof = prove_along(raw, base_proof)
    else:
        proof = prove(raw, proved, base_digests if base_digests is not None else ())
    if proof is None:
        return None
    proofs.append(proof)
    return Changes(proof.fresh, None, proofs, True)
