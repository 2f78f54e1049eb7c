"""The real Claude Code with the hooks `ctx wire claude-code --apply` writes, offline, against
a scripted stand-in of its model on 127.0.0.1 (ANTHROPIC_BASE_URL): a session that wrote an
entry is asked once for its summary, writes it, and ends; a session that wrote nothing is
not asked; after a real compaction (the stand-in reports input tokens near
CLAUDE_CODE_AUTO_COMPACT_WINDOW) the start payload is in the first request and the
compaction's <summary> is kept in the context.

Claude Code comes from CTX_TEST_CLAUDE or npm (``support/standin.py``); skipped when
neither can be had."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctx.handover import REASON
from support.gitutil import run_ctx
from support.standin import StandIn, claude_from_npm, messages_reply, messages_stream

pytestmark = pytest.mark.slow

MARK = "This is asked once per session."  # the reason's last sentence: how a request shows it
SUMMARY = "## Done\n- Stored the proxy finding (finding_proxy_e2e)\n\n## Open\n- None\n"
COMPACTED = ("<analysis>\nSCRATCH-NOT-KEPT: thinking about what to keep\n</analysis>\n\n<summary>\n"
             "1. Primary request: find why uploads over 2 GB fail.\n2. Found: the proxy's 60 s timeout.\n"
             "</summary>")
STEPS = 12  # the most turns the model takes before a compaction (Claude Code refuses one of too few)
assert REASON.endswith(MARK)


@pytest.fixture(scope="session")
def claude(tmp_path_factory) -> str:
    return claude_from_npm(tmp_path_factory.mktemp("claude-code"))


_ids = iter(range(1, 1_000_000))


def _text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


def _last_user(data: dict) -> str:
    messages = [m for m in data.get("messages", []) if m.get("role") == "user"]
    return _text(messages[-1]) if messages else ""


def _bash(command: str, n: int) -> dict:
    return {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash",
            "input": {"command": command, "description": "ctx"}}


class Model(StandIn):
    """The scripted model. ``write``: its first turn stores an entry with `ctx set`; asked for
    the summary (the Stop hook's reason in its last message) it writes one; else it ends.
    ``big``: it reports that many input tokens (a compaction follows), and answers the
    compaction's request with ``COMPACTED``."""

    def __init__(self, write: bool, big: int = 0) -> None:
        super().__init__()
        self.write, self.big = write, big
        self.wrote = self.summarized = self.compacted = False
        self.turns: list[dict] = []  # the agent's own requests (those offering Bash)
        self.after_compaction: list[dict] = []
        self.calls = 0

    def answer(self, path: str, data: dict) -> tuple[str, bytes]:
        if not data.get("stream"):
            return "application/json", messages_reply("ok")
        last = _last_user(data)
        if self.big and not self.compacted and "<analysis>" in last and "<summary>" in last:
            self.compacted = True
            return "text/event-stream", _stream([{"type": "text", "text": COMPACTED}], "end_turn")
        if not any(t.get("name") == "Bash" for t in data.get("tools", [])):
            return "text/event-stream", _stream([{"type": "text", "text": "ok"}], "end_turn")
        self.turns.append(data)
        if self.compacted:
            self.after_compaction.append(data)
        self.calls += 1
        tokens = self.big if self.big and not self.compacted else 10
        if MARK in last and not self.summarized:
            self.summarized = True
            command = "printf '" + SUMMARY.replace("\n", "\\n") + "' | ctx summary new --from-stdin"
            return "text/event-stream", _stream([_bash(command, self.calls)], "tool_use", tokens)
        if self.write and not self.wrote:
            self.wrote = True
            command = 'ctx set finding_proxy_e2e "uploads over 2 GB fail: the proxy times out at 60 s"'
            return "text/event-stream", _stream([_bash(command, self.calls)], "tool_use", tokens)
        if self.big and not self.compacted and self.calls <= STEPS:  # a compaction needs turns to fold
            return "text/event-stream", _stream([_bash(f"echo step {self.calls}", self.calls)], "tool_use", tokens)
        return "text/event-stream", _stream([{"type": "text", "text": "done"}], "end_turn", tokens)


def _session(claude: str, root: Path, work: Path, model: Model, extra: dict[str, str] | None = None):
    env = {**os.environ, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_AUTOUPDATER": "1", "ANTHROPIC_API_KEY": "sk-ant-offline-test", "CTX_AUTHOR": "Claude",
           "CTX_HOME": str(root), "ANTHROPIC_BASE_URL": model.url, **(extra or {})}
    return subprocess.run([claude, "-p", "Look into the upload failures and record what you find.",
                           "--allowedTools", "Bash", "--output-format", "stream-json", "--verbose"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture
def wired(root, tmp_path) -> Path:
    done = run_ctx("init", "--yes")
    assert done.returncode == 0, done.stderr
    done = run_ctx("wire", "claude-code", "--apply", env={"CTX_AUTHOR": "Claude"})
    assert done.returncode == 0, done.stderr
    work = tmp_path / "work"
    work.mkdir()
    return work


def _asked(model: Model) -> int:
    """How many times the reason was given: in the agent's last request, the whole history."""
    return _text(model.turns[-1].get("messages", [])).count(MARK) if model.turns else 0


def _why(session, model: Model) -> str:
    return f"{session.stdout[-3000:]}\n{session.stderr[-2000:]}\n{[_last_user(d)[:300] for d in model.turns]}"


def test_a_session_that_wrote_is_asked_once_for_its_summary_then_ends(claude, root, wired):
    with Model(write=True) as model:
        session = _session(claude, root, wired, model)
    assert session.returncode == 0, _why(session, model)
    assert model.wrote and model.summarized, _why(session, model)
    assert _asked(model) == 1, _why(session, model)
    [summary] = (root / "sessions").glob("*_session.md")
    assert "finding_proxy_e2e" in summary.read_text(encoding="utf-8")
    assert json.loads(session.stdout.splitlines()[-1])["type"] == "result"  # it ended


def test_a_session_that_wrote_nothing_is_not_asked(claude, root, wired):
    with Model(write=False) as model:
        session = _session(claude, root, wired, model)
    assert session.returncode == 0, _why(session, model)
    assert model.turns and _asked(model) == 0, _why(session, model)
    assert not list((root / "sessions").glob("*.md"))


def test_after_a_compaction_the_start_payload_follows_and_its_summary_is_kept(claude, root, wired):
    window = 100_000  # Claude Code's least CLAUDE_CODE_AUTO_COMPACT_WINDOW
    with Model(write=False, big=window - 1_000) as model:
        session = _session(claude, root, wired, model, {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(window)})
    assert session.returncode == 0, _why(session, model)
    assert model.compacted, _why(session, model)
    assert model.after_compaction, _why(session, model)
    first = _text(model.after_compaction[0])
    assert "=== RULES (RULES.md) ===" in first, first[-3000:]
    found = json.loads(run_ctx("search", "proxy", "--store", "agent", "--json").stdout)
    kept = [r for r in found if r["key"].startswith("compaction_")]
    assert kept, found
    assert "60 s timeout" in kept[0]["entry"]["value"] and "SCRATCH-NOT-KEPT" not in kept[0]["entry"]["value"]


def _stream(blocks: list[dict], stop: str, input_tokens: int = 10) -> bytes:
    """One streamed reply, each its own message id (Claude Code folds replies of one id into one
    turn, and compacts only a history of enough turns)."""
    return messages_stream(blocks, stop, message_id=f"msg_ctx_{next(_ids)}", input_tokens=input_tokens)
