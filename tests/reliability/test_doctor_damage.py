"""``ctx doctor --check`` finds what ``git fsck`` would, and damage edited in by hand
(issue 35, "Faults"): an object of main's history deleted, an emptied or garbled
``.git/index``, a key written twice anywhere in a store file, a timestamp more than a
day ahead, temporaries of unfinished writes. Each is one line, and exit 1."""

from __future__ import annotations

import json
import subprocess

import pytest

from support import relutil as R
from support.gitutil import git_out

pytestmark = pytest.mark.slow  # real ctx processes


def _seeded(root, author="Agent Doctor"):
    env = R.ctx_env(root, author=author)
    for i in range(3):
        assert R.run_ctx(["set", f"k{i}", f"value {i}"], env).returncode == 0
    assert R.run_ctx(["doctor", "--check"], env).returncode == 0
    return env


def _check(env, *words):
    done = R.run_ctx(["doctor", "--check"], env)
    assert done.returncode == 1, done.describe()
    assert "in order" not in done.stdout, done.describe()
    lines = [line for line in done.stdout.splitlines() if all(w in line for w in words)]
    assert lines, done.describe()
    assert "Traceback" not in done.stderr, done.describe()
    return done


def test_an_object_missing_from_the_history_is_found(root):
    env = _seeded(root)
    first = git_out(root, "rev-list", "--max-parents=0", "HEAD").strip()
    blob = git_out(root, "rev-parse", f"{first}:memory/shared.json").strip()
    loose = root / ".git" / "objects" / blob[:2] / blob[2:]
    packs = root / ".git" / "objects" / "pack"
    if not loose.exists():  # packed: take every pack apart into loose objects first
        for pack in sorted(packs.glob("*.pack")):
            data = pack.read_bytes()
            for name in packs.glob(pack.stem + ".*"):
                name.unlink()
            subprocess.run(["git", "-C", str(root), "unpack-objects", "-q"], input=data, check=True)
    loose.unlink()
    assert R.git(root, "fsck", "--full", check=False).returncode != 0
    _check(env, "missing", blob)


@pytest.mark.parametrize("how", ["empty", "garbled"])
def test_an_unreadable_index_is_found(root, how):
    env = _seeded(root)
    index = root / ".git" / "index"
    index.write_bytes(b"" if how == "empty" else b"DIRC\x00\x00\x00\x02garbage that is no index")
    _check(env, ".git/index")


@pytest.mark.parametrize("where", ["entry-key", "field", "nested"])
def test_a_key_written_twice_anywhere_is_found_and_refused_by_get(root, where):
    env = _seeded(root)
    path = R.store_file(root, "shared")
    text = path.read_text()
    if where == "entry-key":  # on one line, outside ctx's layout
        data = json.loads(text)
        entry = json.dumps(data["entries"]["k0"])
        text = ('{"type": "shared", "version": "1", "last_updated": null, "entries": {"k0": %s, "k0": %s}}'
                % (entry, entry.replace("value 0", "other")))
    elif where == "field":  # in ctx's own layout: a hand-added line
        text = text.replace('      "value": "value 0",\n', '      "value": "value 0",\n      "value": "other",\n')
    else:
        data = json.loads(text)  # a value that is an object (an import can bring one)
        data["entries"]["k2"]["value"] = {"a": {"b": 1}}
        text = json.dumps(data, indent=2, ensure_ascii=False).replace('"b": 1', '"b": 1, "b": 2') + "\n"
    path.write_text(text)
    _check(env, "twice")
    got = R.run_ctx(["get", "k0"], env)
    assert got.returncode == 3 and "twice" in got.stderr, got.describe()
    assert R.one_line_error(got) is None, got.describe()
    before = path.read_bytes()
    done = R.run_ctx(["set", "k1", "changed"], env)
    assert done.returncode != 0 and path.read_bytes() == before, done.describe()


def test_a_timestamp_from_the_future_is_named(root):
    env = _seeded(root)
    path = R.store_file(root, "shared")
    data = json.loads(path.read_text())
    data["entries"]["k1"]["timestamp"] = "2999-01-01T00:00:00Z"
    path.write_text(json.dumps(data, indent=2) + "\n")
    _check(env, "k1", "future")


def test_temporaries_of_unfinished_writes_are_named_and_repaired(root):
    env = _seeded(root)
    left = root / "memory" / ".shared.json.0123456789ab.tmp"
    left.write_bytes(b"{}")
    _check(env, "temporary", left.name)
    repaired = R.run_ctx(["doctor"], env)
    assert not left.exists(), repaired.describe()
    assert R.run_ctx(["doctor", "--check"], env).returncode == 0
