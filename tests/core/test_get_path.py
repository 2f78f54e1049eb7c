"""`ctx get` has one read path: the read index (ctx/storage/index.py), rebuilt from the
store file whenever the file is not the one indexed; without an index, the parsed file.
Whatever was done to the file (an edit outside ctx, a racy rewrite with the same
identity, a key spelled with escapes, a big file), the answer is the file's."""

from __future__ import annotations

import json
import os
import random

import pytest

from ctx.errors import NotFound
from ctx.model import STORES
from ctx.storage.index import Index
from support.contexts import Context, index_file
from support.stores import make_entry, store_path, write_store_file


@pytest.fixture
def run(run):
    """``run``, in a root made by a first write (its repository holds the index's folder)."""
    assert run("set", "seed", "the first write").exit_code == 0
    return run


def _asked(monkeypatch) -> list[tuple[str, str]]:
    """Each (store, key) the read index is asked for, from now on."""
    asked: list[tuple[str, str]] = []
    real = Index.get

    def get(self, store: str, key: str):
        asked.append((store, key))
        return real(self, store, key)
    monkeypatch.setattr(Index, "get", get)
    return asked


def test_a_get_asks_the_read_index(root, run, monkeypatch):
    assert run("set", "k", "one", "--tag", "t").exit_code == 0
    asked = _asked(monkeypatch)
    assert Context(root=root).get("k")["value"] == "one"
    with pytest.raises(NotFound):
        Context(root=root).get("missing")
    assert asked == [("shared", "k"), ("shared", "missing")]


def test_the_command_asks_the_read_index(root, run, monkeypatch):
    assert run("set", "k", "one").exit_code == 0
    asked = _asked(monkeypatch)
    result = run("get", "k")
    assert result.exit_code == 0 and "one" in result.stdout
    assert asked == [("shared", "k")]


def test_the_state_folder_keeps_no_second_copy_of_the_index(root, run):
    """The index's rows live in its file alone: no other file of them beside it."""
    assert run("set", "k", "one").exit_code == 0
    assert run("get", "k").exit_code == 0
    assert sorted(p.name for p in index_file(root).parent.glob("index-*")) == [index_file(root).name]


@pytest.mark.parametrize("seed", range(4))
def test_a_get_answers_what_the_parsed_file_holds_after_random_writes(root, run, seed):
    rng = random.Random(seed)
    keys = [f"k{i}" for i in range(12)] + ["ünï", "a.b-c_d", "x" * 60]
    for _ in range(30):
        key, action = rng.choice(keys), rng.random()
        if action < 0.6:
            assert run("set", key, " ".join(rng.choices(["alpha", "é", "42", "\"q\"", "{"], k=3))).exit_code == 0
        elif action < 0.8:
            run("amend", key, "a note")
        else:
            run("delete", key)
    parsed, indexed = Context(root=root, cache="off"), Context(root=root)
    for key in keys + ["never"]:
        assert indexed.find(key, "shared") == parsed.find(key, "shared"), key


def test_an_outside_edit_is_read_at_once(root, run):
    assert run("set", "k", "one").exit_code == 0
    assert run("get", "k").exit_code == 0
    path = store_path(root, "shared")
    data = json.loads(path.read_text())
    data["entries"]["k"]["value"] = "two, longer"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    assert Context(root=root).get("k")["value"] == "two, longer"
    assert "two, longer" in run("get", "k").stdout


def test_a_racy_change_with_the_same_identity_is_caught_by_its_crc(root, run):
    """Same size, same inode, mtime put back: only the bytes tell (the index's CRC)."""
    assert run("set", "k", "one").exit_code == 0
    assert run("get", "k").exit_code == 0
    path = store_path(root, "shared")
    st = os.stat(path)
    changed = path.read_bytes().replace(b'"one"', b'"two"')
    with open(path, "r+b") as f:   # in place: the inode stays
        f.write(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_ino == st.st_ino and os.stat(path).st_size == st.st_size
    assert Context(root=root).get("k")["value"] == "two"


def test_a_key_spelled_with_escapes_is_found(root, run):
    """A valid file, edited by hand, that spells a key with \\u escapes: the index parsed it whole."""
    assert run("set", "other", "x").exit_code == 0
    path = store_path(root, "shared")
    path.write_text(path.read_text().replace('\n    "other": {', '\n    "\\u006bey": {'))
    assert Context(root=root).get("key")["value"] == "x"
    assert "x" in run("get", "key").stdout


def test_a_big_store_file_is_read_right(root, run):
    many = {f"e{i:05d}": make_entry("v" * 200 + str(i)) for i in range(20000)}
    write_store_file(root, "shared", many)
    assert os.path.getsize(store_path(root, "shared")) > 4 << 20
    assert Context(root=root).get("e12345")["value"].endswith("12345")
    assert run("set", "e12345", "changed").exit_code == 0
    assert Context(root=root).get("e12345")["value"] == "changed"
    assert Context(root=root).get("e00007")["value"].endswith("7")


def test_every_store_is_read(root, run):
    for store in STORES:
        assert run("set", "k", f"in {store}", "--store", store, "--source", "operator").exit_code == 0
    for store in STORES:
        assert Context(root=root).get("k", store)["value"] == f"in {store}"


def test_a_missing_or_damaged_index_is_made_again(root, run):
    assert run("set", "k", "one").exit_code == 0
    os.remove(index_file(root))
    assert Context(root=root).get("k")["value"] == "one"
    index_file(root).write_bytes(b"not a database")
    assert Context(root=root).get("k")["value"] == "one"
    assert "one" in run("get", "k").stdout
