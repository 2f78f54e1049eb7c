"""ctx stats: counts by store, source, basis, scope, status and tag, and the
repository's commits and authors; it never writes anything."""

from __future__ import annotations

import json
from collections import Counter

from support.gitutil import commit_count, git_out
from support.stores import make_entry, snapshot


def ok(result):
    assert result.exit_code == 0, (result.output, result.stderr)
    return result


def seed(run):
    ok(run("set", "decision_a", "A", "--tag", "decision", "--basis", "verified"))
    ok(run("set", "decision_b", "B", "--tag", "decision", "--tag", "db", author="Agent One"))
    ok(run("set", "issue_c", "C", "--tag", "issue", author="Agent One"))
    ok(run("resolve", "issue_c", author="Agent Two"))
    ok(run("set", "old_d", "D", "--basis", "reported", author="Agent Two"))
    ok(run("supersede", "old_d", "--by", "decision_b", author="Agent Two"))
    ok(run("set", "note_e", "E", "--scope", "session", "--store", "agent", author="Agent One"))
    ok(run("set", "pref_f", "F", "--store", "operator", "--source", "operator", "--basis", "reported",
           "--tag", "preference"))
    ok(run("amend", "pref_f", "G", "--store", "operator"))


def test_counts(run, root):
    seed(run)
    data = json.loads(ok(run("stats", "--json")).stdout)
    assert data["entries"] == 6
    assert data["stores"] == {"operator": 1, "shared": 4, "agent": 1}
    assert data["source"] == {"operator": 2, "agent": 4, "both": 0, "system": 0}
    assert data["basis"] == {"verified": 1, "reported": 2, "inferred": 3}
    assert data["scope"] == {"global": 5, "session": 1}
    assert data["status"] == {"current": 3, "amended": 1, "superseded": 1, "resolved": 1}
    assert data["tags"] == {"decision": 2, "db": 1, "issue": 1, "preference": 1}


def test_repository_part(run, root):
    seed(run)
    data = json.loads(ok(run("stats", "--json")).stdout)
    repo = data["repository"]
    assert repo["commits"] == commit_count(root) == 9
    names = git_out(root, "log", "--format=%an").splitlines()
    assert repo["authors"] == dict(Counter(names))
    assert repo["authors"]["Agent One"] == repo["authors"]["Agent Two"] == 3
    assert sum(repo["authors"].values()) == 9
    dates = git_out(root, "log", "--format=%aI").split()
    assert repo["first"][:10] == min(dates)[:10] and repo["last"][:10] == max(dates)[:10]
    assert repo["first"] <= repo["last"]


def test_one_store(run, root):
    seed(run)
    data = json.loads(ok(run("stats", "--store", "shared", "--json")).stdout)
    assert data["entries"] == 4 and data["stores"] == {"shared": 4}
    assert data["status"]["amended"] == 0 and data["status"]["current"] == 2


def test_unknown_values_are_counted_too(run, root, write_store):
    write_store("shared", {"odd": make_entry("x", source="robot", tags=["a", "a"])})
    data = json.loads(ok(run("stats", "--json")).stdout)
    assert data["source"]["robot"] == 1
    assert data["tags"] == {"a": 1}  # a tag counts once per entry
    assert data["repository"] is None  # no repository: none is made
    assert not (root / ".git").exists()


def test_stats_writes_nothing(run, root):
    seed(run)
    snap = snapshot(root, with_cache=True)  # not even a cache
    ok(run("stats"))
    ok(run("stats", "--json"))
    ok(run("stats", "--store", "agent"))
    assert snapshot(root, with_cache=True) == snap


def test_human_output(run, root):
    seed(run)
    text = ok(run("stats")).stdout
    assert "entries: 6" in text
    assert "by status:" in text and "superseded  1" in text
    assert "repository: 9 commits" in text and "Agent One" in text


def test_empty_or_missing_context(run, root):
    data = json.loads(ok(run("stats", "--json")).stdout)
    assert data["entries"] == 0 and data["repository"] is None
    assert not root.exists()
