"""`ctx start --harness NAME` (a harness's hook) notes its payload in the shown log (the keys
it shows, the session id from the hook's stdin), never fails for it; a plain `ctx start`
writes nothing (§5.1); `ctx view` shows the reach."""

from __future__ import annotations

import json

from ctx.shown import read
from support.gitutil import run_ctx


def test_start_notes_the_keys_it_shows_and_the_hooks_session(root):
    assert run_ctx("set", "decision_pool", "Use a pool of 20", "--tag", "decision",
                   env={"CTX_AUTHOR": "Agent One"}).returncode == 0
    done = run_ctx("start", "--harness", "claude-code", input=json.dumps({"session_id": "abc-1", "source": "startup"}),
                   env={"CTX_AUTHOR": "Claude"})
    assert done.returncode == 0 and "decision_pool" in done.stdout, done.stderr
    before = (root / ".git" / "ctx" / "shown.log").read_bytes()
    plain = run_ctx("start", input="")
    assert plain.returncode == 0
    assert (root / ".git" / "ctx" / "shown.log").read_bytes() == before  # a plain start writes nothing
    assert run_ctx("start", "--harness", "gemini", "--format", "hook", input="{}").returncode == 0
    records = read(root / ".git" / "ctx")
    assert [(r["what"], r["harness"], r["session"], r["author"]) for r in records] == [
        ("start", "claude-code", "abc-1", "Claude"), ("start", "gemini", "", "")]
    assert all({"store": "shared", "key": "decision_pool"} in r["keys"] for r in records)
    view = run_ctx("view", "--json")
    page = (root / ".git" / "ctx" / "view" / "ctx-view.html").read_text(encoding="utf-8")
    assert view.returncode == 0 and "shown to 2 sessions, last " in page


def test_a_start_whose_log_cannot_be_written_still_starts(root):
    assert run_ctx("set", "decision_pool", "Use a pool of 20", env={"CTX_AUTHOR": "Agent One"}).returncode == 0
    log = root / ".git" / "ctx" / "shown.log"
    log.parent.mkdir(exist_ok=True)
    log.mkdir()  # a folder where the log goes
    done = run_ctx("start", "--harness", "claude-code", input="{not json")
    assert done.returncode == 0 and "decision_pool" in done.stdout and done.stderr == ""


def test_the_setting_turns_the_log_off(root):
    assert run_ctx("set", "decision_pool", "Use a pool of 20", env={"CTX_AUTHOR": "Agent One"}).returncode == 0
    assert run_ctx("config", "shown-log", "false").returncode == 0
    assert run_ctx("start", "--harness", "claude-code", input="{}").returncode == 0
    assert read(root / ".git" / "ctx") == []
