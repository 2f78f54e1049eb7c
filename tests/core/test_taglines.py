"""The lines of each tag, kept in the read index (ctx/storage/taglines.py): a list by tag
prints from them exactly what it prints from the entries, and never from lines that no
longer hold (an outside edit, a rebuild, a write by a ctx that kept none, another format)."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ctx import display
from ctx.display import result_line
from ctx.model import STORES
from ctx.results import Filters
from ctx.storage import taglines
from ctx.storage.index import Index
from support.contexts import Context, index_file
from support.stores import make_entry, store_path, write_store_file

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
    for store in STORES:
        path = store_path(root, store)
        path.parent.mkdir(parents=True, exist_ok=True)
        entries = {f"{rng.choice(['k', 'K', 'é'])}{i:03d}": _entry(rng) for i in range(n)}
        path.write_text(json.dumps({"type": store, "version": "1", "entries": entries}, ensure_ascii=False))


def _expected(root, filters: Filters, limit: int | None) -> list[str]:
    """What list prints without the index: each entry parsed from its file and shown."""
    return [result_line(r) for r in Context(root=root, cache="off").select(filters, None, limit)]


def _filters(rng: random.Random) -> tuple[Filters, int | None]:
    return (Filters(store=rng.choice([None, *STORES]), tags=tuple(rng.sample(TAGS, rng.randint(1, 3)))),
            rng.choice([None, 1, 3, 50]))


@pytest.mark.parametrize("seed", range(6))
def test_the_lines_of_a_tag_are_the_lines_of_its_entries(root, run, seed):
    rng = random.Random(seed)
    assert run("set", "seed", str(seed)).exit_code == 0  # a repository, so the index can live in .git
    _write(root, rng)
    context = Context(root=root)
    for _ in range(25):
        filters, limit = _filters(rng)
        assert context.tag_lines(filters, limit) == _expected(root, filters, limit)


@pytest.mark.parametrize("seed", range(3))
def test_writes_keep_the_lines_in_step_without_making_them_again(root, run, seed, monkeypatch):
    rng = random.Random(seed)
    assert run("set", "seed", str(seed)).exit_code == 0
    _write(root, rng, 15)
    assert Context(root=root).tag_lines(Filters(tags=("infra",))) is not None  # made once
    monkeypatch.setattr(taglines, "fill", lambda db, store: pytest.fail(f"{store}'s lines made again"))
    keys = {store: list(json.loads(store_path(root, store).read_text())["entries"]) for store in STORES}
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
        for tag in TAGS:
            filters = Filters(tags=(tag,))
            assert Context(root=root).tag_lines(filters) == _expected(root, filters, None), (step, args)


def test_the_command_prints_the_same_with_and_without_the_index(root, run):
    for key, value, tags in [("a", "first value", ["infra"]), ("b", "second", ["infra", "deploy"]),
                             ("c", "third", ["deploy"]), ("d", "untagged", [])]:
        args = [t for tag in tags for t in ("--tag", tag)]
        assert run("set", key, value, *args).exit_code == 0
    assert run("resolve", "b", "--note", "done").exit_code == 0
    for args in (["--tag", "infra"], ["--tag", "infra", "--tag", "deploy"], ["--tag", "deploy", "--limit", "1"],
                 ["--tag", "infra", "--store", "agent"], ["--tag", "none"]):
        fast = run("list", *args)
        parsed = run("list", *args, env={"CTX_NO_CACHE": "1"})
        assert fast.exit_code == parsed.exit_code == 0
        assert fast.stdout == parsed.stdout, args
    assert sorted(line.split("  ")[0] for line in run("list", "--tag", "infra").stdout.splitlines()) == \
        ["shared/a", "shared/b [resolved: done]"]  # (in the order of their times: a second apart or not)
    assert run("list", "--tag", "none").stdout == ""


def _made_lines(root) -> sqlite3.Connection:
    """The index file, once a list by tag has made its lines."""
    assert Context(root=root).tag_lines(Filters(tags=("infra",))) is not None
    return sqlite3.connect(index_file(root), isolation_level=None)


def test_an_outside_edit_shows_at_once(root, run):
    assert run("set", "k", "one", "--tag", "infra").exit_code == 0
    _made_lines(root)
    path = store_path(root, "shared")
    data = json.loads(path.read_text())
    data["entries"]["k"]["value"] = "two"  # same size, at once: a racy change, the same identity maybe
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    assert run("list", "--tag", "infra").stdout.split("  ")[-1] == "two\n"


def test_a_rebuild_forgets_the_lines(root, run):
    assert run("set", "k", "one", "--tag", "infra").exit_code == 0
    db = _made_lines(root)
    assert taglines.current(db, "shared")
    index = Index.open(root, index_file(root).parent, writable=True)
    assert index is not None
    index.rebuild("shared", {"k": make_entry("rebuilt", tags=["infra"])}, None, b"")
    assert not taglines.current(db, "shared")


def test_a_write_that_kept_no_lines_is_read_again(root, run, monkeypatch):
    """An older ctx writes the entries' rows and the file's identity, and no tag lines."""
    assert run("set", "k", "one", "--tag", "infra").exit_code == 0
    _made_lines(root)
    with monkeypatch.context() as older:
        older.setattr(taglines, "current", lambda db, store: False)
        assert run("set", "k", "two", "--tag", "deploy").exit_code == 0
        assert run("set", "j", "three", "--tag", "infra").exit_code == 0
    assert run("list", "--tag", "infra").stdout.startswith("shared/j  ")
    assert "shared/k" not in run("list", "--tag", "infra").stdout
    assert run("list", "--tag", "deploy").stdout.split("  ")[-1] == "two\n"


def test_lines_of_another_format_are_made_again(root, run, monkeypatch):
    assert run("set", "k", "one", "--tag", "infra").exit_code == 0
    db = _made_lines(root)
    monkeypatch.setattr(display, "LINE_FORMAT", display.LINE_FORMAT + 1)
    assert not taglines.current(db, "shared")
    made = []
    fill = taglines.fill
    monkeypatch.setattr(taglines, "fill", lambda db, store: made.append(store) or fill(db, store))
    assert Context(root=root).tag_lines(Filters(tags=("infra",))) == _expected(root, Filters(tags=("infra",)), None)
    assert made == list(STORES) and taglines.current(db, "shared")


def test_a_read_only_index_behind_asks_the_entries(root, run):
    assert run("set", "k", "one", "--tag", "infra").exit_code == 0
    assert run("get", "k").exit_code == 0  # the index, with no tag lines yet
    reader = Context(root=root, cache="read")
    assert reader.tag_lines(Filters(tags=("infra",))) is None
    assert [result_line(r) for r in reader.select(Filters(tags=("infra",)))] == \
        _expected(root, Filters(tags=("infra",)), None)


def test_other_filters_are_not_answered_from_the_lines(root, run):
    assert run("set", "k", "one", "--tag", "infra").exit_code == 0
    context = Context(root=root)
    assert context.tag_lines(Filters()) is None
    for other in ({"source": "agent"}, {"status": "current"}, {"scope": "global"}, {"prefix": "k"}):
        assert context.tag_lines(Filters(tags=("infra",), **other)) is None, other
    assert context.tag_lines(Filters(tags=("infra",)), 0) is None  # (select says what a limit of 0 is)


def test_a_tag_is_one_range_of_the_table_in_result_order(root, run):
    """No sort and no other rows: a list by one tag reads its lines as they lie."""
    assert run("set", "k", "one", "--tag", "infra").exit_code == 0
    db = _made_lines(root)
    for stores, limit in ((list(STORES), None), (["agent"], 5), (["shared", "operator"], None)):
        sql, params = taglines.query(stores, ["infra"], limit)
        assert [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + sql, params)] == \
            ["SEARCH tag_lines USING PRIMARY KEY (tag=?)"], stores


class _WriteBeforeCommit:
    """The index's connection, but a ctx write lands just before ``fill`` starts writing."""

    def __init__(self, db: sqlite3.Connection, root, run) -> None:
        self.db, self.root, self.run = db, root, run

    def execute(self, sql: str, *args):
        if sql == "BEGIN IMMEDIATE":
            assert self.run("set", "k", "two", "--tag", "infra").exit_code == 0
        return self.db.execute(sql, *args)


def test_a_write_while_the_lines_are_made_leaves_them_unmade(root, run, monkeypatch):
    assert run("set", "k", "one", "--tag", "infra").exit_code == 0
    assert run("get", "k").exit_code == 0  # the index, with no tag lines yet
    index = Index.open(root, index_file(root).parent, writable=True)
    assert index is not None and index.fresh(["shared"])
    index.db = _WriteBeforeCommit(index.db, root, run)
    assert index.tag_lines(["shared"], ["infra"]) is None
    assert not taglines.current(sqlite3.connect(index_file(root)), "shared")
    assert run("list", "--tag", "infra").stdout.split("  ")[-1] == "two\n"


def test_the_real_command_shows_the_readers_local_time(root, run):
    """Through the installed `ctx` (the fast parser): lines made under one zone, read under another."""
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
    assert taglines.current(sqlite3.connect(index_file(root)), "shared")  # (the lines were read, not the entries)


def test_every_filter_but_store_and_tags_takes_the_ordinary_way():
    """Derived from the filters themselves: a filter added later is never skipped by the lines."""
    assert Filters(tags=("t",)).by_tags_alone() and Filters(store="agent", tags=("t",)).by_tags_alone()
    assert not Filters().by_tags_alone() and not Filters(store="agent").by_tags_alone()
    for name in Filters.__slots__:
        if name not in ("store", "tags"):
            filters = Filters(tags=("t",))
            setattr(filters, name, "x")
            assert not filters.by_tags_alone(), name
