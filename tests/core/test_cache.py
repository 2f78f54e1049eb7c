"""The index answers exactly what parsing the store files answers."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pytest

from ctx.brief import build_brief, render_brief
from ctx.model import STORES, parse_ts
from ctx.results import Filters
from ctx.storage.index import Index
from support.contexts import Context, index_file
from support.stores import make_entry, store_path

WORDS = ["alpha", "Beta", "gamma", "DELTA", "émigré", "naïve", "x", "decision", "upload", "proxy"]
TAGS = ["a", "b", "decision", "directive", "preference", "constraint", "c d"]


def _random_store(rng: random.Random, n: int) -> dict:
    entries = {}
    for i in range(n):
        second = rng.randint(0, 59)
        stamp = rng.choice([f"2026-01-0{rng.randint(1, 9)}T10:00:{second:02d}Z",
                            f"2026-01-01T10:00:{second:02d}.5Z", "not a time"])
        value = rng.choice([" ".join(rng.choices(WORDS, k=rng.randint(1, 6))), 42, {"k": rng.choice(WORDS)},
                            ["List", rng.choice(WORDS)], None, True])
        entry = make_entry(value, source=rng.choice(["operator", "agent", "both"]),
                           tags=rng.sample(TAGS, rng.randint(0, 3)), when=stamp)
        if rng.random() < 0.3:
            entry["status"] = rng.choice(["amended", "resolved", "superseded"])
        if rng.random() < 0.2:
            entry["scope"] = "session"
        if rng.random() < 0.05:
            entry.pop("scope")
        key = rng.choice(["decision_", "k_", "pref_", "Key"]) + f"{i:03d}" + rng.choice(["", "é", "_x"])
        entries[key] = entry
    return entries


def _write(root, rng, n=60):
    for store in STORES:
        path = store_path(root, store)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"type": store, "version": "1", "entries": _random_store(rng, n)},
                                   indent=2, ensure_ascii=False), encoding="utf-8")


def _filters(rng: random.Random) -> tuple[Filters, str | None, int | None]:
    filters = Filters(store=rng.choice([None, *STORES]),
                      tags=tuple(rng.sample(TAGS, rng.randint(0, 2))),
                      source=rng.choice([None, "operator", "agent"]),
                      status=rng.choice([None, "current", "amended", "resolved", "superseded"]),
                      scope=rng.choice([None, "global", "session"]),
                      since=rng.choice([None, parse_ts("2026-01-03"), parse_ts("2026-01-01T10:00:30Z")]),
                      prefix=rng.choice([None, "decision", "k_0", "Key"]))
    return filters, rng.choice([None, "", "a", "BETA", "é", "42", '"k":']), rng.choice([None, 0, 1, 5, 50])


@pytest.mark.parametrize("seed", range(8))
def test_index_and_files_agree(root, run, seed):
    rng = random.Random(seed)
    assert run("set", "seed", str(seed)).exit_code == 0   # a repository, so the index can live in .git
    _write(root, rng)
    indexed, parsed = Context(root=root, cache="update"), Context(root=root, cache="off")
    for _ in range(40):
        filters, pattern, limit = _filters(rng)
        assert [(r.store, r.key, r.entry) for r in indexed.select(filters, pattern, limit)] == \
               [(r.store, r.key, r.entry) for r in parsed.select(filters, pattern, limit)]
    assert index_file(root).exists()
    now = datetime(2026, 1, 5, tzinfo=UTC)
    assert render_brief(build_brief(indexed, now=now)) == render_brief(build_brief(parsed, now=now))
    for store in STORES:
        for key in list(json.loads(store_path(root, store).read_text())["entries"])[:10]:
            assert indexed.get(key, store) == parsed.get(key, store)
    assert indexed.counts() == parsed.counts()


def test_an_outside_write_is_always_noticed(root, run):
    assert run("set", "k", "one").exit_code == 0
    ctx = Context(root=root)
    assert ctx.get("k")["value"] == "one"
    path = store_path(root, "shared")
    data = json.loads(path.read_text())
    data["entries"]["k"]["value"] = "two"      # same size, written at once: a racy change
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    assert Context(root=root).get("k")["value"] == "two"


def test_ctx_writes_keep_the_index_fresh(root, run):
    assert run("set", "k", "one").exit_code == 0
    assert run("get", "k").exit_code == 0
    index = Index.open(root, index_file(root).parent, writable=False)
    assert index is not None and index.fresh(["shared"])
    assert run("set", "k2", "two").exit_code == 0
    index = Index.open(root, index_file(root).parent, writable=False)
    assert index.fresh(["shared"]) and index.get("shared", "k2")["value"] == "two"


def test_a_broken_index_is_never_a_wrong_answer(root, run):
    assert run("set", "k", "one").exit_code == 0
    assert run("get", "k").exit_code == 0
    index_file(root).write_bytes(b"this is not a database")
    result = run("get", "k")
    assert result.exit_code == 0 and "one" in result.stdout


def test_full_text_search_needs_every_word_and_ranks_by_count(root, run):
    for key, value in [("a", "upload proxy upload upload"), ("b", "upload proxy"), ("c", "upload only"),
                       ("decision_proxy_upload", "x"), ("d", "uploads proxy")]:
        assert run("set", key, value).exit_code == 0
    result = run("search", "--full-text", "upload proxy", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["key"] for r in rows][:1] == ["a"] and rows[0]["score"] == 4
    assert {r["key"] for r in rows} == {"a", "b", "decision_proxy_upload"}   # "uploads" is another word
    # the same answer without the index
    parsed = run("search", "--full-text", "upload proxy", "--json", env={"CTX_NO_CACHE": "1"})
    assert json.loads(parsed.stdout) == rows


def test_full_text_index_follows_outside_writes_and_reindex(root, run):
    assert run("set", "k", "alpha beta").exit_code == 0
    assert "shared/k" in run("search", "--full-text", "alpha").stdout
    path = store_path(root, "shared")
    data = json.loads(path.read_text())
    data["entries"]["k"]["value"] = "gamma"
    path.write_text(json.dumps(data, indent=2))
    assert "shared/k" not in run("search", "--full-text", "alpha").stdout
    assert "shared/k" in run("search", "--full-text", "gamma").stdout
    result = run("reindex")
    assert result.exit_code == 0 and "reindexed" in result.stdout
    assert "shared/k" in run("search", "--full-text", "gamma").stdout


# one seed in the quick run (-m "not slow"), three in the full one
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow),
                                  pytest.param(2, marks=pytest.mark.slow)])
def test_indexed_history_equals_walking_the_commits(root, run, seed):
    from ctxgit.plumbing.repo import open_repo
    from ctxgit.porcelain.commits import walk_history
    from ctxgit.porcelain.history import history
    rng = random.Random(seed)
    keys = ["a", "b", "c"]
    for step in range(25):
        key, store = rng.choice(keys), rng.choice(["shared", "agent"])
        action = rng.random()
        if action < 0.5:
            run("set", key, f"value {step}", "--store", store, author=rng.choice(["A", "B"]))
        elif action < 0.65:
            run("delete", key, "--store", store)
        elif action < 0.8:
            run("amend", key, f"note {step}", "--store", store)
        else:  # an outside edit, committed by the next write
            path = store_path(root, store)
            if path.exists():
                data = json.loads(path.read_text())
                data["entries"][key] = make_entry(f"outside {step}")
                path.write_text(json.dumps(data, indent=2))
        if step % 7 == 0:  # interleave reads, so the index is filled in several steps
            for k in keys:
                try:
                    history(root, k, ["shared", "agent"])
                except Exception:
                    pass
    run("set", "final", "x")
    repo = open_repo(root)
    for key in keys:
        for stores in (["shared"], ["agent"], ["shared", "agent"]):
            try:
                walked = [(v.info.id, v.store, v.entry, v.created) for v in walk_history(repo, key, stores)]
            except Exception as exc:  # NotFound
                walked = type(exc).__name__
            try:
                indexed = [(v.info.id, v.store, v.entry, v.created) for v in history(root, key, stores)]
            except Exception as exc:
                indexed = type(exc).__name__
            assert indexed == walked, (key, stores)


def test_without_a_state_folder_there_is_no_index(root, run):
    """The core keeps its index only where it is told (``state_of``): a ``Context`` given
    none parses the store files, writes nothing beside them, and answers the same."""
    from ctx.context import Context as CoreContext
    assert run("set", "k", "one").exit_code == 0
    index_file(root).unlink(missing_ok=True)
    bare = CoreContext(root)
    assert bare.state is None
    bare.set("k", "two")
    assert bare.get("k")["value"] == "two" and bare.counts()["shared"] == 1
    assert not index_file(root).exists()
    assert Context(root).get("k")["value"] == "two" and index_file(root).exists()


def _brief_statements(ctx: Context) -> tuple[Index, list[str]]:
    """The SQL a brief runs, once its index is built (with its partial indexes)."""
    now = datetime(2026, 1, 5, tzinfo=UTC)
    before = render_brief(build_brief(ctx, now=now))
    index = ctx.fresh_index(list(STORES))
    assert index is not None
    statements: list[str] = []
    index.db.set_trace_callback(statements.append)
    assert render_brief(build_brief(ctx, now=now)) == before
    index.db.set_trace_callback(None)
    return index, statements


def test_the_brief_reads_instructions_and_decisions_by_indexes_of_their_own(root, run):
    """INSTRUCTIONS and DECISIONS walk the standing instructions' rows and the decisions'
    rows, newest first, by partial indexes (never every row of their stores, then a sort):
    at 100,000 entries that scan and sort was 87 of a 92 ms brief. The instructions' index
    holds those rows only, not every row the operator is the source of: walking the
    operator's rows, each looked up for its tags, read four times the rows it kept."""
    assert run("set", "seed", "x").exit_code == 0   # a repository, so the index can live in .git
    _write(root, random.Random(3), n=200)
    index, statements = _brief_statements(Context(root=root, cache="update"))
    plans = {}
    for sql in statements:
        if not sql.startswith("SELECT") or "FROM entries" not in sql:
            continue
        name = "by_instruction" if "\x1fdirective\x1f" in sql else "by_decision" if "'decision')" in sql else None
        if name is not None:  # (an instruction is no decision: its query names the decisions' test too)
            plans[name] = " ".join(row[3] for row in index.db.execute("EXPLAIN QUERY PLAN " + sql))
    assert set(plans) == {"by_instruction", "by_decision"}, statements
    for name, plan in plans.items():
        assert f"USING INDEX {name}" in plan and "TEMP B-TREE" not in plan, (name, plan)


def test_start_finds_the_newest_compaction_by_its_keys_alone(root, run):
    """``ctx start`` looks for the newest kept compaction by the range of its keys (the
    primary key), never by decoding every row of the agent store: at 10,000 entries that
    read was most of what start added to the brief."""
    from ctx import compaction
    assert run("set", "seed", "x").exit_code == 0
    _write(root, random.Random(5), n=200)
    kept = {f"{compaction.PREFIX}s{n}_2026_01_0{n}": make_entry(f"summary {n}", tags=[compaction.TAG],
                                                                when=f"2026-01-0{n}T10:00:00Z") for n in (1, 3, 2)}
    kept["compaction_untagged_2026_01_09"] = make_entry("not kept by ctx", when="2026-01-09T10:00:00Z")
    kept["later_than_any"] = make_entry("not a compaction", tags=[compaction.TAG], when="2026-01-10T10:00:00Z")
    path = store_path(root, "agent")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["entries"].update(kept)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    indexed = Context(root=root, cache="update")
    assert compaction.newest(Context(root=root, cache="off")) == compaction.newest(indexed)
    index = indexed.fresh_index(list(STORES))
    assert index is not None
    statements: list[str] = []
    index.db.set_trace_callback(statements.append)
    found = compaction.newest(indexed)
    index.db.set_trace_callback(None)
    assert found is not None and found[0] == f"{compaction.PREFIX}s3_2026_01_03", found
    [sql] = [s for s in statements if s.startswith("SELECT") and "FROM entries" in s]
    plan = " ".join(row[3] for row in index.db.execute("EXPLAIN QUERY PLAN " + sql))
    assert "USING PRIMARY KEY (store=? AND key>? AND key<?)" in plan, (sql, plan)


def test_the_due_section_walks_the_due_index_only(root, run):
    """DUE's queries (overdue and due soon; for the operator, stale ones due later) walk
    by_due: without statistics SQLite took by_time for ``due > ?`` and read every row's
    body (25 ms of an operator's brief at 10,000 entries)."""
    assert run("set", "seed", "x").exit_code == 0
    _write(root, random.Random(4), n=200)
    assert run("set", "due_one", "renew the certificate").exit_code == 0
    assert run("remind", "due_one", "2026-01-06").exit_code == 0
    index, statements = _brief_statements(Context(root=root, cache="update"))   # the operator's: no author
    due = [sql for sql in statements if sql.startswith("SELECT") and "due" in sql.split("WHERE", 1)[-1]]
    assert len(due) == 2, statements   # due soon, and stale ones
    for sql in due:
        plan = " ".join(row[3] for row in index.db.execute("EXPLAIN QUERY PLAN " + sql))
        assert "USING INDEX by_due" in plan and "by_time" not in plan, (sql, plan)


@pytest.mark.parametrize("name", ["plain", "a b", "q?x", "h#x", "p%41", "é ü", "semi;colon&amp=1"])
def test_the_index_opens_whatever_the_folders_name(tmp_path, name):
    """The index's ``file:`` URI is made without pathlib: a name SQLite's URI would misread
    (?, #, %) reaches SQLite escaped, read-only opens included."""
    import sqlite3

    from ctx.storage.index import file_uri
    path = tmp_path / name / "index.sqlite"
    path.parent.mkdir()
    sqlite3.connect(path).execute("CREATE TABLE t(x)").connection.commit()
    db = sqlite3.connect(file_uri(str(path)) + "?mode=ro", uri=True)
    assert db.execute("SELECT name FROM sqlite_master").fetchall() == [("t",)]
    assert file_uri(str(path)) == path.as_uri()
