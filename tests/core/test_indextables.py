"""One owner of the read index's tables (issue 25): ctx/storage/indextables.py declares
every table of .git/ctx/index-vN.sqlite and is the only module that makes or drops one,
the git layer's since-log and history cache included."""

from __future__ import annotations

import re
import sqlite3
import sys
from pathlib import Path

from ctx.storage import indextables
from support.contexts import index_file

OWNER = "ctx.storage.indextables"
REPO = Path(__file__).resolve().parents[2]
MAKING = (sqlite3.SQLITE_CREATE_TABLE, sqlite3.SQLITE_CREATE_INDEX, sqlite3.SQLITE_CREATE_VTABLE,
          sqlite3.SQLITE_DROP_TABLE, sqlite3.SQLITE_DROP_INDEX, sqlite3.SQLITE_DROP_VTABLE)
GROUPS = (indextables.ENTRIES, indextables.FTS, indextables.WORDS, indextables.SINCE_LOG, indextables.HISTORY)


def test_no_production_module_but_the_owner_spells_a_table():
    spelled = re.compile(r"\b(CREATE\s+(VIRTUAL\s+)?TABLE|CREATE\s+INDEX|DROP\s+TABLE)\b", re.IGNORECASE)
    found = [str(path.relative_to(REPO)) for package in ("ctx", "ctxgit", "hooks")
             for path in sorted((REPO / package).rglob("*.py")) if spelled.search(path.read_text())]
    assert found == ["ctx/storage/indextables.py"]


def test_every_group_declares_its_tables():
    assert indextables.tables(indextables.ENTRIES) == ["meta", "entries", "fts_meta", "layout", "entry_tags"]
    assert indextables.tables(indextables.SINCE_LOG) == ["log_state", "log_commits", "log_keys", "log_latest"]
    assert indextables.tables(indextables.HISTORY) == ["hist_keys"]
    db = sqlite3.connect(":memory:", isolation_level=None)
    for group in GROUPS:
        indextables.create(db, group)
        indextables.create(db, group)  # IF NOT EXISTS: a second time changes nothing
    made = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {t for g in GROUPS for t in indextables.tables(g)} <= made
    indextables.drop(db, indextables.SINCE_LOG)
    left = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    assert not left & set(indextables.tables(indextables.SINCE_LOG)) and "log_by_key" not in left
    assert "hist_keys" in left and "entries" in left


def test_only_the_owner_makes_tables_in_the_index_file(root, run, monkeypatch):
    """set, search, search --semantic, history and the since-log, watched by an SQLite
    authorizer on every connection to the index file: each CREATE or DROP comes from a
    call in the owner, and every table the file ends with is one it declares."""
    makers: list[tuple[str, str | None]] = []
    real = sqlite3.connect

    def watch(action, arg1, arg2, dbname, source):
        if action in MAKING:
            makers.append((sys._getframe(1).f_globals.get("__name__", "?"), arg1))
        return sqlite3.SQLITE_OK

    def connect(database, *args, **kwargs):
        db = real(database, *args, **kwargs)
        if indextables.FILE in str(database):
            db.set_authorizer(watch)
        return db
    from ctx.storage import index as index_module
    monkeypatch.setattr(sqlite3, "connect", connect)
    monkeypatch.setattr(index_module.sqlite3, "connect", connect)  # (the index connects through _sqlite3)
    for args in (("set", "k", "the upload retry path", "--tag", "t"), ("set", "k", "changed retry path"),
                 ("search", "retry", "--full-text"), ("search", "--semantic", "uploads"), ("history", "k"), ("list",)):
        assert run(*args, author="Agent").exit_code == 0, args
    from ctxgit.porcelain.since import since_last_session
    assert since_last_session(root, "Someone Else", write=True) is not None
    assert makers, "nothing was made: the watch saw no connection to the index file"
    assert {module for module, _ in makers} == {OWNER}, makers
    made = {name for module, name in makers}
    assert {"entries", "fts", "words", "log_commits", "hist_keys"} <= made, made
    db = real(index_file(root))
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        db.close()
    declared = {t for g in GROUPS for t in indextables.tables(g)}
    shadows = {f"{v}_{part}" for v in ("fts", "words") for part in ("data", "idx", "content", "docsize", "config")}
    assert tables - shadows <= declared, tables - shadows - declared


def test_a_group_all_there_costs_one_query_and_a_missing_part_is_made_again():
    """Every write and most reads open the index and make sure of ENTRIES: when each of its
    names is there (as IF NOT EXISTS would find), one query; a missing index is made."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    ran: list[str] = []
    db.set_trace_callback(ran.append)
    indextables.create(db, indextables.ENTRIES)
    assert len(ran) > len(indextables.names(indextables.ENTRIES))  # the query, then each statement
    ran.clear()
    indextables.create(db, indextables.ENTRIES)
    assert len(ran) == 1 and ran[0].startswith("SELECT count(*) FROM sqlite_master")
    db.execute(f"DROP INDEX {indextables.DUE_INDEX}")
    indextables.create(db, indextables.ENTRIES)
    assert db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (indextables.DUE_INDEX,)).fetchone()
    tables = indextables.tables(indextables.ENTRIES)
    assert indextables.names(indextables.ENTRIES)[:len(tables)] == tables
    made = set(indextables.names(indextables.ENTRIES))
    assert {"by_time", indextables.DUE_INDEX, "by_instruction", "by_decision"} <= made
