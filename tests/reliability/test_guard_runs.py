"""An arriving store file proved along the base's runs (``piecewise.prove_along``) is taken
exactly when the whole parse takes it, and names every entry the whole parse names.

Differential, property-based, over a chain of syncs: each arriving file is proved along the
proof of the one before (as ``incoming`` keeps it in ``verified.py``), with runs of one to
five pieces, after random edits (entries changed, added, removed, moved) and hostile ones
aimed at the runs: a piece that looks like the base's (its head and its length kept, a
byte changed at its end), a run's pieces written again elsewhere, a new piece holding the
key of a piece a recurring run holds, a member glued after an entry on its closing line,
two runs swapped, a separator lost, another indent, a truncated file. Where the whole parse
refuses the file, the fast way never takes it; where both take it, the fast way names every
entry the whole parse names (any more are the base's own, unchanged), and its proof is the
file's: each piece's SHA-256 and key in order, each run the SHA-256 of its bytes.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx.errors import Conflict
from ctx.storage import piecewise
from ctx.storage.textlayout import MEMBER_NEXT, piece_bounds, serialize
from ctxgit.sync import verified

PATH = "memory/shared.json"
STAMP = "2026-01-01T00:00:00Z"

values = st.text(alphabet=st.sampled_from('ab"\\\né{}, '), max_size=12)
stores = st.lists(values, max_size=40).map(
    lambda found: {f"k{i}": {"value": value, "source": "agent", "timestamp": STAMP} for i, value in enumerate(found)})
EDITS = ("change", "add", "remove", "move", "lookalike", "run_again", "key_clash", "glued", "swap_runs",
         "lost_separator", "indent", "truncate")


def file_of(store: dict) -> bytes:
    return serialize({"type": "shared", "version": "1", "last_updated": STAMP, "entries": store})


def edited(store: dict, how: str, where: int, value: str) -> bytes:
    """``store``'s file, edited as a writer, a careless person or a hostile remote might."""
    entries = dict(store)
    names = list(entries)
    name = names[where % len(names)] if names else None
    if how == "change" and name is not None:
        entries[name] = {"value": value, "source": "agent", "timestamp": STAMP}
    elif how == "add" or name is None:
        entries[f"new{where}"] = {"value": value, "source": "agent", "timestamp": "2999-01-01T00:00:00Z"}
    elif how == "remove":
        entries.pop(name)
    elif how == "move":
        entries[name] = entries.pop(name)
    raw = file_of(entries)
    if how == "indent":
        return (json.dumps(json.loads(raw), indent=4) + "\n").encode()
    if how == "truncate":
        return raw[: len(raw) * (where % 7 + 1) // 8]
    bounds = piece_bounds(raw)
    if bounds is None or bounds[2] < 0:
        return raw
    head, tail, pieces = raw[:bounds[2]], raw[bounds[3]:], raw[bounds[2]:bounds[3]].split(MEMBER_NEXT)
    at = where % len(pieces)
    if how == "lookalike":  # its head and its length kept: one byte changed before its closing brace
        piece = pieces[at]
        close = piece.rfind(b'"')
        if close > 0:
            pieces[at] = piece[:close - 1] + (b"x" if piece[close - 1:close] != b"x" else b"y") + piece[close:]
    elif how == "run_again":  # some pieces in a row written again further on: a key twice
        pieces[at + 1:at + 1] = pieces[max(0, at - 2):at + 1]
    elif how == "key_clash":  # a new piece with the key of one a recurring run holds
        key = pieces[at].split(b'": ', 1)[0]
        pieces.append(key + b'": {\n      "value": "other",\n      "source": "agent"\n    }')
    elif how == "glued":  # a member after an entry on its closing line: one piece, two members
        pieces[at] += b', "glued": {}'
    elif how == "swap_runs" and len(pieces) > 3:
        half = len(pieces) // 2
        pieces = pieces[half:] + pieces[:half]
    elif how == "lost_separator" and len(pieces) > 1:
        return head + MEMBER_NEXT.join(pieces[:at]) + (MEMBER_NEXT if at else b"") \
            + b", \"".join(pieces[at:at + 2]) + (MEMBER_NEXT if at + 2 < len(pieces) else b"") \
            + MEMBER_NEXT.join(pieces[at + 2:]) + tail
    return head + MEMBER_NEXT.join(pieces) + tail


def whole(raw: bytes) -> dict | None:
    try:
        return piecewise.changes(raw, PATH, lambda: None, fast=False, has_base=False).parsed
    except Conflict:
        return None


def assert_the_proof_is_the_files(proof: piecewise.Proof, raw: bytes, keys: list[str]) -> None:
    bounds = piece_bounds(raw)
    assert bounds is not None
    pieces = [] if bounds[2] < 0 else raw[bounds[2]:bounds[3]].split(MEMBER_NEXT)
    assert proof.digests == b"".join(hashlib.sha256(piece).digest() for piece in pieces)
    assert proof.keys == keys
    at = bounds[2]
    for count, length, digest, head in proof.runs:
        assert count > 0 and hashlib.sha256(raw[at:at + length]).digest() == digest and raw.startswith(head, at)
        at += length + len(MEMBER_NEXT)
    assert not pieces or (proof.whole() and at == bounds[3] + len(MEMBER_NEXT))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=stores, size=st.integers(1, 5),
       syncs=st.lists(st.tuples(st.sampled_from(EDITS), st.integers(0, 60), values), min_size=1, max_size=3))
def test_a_file_proved_along_the_bases_runs_is_taken_as_the_whole_parse_takes_it(first, size, syncs):
    base_raw = file_of(first)
    kept = piecewise.prove(base_raw, {}, (), runs=size)
    assert kept is not None
    store = first
    for how, where, value in syncs:
        raw = edited(store, how, where, value)
        data = whole(raw)
        along = piecewise.prove_along(raw, kept, size) if kept.whole() else None
        if data is None:
            assert along is None  # what the whole parse refuses is never taken
            continue
        if along is None:
            continue  # (the whole parse decides)
        taken, old = data["entries"], json.loads(base_raw)["entries"]
        for key, entry in taken.items():
            if old.get(key) != entry:
                assert along.fresh.get(key) == entry  # every entry the base lacks is named...
        for key, entry in along.fresh.items():
            assert taken[key] == entry  # ... as it arrives
        assert_the_proof_is_the_files(along, raw, list(taken))
        found = piecewise.changes(raw, PATH, lambda: None, base_proof=kept)
        assert found.fast and found.changed == along.fresh
        base_raw, kept, store = raw, along, taken


def test_only_the_stretch_around_a_change_is_cut_and_named(monkeypatch):
    store = {f"k{i}": {"value": f"v{i}", "source": "agent"} for i in range(500)}
    base = file_of(store)
    kept = piecewise.prove(base, {}, ())
    assert kept is not None and kept.whole()
    store["k250"] = {"value": "changed", "source": "agent"}
    store["k500"] = {"value": "added", "source": "agent"}
    raw = file_of(store)
    named: list[bytes] = []
    real = piecewise.digests
    monkeypatch.setattr(piecewise, "digests", lambda pieces: named.extend(pieces) or real(pieces))
    found = piecewise.changes(raw, PATH, lambda: None, base_proof=kept)
    assert found.fast and sorted(found.changed) == ["k250", "k500"]
    assert 2 <= len(named) <= piecewise.RUN * 2  # not the 501 pieces: the recurring runs are not cut
    assert_the_proof_is_the_files(found.proofs[-1], raw, list(store))


def test_a_sync_that_changed_one_entry_of_a_big_store_names_only_the_pieces_around_it(tmp_path, monkeypatch):
    """Through the guard itself (``incoming.check``): the base taken in by one sync, then a
    tip that changed one of its 2,000 entries and added one: the pieces named (a SHA-256
    each) are the stretch around the change and the new one, not every piece of the file."""
    import pygit2

    from ctxgit.sync import incoming
    signature = pygit2.Signature("Test Operator", "operator@example.invalid", 1767225600, 0)
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)

    def commit(raw: bytes, parents: list) -> pygit2.Oid:
        memory = repo.TreeBuilder()
        memory.insert("shared.json", repo.create_blob(raw), pygit2.enums.FileMode.BLOB)
        top = repo.TreeBuilder()
        top.insert("memory", memory.write(), pygit2.enums.FileMode.TREE)
        return repo.create_commit(None, signature, signature, "a write", top.write(), parents)
    store = {f"k{i}": {"value": f"v{i}", "source": "agent", "timestamp": STAMP} for i in range(2000)}
    base = commit(file_of(store), [])
    incoming.check(repo, base, None)  # the sync that took the base in: its proof is kept
    store["k1000"] = {"value": "changed", "source": "agent", "timestamp": STAMP}
    store["k2000"] = {"value": "added", "source": "agent", "timestamp": STAMP}
    tip = commit(file_of(store), [base])
    named: list[bytes] = []
    real = piecewise.digests
    monkeypatch.setattr(piecewise, "digests", lambda pieces: named.extend(pieces) or real(pieces))
    checked = incoming.check(repo, tip, base)
    assert 2 <= len(named) <= 4 * piecewise.RUN, len(named)  # (before the runs: all 2,001)
    assert checked.keys[repo[tip].peel(pygit2.Commit).tree["memory/shared.json"].id] == list(store)


def test_a_lookalike_piece_is_named():
    # the base's piece and the arriving one share their head, their length and the bytes
    # around them: only the digest of the run they sit in tells them apart
    store = {f"k{i}": {"value": "x" * 80, "source": "agent"} for i in range(100)}
    kept = piecewise.prove(file_of(store), {}, ())
    assert kept is not None
    store["k40"] = {"value": "x" * 79 + "y", "source": "agent"}
    found = piecewise.prove_along(file_of(store), kept)
    assert found is not None and list(found.fresh) == ["k40"]


@pytest.mark.parametrize("how", ["run_again", "key_clash"])
def test_a_key_in_two_pieces_is_never_proved(how):
    store = {f"k{i}": {"value": f"v{i}", "source": "agent"} for i in range(100)}
    kept = piecewise.prove(file_of(store), {}, ())
    assert kept is not None
    raw = edited(store, how, 70, "")
    assert whole(raw) is None and piecewise.prove_along(raw, kept) is None


@pytest.mark.parametrize("damage", ["runs", "digests", "types", "version"])
def test_a_damaged_kept_proof_is_proved_again(tmp_path, damage):
    import marshal

    import pygit2
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    store = {f"k{i}": {"value": f"v{i}", "source": "agent"} for i in range(50)}
    raw = file_of(store)
    blob = repo.create_blob(raw)
    proof = piecewise.prove(raw, {}, ())
    assert proof is not None
    kept = verified.Verified(repo)
    kept.record(blob, proof)
    assert verified.Verified(repo).pieces(blob) == piecewise.Proof(proof.digests, proof.keys, {}, proof.runs)
    path = kept._file(blob)
    version, digests, keys, runs = marshal.loads(open(path, "rb").read())
    if damage == "runs":
        runs = runs[:-1]
    elif damage == "digests":
        digests = digests[:-1]
    elif damage == "types":
        runs = [(str(run[0]), *run[1:]) for run in runs]
    else:
        version -= 1
    with open(path, "wb") as handle:
        handle.write(marshal.dumps((version, digests, keys, runs)))
    assert verified.Verified(repo).pieces(blob) is None
