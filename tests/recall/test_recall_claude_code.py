"""The real Claude Code, offline, wired by `ctx wire claude-code --apply`: a Bash command that
fails with an error whose fix the context holds gets that fix in the model's next request (the
PostToolUseFailure hook's additionalContext, fenced as data), and nothing else; an unrelated
failure and a command that succeeds add nothing. The model is a stand-in on 127.0.0.1
(ANTHROPIC_BASE_URL) that answers each request with the next scripted Bash call.

Claude Code comes from CTX_TEST_CLAUDE or npm (`@anthropic-ai/claude-code`); skipped when
neither can be had."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctx.failure_recall import FENCE_OPEN
from support.gitutil import run_ctx
from support.standin import StandIn, claude_from_npm, messages_reply, messages_stream

pytestmark = pytest.mark.slow

FIX = ("kubectl fails with 'KUBECONFIG not set' in non-login shells: run "
       "`export KUBECONFIG=~/.kube/staging.yaml` first (deploy.sh does it)")
COMMANDS = ["kubectl get pods -n staging", "ls /nonexistent-ctx-test/exports", "echo all-good"]


@pytest.fixture(scope="session")
def claude(tmp_path_factory) -> str:
    return claude_from_npm(tmp_path_factory.mktemp("claude-code"))


class Model(StandIn):
    """Calls Bash once for each of ``COMMANDS``, in order, then answers "done"."""

    def answer(self, path: str, data: dict) -> tuple[str, bytes]:
        if not data.get("stream"):
            return "application/json", messages_reply("ok")
        asked = len(self._results(data))
        if "Bash" in [t.get("name") for t in data.get("tools", [])] and asked < len(COMMANDS):
            return "text/event-stream", messages_stream([{"type": "tool_use", "id": f"toolu_{asked}", "name": "Bash",
                                                          "input": {"command": COMMANDS[asked],
                                                                    "description": "run it"}}], "tool_use")
        return "text/event-stream", messages_stream([{"type": "text", "text": "done"}], "end_turn")

    @staticmethod
    def _results(data: dict) -> list[dict]:
        return [b for m in data.get("messages", []) if isinstance(m.get("content"), list)
                for b in m["content"] if b.get("type") == "tool_result"]


def after_result(data: dict, n: int) -> str:
    """Everything in the request from tool result ``n`` on (the text the model sees after it)."""
    messages = data.get("messages", [])
    for i, message in enumerate(messages):
        content = message.get("content")
        if isinstance(content, list) and any(b.get("type") == "tool_result" and b.get("tool_use_id") == f"toolu_{n}"
                                             for b in content):
            return json.dumps(messages[i:])
    return ""


def requests_after(model: Model, n: int) -> list[dict[str, Any]]:
    """The streamed requests whose last tool result is ``n`` (the model's next request after it)."""
    return [d for d in model.requests if d.get("stream") and len(Model._results(d)) == n + 1]


def test_a_failing_command_whose_fix_is_stored_gets_it_and_nothing_else(root, tmp_path, claude):
    home = Path(os.environ["HOME"])
    assert run_ctx("set", "fix_kubeconfig_unset", FIX, "--tag", "fix", env={"CTX_AUTHOR": "Agent One"}).returncode == 0
    assert run_ctx("set", "decision_docs_host", "The docs site is hosted on the docs bucket behind the CDN",
                   env={"CTX_AUTHOR": "Agent One"}).returncode == 0
    wired = run_ctx("wire", "claude-code", "--apply", env={"CTX_AUTHOR": "Claude"})
    assert wired.returncode == 0, wired.stderr
    assert "recall-on-failure false" in wired.stdout + wired.stderr  # (its notes)
    hooks = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    assert hooks["PostToolUseFailure"][0]["matcher"] == "Bash"
    tools = tmp_path / "bin"
    tools.mkdir()
    kubectl = tools / "kubectl"
    kubectl.write_text("#!/bin/sh\necho 'error: KUBECONFIG not set' >&2\nexit 1\n")
    kubectl.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_AUTOUPDATER": "1", "ANTHROPIC_API_KEY": "sk-ant-offline-test", "CTX_AUTHOR": "Claude",
           "PATH": f"{tools}:{os.environ['PATH']}"}
    with Model() as model:
        session = subprocess.run([claude, "-p", "Check the staging pods.", "--allowedTools", "Bash",
                                  "--output-format", "stream-json", "--verbose"],
                                 cwd=work, env={**env, "ANTHROPIC_BASE_URL": model.url},
                                 capture_output=True, text=True, timeout=600)
    assert session.returncode == 0, (session.stdout[-3000:], session.stderr[-2000:])
    for n in range(len(COMMANDS)):
        assert requests_after(model, n), (n, [len(Model._results(d)) for d in model.requests])
    first = after_result(requests_after(model, 0)[0], 0)
    assert FENCE_OPEN in first and "shared/fix_kubeconfig_unset" in first and "Agent One" in first, first[:3000]
    assert "decision_docs_host" not in first  # what does not answer the failure is not given
    assert json.dumps(requests_after(model, 0)[0]).count(FENCE_OPEN) == 1
    for n in (1, 2):  # an unrelated failure, then a success: nothing more (Claude Code may fold the
        # tool results of one turn into one message, the first recall after them: it is counted once)
        later = requests_after(model, n)[0]
        assert after_result(later, n) and json.dumps(later).count(FENCE_OPEN) == 1, json.dumps(later)[-3000:]
    records = json.loads(run_ctx("log", "--shown", "--json").stdout)
    recalls = [r for r in records if r["what"] == "recall"]
    assert [(r["harness"], r["keys"]) for r in recalls] == [
        ("claude-code", [{"store": "shared", "key": "fix_kubeconfig_unset"}])]
    starts = [r for r in records if r["what"] == "start"]
    assert starts and starts[0]["session"] and starts[0]["session"] == recalls[0]["session"]
