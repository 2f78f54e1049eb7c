"""The real Codex CLI (`codex exec`), offline, wired by `ctx wire codex --apply`: its PostToolUse
hook (Bash, in $CODEX_HOME/hooks.json) fires after a failing command too, and ctx decides from
the output whether it failed: a failing command whose fix is stored gets it in the next request
(``hookSpecificOutput.additionalContext``), an unrelated failure and a success get nothing.
Codex runs a hook it did not write only once trusted: `codex exec` has no review, so this test
runs it with ``--dangerously-bypass-hook-trust`` (what `ctx wire codex` tells the user instead:
trust it once in the TUI). The model is a stand-in on 127.0.0.1 (see tests/mcp/test_mcp_codex.py)
asking for one shell command a request.

Codex comes from CTX_TEST_CODEX or npm (``@openai/codex``); skipped when neither can be had."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ctx.failure_recall import FENCE_OPEN
from support.gitutil import run_ctx
from support.standin import StandIn, codex_from_npm, responses_stream

pytestmark = pytest.mark.slow

KEY_VARIABLE = "CTX_TEST_MODEL_KEY"
FIX = ("kubectl fails with 'KUBECONFIG not set' in non-login shells: run "
       "`export KUBECONFIG=~/.kube/staging.yaml` first (deploy.sh does it)")
COMMANDS = ["kubectl get pods -n staging", "ls /nonexistent-ctx-test/exports", "echo all-good"]
# (Codex runs a command in a login shell, whose PATH puts the machine's own kubectl first: the
# test's stand-in is called by its path)


@pytest.fixture(scope="session")
def codex(tmp_path_factory) -> str:
    return codex_from_npm(tmp_path_factory.mktemp("codex"))


def outputs(data: dict) -> int:
    return sum(1 for item in data.get("input", []) if item.get("type") == "function_call_output")


STUBS: list[str] = []  # the stand-in kubectl's folder


def _call(offered: list[str], n: int) -> dict:
    """The shell call of the tool this Codex offers (exec_command, shell_command or shell)."""
    command = COMMANDS[n].replace("kubectl", f"{STUBS[0]}/kubectl") if STUBS else COMMANDS[n]
    if "exec_command" in offered:
        name, args = "exec_command", {"cmd": command}
    elif "shell_command" in offered:
        name, args = "shell_command", {"command": command}
    else:
        name, args = "shell", {"command": ["bash", "-lc", command]}
    return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": name, "status": "completed",
            "arguments": json.dumps(args)}


class Model(StandIn):
    def answer(self, path: str, data: dict) -> tuple[str, bytes] | None:
        if not path.endswith("/responses"):
            return None
        number, asked = len(self.requests), outputs(data)
        offered = [t.get("name") for t in data.get("tools", []) if t.get("type") == "function"]
        if asked < len(COMMANDS):
            return "text/event-stream", responses_stream(number, _call(offered, asked))
        return "text/event-stream", responses_stream(
            number, {"type": "message", "id": f"msg_{number}", "role": "assistant",
                                                     "status": "completed", "content": [
                                                         {"type": "output_text", "text": "done", "annotations": []}]})


def session(codex: str, tmp_path: Path, *trust: str) -> tuple[Model, subprocess.CompletedProcess]:
    """ctx wired into a fresh CODEX_HOME, the stand-in kubectl, and one `codex exec` (``trust``:
    its extra options)."""
    codex_home = Path(os.environ["HOME"]) / ".codex"
    codex_home.mkdir()
    assert run_ctx("set", "fix_kubeconfig_unset", FIX, env={"CTX_AUTHOR": "Agent One"}).returncode == 0
    assert run_ctx("set", "decision_docs_host", "The docs site is hosted on the docs bucket behind the CDN",
                   env={"CTX_AUTHOR": "Agent One"}).returncode == 0
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "kubectl").write_text("#!/bin/sh\necho 'error: KUBECONFIG not set' >&2\nexit 1\n")
    (tools / "kubectl").chmod(0o755)
    STUBS[:] = [str(tools)]
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_", "CTX_AUTHOR"))}
    xdg = tmp_path / "xdg"
    env.update({"CODEX_HOME": str(codex_home), "XDG_DATA_HOME": str(xdg / "data"),
                "XDG_CACHE_HOME": str(xdg / "cache"), "XDG_STATE_HOME": str(xdg / "state"),
                KEY_VARIABLE: "sk-offline-test", "NO_COLOR": "1", "PATH": f"{tools}:{os.environ['PATH']}"})
    with Model() as model:
        (codex_home / "config.toml").write_text(
            'model = "gpt-5"\nmodel_provider = "standin"\n\n[model_providers.standin]\nname = "model stand-in"\n'
            f'base_url = "{model.url}/v1"\nwire_api = "responses"\nenv_key = "{KEY_VARIABLE}"\n')
        wired = run_ctx("wire", "codex", "--apply", env={"CODEX_HOME": str(codex_home), "CTX_AUTHOR": "Codex"})
        assert wired.returncode == 0, wired.stderr
        assert "/hooks" in wired.stderr  # what the user must do: trust the hook in Codex
        hooks = json.loads((codex_home / "hooks.json").read_text())["hooks"]
        assert hooks["PostToolUse"][0]["matcher"] == "Bash"
        done = subprocess.run([codex, "exec", "--skip-git-repo-check", "--ephemeral", *trust,
                                  "--sandbox", "danger-full-access",
                                  "-c", 'approval_policy="never"',
                                  "Check the staging pods."],
                                 cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                 timeout=300)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    return model, done


def test_a_failing_command_whose_fix_is_stored_gets_it_and_nothing_else(root, tmp_path, codex):
    model, done = session(codex, tmp_path, "--dangerously-bypass-hook-trust")
    after = {outputs(d): json.dumps(d) for d in model.requests if outputs(d)}
    assert sorted(after) == [1, 2, 3], (sorted(after), done.stderr[-3000:])
    first = after[1]
    assert first.count(FENCE_OPEN) == 1 and "shared/fix_kubeconfig_unset" in first, (first[-4000:],
                                                                                    done.stderr[-3000:])
    assert after[2].count(FENCE_OPEN) == 1 and after[3].count(FENCE_OPEN) == 1  # nothing more
    recalls = [r for r in json.loads(run_ctx("log", "--shown", "--json").stdout) if r["what"] == "recall"]
    assert [(r["harness"], r["keys"]) for r in recalls] == [("codex", [{"store": "shared",
                                                                         "key": "fix_kubeconfig_unset"}])]


def test_an_untrusted_hook_does_not_run_as_ctx_wire_says(root, tmp_path, codex):
    model, done = session(codex, tmp_path)
    assert not any(FENCE_OPEN in json.dumps(d) for d in model.requests)
    assert run_ctx("log", "--shown", "--json").stdout.strip() == "[]"
