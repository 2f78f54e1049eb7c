"""The shown log (ctx/shown.py): one appended JSON line per payload that reached a model,
bounded (the oldest dropped), every line read back checked, and a write that can never fail
what it records (a start, a recall)."""

from __future__ import annotations

import json
import os

from ctx import shown


def test_a_record_is_one_json_line_read_back_whole(tmp_path):
    (tmp_path / ".git").mkdir()
    state = tmp_path / ".git" / "ctx"
    assert shown.note(state, "start", "claude-code", 'sess "1"\n', "Agent\tOne", [("shared", "k1"), ("agent", "k2")],
                      time="2026-12-02T10:00:00Z")
    raw = (state / shown.LOG_NAME).read_bytes()
    assert raw.count(b"\n") == 1
    record = json.loads(raw)
    assert record == {"time": "2026-12-02T10:00:00Z", "what": "start", "harness": "claude-code",
                      "session": 'sess "1"\n', "author": "Agent\tOne",
                      "keys": [{"store": "shared", "key": "k1"}, {"store": "agent", "key": "k2"}]}
    assert shown.read(state) == [record]
    assert oct((state / shown.LOG_NAME).stat().st_mode & 0o777) == "0o600"
    line = shown.line(record)
    assert "\n" not in line and "\\n" in line and "shared/k1, agent/k2" in line


def test_the_log_is_bounded_and_keeps_the_newest(tmp_path):
    (tmp_path / ".git").mkdir()
    state = tmp_path / ".git" / "ctx"
    keys = [("shared", f"key_{n:03d}_" + "x" * 40) for n in range(20)]
    for n in range(400):
        assert shown.note(state, "recall", "codex", f"s{n}", "A", keys)
    size = os.path.getsize(state / shown.LOG_NAME)
    assert size <= shown.MAX_BYTES
    records = shown.read(state)
    assert records[-1]["session"] == "s399" and records[0]["session"] != "s0"
    assert all(len(r["keys"]) == 20 for r in records)  # no line cut in half


def test_lines_that_are_not_ctx_records_are_skipped(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    good = {"time": "2026-12-02T10:00:00Z", "what": "recall", "harness": "gemini", "session": "",
            "author": "", "keys": [{"store": "shared", "key": "k"}, {"store": 3}]}
    (state / shown.LOG_NAME).write_text("\n".join([
        "not json", "[1]", json.dumps({**good, "what": "delete"}), json.dumps({**good, "time": 5}),
        json.dumps(good), "{" + "x" * shown.MAX_LINE + "}"]) + "\n", encoding="utf-8")
    assert [r["keys"] for r in shown.read(state)] == [[{"store": "shared", "key": "k"}]]


def test_a_write_that_cannot_happen_fails_nothing(tmp_path):
    assert not shown.note(None, "start", "", "", "", [])
    assert not shown.note(tmp_path / "no-repository" / "ctx", "start", "", "", "", [])  # never made here
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "ctx").write_text("a file where the folder goes")
    assert not shown.note(tmp_path / ".git" / "ctx", "start", "", "", "", [("shared", "k")])
    assert shown.read(tmp_path / ".git" / "ctx") == []


def test_reach_counts_sessions_and_the_last_time():
    records = [{"time": t, "what": "start", "harness": h, "session": s, "author": "", "keys": [
        {"store": "shared", "key": "k"}]} for t, h, s in (("2026-12-01T10:00:00Z", "claude-code", "a"),
                                                           ("2026-12-02T10:00:00Z", "claude-code", "a"),
                                                           ("2026-11-30T10:00:00Z", "codex", "a"),
                                                           ("2026-11-29T10:00:00Z", "", ""))]
    assert shown.reach(records) == {("shared", "k"): (3, "2026-12-02T10:00:00Z")}
