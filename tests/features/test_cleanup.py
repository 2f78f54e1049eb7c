"""ctx cleanup: expired session-scoped entries go in one commit; a dry run
changes nothing; durations; unreadable timestamps are never deleted."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from ctx.errors import InvalidArgument
from ctx.features.cleanup import parse_duration
from support.gitutil import commit_count, message, subject
from support.stores import make_entry, read_entries, snapshot


def ago(**delta) -> str:
    return (datetime.now(UTC) - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def ok(result):
    assert result.exit_code == 0, (result.output, result.stderr)
    return result


@pytest.fixture
def seeded(run, root, write_store):
    write_store("shared", {
        "old_note": make_entry("two days old", scope="session", when=ago(days=2)),
        "fresh_note": make_entry("an hour old", scope="session", when=ago(hours=1)),
        "old_global": make_entry("kept: global", when=ago(days=30)),
        "bad_time": make_entry("unreadable", scope="session", when="yesterday-ish"),
    })
    write_store("agent", {
        "scratch": make_entry("three days old", scope="session", when=ago(days=3)),
        "half_day": make_entry("twelve hours old", scope="session", when=ago(hours=12)),
    })
    ok(run("set", "anchor", "x"))  # the set-up is committed; the next write is one commit
    return commit_count(root)


def test_cleanup_deletes_expired_session_entries_in_one_commit(run, root, seeded):
    result = json.loads(ok(run("cleanup", "--json")).stdout)
    assert result["dry_run"] is False
    assert [(d["store"], d["key"]) for d in result["deleted"]] == [("shared", "old_note"), ("agent", "scratch")]
    assert result["skipped"] == [{"store": "shared", "key": "bad_time"}]
    assert set(read_entries(root)) == {"fresh_note", "old_global", "bad_time", "anchor"}
    assert set(read_entries(root, "agent")) == {"half_day"}
    assert commit_count(root) == seeded + 1
    assert subject(root) == "cleanup: 2 expired session entries (older than 24h)"
    text = message(root)
    assert "Ctx-Operation: cleanup" in text
    assert "Ctx-Key: shared/old_note" in text and "Ctx-Key: agent/scratch" in text


def test_dry_run_lists_and_changes_nothing(run, root, seeded):
    snap = snapshot(root)
    human = ok(run("cleanup", "--dry-run"))
    assert "- shared/old_note" in human.stdout and "- agent/scratch" in human.stdout
    assert "would delete 2" in human.stdout
    assert "bad_time" in human.stderr
    dry = json.loads(ok(run("cleanup", "--dry-run", "--json")).stdout)
    assert dry["dry_run"] is True and len(dry["deleted"]) == 2
    assert snapshot(root) == snap
    assert commit_count(root) == seeded


def test_threshold_can_be_minutes_hours_or_days(run, root, seeded):
    dry = json.loads(ok(run("cleanup", "--older-than", "30m", "--dry-run", "--json")).stdout)
    assert {d["key"] for d in dry["deleted"]} == {"old_note", "fresh_note", "scratch", "half_day"}
    dry = json.loads(ok(run("cleanup", "--older-than", "7d", "--dry-run", "--json")).stdout)
    assert dry["deleted"] == []
    ok(run("cleanup", "--older-than", "6h"))
    assert set(read_entries(root, "agent")) == set()
    assert commit_count(root) == seeded + 1


def test_nothing_expired_is_no_commit(run, root, seeded):
    ok(run("cleanup", "--older-than", "30d"))
    assert commit_count(root) == seeded


@pytest.mark.parametrize("bad", ["24", "5x", "0h", "-1d", "h", "1.5h", ""])
def test_bad_durations_are_usage_errors(run, root, bad):
    result = run("cleanup", "--older-than", bad)
    assert result.exit_code == 2
    assert "duration" in result.stderr
    assert not root.exists()


def test_parse_duration():
    assert parse_duration("30m") == timedelta(minutes=30)
    assert parse_duration("24h") == timedelta(hours=24)
    assert parse_duration("7D") == timedelta(days=7)
    with pytest.raises(InvalidArgument):
        parse_duration("1w")


def test_cleanup_on_an_empty_context_writes_nothing(run, root):
    result = ok(run("cleanup"))
    assert "deleted 0" in result.stdout
    assert commit_count(root) == 0
