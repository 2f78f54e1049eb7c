"""A get straight from the store file (ctx/storage/straight.py) answers what the index and
the parsed file answer, and only when the index's record shows these very bytes valid."""

from __future__ import annotations

import json
import os
import random

import pytest

from ctx.errors import NotFound
from ctx.model import STORES
from ctx.storage import straight
from ctx.storage.index import Index
from support.contexts import Context, index_file
from support.stores import store_path


def _state(root):
    return index_file(root).parent


@pytest.fixture
def run(run):
    """``run``, in a root made by a first write (its repository holds the index's folder)."""
    assert run("set", "seed", "the first write").exit_code == 0
    return run


def _no_index(monkeypatch):
    """Make any use of the index a failure: the get must not need it."""
    def refuse(*args, **kwargs):
        raise AssertionError("the index was opened")
    monkeypatch.setattr(Index, "open", classmethod(refuse))


def test_a_written_store_is_read_straight(root, run, monkeypatch):
    assert run("set", "k", "one", "--tag", "t").exit_code == 0
    assert run("set", "k2", {"a": [1, 2]}.__repr__().replace("'", '"')).exit_code == 0
    assert os.path.exists(straight.known_path(_state(root)))
    expected = Context(root=root, cache="off")
    _no_index(monkeypatch)
    ctx = Context(root=root)
    assert ctx.get("k") == expected.get("k") and ctx.get("k2") == expected.get("k2")
    assert ctx.get("k2")["value"] == {"a": [1, 2]}
    with pytest.raises(NotFound):
        ctx.get("missing")   # the layout proves it absent: no index either


@pytest.mark.parametrize("seed", range(4))
def test_straight_and_parsed_agree_after_random_writes(root, run, seed):
    rng = random.Random(seed)
    keys = [f"k{i}" for i in range(12)] + ["ünï", "a.b-c_d", "x" * 60]
    for _ in range(30):
        key = rng.choice(keys)
        action = rng.random()
        if action < 0.6:
            assert run("set", key, " ".join(rng.choices(["alpha", "é", "42", "\"q\"", "{"], k=3))).exit_code == 0
        elif action < 0.8:
            run("amend", key, "a note")
        else:
            run("delete", key)
    parsed = Context(root=root, cache="off")
    for key in keys + ["never"]:
        got = straight.entry(root, _state(root), "shared", key)
        assert got is not straight.UNKNOWN
        assert got == parsed.find(key, "shared"), key


def test_an_outside_edit_is_never_read_straight(root, run):
    assert run("set", "k", "one").exit_code == 0
    path = store_path(root, "shared")
    data = json.loads(path.read_text())
    data["entries"]["k"]["value"] = "two, longer"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    assert straight.entry(root, _state(root), "shared", "k") is straight.UNKNOWN
    assert Context(root=root).get("k")["value"] == "two, longer"


def test_a_racy_change_with_the_same_identity_is_caught_by_its_crc(root, run):
    """Same size, same inode, mtime put back: only the bytes tell (the index's CRC)."""
    assert run("set", "k", "one").exit_code == 0
    path = store_path(root, "shared")
    st = os.stat(path)
    raw = path.read_bytes()
    changed = raw.replace(b'"one"', b'"two"')
    with open(path, "r+b") as f:   # in place: the inode stays
        f.write(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_ino == st.st_ino and os.stat(path).st_size == st.st_size
    assert straight.entry(root, _state(root), "shared", "k") is straight.UNKNOWN
    assert Context(root=root).get("k")["value"] == "two"


def test_a_racy_record_is_checked_then_cleared(root, run, monkeypatch):
    assert run("set", "k", "one").exit_code == 0
    rows = straight._rows(_state(root))
    assert rows["shared"][3] == 1   # just written: racy
    monkeypatch.setattr(straight, "RACY_NS", 0)
    assert straight.entry(root, _state(root), "shared", "k")["value"] == "one"
    assert straight._rows(_state(root))["shared"][3] == 0


@pytest.mark.parametrize("damage", [b"", b"garbage", b"\x04{}", None])
def test_a_damaged_or_missing_record_means_ask_the_index(root, run, damage):
    assert run("set", "k", "one").exit_code == 0
    known = straight.known_path(_state(root))
    if damage is None:
        os.remove(known)
    else:
        with open(known, "wb") as f:
            f.write(damage)
    assert straight.entry(root, _state(root), "shared", "k") is straight.UNKNOWN
    assert Context(root=root).get("k")["value"] == "one"


def test_a_key_spelled_with_escapes_is_left_to_the_index(root, run):
    """A valid file, edited by hand, that spells a key with \\u escapes: the layout cannot
    prove the key absent, so the index (which parsed the file) answers."""
    assert run("set", "other", "x").exit_code == 0
    path = store_path(root, "shared")
    text = path.read_text().replace('\n    "other": {', '\n    "\\u006bey": {')
    path.write_text(text)
    assert Context(root=root).get("key")["value"] == "x"   # the index reads the file whole
    assert straight.entry(root, _state(root), "shared", "key") is straight.UNKNOWN
    assert Context(root=root).get("key")["value"] == "x"


def test_a_store_over_the_limit_is_read_through_the_index(root, run, monkeypatch):
    assert run("set", "k", "one").exit_code == 0
    monkeypatch.setattr(straight, "LIMIT", 10)
    assert straight.entry(root, _state(root), "shared", "k") is straight.UNKNOWN
    assert Context(root=root).get("k")["value"] == "one"


def test_reindex_forgets_the_record_and_the_rebuild_keeps_it_again(root, run, monkeypatch):
    assert run("set", "k", "one").exit_code == 0
    forgotten, real = [], straight.forget
    monkeypatch.setattr(straight, "forget", lambda state: (forgotten.append(state), real(state)))
    assert run("reindex").exit_code == 0
    assert forgotten
    assert straight.entry(root, _state(root), "shared", "k")["value"] == "one"


def test_every_store_can_be_read_straight(root, run):
    for store in STORES:
        assert run("set", "k", f"in {store}", "--store", store, "--source", "operator").exit_code == 0
    for store in STORES:
        assert straight.entry(root, _state(root), store, "k")["value"] == f"in {store}"
