"""The read index's tag table (``entry_tags`` in ctx/storage/indextables.py): a row per
entry and tag it is found by, kept in step by every write and every rebuild, so a filter
by tag (``list --tag``, ``search --tag``) reads the rows of its tags alone. What a list by
tag prints is what a plain filter of every parsed entry prints, byte for byte."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ctx import model
from ctx.display import result_line
from ctx.model import STORES
from ctx.results import Filters, Result, result_order
from ctx.storage import indextables
from ctx.storage.index import Index
from support.contexts import index_file
from support.stores import make_entry, read_entries, store_path, write_store_file

TAGS = ["infra", "deploy", "decision", "c d", "é", "x"]
WORDS = ["alpha", "Beta", "émigré", "deploy", "\t", "a-very-long-word-that-runs-past-the-bound" * 3, "\n"]


def _entry(rng: random.Random) -> dict:
    stamp = rng.choice([f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T1{rng.randint(0, 9)}:00:0{rng.randint(0, 9)}Z",
                        "2026-03-01T10:00:00.250Z", "2026-03-01T10:00:00+02:00", "not a time"])
    value = rng.choice([" ".join(rng.choices(WORDS, k=rng.randint(1, 30))), 42, {"k": "v"}, ["a", 1], None, True,
                        "[amended 2026-01-01] note\nthe value"])
    tags: list = rng.sample(TAGS, rng.randint(0, 3))
    if rng.random() < 0.1:
        tags += [tags[0] if tags else "infra", 7]  # a tag twice, and one that is not text
    entry = make_entry(value, tags=tags, when=stamp)
    if rng.random() < 0.3:
        entry["status"] = rng.choice(["amended", "resolved", "superseded"])
        entry["status_note"] = rng.choice(["done", "by the other", ""])
    if rng.random() < 0.05:
        entry["tags"] = "infra"  # not a list: under no tag
    return entry


def _write(root, rng: random.Random, n: int = 40) -> None:
    """Every store file written outside ctx, with random entries."""
    for store in STORES:
        path = store_path(root, store)
        path.parent.mkdir(parents=True, exist_ok=True)
        entries = {f"{rng.choice(['k', 'K', 'é'])}{i:03d}": _entry(rng) for i in range(n)}
        path.write_text(json.dumps({"type": store, "version": "1", "entries": entries}, ensure_ascii=False))


def _plain(root, store: str | None, tags: list[str], limit: int | None) -> list[str]:
    """What a list by ``tags`` prints, found without ctx's reads: every entry of the files,
    filtered in this test, in result order."""
    found = []
    for name in [store] if store else STORES:
        for key, entry in read_entries(root, name).items():
            held = entry.get("tags")
            if isinstance(held, list) and any(tag in held for tag in tags):
                found.append(Result(name, key, entry))
    found.sort(key=result_order)
    return [result_line(r) for r in found[:limit]]


def _table(root) -> set[tuple[str, str, str]]:
    db = sqlite3.connect(index_file(root))
    try:
        return set(db.execute("SELECT tag, tag_store, tag_key FROM entry_tags"))
    finally:
        db.close()


def _expected_table(root) -> set[tuple[str, str, str]]:
    """The rows the tag table must hold: each entry's text tags (a tag named twice, once)."""
    return {(tag, store, key) for store in STORES for key, entry in read_entries(root, store).items()
            for tag in model.text_tags(entry) or ()}


def _args(rng: random.Random) -> tuple[list[str], str | None, list[str], int | None]:
    store, tags, limit = rng.choice([None, *STORES]), rng.sample(TAGS, rng.randint(1, 3)), rng.choice([None, 1, 3, 50])
    args = ["list", *[a for tag in tags for a in ("--tag", tag)]]
    args += ["--store", store] if store else []
    args += ["--limit", str(limit)] if limit is not None else []
    return args, store, tags, limit


@pytest.mark.parametrize("seed", range(6))
def test_a_list_by_tag_prints_what_a_plain_filter_of_every_entry_prints(root, run, seed):
    rng = random.Random(seed)
    assert run("set", "seed", str(seed)).exit_code == 0  # a repository, so the index can live in .git
    _write(root, rng)
    for _ in range(20):
        args, store, tags, limit = _args(rng)
        result = run(*args)
        assert result.exit_code == 0, result.output
        expected = _plain(root, store, tags, limit)
        assert result.stdout == ("\n".join(expected) + "\n" if expected else ""), args
        as_json = run(*args, "--json")
        assert [(r["store"], r["key"]) for r in json.loads(as_json.stdout)] == \
            [_named(line) for line in expected], args
    assert _table(root) == _expected_table(root)


def _named(line: str) -> tuple[str, str]:
    """(store, key) of a result line (the keys of these tests hold no space nor slash)."""
    store, rest = line.split("/", 1)
    return store, rest.split(" ", 1)[0]


@pytest.mark.parametrize("seed", range(3))
def test_writes_keep_the_tag_table_in_step_without_a_rebuild(root, run, seed, monkeypatch):
    rng = random.Random(seed)
    assert run("set", "seed", str(seed)).exit_code == 0
    _write(root, rng, 15)
    assert run("list", "--tag", "infra").exit_code == 0  # the index made from the files
    assert _table(root) == _expected_table(root)
    monkeypatch.setattr(Index, "rebuild", lambda *a, **k: pytest.fail("a store's rows were made again"))
    keys = {store: list(read_entries(root, store)) for store in STORES}
    for step in range(12):
        store = rng.choice(STORES)
        key = rng.choice(keys[store] + ["new_" + str(step)])
        tags = [t for tag in rng.sample(TAGS, rng.randint(0, 2)) for t in ("--tag", tag)]
        operation = rng.choice(["set", "set", "amend", "resolve", "delete"])
        if operation == "set":
            args = ["set", key, f"value {step} " + rng.choice(WORDS), "--store", store, *tags]
        elif operation == "delete":
            args = ["delete", key, "--store", store]
        elif operation == "amend":
            args = ["amend", key, f"note {step}", "--store", store]
        else:
            args = ["resolve", key, "--note", f"note {step}", "--store", store]
        result = run(*args, author="agent:t")
        assert result.exit_code in (0, 1), result.output  # (1: no such entry)
        assert _table(root) == _expected_table(root), (step, args)
        for tag in TAGS:
            expected = _plain(root, None, [tag], None)
            assert run("list", "--tag", tag).stdout == ("\n".join(expected) + "\n" if expected else ""), (step, tag)


def test_an_outside_edit_shows_at_once(root, run):
    assert run("set", "k", "one", "--tag", "infra").exit_code == 0
    assert run("list", "--tag", "infra").exit_code == 0
    path = store_path(root, "shared")
    data = json.loads(path.read_text())
    data["entries"]["k"]["value"] = "two"  # same size, at once: a racy change, the same identity maybe
    data["entries"]["k"]["tags"] = ["deploy"]
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    assert run("list", "--tag", "infra").stdout == ""
    assert run("list", "--tag", "deploy").stdout.split("  ")[-1] == "two\n"
    assert _table(root) == _expected_table(root)


def test_a_rebuild_makes_the_rows_of_its_store_again(root, run):
    assert run("set", "k", "one", "--tag", "infra").exit_code == 0
    assert run("set", "j", "two", "--tag", "deploy", "--store", "agent").exit_code == 0
    index = Index.open(root, index_file(root).parent, writable=True)
    assert index is not None
    index.rebuild("shared", {"k": make_entry("rebuilt", tags=["x", "x", 3, "c d"])}, None, b"")
    index.close()
    assert _table(root) == {("x", "shared", "k"), ("c d", "shared", "k"), ("deploy", "agent", "j")}


def test_the_command_prints_the_same_with_and_without_the_index(root, run):
    for key, value, tags in [("a", "first value", ["infra"]), ("b", "second", ["infra", "deploy"]),
                             ("c", "third", ["deploy"]), ("d", "untagged", [])]:
        args = [t for tag in tags for t in ("--tag", tag)]
        assert run("set", key, value, *args).exit_code == 0
    assert run("resolve", "b", "--note", "done").exit_code == 0
    for args in (["--tag", "infra"], ["--tag", "infra", "--tag", "deploy"], ["--tag", "deploy", "--limit", "1"],
                 ["--tag", "infra", "--store", "agent"], ["--tag", "none"], ["--tag", "infra", "--json"],
                 ["--tag", "infra", "--keys-only"], ["--tag", "deploy", "-v"]):
        fast = run("list", *args)
        parsed = run("list", *args, env={"CTX_NO_CACHE": "1"})
        assert fast.exit_code == parsed.exit_code == 0
        assert fast.stdout == parsed.stdout, args
    assert sorted(line.split("  ")[0] for line in run("list", "--tag", "infra").stdout.splitlines()) == \
        ["shared/a", "shared/b [resolved: done]"]  # (in the order of their times: a second apart or not)
    assert run("list", "--tag", "none").stdout == ""


def test_a_filter_by_tag_reads_the_tag_table_not_every_entry(root, run):
    """The plan of a filter by tags: the tag table's rows of those tags, then each entry by
    its key; never a scan of the entries."""
    assert run("set", "k", "one", "--tag", "infra").exit_code == 0
    assert run("list", "--tag", "infra").exit_code == 0  # the index is made
    index = Index.open(root, index_file(root).parent, writable=False)
    assert index is not None
    for stores in (list(STORES), ["agent"], ["shared", "operator"]):
        for tags in (["infra"], ["infra", "deploy"]):
            for limited in (False, True):
                plan = _plan(index, stores, Filters(tags=tuple(tags)).where(), limited)
                assert any(step.startswith("SEARCH entry_tags USING PRIMARY KEY (tag=?") for step in plan), plan
                assert not any(step.startswith("SCAN") for step in plan), plan
    index.close()


def _plan(index: Index, stores: list[str], where, limited: bool) -> list[str]:
    sql, params = index.selection(stores, where, limited)
    return [row[3] for row in index.db.execute("EXPLAIN QUERY PLAN " + sql, params)]


def test_a_list_by_one_tag_walks_its_rows_in_result_order(root, run):
    """One tag (what `ctx list --tag T` asks): the tag's rows are walked in the order the
    list prints them, each entry found by its key: no sort of what passed, so a limit stops
    the walk early, and with other filters too."""
    assert run("set", "k", "one", "--tag", "infra").exit_code == 0
    assert run("list", "--tag", "infra").exit_code == 0  # the index is made
    index = Index.open(root, index_file(root).parent, writable=False)
    assert index is not None
    for stores in (list(STORES), ["agent"]):
        for filters in (Filters(tags=("infra",)), Filters(tags=("infra",), status="current", prefix="k")):
            for limited in (False, True):
                plan = _plan(index, stores, filters.where(), limited)
                assert plan[0].startswith("SEARCH entry_tags USING PRIMARY KEY (tag=?)"), plan
                entries_by_key = "SEARCH entries USING PRIMARY KEY (store=? AND key=?)"
                assert any(step.startswith(entries_by_key) for step in plan), plan
                assert not any("TEMP B-TREE" in step or step.startswith("SCAN") for step in plan), plan
    index.close()


def test_an_index_of_an_older_layout_is_removed_never_read(root, run):
    """An older ctx's index (and the file of its rows it kept beside it) is removed when
    this one's is made: its rows were kept by writes that knew no tag table."""
    assert run("set", "k", "one", "--tag", "infra").exit_code == 0
    state = index_file(root).parent
    state.mkdir(parents=True, exist_ok=True)
    older = [state / "index-v3.sqlite", state / "index-v3.known", state / "index-v2.sqlite", state / "index-v4.sqlite"]
    db = sqlite3.connect(older[0])
    db.execute("CREATE TABLE meta(store TEXT PRIMARY KEY)")
    db.commit()
    db.close()
    older[1].write_bytes(b"rows")
    older[2].write_bytes(b"")
    older[3].write_bytes(b"")
    assert run("list", "--tag", "infra").stdout.startswith("shared/k  ")
    assert [path.name for path in older if path.exists()] == []
    assert index_file(root).name == indextables.FILE and index_file(root).exists()


def test_the_real_command_shows_the_readers_local_time(root, run):
    """Through the installed `ctx` (the fast parser): the index made under one zone, read under another."""
    assert run("set", "seed", "x").exit_code == 0  # a repository
    write_store_file(root, "shared", {"a": make_entry("at midnight", tags=["t"], when="2026-01-01T00:00:00Z"),
                                      "b": make_entry("a summer noon", tags=["t", "u"], when="2026-07-01T12:00:00Z")})

    def ctx_list(zone: str, *extra: str, **env: str) -> str:
        done = subprocess.run([str(Path(sys.executable).parent / "ctx"), "list", "--tag", "t", *extra],
                              env={**os.environ, "CTX_HOME": str(root), "TZ": zone, **env},
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout
    assert ctx_list("UTC0") == "shared/b  2026-07-01 12:00  a summer noon\nshared/a  2026-01-01 00:00  at midnight\n"
    assert ctx_list("IST-5:30") == \
        "shared/b  2026-07-01 17:30  a summer noon\nshared/a  2026-01-01 05:30  at midnight\n"
    assert ctx_list("EST5EDT,M3.2.0,M11.1.0") == ctx_list("EST5EDT,M3.2.0,M11.1.0", CTX_NO_CACHE="1") == \
        "shared/b  2026-07-01 08:00  a summer noon\nshared/a  2025-12-31 19:00  at midnight\n"
    assert ctx_list("UTC0", "--tag", "u", "--limit", "1") == "shared/b  2026-07-01 12:00  a summer noon\n"


def test_a_line_decodes_only_the_value_of_an_entry_without_a_status(root, run, monkeypatch):
    """A list's lines from the index: each entry's value decoded alone, the rest of an entry
    only when it has a status (its line shows it), and the lines the same as those of the
    entries decoded whole; the JSON of the same results decodes every entry."""
    from ctx import results
    from support.contexts import Context
    assert run("set", "seed", "x").exit_code == 0
    _write(root, random.Random(7))
    context = Context(root, cache="update")
    filters = Filters(tags=("infra",))
    assert context.select(filters)  # (the index is made)
    joined: list[bytes] = []
    real = results.joined
    monkeypatch.setattr(results, "joined", lambda body, value: joined.append(body) or real(body, value))
    found = context.select(filters)
    lines = [result_line(r) for r in found]
    assert len(joined) == sum(1 for r in found if r.has_status()) > 0
    whole = [result_line(Result(r.store, r.key, dict(r.entry))) for r in found]
    assert lines == whole == _plain(root, None, ["infra"], None)
    assert len(joined) == len(found)  # (`entry` decoded each one, once)
