"""SINCE YOUR LAST SESSION from the git history: ``ctxgit.porcelain.since``.

Three agents write through the ``ctx`` command line (in process); the answer
for one of them is what the others changed after its last commit, newest
first, one row per entry, bounded. The log it reads is kept in the read index
and brought up to date from HEAD; ``write=False`` (``ctx start``) writes
nothing.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgit.gitfiles.layout import SINCE_LAG
from ctxgit.porcelain import since as since_module
from ctxgit.porcelain.since import since_last_session
from support.contexts import index_file
from support.gitutil import commit_ids

A, B, C = "Agent A", "Agent B", "Agent C"


@pytest.fixture
def write(run):
    def do(*args: str, author: str | None = None) -> None:
        result = run(*args, author=author)
        assert result.exit_code == 0, (args, result.output, result.exception)
    return do


def rows(since) -> list[tuple[str, str, str]]:
    return [(c.key, c.author, c.kind) for c in since.changes]


def ctx_dir_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted((root / ".git" / "ctx").rglob("*")) if p.is_file()}


def log_tip(root: Path) -> str | None:
    db = sqlite3.connect(index_file(root))
    try:
        row = db.execute("SELECT value FROM log_state WHERE name = 'tip'").fetchone()
        return row[0] if row else None
    finally:
        db.close()


# --- what is news ---------------------------------------------------------------------------

def test_no_repository_or_no_commit_is_none(root, write):
    assert since_last_session(root, A) is None
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    assert since_last_session(root, A) is None
    assert since_last_session(root, A, write=False) is None


def test_own_writes_excluded_and_only_changes_after_the_last_commit(root, write):
    write("init")
    write("set", "early", "by B before A's session", author=B)
    write("set", "mine", "A's first", author=A)
    write("set", "other", "by C", author=C)
    write("set", "mine2", "A's last", author=A)  # A's last commit
    write("set", "late", "by B after", author=B)
    write("set", "later", "by C after", author=C)
    since = since_last_session(root, A)
    assert since.author == A
    assert since.last is not None and since.last.endswith("Z")
    assert rows(since) == [("later", C, "new"), ("late", B, "new")]
    assert since.more == 0
    assert all(c.store == "shared" and c.timestamp.endswith("Z") for c in since.changes)
    # nothing of A's is ever news to A, even an entry A and others both wrote
    write("set", "late", "A writes it too", author=A)
    assert rows(since_last_session(root, A)) == []
    # the others see what came after their own last commit, newest first, one row per entry
    assert rows(since_last_session(root, C)) == [("late", A, "changed")]
    assert rows(since_last_session(root, B)) == [("late", A, "changed"), ("later", C, "new")]
    # the name is cleaned as ctx cleans CTX_AUTHOR
    assert rows(since_last_session(root, f"  {B}  ")) == rows(since_last_session(root, B))


def test_kinds_amend_supersede_resolve_delete(root, write):
    for key in ("a", "s", "r", "d", "b"):
        write("set", key, f"value {key}", author=B)
    write("set", "mark", "A was here", author=A)
    write("amend", "a", "a note", author=B)
    write("supersede", "s", "--by", "b", author=C)
    write("resolve", "r", "--note", "done", author=B)
    write("delete", "d", author=C)
    since = since_last_session(root, A)
    assert rows(since) == [("d", C, "deleted"), ("r", B, "resolved"), ("s", C, "superseded"),
                           ("a", B, "amended")]


def test_new_changed_and_newest_change_wins(root, write):
    write("set", "old", "made before", author=B)
    write("set", "gone", "will be deleted and made again", author=C)
    write("set", "mark", "A was here", author=A)
    write("set", "old", "changed", author=B)          # changed: it existed
    write("set", "fresh", "first value", author=C)    # new
    write("set", "fresh", "second value", author=B)   # ... then changed: the newest wins
    write("delete", "gone", author=B)
    write("set", "gone", "made again", author=C)       # new again after a delete
    write("set", "basis-key", "v", author=B)
    write("basis", "basis-key", "verified", author=C)  # basis: changed
    assert rows(since_last_session(root, A)) == [
        ("basis-key", C, "changed"), ("gone", C, "new"), ("fresh", B, "changed"), ("old", B, "changed")]


def test_first_session_lists_every_change_by_others(root, write):
    write("init")
    write("set", "one", "1", author=B)
    write("set", "two", "2", author=C)
    write("set", "one", "1 again", author=C)
    since = since_last_session(root, A)
    assert since.last is None
    assert rows(since) == [("one", C, "changed"), ("two", C, "new")]
    assert since.more == 0


def test_bounded_with_a_count_of_the_rest(root, write):
    write("set", "mark", "A was here", author=A)
    for i in range(13):
        write("set", f"k{i:02d}", f"value {i}", author=B if i % 2 else C)
    since = since_last_session(root, A)
    assert [c.key for c in since.changes] == [f"k{i:02d}" for i in range(12, 2, -1)]
    assert since.more == 3
    small = since_last_session(root, A, limit=4, write=False)
    assert [c.key for c in small.changes] == ["k12", "k11", "k10", "k09"] and small.more == 9
    none = since_last_session(root, A, limit=0)
    assert none.changes == [] and none.more == 13


# --- the log in the read index --------------------------------------------------------------

def test_log_is_kept_and_brought_up_to_date(root, write):
    write("set", "mark", "A was here", author=A)
    write("set", "x", "1", author=B)
    assert rows(since_last_session(root, A)) == [("x", B, "new")]
    assert log_tip(root) == commit_ids(root)[0]
    write("set", "y", "2", author=C)
    write("set", "x", "3", author=C)
    assert rows(since_last_session(root, A)) == [("x", C, "changed"), ("y", C, "new")]
    assert log_tip(root) == commit_ids(root)[0]
    db = sqlite3.connect(index_file(root))
    ids = [r[0] for r in db.execute("SELECT id FROM log_commits ORDER BY seq DESC")]
    db.close()
    assert ids == commit_ids(root)  # each commit once, newest last in seq


def test_write_false_writes_nothing(root, write):
    write("set", "mark", "A was here", author=A)
    write("set", "x", "1", author=B)
    # an index with no log yet: the whole history read in memory
    before = ctx_dir_bytes(root)
    assert rows(since_last_session(root, A, write=False)) == [("x", B, "new")]
    assert ctx_dir_bytes(root) == before
    # a stored log, then writes since its tip: the new commits in memory only
    assert rows(since_last_session(root, A)) == [("x", B, "new")]
    stored = index_file(root).read_bytes()  # the log as it is now; a write brings it to HEAD...
    write("set", "y", "2", author=C)
    write("set", "x", "3", author=C)
    index_file(root).write_bytes(stored)  # ...so put it back: a log behind HEAD (commits git made)
    tip = log_tip(root)
    before = ctx_dir_bytes(root)
    for _ in range(2):
        assert rows(since_last_session(root, A, write=False)) == [("x", C, "changed"), ("y", C, "new")]
    assert ctx_dir_bytes(root) == before
    assert log_tip(root) == tip != commit_ids(root)[0]
    # fresh: the same answer, still nothing written
    assert rows(since_last_session(root, A)) == [("x", C, "changed"), ("y", C, "new")]
    before = ctx_dir_bytes(root)
    assert rows(since_last_session(root, A, write=False)) == [("x", C, "changed"), ("y", C, "new")]
    assert ctx_dir_bytes(root) == before


def test_an_open_index_is_asked_through_and_left_open(root, write, run, monkeypatch):
    """The brief and ``start`` read the entries and the since-log from one connection to the
    index file (a second one cost ~0.3 ms of a ~17 ms brief); the answer is the same."""
    from ctx.context import Context
    from ctx.storage import index as index_module
    from ctxgit.gitfiles.layout import state_dir
    write("set", "mark", "A was here", author=A)
    write("set", "x", "1", author=B)
    alone = rows(since_last_session(root, A))
    for mode, writing in (("update", True), ("read", False)):
        context = Context(root, author=A, cache=mode, state_of=state_dir)
        index = context.opened_index()
        assert index is not None and index.writable == writing
        assert rows(since_last_session(root, A, write=writing, index=index)) == alone == [("x", B, "new")]
        assert index.db.execute("SELECT count(*) FROM entries").fetchone()[0] == 2  # still open
        index.close()
    opened: list[str] = []
    real = index_module.sqlite3.connect

    def counting(database, *args, **kwargs):
        if index_file(root).name in str(database):
            opened.append(str(database))
        return real(database, *args, **kwargs)
    monkeypatch.setattr(index_module.sqlite3, "connect", counting)
    for command in ("brief", "start"):
        opened.clear()
        result = run(command, author=A)
        assert result.exit_code == 0 and "x" in result.output, result.output
        assert len(opened) == 1, (command, opened)


def test_no_index_at_all_write_false(root, write):
    write("set", "x", "1", author=B)
    for path in index_file(root).parent.glob(index_file(root).name + "*"):
        path.unlink()
    before = ctx_dir_bytes(root)
    since = since_last_session(root, A, write=False)
    assert since.last is None and rows(since) == [("x", B, "new")]
    assert ctx_dir_bytes(root) == before


def test_loose_objects_and_pygit2_read_the_same(root, write):
    write("init")
    for i, who in enumerate([A, B, C, B, A, C]):
        write("set", f"k{i % 4}", f"v{i}", author=who)
    head = commit_ids(root)[0]
    tip = commit_ids(root)[3]
    loose = since_module._loose_run(root / ".git", head, tip)
    walked = since_module._walk(root, head, tip)
    assert loose is not None and loose == walked and len(loose[0]) == 3 and loose[1] is False
    assert since_module._loose_run(root / ".git", head, None) == since_module._walk(root, head, None)
    # a tip that is not an ancestor: the whole history again
    rows_, reset = since_module._walk(root, head, "0" * 40)
    assert reset and [r[0] for r in rows_][::-1] == commit_ids(root)


def test_purge_rewrites_history_and_the_log_recovers(root, write):
    write("set", "mark", "A was here", author=A)
    write("set", "leak", "a value to purge", author=B)
    write("set", "kept", "stays", author=C)
    assert rows(since_last_session(root, A)) == [("kept", C, "new"), ("leak", B, "new")]
    old_tip = log_tip(root)
    write("purge", "leak", "--yes")
    assert commit_ids(root)[0] != old_tip
    since = since_last_session(root, A)
    assert log_tip(root) == commit_ids(root)[0]
    db = sqlite3.connect(index_file(root))
    ids = {r[0] for r in db.execute("SELECT id FROM log_commits")}
    db.close()
    assert ids == set(commit_ids(root))  # read again: no commit of the old history left
    assert ("kept", C, "new") in rows(since)
    assert since.last is not None
    # and it goes on incrementally from the rewritten history
    write("set", "after", "post purge", author=B)
    assert rows(since_last_session(root, A))[0] == ("after", B, "new")
    assert log_tip(root) == commit_ids(root)[0]


def test_a_broken_log_is_read_again(root, write):
    write("set", "mark", "A was here", author=A)
    write("set", "x", "1", author=B)
    since_last_session(root, A)
    db = sqlite3.connect(index_file(root))
    db.execute("UPDATE log_state SET value = 'old-layout' WHERE name = 'version'")
    db.commit()
    db.close()
    assert rows(since_last_session(root, A, write=False)) == [("x", B, "new")]
    assert rows(since_last_session(root, A)) == [("x", B, "new")]
    assert log_tip(root) == commit_ids(root)[0]


def test_trailers_of_multi_entry_commits():
    from ctx.changes import Change, Edit
    from ctxgit.recorder import message_for
    one_store = message_for(Change("import", [Edit("shared", "a", None, {"value": 1}),
                                              Edit("shared", "b/c", None, {"value": 2})], [], A))
    many = message_for(Change("cleanup", [Edit("shared", "a", {"value": 1}, None),
                                          Edit("agent", "b", {"value": 2}, None)], [], A))
    assert since_module._row("1" * 40, 0, A, one_store, 1)[3:] == ("import", 0, [("shared", "a"), ("shared", "b/c")])
    assert since_module._row("1" * 40, 0, A, many, 1)[3:] == ("cleanup", 0, [("shared", "a"), ("agent", "b")])
    assert since_module._row("1" * 40, 0, A, "init: context root\n\nCtx-Operation: init\n", 0)[5] == []
    assert since_module._row("1" * 40, 0, A, "merge\n\nCtx-Operation: merge\nCtx-Key: x\n", 2)[4:] == (1, [])
    assert since_module._kind("cleanup", None) == "deleted"
    assert since_module._kind("import", None) == "changed"


# --- the speed rule: a fresh log needs no pygit2 --------------------------------------------

@pytest.mark.slow
def test_fresh_log_does_not_load_pygit2(root, write):
    write("set", "mark", "A was here", author=A)
    write("set", "x", "1", author=B)
    since_last_session(root, A)
    write("set", "y", "2", author=C)  # one loose commit since the tip: read without pygit2 too
    code = ("import sys; from pathlib import Path; from ctxgit.porcelain.since import since_last_session as s; "
            f"r = s(Path({str(root)!r}), {A!r}, write=False); "
            "print([c.key for c in r.changes], 'pygit2' in sys.modules, 'hashlib' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # nor hashlib: its OpenSSL costs ~4 ms, and a loose commit is read, not named
    assert done.stdout.split() == ["['y',", "'x']", "False", "False"]


# --- commits merged in from another machine -------------------------------------------------

@pytest.mark.slow
def test_merged_commits_count_with_their_own_authors(tmp_path):
    from support.syncutil import commit_parents, network
    bare, (a, b) = network(tmp_path, A, B)
    assert since_last_session(b.root, B).last is None  # B's log, read before the merge
    b.ok("set", "theirs", "made on B's machine first")
    a.ok("set", "mine", "A's last write, made after B's")
    b.ok("push")
    a.ok("sync")  # a merge: A's write first parent, B's second
    assert len(commit_parents(a)) == 2
    since = since_last_session(a.root, A)
    # made before A's last commit, but it arrived after it: news to A, under B's name
    assert rows(since) == [("theirs", B, "new")]
    assert since_last_session(a.root, A, write=False).changes[0].author == B
    a.ok("push")
    assert since_last_session(b.root, B).changes == []  # B's log tip: B's own write
    b.ok("sync")  # a fast-forward to A's merge
    assert rows(since_last_session(b.root, B)) == [("mine", A, "new")]


def test_stored_in_memory_and_stale_answers_agree(root, write):
    """The stored log, the commits since its tip held in memory (write=False) and the
    whole history read in memory give one answer, for every author and bound."""
    import random

    from ctxgit.gitfiles.refs import head_id
    rng = random.Random(3)
    keys = ["k1", "k2", "k3", "k4", "k5"]
    live: set[str] = set()

    def step() -> None:
        who = rng.choice([A, B, C])
        key = rng.choice(keys)
        if key in live and rng.random() < 0.4:
            op = rng.choice(["amend", "resolve", "delete"])
            write(*((op, key, "a note") if op == "amend" else (op, key)), author=who)
            if op == "delete":
                live.discard(key)
        else:
            write("set", key, f"v{rng.random()}", author=who)
            live.add(key)

    def answer(since):
        return (since.last, [(c.store, c.key, c.author, c.timestamp, c.kind) for c in since.changes],
                since.more)

    for _ in range(4):
        step()
    since_last_session(root, A)  # the stored log, up to here
    for round_ in range(3):
        for _ in range(5):
            step()
        head = head_id(root)
        for who in (A, B, C, "Nobody"):
            for limit in (2, 10):
                stale = answer(since_last_session(root, who, limit, write=False))
                whole = answer(since_module._in_memory(root, head, who, limit))
                assert stale == whole, (round_, who, limit)
        for who in (A, B, C, "Nobody"):
            for limit in (2, 10):
                assert answer(since_last_session(root, who, limit)) == answer(
                    since_module._in_memory(root, head, who, limit)), (round_, who, limit)


def test_merged_in_commits_come_just_before_their_merge():
    """The order commits entered the history: first parent's line, then what a merge
    brought in, then the merge (whatever the commit times say)."""
    class Person:
        def __init__(self, name: str, when: int) -> None:
            self.name, self.time = name, when

    class Fake:
        def __init__(self, name: str, parents: list[str], when: int) -> None:
            self.parent_ids, self.author = parents, Person(name, when)
            self.message = f"set shared/{name}\n\nCtx-Operation: set\nCtx-Store: shared\nCtx-Key: {name}\n"

    # o -- a1 -- a2 ------ m1 -- a3 -- m2        (here)
    #  \             /             /
    #   b1 -- b2 ---+----- b3 ----+              (another machine, commits made earlier)
    graph = {"o": Fake("o", [], 1), "b1": Fake("b1", ["o"], 2), "b2": Fake("b2", ["b1"], 3),
             "a1": Fake("a1", ["o"], 10), "a2": Fake("a2", ["a1"], 11),
             "m1": Fake("m1", ["a2", "b2"], 12), "b3": Fake("b3", ["b2"], 4),
             "a3": Fake("a3", ["m1"], 13), "m2": Fake("m2", ["a3", "b3"], 14)}
    order = [row[0] for row in since_module._ordered(graph, "m2")]
    assert order == ["o", "a1", "a2", "b1", "b2", "m1", "a3", "b3", "m2"]
    # only what is new since a tip: the rest of the graph is already in the log
    newer = {k: graph[k] for k in ("a3", "b3", "m2")}
    assert [row[0] for row in since_module._ordered(newer, "m2")] == ["a3", "b3", "m2"]


def test_writes_bring_the_log_to_head_every_few_writes(root, write):
    """ctx start writes nothing: it reads the commits past the log's tip into memory each
    time. So the first write builds the log and every EVERY-th write brings it to HEAD."""
    from ctxgit.porcelain import sincelag
    write("set", "mark", "A was here", author=A)
    assert log_tip(root) == commit_ids(root)[0]  # built by the first write
    built = commit_ids(root)[0]
    write("set", "x", "1", author=B)
    write("amend", "x", "a note", author=C)
    assert log_tip(root) == built  # behind by two: start reads those two in memory
    before = ctx_dir_bytes(root)
    assert rows(since_last_session(root, A, write=False)) == [("x", C, "amended")]
    assert ctx_dir_bytes(root) == before
    for n in range(sincelag.EVERY - 3):
        write("set", f"more_{n}", "v", author=B)
    assert log_tip(root) == built
    write("set", "last", "v", author=B)  # the EVERY-th write since the log was at HEAD
    assert log_tip(root) == commit_ids(root)[0]
    assert rows(since_last_session(root, A, write=False))[0] == ("last", B, "new")


def test_the_lag_count_starts_again_when_the_log_is_at_head(tmp_path):
    from ctxgit.porcelain import sincelag
    (tmp_path / ".git" / "ctx").mkdir(parents=True)
    assert sincelag.due(tmp_path)  # no count: bring the log up
    sincelag.reset(tmp_path)
    assert [sincelag.due(tmp_path) for _ in range(sincelag.EVERY)] == [False] * (sincelag.EVERY - 1) + [True]
    (tmp_path / ".git" / SINCE_LAG).write_text("garbled")
    assert sincelag.due(tmp_path)


@pytest.mark.parametrize("command", ["pull", "sync"])
def test_a_pull_brings_the_log_to_head_at_once(tmp_path, command):
    """Others' commits arrive many at a time: after `ctx pull` or `ctx sync` the log holds
    them, so `ctx start` need not read them in memory."""
    from support.syncutil import network
    _, (one, two) = network(tmp_path, "Agent One", "Agent Two")
    one.ok("brief")  # the log, at HEAD
    for n in range(5):
        two.ok("set", f"news_{n}", "from two")
    two.ok("push")
    one.ok(command)
    assert log_tip(one.root) == commit_ids(one.root)[0]
    found = since_last_session(one.root, "Agent One", write=False)
    assert {c.key for c in found.changes} == {f"news_{n}" for n in range(5)}
