"""The real Claude Code against `ctx mcp`, offline: `ctx wire claude-code --mcp
--apply` writes the user-scope entry, `claude mcp list` reads it and connects,
and a `claude -p` session's requests (to a model stand-in on 127.0.0.1, through
ANTHROPIC_BASE_URL) offer `mcp__ctx__get`, whose call returns the entry.

Claude Code comes from npm (`@anthropic-ai/claude-code`) into a temporary
folder, or from CTX_TEST_CLAUDE (a `claude` executable); skipped when neither
can be had."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from support.gitutil import run_ctx
from support.standin import StandIn, claude_from_npm, messages_reply, messages_stream

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def claude(tmp_path_factory) -> str:
    return claude_from_npm(tmp_path_factory.mktemp("claude-code"))


class Model(StandIn):
    """The model on 127.0.0.1: waits for the MCP servers (Claude Code's WaitForMcpServers)
    if ctx's tools are not offered yet, then calls mcp__ctx__get once, then answers "done"."""

    def __init__(self) -> None:
        super().__init__()
        self.waited = self.called = False

    def answer(self, path: str, data: dict) -> tuple[str, bytes]:
        if not data.get("stream"):
            return "application/json", messages_reply("ok")
        return "text/event-stream", self.stream(data)

    def stream(self, data: dict) -> bytes:
        names = [t.get("name") for t in data.get("tools", [])]
        if "mcp__ctx__get" not in names and "WaitForMcpServers" in names and not self.waited:
            self.waited = True
            return messages_stream([{"type": "tool_use", "id": "toolu_wait", "name": "WaitForMcpServers",
                             "input": {"servers": ["ctx"]}}], "tool_use")
        if "mcp__ctx__get" in names and not self.called:
            self.called = True
            return messages_stream([{"type": "tool_use", "id": "toolu_get", "name": "mcp__ctx__get",
                             "input": {"key": "decision_pool"}}], "tool_use")
        return messages_stream([{"type": "text", "text": "done"}], "end_turn")


def _tool_results(requests: list[dict]) -> list[str]:
    out = []
    for data in requests:
        for message in data.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result" and block.get("tool_use_id") == "toolu_get":
                    inner = block.get("content")
                    out.append(json.dumps(inner) if not isinstance(inner, str) else inner)
    return out


def test_claude_code_lists_ctx_and_its_model_is_offered_ctx_get(root, tmp_path, claude):
    home = Path(os.environ["HOME"])
    done = run_ctx("set", "decision_pool", "Use a pool of 20", "--tag", "decision", env={"CTX_AUTHOR": "Agent One"})
    assert done.returncode == 0, done.stderr
    wired = run_ctx("wire", "claude-code", "--mcp", "--apply", env={"CTX_AUTHOR": "Claude"})
    assert wired.returncode == 0, wired.stderr
    assert json.loads((home / ".claude.json").read_text())["mcpServers"]["ctx"]["args"] == ["mcp"]
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_AUTOUPDATER": "1", "ANTHROPIC_API_KEY": "sk-ant-offline-test", "CTX_AUTHOR": ""}

    listed = subprocess.run([claude, "mcp", "list"], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0, listed.stderr
    line = next((x for x in listed.stdout.splitlines() if x.startswith("ctx:")), "")
    assert "mcp" in line and "Connected" in line, listed.stdout

    commits = run_ctx("log", "--json").stdout
    with Model() as model:
        session = subprocess.run([claude, "-p", "What is the pool size decision? Use ctx.",
                                  "--allowedTools", "mcp__ctx__get", "--output-format", "json"],
                                 cwd=work, env={**env, "ANTHROPIC_BASE_URL": model.url},
                                 capture_output=True, text=True, timeout=600)
    assert session.returncode == 0, (session.stdout[-2000:], session.stderr[-2000:])
    offered = [data for data in model.requests if any(t.get("name") == "mcp__ctx__get"
                                                      for t in data.get("tools", []))]
    assert offered, [[t.get("name") for t in d.get("tools", [])] for d in model.requests]
    tool = next(t for t in offered[0]["tools"] if t["name"] == "mcp__ctx__get")
    assert tool["input_schema"]["required"] == ["key"] and "store" in tool["input_schema"]["properties"]
    results = _tool_results(model.requests)
    assert results and "Use a pool of 20" in results[0], results
    assert run_ctx("log", "--json").stdout == commits  # a read: nothing written
