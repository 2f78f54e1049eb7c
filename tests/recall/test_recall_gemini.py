"""The real Gemini CLI, offline, wired by `ctx wire gemini --apply`: its AfterTool hook
(run_shell_command) gives a failing command whose fix is stored that fix in the next request
(``hookSpecificOutput.additionalContext``, as ``<hook_context>``), and nothing after an
unrelated failure or a command that succeeds. The model is a stand-in on 127.0.0.1
(``GOOGLE_GEMINI_BASE_URL``; see tests/mcp/test_mcp_gemini.py for what it needs) that asks for
one shell command a request; ``--approval-mode yolo`` lets the shell tool run unasked.

Gemini CLI comes from CTX_TEST_GEMINI or npm (``@google/gemini-cli``); skipped when neither
can be had."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ctx.failure_recall import FENCE_OPEN
from support.gitutil import run_ctx
from support.standin import StandIn, gemini_from_npm, gemini_reply

pytestmark = pytest.mark.slow

MODEL = "gemini-2.5-flash"
FIX = ("kubectl fails with 'KUBECONFIG not set' in non-login shells: run "
       "`export KUBECONFIG=~/.kube/staging.yaml` first (deploy.sh does it)")
COMMANDS = ["kubectl get pods -n staging", "ls /nonexistent-ctx-test/exports", "echo all-good"]
FENCE = FENCE_OPEN.replace("<", "&lt;").replace(">", "&gt;")  # Gemini CLI escapes a hook's context


@pytest.fixture(scope="session")
def gemini(tmp_path_factory) -> str:
    return gemini_from_npm(tmp_path_factory.mktemp("gemini-cli"))


def responses(data: dict) -> int:
    return sum(1 for c in data.get("contents", []) for p in c.get("parts", []) if "functionResponse" in p)


class Model(StandIn):
    """Asks for each of ``COMMANDS`` through run_shell_command, in order, then answers "done"."""

    def answer(self, path: str, data: dict) -> tuple[str, bytes] | None:
        if ":streamGenerateContent" not in path:
            return None
        asked = responses(data)
        offered = [f.get("name") for t in data.get("tools", []) for f in t.get("functionDeclarations", [])]
        if "run_shell_command" in offered and asked < len(COMMANDS):
            return "text/event-stream", gemini_reply([{"functionCall": {"name": "run_shell_command",
                                                                   "args": {"command": COMMANDS[asked]}}}])
        return "text/event-stream", gemini_reply([{"text": "done"}])


def test_a_failing_shell_command_whose_fix_is_stored_gets_it_and_nothing_else(root, tmp_path, gemini):
    home = Path(os.environ["HOME"])
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}) + "\n")
    assert run_ctx("set", "fix_kubeconfig_unset", FIX, env={"CTX_AUTHOR": "Agent One"}).returncode == 0
    assert run_ctx("set", "decision_docs_host", "The docs site is hosted on the docs bucket behind the CDN",
                   env={"CTX_AUTHOR": "Agent One"}).returncode == 0
    wired = run_ctx("wire", "gemini", "--apply", env={"CTX_AUTHOR": "Gemini"})
    assert wired.returncode == 0, wired.stderr
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "kubectl").write_text("#!/bin/sh\necho 'error: KUBECONFIG not set' >&2\nexit 1\n")
    (tools / "kubectl").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_", "CTX_AUTHOR"))}
    with Model() as model:
        env.update({"GOOGLE_GEMINI_BASE_URL": model.url, "GEMINI_API_KEY": "offline-test-key", "NO_COLOR": "1",
                    "PATH": f"{tools}:{os.environ['PATH']}"})
        session = subprocess.run([gemini, "-p", "Check the staging pods.", "--skip-trust", "-o", "json",
                                  "-m", MODEL, "--approval-mode", "yolo"], cwd=work, env=env,
                                 stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert session.returncode == 0, (session.stdout[-2000:], session.stderr[-2000:])
    after = {responses(d): json.dumps(d) for d in model.requests if responses(d)}
    assert sorted(after) == [1, 2, 3], sorted(after)
    assert after[1].count(FENCE) == 1 and "shared/fix_kubeconfig_unset" in after[1], after[1][-3000:]
    assert "decision_docs_host" not in after[1].split(FENCE, 1)[1]
    assert after[2].count(FENCE) == 1 and after[3].count(FENCE) == 1  # nothing more
    recalls = [r for r in json.loads(run_ctx("log", "--shown", "--json").stdout) if r["what"] == "recall"]
    assert [(r["harness"], r["keys"]) for r in recalls] == [("gemini", [{"store": "shared",
                                                                          "key": "fix_kubeconfig_unset"}])]
