"""The arrival guard's two ways of reading an arriving store file agree
(``ctx/storage/piecewise.changes``): ``fast=True`` proves it piece by piece against the
base's pieces, ``fast=False`` parses it whole and compares entry by entry.

Differential, property-based: random stores, random edits (an entry changed first, in
the middle, last; added, removed), and random hand edits of the bytes (a key repeated,
an entry split across lines, two entries on one line, another indent, an ``"entries"``
nested deeper, NaN, invalid UTF-8, a truncated file, pieces swapped, an object member
after the entries), of the arriving file and of the base; the base's pieces known as a set
or, as ``incoming`` gives them, as the map of proved pieces itself, or as the base's proof
with its runs (of one to four pieces: the file proved along them, ``prove_along``). Both ways must refuse
exactly the same files with the same line, and where both take one, the fast way's entries
to check must hold every one the plain way names (never fewer: ``incoming`` asks the plain
way when one of those is refused), and any more it names must be the base's own, unchanged.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx.errors import Conflict
from ctx.storage import piecewise
from ctx.storage.textlayout import serialize

PATH = "memory/shared.json"

keys = st.text(alphabet=st.sampled_from('ab_é"\\\n\x1b/{}[],: '), min_size=1, max_size=6)
scalars = st.one_of(st.text(alphabet=st.sampled_from('xy"\\\n\x07{}[],: é'), max_size=8),
                    st.integers(-3, 3), st.booleans(), st.none())
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(keys, inner, max_size=3)), max_leaves=6)
entries = st.fixed_dictionaries({"value": values, "source": st.sampled_from(["agent", "operator\x1b"])},
                                optional={"tags": st.lists(st.sampled_from(["t", "a\nb"]), max_size=2),
                                          "timestamp": st.sampled_from(["2026-01-01T00:00:00Z",
                                                                        "2999-01-01T00:00:00Z"]),
                                          "nested": st.dictionaries(keys, values, max_size=2)})
stores = st.dictionaries(keys, entries, max_size=6)

NASTY = ["dup_piece", "split_entry", "join_line", "indent", "nested_entries", "nan", "bad_utf8",
         "truncate", "swap", "version", "deep_key_twice", "inline_value", "member_after", "none"]


def file_of(store: dict) -> bytes:
    return serialize({"type": "shared", "version": "1", "last_updated": "2026-01-01T00:00:00Z",
                      "entries": store})


def hand_edit(raw: bytes, how: str, where: int) -> bytes:
    """``raw`` edited as a careless person or a hostile remote might."""
    next_ = b',\n    "'
    cut = raw.split(next_)
    at = where % max(len(cut), 1)
    if how == "dup_piece" and len(cut) > 1:
        cut.insert(at, cut[min(at, len(cut) - 2) + 1 if at < len(cut) - 1 else at].split(b"\n  }")[0])
        return next_.join(cut)
    if how == "split_entry":  # a member inside an entry, at an entry's indent
        return raw.replace(b'{\n      "', b'{\n      "x": 1,\n    "', 1 + where % 3)
    if how == "join_line" and len(cut) > 2:
        return b', "'.join([next_.join(cut[:at + 1]), next_.join(cut[at + 1:])])
    if how == "indent":
        data = json.loads(raw)
        return (json.dumps(data, indent=[4, None, 1][where % 3], ensure_ascii=bool(where % 2)) + "\n").encode()
    if how == "nested_entries":
        return raw.replace(b'{\n  "type"', b'{\n  "x": {\n  "entries": {\n    "zz": {\n      "value": 1\n    }\n'
                                              b'  },\n  "q": 1\n  },\n  "type"', 1)
    if how == "nan":
        return raw.replace(b'"value": ', b'"value": NaN, "v2": ', 1)
    if how == "bad_utf8":
        return raw.replace(b'"source": "', b'"source": "\xff', 1)
    if how == "truncate":
        return raw[: len(raw) * (where % 7 + 1) // 8]
    if how == "swap" and len(cut) > 2:
        i = 1 + at % (len(cut) - 2)
        cut[i], cut[i - 1] = cut[i - 1], cut[i]
        return next_.join(cut)
    if how == "version":
        return raw.replace(b'"version": "1"', b'"version": "2"', 1)
    if how == "deep_key_twice":
        return raw.replace(b'"source": ', b'"source": 1,\n      "source": ', 1)
    if how == "member_after" and raw.endswith(b"\n}\n"):  # an object after the entries: its close is the last
        member = [b'"x": 1', b'"x": {\n    "a": 1,\n    "b": {}\n  }', b'"x": {\n    "c": {\n      "v": 2\n    }\n  }']
        return raw[:-3] + b',\n  ' + member[where % 3] + b"\n}\n"
    if how == "inline_value":
        return raw.replace(b'{\n      "value"', b'{"value": [1,\n    "w"], "v"', 1)
    return raw


def outcome(raw: bytes, base: bytes | None, fast: bool, cached: bool, same_map: bool = False,
            along: int = 0) -> tuple[str, object]:
    proved: dict[bytes, str] = {}
    digests = None
    kept = None
    if fast and cached and base is not None:  # the base proved by an earlier sync
        proof = piecewise.prove(base, {}, (), runs=along)
        if proof is not None and along:
            kept = proof  # (its runs: the file is proved along them)
        elif proof is not None:
            proved = proof.proved()
            digests = proved if same_map else set(piecewise.split_digests(proof.digests))  # (incoming: one map)
    try:
        found = piecewise.changes(raw, PATH, lambda: base, fast=fast, proved=proved, base_digests=digests,
                                  has_base=base is not None, base_proof=kept)
    except Conflict as exc:
        return "refused", str(exc)
    return "taken", found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base_store=stores, edits=st.lists(st.tuples(st.sampled_from(["change", "add", "remove"]),
                                                   st.integers(0, 9), entries), max_size=4),
       nasty=st.sampled_from(NASTY), base_nasty=st.sampled_from(NASTY[:4] + ["none"] * 6),
       where=st.integers(0, 20), cached=st.booleans(), no_base=st.booleans(), same_map=st.booleans(),
       along=st.sampled_from([0, 0, 1, 2, 4]))
def test_the_fast_way_refuses_exactly_what_the_whole_parse_refuses(base_store, edits, nasty, base_nasty, where,
                                                                   cached, no_base, same_map, along):
    theirs = dict(base_store)
    for op, index, entry in edits:
        names = list(theirs)
        if op == "add" or not names:
            theirs[f"new{index}"] = entry
        elif op == "change":
            theirs[names[index % len(names)]] = entry  # first, middle or last
        else:
            theirs.pop(names[index % len(names)])
    base = None if no_base else hand_edit(file_of(base_store), base_nasty, where + 1)
    raw = hand_edit(file_of(theirs), nasty, where)
    plain = outcome(raw, base, fast=False, cached=False)
    fast = outcome(raw, base, fast=True, cached=cached, same_map=same_map, along=along)
    assert plain[0] == fast[0], (plain, fast)
    if plain[0] == "refused":
        assert plain[1] == fast[1]
        return
    assert isinstance(plain[1], piecewise.Changes) and isinstance(fast[1], piecewise.Changes)
    named, more = plain[1].changed, fast[1].changed
    assert all(key in more and more[key] == entry for key, entry in named.items())
    assert plain[1].parsed is not None
    taken = plain[1].parsed["entries"]
    old = {}
    if base is not None:
        try:
            old = json.loads(base).get("entries", {})
        except ValueError:
            old = None
    for key, entry in more.items():
        assert taken[key] == entry  # what it names is what arrives
        if key not in named:
            assert old is not None and old.get(key) == entry  # ... and any more: the base's own


def test_the_fast_way_is_taken_for_a_file_in_ctx_layout_and_parses_only_new_pieces(monkeypatch):
    base_store = {f"k{i}": {"value": f"v{i}", "source": "agent"} for i in range(50)}
    theirs = dict(base_store, k0={"value": "first", "source": "agent"}, k25={"value": "mid", "source": "agent"},
                  k49={"value": "last", "source": "agent"}, k50={"value": "new", "source": "agent"})
    base, raw = file_of(base_store), file_of(theirs)
    proof = piecewise.prove(base, {}, ())
    assert proof is not None
    seen: list[bytes] = []
    real = piecewise.prove_piece
    monkeypatch.setattr(piecewise, "prove_piece", lambda piece: seen.append(piece) or real(piece))
    found = piecewise.changes(raw, PATH, lambda: None, proved=proof.proved(),
                              base_digests=set(piecewise.split_digests(proof.digests)))
    assert found.fast and sorted(found.changed) == ["k0", "k25", "k49", "k50"]
    assert len(seen) == 4  # the base is not read (its bytes are not asked for), its pieces not parsed


def test_a_piece_the_base_holds_that_is_not_a_whole_entry_is_not_trusted():
    # the base holds, cut at an entry's separator, the two halves of one entry; the remote
    # swaps them round a new entry: the halves are the base's pieces, but never whole entries
    base = (b'{\n  "type": "shared",\n  "version": "1",\n  "entries": {\n    "a": {\n      "value": [1,\n'
            b'    "x", 2],\n      "source": "agent"\n    }\n  }\n}\n')
    json.loads(base)
    raw = base.replace(b'"value": [1,\n    "x", 2]', b'"value": [1,\n    "y": 5}, "b": {"source": "s", "value": [2]')
    assert outcome(raw, base, fast=True, cached=True)[0] == outcome(raw, base, fast=False, cached=False)[0]


def test_entries_nested_in_another_member_are_not_taken_for_the_store_entries():
    # what looks like the entries object is inside "x"; the store's own entries are empty
    base = file_of({})
    raw = base.replace(b'{\n  "type"', b'{\n  "x": {\n  "entries": {\n    "zz": {\n      "value": 1\n    }\n'
                                         b'  },\n  "q": 1\n  },\n  "type"', 1)
    plain, fast = outcome(raw, base, fast=False, cached=True), outcome(raw, base, fast=True, cached=True)
    assert plain[0] == fast[0] == "taken"
    assert isinstance(fast[1], piecewise.Changes) and fast[1].changed == {} and not fast[1].fast
