"""ctx event stop / end / compact and ctx start --harness, in process (no harness): the
handover is asked once, only of a session that wrote and wrote no summary; bad stdin is
nothing printed and exit 0; a compaction's <summary> is kept, found by search and shown at
the next start until a summary follows. The real harnesses: tests/features/test_events_harness.py."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from ctx import handover
from ctx.cli.hookinput import BOUND, read_raw
from ctx.hookpayload import parse
from ctxgit.gitfiles.layout import SESSIONS, path
from support.gitutil import git

SUMMARY = "## Done\n- fixed it (finding_a)\n\n## Open\n- None\n"
COMPACT = ("<analysis>\nscratch: the user wants X; maybe Y\n</analysis>\n\n"
           "<summary>\n1. Primary request: fix the upload proxy timeout.\n2. Done: raised it to 120 s.\n"
           "</summary>")


def ok(result):
    assert result.exit_code == 0, (result.output, result.stderr)
    return result


def hook(**fields) -> str:
    return json.dumps({"hook_event_name": "Stop", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", **fields})


@pytest.fixture
def context(run, root):
    ok(run("init", "--yes"))
    return root


def note(root, session: str, started: int) -> None:
    assert handover.note_start(path(root, SESSIONS), session, started, "claude-code", "Claude")


def stop(run, session: str = "s1", author: str | None = "Claude", **fields):
    return ok(run("event", "stop", "--harness", "claude-code", author=author,
                  input=hook(session_id=session, stop_hook_active=False, **fields)))


def asked(result) -> bool:
    if not result.stdout.strip():
        return False
    answer = json.loads(result.stdout)
    assert answer["decision"] == "block" and "ctx summary new" in answer["reason"]
    assert "## Done" in answer["reason"] and "## Open" in answer["reason"]
    return True


def test_a_session_that_wrote_is_asked_once_and_then_ends(run, context):
    note(context, "s1", int(time.time()) - 5)
    ok(run("set", "finding_a", "the proxy drops uploads over 2 GB", author="Claude"))
    assert asked(stop(run))
    # the harness goes on once; its next Stop says so, and even without it ctx never asks twice
    assert not asked(ok(run("event", "stop", author="Claude", input=hook(session_id="s1", stop_hook_active=True))))
    assert not asked(stop(run))
    assert handover.asked(handover.read_notes(path(context, SESSIONS)), "s1")


def test_a_session_that_wrote_nothing_is_not_asked(run, context):
    ok(run("set", "finding_old", "from an earlier session", author="Claude"))
    note(context, "s1", int(time.time()) + 1)
    assert not asked(stop(run))


def test_a_write_just_before_the_start_is_not_the_sessions(run, context):
    ok(run("set", "finding_old", "written a moment before the session began", author="Claude"))
    ok(run("start", "--harness", "claude-code", author="Claude", input=hook(session_id="s1", source="startup")))
    assert not asked(stop(run))


def test_a_session_that_wrote_its_summary_is_not_asked(run, context):
    note(context, "s1", int(time.time()) - 5)
    ok(run("set", "finding_a", "v", author="Claude"))
    ok(run("summary", "new", "--from-stdin", author="Claude", input=SUMMARY))
    assert not asked(stop(run))


def test_only_this_sessions_author_counts(run, context):
    note(context, "s1", int(time.time()) - 5)
    ok(run("set", "finding_b", "another agent's", author="Codex"))
    assert not asked(stop(run, author="Claude"))
    assert asked(stop(run, session="s1", author="Codex"))


def test_a_session_this_machine_did_not_see_start_is_not_asked(run, context):
    ok(run("set", "finding_a", "v", author="Claude"))
    assert not asked(stop(run, session="never-started"))


def test_handover_on_stop_false_turns_it_off(run, context):
    note(context, "s1", int(time.time()) - 5)
    ok(run("config", "handover-on-stop", "false"))
    ok(run("set", "finding_a", "v", author="Claude"))
    assert not asked(stop(run))
    ok(run("config", "handover-on-stop", "true"))
    assert asked(stop(run))


def test_the_kept_compaction_is_not_the_sessions_writing(run, context):
    note(context, "s1", int(time.time()) - 5)
    ok(run("event", "compact", author="Claude", input=hook(session_id="s1", compact_summary=COMPACT)))
    assert not asked(stop(run))


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '{"session_id": 7}', '{"session_id": ""}',
                                   '{"session_id": "has space"}', '{"session_id": "' + "x" * 300 + '"}',
                                   '{"session_id": "s1", "stop_hook_active": "yes"}'[:-1], "{"])
def test_bad_stdin_prints_nothing_and_exits_0(run, context, stdin):
    note(context, "s1", int(time.time()) - 5)
    ok(run("set", "finding_a", "v", author="Claude"))
    for event in ("stop", "end", "compact"):
        done = ok(run("event", event, author="Claude", input=stdin))
        assert done.stdout == ""


def test_no_context_prints_nothing_and_exits_0(run, root):
    done = ok(run("event", "stop", author="Claude", input=hook(session_id="s1")))
    assert done.stdout == ""
    assert not root.exists()


def test_hook_input_is_bounded_and_checked(tmp_path):
    big = tmp_path / "big"
    big.write_bytes(b"{" + b" " * BOUND + b"}")
    with open(big, "rb") as stream:
        assert read_raw(stream) is None
    small = tmp_path / "small"
    small.write_bytes(hook(session_id="s1", stop_hook_active=True).encode())
    with open(small, "rb") as stream:
        got = parse(read_raw(stream))
    assert got is not None and got.session_id == "s1" and got.stop_hook_active is True
    assert parse(b'{"session_id": "s1", "transcript_path": "relative/p", "source": "x\\u001b[2J"}').source is None
    assert parse(b'{"session_id": "s1", "transcript_path": "relative/p"}').transcript_path is None


def test_a_pipe_never_closed_is_given_up(tmp_path):
    reader, writer = os.pipe()
    os.write(writer, b'{"session_id": ')
    with os.fdopen(reader, "rb") as stream:
        began = time.monotonic()
        assert read_raw(stream, wait=0.3) is None
        assert time.monotonic() - began < 2
    os.close(writer)


def test_start_notes_the_first_start_of_a_session(run, context):
    notes_path = path(context, SESSIONS)
    ok(run("start", "--harness", "claude-code", author="Claude", input=hook(session_id="s1", source="startup")))
    first = handover.started(handover.read_notes(notes_path), "s1")
    assert first is not None
    time.sleep(1.1)
    shown = ok(run("start", "--harness", "claude-code", author="Claude", input=hook(session_id="s1", source="compact")))
    assert "=== RULES" in shown.stdout  # the payload after a compaction, as at the start
    assert handover.started(handover.read_notes(notes_path), "s1") == first
    assert not git(context, "status", "--porcelain").stdout.strip()  # never committed


def test_the_notes_are_bounded(tmp_path):
    (tmp_path / "ctx").mkdir()
    notes_path = tmp_path / "ctx" / "sessions.json"
    for i in range(handover.KEPT + 10):
        handover.note_start(notes_path, f"s{i}", 1000 + i, "codex", None)
    notes = handover.read_notes(notes_path)
    assert len(notes) == handover.KEPT and "s0" not in notes and f"s{handover.KEPT + 9}" in notes
    notes_path.write_text('{"s1": {"started": "soon"}, "bad id": {"started": 1}}')
    assert handover.read_notes(notes_path) == {}


def test_packed_commits_are_read_too(run, context):
    from ctxgit.porcelain.authored import written_since
    began = int(time.time()) - 5
    ok(run("set", "finding_a", "v", author="Claude"))
    ok(run("summary", "new", "--from-stdin", author="Claude", input=SUMMARY))
    git(context, "gc", "--quiet")
    found = written_since(context, began, "Claude")
    assert found.wrote and found.summarized
    assert not written_since(context, began, "Codex").wrote
    assert not written_since(context, int(time.time()) + 5, "Claude").wrote


# --- the compaction ----------------------------------------------------------------------

def test_the_compaction_keeps_its_summary_not_its_scratch(run, context):
    ok(run("event", "compact", "--harness", "claude-code", author="Claude",
           input=hook(session_id="5e1f-AB", compact_summary=COMPACT, trigger="auto")))
    found = json.loads(ok(run("search", "upload proxy", "--json")).stdout)
    [kept] = [r for r in found if r["key"].startswith("compaction_")]
    assert kept["store"] == "agent" and kept["key"].startswith("compaction_5e1fab_")
    value = kept["entry"]["value"]
    assert "raised it to 120 s" in value and "scratch" not in value and "<summary>" not in value
    assert kept["entry"]["tags"] == ["compaction"] and kept["entry"]["scope"] == "global"
    assert kept["entry"]["author"] == "Claude"


def test_the_next_start_shows_a_kept_compaction(run, context):
    ok(run("event", "compact", author="Claude", input=hook(session_id="s1", compact_summary=COMPACT)))
    shown = ok(run("start")).stdout
    assert "=== LAST COMPACTION (agent/compaction_s1_" in shown and "raised it to 120 s" in shown
    assert shown.index("=== SESSION SUMMARY") < shown.index("=== LAST COMPACTION")
    time.sleep(1.1)
    ok(run("summary", "new", "--from-stdin", author="Claude", input=SUMMARY))
    assert "LAST COMPACTION" not in ok(run("start")).stdout  # a summary followed it


def test_keep_compaction_false_keeps_nothing(run, context):
    ok(run("config", "keep-compaction", "false"))
    ok(run("event", "compact", author="Claude", input=hook(session_id="s1", compact_summary=COMPACT)))
    assert json.loads(ok(run("list", "--store", "agent", "--json")).stdout) == []


def test_a_compaction_with_a_credential_is_not_kept(run, context):
    secret = "<summary>the key is AKIA" + "IOSFODNN7EXAMPLQ and it works</summary>"
    done = ok(run("event", "compact", author="Claude", input=hook(session_id="s1", compact_summary=secret)))
    assert done.stdout == ""
    assert json.loads(ok(run("list", "--store", "agent", "--json")).stdout) == []


# --- the session's end -------------------------------------------------------------------

def test_the_end_without_sync_auto_does_nothing(run, context):
    began = time.monotonic()
    done = ok(run("event", "end", author="Claude", input=hook(session_id="s1", reason="exit")))
    assert done.stdout == "" and time.monotonic() - began < 5


@pytest.mark.slow
def test_the_end_pushes_in_the_background(run, context, tmp_path):
    from support.gitutil import make_bare, wait_for
    remote = make_bare(tmp_path / "remote.git")
    ok(run("remote", "add", "origin", str(remote)))
    ok(run("sync"))
    ok(run("set", "finding_a", "v", author="Claude"))  # (sync-auto still off: not pushed)
    ok(run("config", "sync-auto", "true"))
    head = git(context, "rev-parse", "HEAD").stdout.strip()
    began = time.monotonic()
    ok(run("event", "end", author="Claude", input=hook(session_id="s1", reason="exit")))
    assert time.monotonic() - began < 2  # the push is detached: the exit is not delayed

    def pushed() -> bool:
        done = subprocess.run(["git", "--git-dir", str(remote), "rev-parse", "main"], capture_output=True, text=True)
        return done.stdout.strip() == head
    assert wait_for(pushed, timeout=20)
