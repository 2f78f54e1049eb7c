"""The entry-level three-way merge (ctx/entrymerge.py), the tree merge
(ctxgit/sync/treemerge.py) and the git merge driver, as a library: each rule of
entrymerge.py's docstring, symmetry (merging ours into theirs or theirs into ours
gives the same bytes), idempotence, version and shape checks, summaries kept
from both sides, RULES.md conflicts, links refused."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pygit2
import pytest
from pygit2.enums import FileMode

from ctx.entrymerge import STATUS_GROUP, merge_entry, merge_store, merge_store_bytes, parse
from ctx.errors import Conflict
from ctx.storage.textlayout import serialize
from ctxgit.sync.treemerge import TreeMerge, flatten, merge_trees
from support.syncutil import build_tree, deadline, entry, ts

# --- helpers -----------------------------------------------------------------------------


def store(entries: dict[str, Any], last_updated: str = ts(1), **top: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"type": "shared", "version": "1"}
    data.update(top)
    data["last_updated"] = last_updated
    data["entries"] = entries
    return data


def both_ways(base, ours, theirs):
    """merge_entry both ways round; asserts they agree byte for byte, returns one."""
    one = merge_entry(copy.deepcopy(base), copy.deepcopy(ours), copy.deepcopy(theirs))
    two = merge_entry(copy.deepcopy(base), copy.deepcopy(theirs), copy.deepcopy(ours))
    assert json.dumps(one[0]) == json.dumps(two[0]), (one, two)
    assert one[1] == two[1]
    return one


def store_both_ways(base, ours, theirs):
    one = merge_store(copy.deepcopy(base), copy.deepcopy(ours), copy.deepcopy(theirs))
    two = merge_store(copy.deepcopy(base), copy.deepcopy(theirs), copy.deepcopy(ours))
    assert serialize(one.data) == serialize(two.data)
    assert sorted(one.value_conflicts) == sorted(two.value_conflicts)
    return one


BASE = entry("the pool is 10", ts(1), tags=["db"], author="Agent One")


def changed(base: dict[str, Any], when: str, **fields: Any) -> dict[str, Any]:
    out = dict(base)
    out.update(fields)
    out["timestamp"] = when
    return out


def with_status(base: dict[str, Any], status: str, when: str, note: str | None = None,
                by: str | None = None) -> dict[str, Any]:
    out = {k: v for k, v in base.items() if k not in STATUS_GROUP}
    out["status"] = status
    out["status_timestamp"] = when
    if note:
        out["status_note"] = note
    if by:
        out["superseded_by"] = by
    out["timestamp"] = when
    return out


# --- merge_entry: one rule at a time ---------------------------------------------------------

def test_same_change_on_both_sides_is_taken_without_conflict():
    new = changed(BASE, ts(2), value="the pool is 20")
    merged, clash = both_ways(BASE, new, dict(new))
    assert merged == new and clash is False


def test_a_change_on_one_side_only_is_taken_whole():
    new = changed(BASE, ts(2), value="the pool is 20", tags=["db", "perf"])
    assert both_ways(BASE, new, BASE) == (new, False)


def test_a_key_on_one_side_only_is_kept():
    new = entry("only here", ts(3))
    assert both_ways(None, new, None) == (new, False)


def test_deleted_on_one_side_changed_on_the_other_keeps_the_change():
    new = changed(BASE, ts(2), value="the pool is 20")
    merged, clash = both_ways(BASE, None, new)
    assert merged == new and clash is False


def test_deleted_on_one_side_untouched_on_the_other_is_deleted():
    assert both_ways(BASE, None, BASE) == (None, False)


def test_deleted_on_both_sides_stays_deleted():
    assert both_ways(BASE, None, None) == (None, False)


def test_status_on_one_side_and_tags_on_the_other_both_survive():
    resolved = with_status(BASE, "resolved", ts(2), note="fixed in v2")
    retagged = changed(BASE, ts(3), tags=["db", "ops"])
    merged, clash = both_ways(BASE, resolved, retagged)
    assert clash is False
    assert merged["status"] == "resolved"
    assert merged["status_timestamp"] == ts(2)
    assert merged["status_note"] == "fixed in v2"
    assert merged["tags"] == ["db", "ops"]
    assert merged["value"] == BASE["value"]
    assert merged["timestamp"] == ts(3)  # the latest


def test_fields_changed_on_different_sides_all_survive():
    ours = changed(BASE, ts(2), derivation="load test 2025-03-02")
    theirs = changed(BASE, ts(3), basis="verified", scope="session")
    merged, clash = both_ways(BASE, ours, theirs)
    assert clash is False
    assert merged["derivation"] == "load test 2025-03-02"
    assert (merged["basis"], merged["scope"]) == ("verified", "session")


def test_both_changed_the_value_the_later_timestamp_wins_and_it_is_reported():
    early = changed(BASE, ts(2), value="early")
    late = changed(BASE, ts(2, 0, 1), value="late")
    merged, clash = both_ways(BASE, early, late)
    assert merged["value"] == "late"
    assert merged["timestamp"] == ts(2, 0, 1)
    assert clash is True


def test_both_changed_another_field_the_later_wins_without_a_value_conflict():
    ours = changed(BASE, ts(2), tags=["a"])
    theirs = changed(BASE, ts(4), tags=["b"])
    merged, clash = both_ways(BASE, ours, theirs)
    assert merged["tags"] == ["b"]
    assert clash is False  # only a lost *value* is a value conflict


def test_a_timestamp_tie_is_broken_by_the_greater_canonical_text_on_both_machines():
    one = changed(BASE, ts(2), value="alpha")
    two = changed(BASE, ts(2), value="omega")
    merged, clash = both_ways(BASE, one, two)
    assert clash is True
    expected = max((one, two), key=lambda e: json.dumps(e, sort_keys=True, ensure_ascii=False,
                                                        separators=(",", ":")))
    assert merged["value"] == expected["value"]


def test_the_status_fields_move_as_one_group():
    superseded = with_status(BASE, "superseded", ts(3), note="replaced", by="pool_v2")
    resolved = with_status(BASE, "resolved", ts(4))
    merged, _ = both_ways(BASE, superseded, resolved)
    assert merged["status"] == "resolved"
    assert merged["status_timestamp"] == ts(4)
    # never resolved with the superseded side's note or replacement
    assert "status_note" not in merged and "superseded_by" not in merged


def test_the_later_status_wins_even_when_the_other_side_has_the_later_timestamp():
    resolved = with_status(BASE, "resolved", ts(3), note="done")
    amended = with_status(BASE, "amended", ts(2), note="partly")
    amended["timestamp"] = ts(5)  # e.g. a later tag change on that side
    merged, _ = both_ways(BASE, resolved, amended)
    assert merged["status"] == "resolved"
    assert merged["status_note"] == "done"


def test_a_status_cleared_on_one_side_and_untouched_on_the_other_is_cleared():
    base = with_status(BASE, "resolved", ts(2), note="done")
    reopened = changed({k: v for k, v in base.items() if k not in STATUS_GROUP}, ts(3),
                       value="reopened")
    retagged = changed(base, ts(2, 1), tags=["x"])
    merged, _ = both_ways(base, reopened, retagged)
    assert not set(STATUS_GROUP) & set(merged)
    assert merged["value"] == "reopened" and merged["tags"] == ["x"]


def test_created_is_the_earliest_and_timestamp_the_latest():
    ours = entry("same key, here", ts(5), created=ts(5))
    theirs = entry("same key, there", ts(3), created=ts(2))
    merged, clash = both_ways(None, ours, theirs)
    assert merged["created"] == ts(2)
    assert merged["timestamp"] == ts(5)
    assert merged["value"] == "same key, here" and clash is True


def test_created_is_the_earliest_even_when_the_later_side_wins_every_field():
    base = entry("v", ts(3), created=ts(3))
    ours = changed(base, ts(6), value="ours", created=ts(4))
    theirs = changed(base, ts(5), value="theirs", created=ts(1))
    merged, _ = both_ways(base, ours, theirs)
    assert merged["value"] == "ours"
    assert merged["created"] == ts(1)


def test_unknown_fields_survive():
    base = dict(BASE, x_other_impl={"rank": 1})
    ours = changed(base, ts(2), value="ours", x_added_here=[1, 2])
    theirs = changed(base, ts(3), x_other_impl={"rank": 2}, x_added_there="yes")
    merged, clash = both_ways(base, ours, theirs)
    assert clash is False
    assert merged["value"] == "ours"
    assert merged["x_added_here"] == [1, 2]
    assert merged["x_added_there"] == "yes"
    assert merged["x_other_impl"] == {"rank": 2}


def test_an_unknown_field_changed_on_both_sides_keeps_the_later():
    base = dict(BASE, x_rank=1)
    merged, _ = both_ways(base, changed(base, ts(2), x_rank=2), changed(base, ts(3), x_rank=3))
    assert merged["x_rank"] == 3


def test_a_field_removed_on_one_side_and_untouched_on_the_other_is_removed():
    base = dict(BASE, derivation="old reasoning")
    ours = {k: v for k, v in changed(base, ts(2)).items() if k != "derivation"}
    theirs = changed(base, ts(3), tags=["t"])
    merged, _ = both_ways(base, ours, theirs)
    assert "derivation" not in merged
    assert merged["tags"] == ["t"]


def test_the_merged_entry_keeps_the_winners_field_order():
    base = {"value": "v", "source": "agent", "basis": "inferred", "scope": "global", "tags": [],
            "created": ts(1), "timestamp": ts(1)}
    ours = changed(base, ts(2), value="ours")
    theirs = {"x_first": 1, **changed(base, ts(3), value="theirs")}
    merged, _ = both_ways(base, ours, theirs)
    assert list(merged) == list(theirs)


# --- symmetry and idempotence, over many generated cases ------------------------------------

STAMPS = [ts(d) for d in range(1, 8)]


def _random_entry(rnd: random.Random) -> dict[str, Any]:
    e = entry(rnd.choice(["a", "b", 3, ["x"], {"k": 1}]), rnd.choice(STAMPS),
              tags=rnd.choice([[], ["x"], ["x", "y"]]), created=rnd.choice(STAMPS))
    if rnd.random() < 0.3:
        e["status"] = rnd.choice(["amended", "resolved", "superseded"])
        e["status_timestamp"] = rnd.choice(STAMPS)
        if rnd.random() < 0.5:
            e["status_note"] = rnd.choice(["n1", "n2"])
    if rnd.random() < 0.3:
        e["x_unknown"] = rnd.randint(0, 2)
    return e


def _random_change(rnd: random.Random, base: dict[str, Any] | None) -> dict[str, Any] | None:
    if base is None:
        return _random_entry(rnd) if rnd.random() < 0.6 else None
    if rnd.random() < 0.12:
        return None
    out = copy.deepcopy(base)
    for _ in range(rnd.randint(0, 3)):
        name = rnd.choice(list(out) + ["derivation", "status", "status_note", "x_new"])
        if name in ("created", "timestamp", "status_timestamp"):
            out[name] = rnd.choice(STAMPS)
        elif rnd.random() < 0.2:
            out.pop(name, None)
        else:
            out[name] = rnd.choice(["a", "b", 7, ["x"], None])
    return out


def _cases(seed: int, count: int):
    rnd = random.Random(seed)
    for _ in range(count):
        base = _random_entry(rnd) if rnd.random() < 0.8 else None
        yield base, _random_change(rnd, base), _random_change(rnd, base)


def test_merge_entry_is_symmetric_byte_for_byte():
    for base, ours, theirs in _cases(20250301, 3000):
        one = merge_entry(copy.deepcopy(base), copy.deepcopy(ours), copy.deepcopy(theirs))
        two = merge_entry(copy.deepcopy(base), copy.deepcopy(theirs), copy.deepcopy(ours))
        assert json.dumps(one[0], ensure_ascii=False) == json.dumps(two[0], ensure_ascii=False), \
            (base, ours, theirs)
        assert one[1] == two[1], (base, ours, theirs)


def test_merge_entry_is_idempotent():
    for base, ours, theirs in _cases(7, 3000):
        assert merge_entry(base, ours, ours) == (ours, False)
        assert merge_entry(ours, ours, ours) == (ours, False)
        assert merge_entry(base, base, theirs)[0] == theirs
        merged, _ = merge_entry(base, ours, theirs)
        # merging again once one side is an ancestor of the result changes nothing
        assert merge_entry(theirs, merged, theirs)[0] == merged, (base, ours, theirs)
        assert merge_entry(ours, ours, merged)[0] == merged, (base, ours, theirs)
        assert merge_entry(ours, merged, ours)[0] == merged, (base, ours, theirs)


def _random_store(rnd: random.Random, base: dict[str, Any] | None) -> dict[str, Any]:
    b_entries = (base or {}).get("entries", {})
    entries: dict[str, Any] = {}
    for key, e in b_entries.items():
        new = _random_change(rnd, e)
        if new is not None:
            entries[key] = new
    for _ in range(rnd.randint(0, 3)):
        entries[rnd.choice(["new_a", "new_b", "new_c", "new_d"])] = _random_entry(rnd)
    return store(entries, last_updated=rnd.choice(STAMPS))


def test_merge_store_is_symmetric_byte_for_byte():
    rnd = random.Random(42)
    for _ in range(400):
        base = store({f"k{i}": _random_entry(rnd) for i in range(rnd.randint(0, 5))})
        ours, theirs = _random_store(rnd, base), _random_store(rnd, base)
        one = merge_store(copy.deepcopy(base), copy.deepcopy(ours), copy.deepcopy(theirs))
        two = merge_store(copy.deepcopy(base), copy.deepcopy(theirs), copy.deepcopy(ours))
        assert serialize(one.data) == serialize(two.data), (base, ours, theirs)
        assert sorted(one.value_conflicts) == sorted(two.value_conflicts)
        # and merge_store_bytes, as the sync and the merge driver call it
        raw = [serialize(d) for d in (base, ours, theirs)]
        assert merge_store_bytes(raw[0], raw[1], raw[2])[0] == merge_store_bytes(raw[0], raw[2], raw[1])[0]


def test_a_merge_keeps_the_text_of_entries_it_takes_as_they_were_and_writes_what_serialize_writes():
    """merge_store_bytes copies an unchanged entry's text from the side it comes from
    (textlayout.serialize_reusing) instead of encoding it again: the bytes are the same
    as serializing the merged data whole, and another layout falls back to that."""
    rnd = random.Random(11)
    for _ in range(300):
        base = store({f"k{i}": _random_entry(rnd) for i in range(rnd.randint(0, 6))})
        ours, theirs = _random_store(rnd, base), _random_store(rnd, base)
        raw = [serialize(d) for d in (base, ours, theirs)]
        if len(set(raw)) < 3:
            continue  # a side taken whole: its exact bytes (the shortcuts)
        merged, _ = merge_store_bytes(*raw)
        whole = merge_store(json.loads(raw[0]), json.loads(raw[1]), json.loads(raw[2]))
        assert merged == serialize(whole.data), (base, ours, theirs)
    compact = [json.dumps(d, ensure_ascii=False).encode() for d in (base, ours, theirs)]
    if len({bytes(c) for c in compact}) == 3:
        merged, _ = merge_store_bytes(*compact)
        assert merged == serialize(json.loads(merged))


def test_merge_store_is_idempotent():
    rnd = random.Random(3)
    for _ in range(200):
        base = store({f"k{i}": _random_entry(rnd) for i in range(rnd.randint(0, 5))})
        ours, theirs = _random_store(rnd, base), _random_store(rnd, base)
        raw = [serialize(d) for d in (base, ours, theirs)]
        assert merge_store_bytes(raw[0], raw[1], raw[1]) == (raw[1], [])
        assert merge_store_bytes(raw[0], raw[0], raw[2]) == (raw[2], [])
        merged, _ = merge_store_bytes(*raw)
        again, conflicts = merge_store_bytes(raw[2], merged, raw[2])
        assert again == merged and conflicts == []


# Ties that the generated cases avoid: the same instant spelled two ways (another
# implementation writing fractions of a second), or equal stamps on a top-level field.

def test_merge_entry_is_symmetric_when_created_is_one_instant_spelled_two_ways():
    ours = entry("here", ts(2), created="2025-03-01T00:00:00Z")
    theirs = entry("there", ts(3), created="2025-03-01T00:00:00.000Z")
    both_ways(None, ours, theirs)


def test_merge_store_top_level_key_order_is_symmetric():
    base = store({"k": entry("v", ts(1))})
    ours = store({"k": entry("v", ts(1))}, last_updated=ts(2), x_meta="from another tool")
    theirs = store({"k": entry("w", ts(3))}, last_updated=ts(3))
    store_both_ways(base, ours, theirs)


def test_merge_store_top_level_conflict_with_equal_last_updated_is_symmetric():
    base = store({}, x_meta="zero")
    store_both_ways(base, store({}, last_updated=ts(2), x_meta="one"),
                    store({}, last_updated=ts(2), x_meta="two"))


# --- merge_store -------------------------------------------------------------------------

def test_merge_store_merges_entries_and_lists_every_value_conflict():
    base = store({"a": entry("a0", ts(1)), "b": entry("b0", ts(1)), "c": entry("c0", ts(1)),
                  "gone": entry("g", ts(1))})
    ours = store({"a": entry("a-ours", ts(3)), "b": entry("b-ours", ts(2)), "c": entry("c0", ts(1)),
                  "mine": entry("m", ts(2))}, last_updated=ts(3))
    theirs = store({"a": entry("a-theirs", ts(2)), "b": entry("b-theirs", ts(4)),
                    "c": entry("c-theirs", ts(2)), "gone": entry("g", ts(1)),
                    "yours": entry("y", ts(2, 1))}, last_updated=ts(4))
    result = store_both_ways(base, ours, theirs)
    entries = result.data["entries"]
    assert entries["a"]["value"] == "a-ours"
    assert entries["b"]["value"] == "b-theirs"
    assert entries["c"]["value"] == "c-theirs"
    assert "gone" not in entries
    assert entries["mine"]["value"] == "m" and entries["yours"]["value"] == "y"
    assert sorted(result.value_conflicts) == ["a", "b"]
    assert result.data["last_updated"] == ts(4)


def test_merge_store_keeps_the_ancestors_order_then_new_keys_by_created_then_key():
    base = store({"z": entry("z", ts(1)), "a": entry("a", ts(1))})
    ours = store({"z": entry("z", ts(1)), "a": entry("a", ts(1)), "late": entry("l", ts(5)),
                  "b_same": entry("s", ts(3))})
    theirs = store({"a": entry("a", ts(1)), "z": entry("z", ts(1)), "early": entry("e", ts(2)),
                    "a_same": entry("s", ts(3))})
    result = store_both_ways(base, ours, theirs)
    assert list(result.data["entries"]) == ["z", "a", "early", "a_same", "b_same", "late"]


def test_merge_store_keeps_unknown_top_level_keys():
    base = store({}, x_kept="base")
    ours = store({"k": entry("v", ts(2))}, last_updated=ts(2), x_kept="base")
    theirs = store({}, last_updated=ts(3), x_kept="changed there", x_new="new there")
    for result in (merge_store(base, ours, theirs), merge_store(base, theirs, ours)):
        # the values; where they land is test_merge_store_top_level_key_order_is_symmetric
        assert result.data["x_kept"] == "changed there"
        assert result.data["x_new"] == "new there"
        assert result.data["type"] == "shared" and result.data["version"] == "1"
        assert list(result.data["entries"]) == ["k"]


def test_merge_store_with_a_file_missing_on_one_side():
    theirs = store({"k": entry("v", ts(2))})
    assert merge_store(None, None, theirs).data["entries"] == theirs["entries"]
    base = store({"k": entry("v", ts(1)), "j": entry("j", ts(1))})
    changed_there = store({"k": entry("v2", ts(2)), "j": entry("j", ts(1))})
    # the file was removed here: the entry changed there is kept, the untouched one is not
    result = merge_store(base, None, changed_there)
    assert list(result.data["entries"]) == ["k"]


@pytest.mark.parametrize("side", ["base", "ours", "theirs"])
def test_merge_store_refuses_another_format_version_on_any_side(side):
    files = {"base": store({}), "ours": store({"a": entry("a", ts(2))}),
             "theirs": store({"b": entry("b", ts(2))})}
    files[side]["version"] = "2"
    with pytest.raises(Conflict) as caught:
        merge_store(files["base"], files["ours"], files["theirs"], "memory/shared.json")
    text = str(caught.value)
    assert "memory/shared.json" in text and "'2'" in text and "version" in text
    assert {"base": "the ancestor", "ours": "here", "theirs": "the remote"}[side] in text


def test_merge_store_bytes_shortcuts_return_the_exact_bytes():
    base = b'{"type": "shared", "version": "1", "entries": {}}'
    other = b'{"type":"shared","version":"1","entries":{"k":{}}}'  # not ctx's layout: kept as is
    assert merge_store_bytes(base, base, other) == (other, [])
    assert merge_store_bytes(base, other, base) == (other, [])
    assert merge_store_bytes(base, other, other) == (other, [])
    assert merge_store_bytes(None, None, other) == (other, [])
    assert merge_store_bytes(base, None, base) == (None, [])


def test_merge_store_bytes_writes_ctx_layout():
    base = serialize(store({"k": entry("v", ts(1))}))
    ours = serialize(store({"k": entry("v", ts(1)), "é": entry("ünïcode", ts(2))}))
    theirs = serialize(store({"k": entry("w", ts(3))}))
    merged, conflicts = merge_store_bytes(base, ours, theirs)
    assert conflicts == []
    assert merged == serialize(json.loads(merged))
    assert merged.endswith(b"}\n") and b'\n  "entries": {' in merged
    assert "ünïcode".encode() in merged


@pytest.mark.parametrize("bad", [b"{not json", b"[1, 2]", b'{"version": "1", "entries": []}',
                                 b"\xff\xfe"])
def test_merge_store_bytes_refuses_what_is_not_a_store_file(bad):
    good = serialize(store({"k": entry("v", ts(2))}))
    with pytest.raises(Conflict) as caught:
        merge_store_bytes(serialize(store({})), good, bad, "memory/shared.json")
    assert "memory/shared.json" in str(caught.value)
    assert parse(None, "x") is None


# --- the tree merge ----------------------------------------------------------------------

@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "r"), bare=True)


def tree(repo: pygit2.Repository, files: dict[str, bytes | str]) -> pygit2.Tree:
    data = {p: (v.encode() if isinstance(v, str) else v) for p, v in files.items()}
    return repo[build_tree(repo, data)].peel(pygit2.Tree)


def merge_file(repo: pygit2.Repository, path: str, base: bytes | str, ours: bytes | str,
               theirs: bytes | str) -> TreeMerge:
    """The tree merge of three trees that each hold only ``path``."""
    return merge_trees(repo, tree(repo, {path: base}), tree(repo, {path: ours}), tree(repo, {path: theirs}))


SUMMARY = "sessions/2025-03-04_session.md"


def summary(text: str) -> str:
    return f"# Session 2025-03-04\n\n## Open\n- {text}\n"


SUMMARY_HANG = ("BUG: ctxgit/treemerge.py _next_name is given the path 'sessions/<name>', so its "
                "date regex never matches and it loops forever: merging two different summaries "
                "of one name never returns")


def test_summaries_from_both_sides_are_kept_with_the_next_free_suffix(repo):
    base = tree(repo, {"RULES.md": "rules\n"})
    ours = tree(repo, {"RULES.md": "rules\n", SUMMARY: summary("ours")})
    theirs = tree(repo, {"RULES.md": "rules\n", SUMMARY: summary("theirs"),
                         "sessions/2025-03-04b_session.md": summary("theirs, later")})
    with deadline(1):
        one = merge_trees(repo, base, ours, theirs)
        two = merge_trees(repo, base, theirs, ours)
    assert one.files == two.files  # both machines agree on which name each keeps
    names = sorted(p for p in one.files if p.startswith("sessions/"))
    assert names == ["sessions/2025-03-04_session.md", "sessions/2025-03-04b_session.md",
                     "sessions/2025-03-04c_session.md"]
    assert sorted(one.files[n] for n in names) == sorted(
        summary(t).encode() for t in ("ours", "theirs", "theirs, later"))
    assert one.files["sessions/2025-03-04b_session.md"] == summary("theirs, later").encode()
    assert one.renamed == [(SUMMARY, "sessions/2025-03-04c_session.md")]


def test_two_clashing_summaries_take_distinct_free_names(repo):
    b_name = "sessions/2025-03-04b_session.md"
    ours = tree(repo, {SUMMARY: summary("o1"), b_name: summary("o2")})
    theirs = tree(repo, {SUMMARY: summary("t1"), b_name: summary("t2")})
    with deadline(1):
        result = merge_trees(repo, None, ours, theirs)
    names = sorted(p for p in result.files if p.startswith("sessions/"))
    assert len(names) == 4
    assert sorted(result.files.values()) == sorted(summary(t).encode() for t in ("o1", "o2", "t1", "t2"))
    assert [new for _, new in result.renamed] == ["sessions/2025-03-04c_session.md",
                                                  "sessions/2025-03-04d_session.md"]


def test_rules_md_merges_by_line_and_reports_a_real_conflict_with_markers(repo):
    base = "one\ntwo\nthree\nfour\nfive\n"
    clean = merge_file(repo, "RULES.md", base, "ONE\ntwo\nthree\nfour\nfive\n", "one\ntwo\nthree\nfour\nFIVE\n")
    assert clean.files["RULES.md"] == b"ONE\ntwo\nthree\nfour\nFIVE\n"
    assert clean.text_conflicts == []
    clash = merge_file(repo, "RULES.md", base, "one\nHERE\nthree\nfour\nfive\n", "one\nTHERE\nthree\nfour\nfive\n")
    assert clash.text_conflicts == ["RULES.md"]
    text = clash.files["RULES.md"].decode()
    assert "<<<<<<<" in text and ">>>>>>>" in text and "HERE" in text and "THERE" in text


def test_gitignore_lines_from_both_sides_are_united(repo):
    result = merge_file(repo, ".gitignore", "memory/.lock\n", "memory/.lock\nours.log\n", "memory/.lock\ntheirs.log\n")
    assert result.files[".gitignore"] == b"memory/.lock\nours.log\ntheirs.log\n"
    assert result.text_conflicts == []


def test_store_files_in_a_tree_merge_entry_by_entry(repo):
    base = serialize(store({"k": entry("v", ts(1))}))
    ours = serialize(store({"k": entry("v", ts(1)), "a": entry("a", ts(2))}))
    theirs = serialize(store({"k": entry("later", ts(3)), "b": entry("b", ts(2))}))
    result = merge_file(repo, "memory/shared.json", base, ours, theirs)
    merged = json.loads(result.files["memory/shared.json"])["entries"]
    assert merged["k"]["value"] == "later" and {"a", "b"} <= set(merged)
    assert result.value_conflicts == []


def test_value_conflicts_are_named_store_slash_key(repo):
    base = serialize(store({"k": entry("v", ts(1))}))
    result = merge_file(repo, "memory/agent.json", base, serialize(store({"k": entry("o", ts(2))})),
                        serialize(store({"k": entry("t", ts(3))})))
    assert result.value_conflicts == ["agent/k"]


def _tree_with_link(repo: pygit2.Repository, path: str, target: str = "../RULES.md") -> pygit2.Tree:
    """A tree whose ``path`` is a symbolic link (built with libgit2)."""
    files = {"RULES.md": b"rules\n"}
    base_id = build_tree(repo, files)
    directory, name = path.split("/")
    sub = repo.TreeBuilder()
    sub.insert(name, repo.create_blob(target.encode()), FileMode.LINK)
    top = repo.TreeBuilder(repo[base_id].peel(pygit2.Tree))
    top.insert(directory, sub.write(), FileMode.TREE)
    return repo[top.write()].peel(pygit2.Tree)


@pytest.mark.parametrize("path", ["memory/shared.json", SUMMARY])
def test_a_link_from_the_remote_is_refused(repo, path):
    linked = _tree_with_link(repo, path)
    with pytest.raises(Conflict) as caught:
        merge_trees(repo, None, tree(repo, {"RULES.md": "rules\n"}), linked)
    assert path in str(caught.value) and "the remote" in str(caught.value)
    with pytest.raises(Conflict):
        flatten(repo, linked, "the remote")


def test_lock_and_temporary_files_in_a_tree_are_never_taken(repo):
    theirs = tree(repo, {"memory/.lock": "stale", "memory/.shared.json.x1.tmp": "half",
                         "RULES.md": "rules\n"})
    assert flatten(repo, theirs, "the remote") == {"RULES.md": b"rules\n"}


# --- the merge driver (git's protocol) ------------------------------------------------------

def test_run_merge_driver_merges_into_ours_in_place(tmp_path, capsys):
    from ctxgit.sync.remote import run_merge_driver
    files = {}
    for name, data in (("base", store({"k": entry("v", ts(1))})),
                       ("ours", store({"k": entry("ours", ts(2)), "a": entry("a", ts(2))})),
                       ("theirs", store({"k": entry("theirs", ts(3)), "b": entry("b", ts(2))}))):
        files[name] = tmp_path / name
        files[name].write_bytes(serialize(data))
    code = run_merge_driver(str(files["base"]), str(files["ours"]), str(files["theirs"]),
                            "memory/shared.json")
    assert code == 0
    merged = json.loads(files["ours"].read_text())["entries"]
    assert merged["k"]["value"] == "theirs" and {"a", "b"} <= set(merged)
    assert "memory/shared.json: both sides changed k" in capsys.readouterr().err


@pytest.mark.slow
def test_a_merge_driver_out_of_room_leaves_ours_whole(tmp_path):
    """The disk fills while ``ctx merge-driver`` writes %A: git takes what %A holds as
    the result, so it must find ours as it was, never a part of the merge."""
    import resource
    import subprocess

    from support.gitutil import CTX_EXE
    tmp_path = tmp_path / "merging"
    tmp_path.mkdir()
    ours = serialize(store({f"a{i}": entry("a" * 200, ts(2)) for i in range(20)}))
    (tmp_path / "base").write_bytes(serialize(store({})))
    (tmp_path / "ours").write_bytes(ours)
    (tmp_path / "theirs").write_bytes(serialize(store({f"b{i}": entry("b" * 200, ts(3)) for i in range(20)})))
    limit = len(ours) + 500  # room for ours, not for the merge of both

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    done = subprocess.run([str(CTX_EXE), "merge-driver", "base", "ours", "theirs", "memory/shared.json"],
                          cwd=tmp_path, capture_output=True, text=True, preexec_fn=apply,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                               "PYTHONDONTWRITEBYTECODE": "1"})  # (a .pyc cut short by the limit)
    assert done.returncode != 0, done
    assert (tmp_path / "ours").read_bytes() == ours
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base", "ours", "theirs"]


def test_run_merge_driver_treats_an_empty_ancestor_as_absent(tmp_path):
    from ctxgit.sync.remote import run_merge_driver
    (tmp_path / "base").write_bytes(b"")
    (tmp_path / "ours").write_bytes(serialize(store({"a": entry("a", ts(2))})))
    (tmp_path / "theirs").write_bytes(serialize(store({"b": entry("b", ts(3))})))
    assert run_merge_driver(*(str(tmp_path / n) for n in ("base", "ours", "theirs")), "p") == 0
    assert set(json.loads((tmp_path / "ours").read_text())["entries"]) == {"a", "b"}


def test_run_merge_driver_refuses_another_version_and_leaves_ours_alone(tmp_path, capsys):
    from ctxgit.sync.remote import run_merge_driver
    ours = serialize(store({"a": entry("a", ts(2))}))
    (tmp_path / "base").write_bytes(serialize(store({})))
    (tmp_path / "ours").write_bytes(ours)
    (tmp_path / "theirs").write_bytes(serialize(dict(store({"b": entry("b", ts(3))}), version="2")))
    code = run_merge_driver(*(str(tmp_path / n) for n in ("base", "ours", "theirs")),
                            "memory/shared.json")
    assert code != 0
    assert (tmp_path / "ours").read_bytes() == ours
    assert "version" in capsys.readouterr().err
