"""The real Codex CLI (`codex exec`) with the hooks `ctx wire codex --apply` writes into
$CODEX_HOME/hooks.json, offline, its model a scripted stand-in on 127.0.0.1 (a
`model_providers` entry, wire_api "responses"). Codex runs a hook only once it is trusted;
a test has no TUI to trust it in, so the session runs with --dangerously-bypass-hook-trust
(what `ctx wire codex` tells the user of, beside /hooks). Measured with Codex 0.171: the
SessionStart hook's JSON puts the start payload into the first request; a session that
wrote an entry is asked once for its summary (Stop's block), writes it and ends; a
session that wrote nothing is not asked.

Codex comes from CTX_TEST_CODEX or npm (``support/standin.py``); skipped when neither can
be had."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from ctx.handover import REASON
from support.gitutil import CTX_EXE, run_ctx
from support.standin import StandIn, codex_from_npm, responses_stream

pytestmark = pytest.mark.slow

MARK = "This is asked once per session."
SUMMARY = "## Done\n- Stored the proxy finding (finding_proxy_codex)\n\n## Open\n- None\n"
KEY_VARIABLE = "CTX_TEST_MODEL_KEY"
CTX = shlex.quote(str(CTX_EXE))  # Codex's shell is a login shell: its PATH is not the test's
assert REASON.endswith(MARK)


@pytest.fixture(scope="session")
def codex(tmp_path_factory) -> str:
    return codex_from_npm(tmp_path_factory.mktemp("codex"))


class Model(StandIn):
    """Codex's model: with ``write``, its first turn runs `ctx set`; given the Stop hook's reason
    it writes the summary; else it answers "done"."""

    def __init__(self, write: bool) -> None:
        super().__init__()
        self.write = write
        self.wrote = self.summarized = False

    def answer(self, path: str, data: dict) -> tuple[str, bytes] | None:
        return ("text/event-stream", self.stream(data)) if path.endswith("/responses") else None

    def stream(self, data: dict) -> bytes:
        number = len(self.requests)
        items = data.get("input", [])
        last = json.dumps(items[-1]) if items else ""
        command = None
        if MARK in last and not self.summarized:
            self.summarized = True
            command = "printf '" + SUMMARY.replace("\n", "\\n") + f"' | {CTX} summary new --from-stdin"
        elif self.write and not self.wrote:
            self.wrote = True
            command = f'{CTX} set finding_proxy_codex "uploads over 2 GB fail: the proxy times out at 60 s"'
        if command:
            return responses_stream(number, {"type": "function_call", "id": f"fc_{number}", "call_id": f"call_{number}",
                                   "name": "exec_command", "status": "completed",
                                   "arguments": json.dumps({"cmd": command})})
        return responses_stream(
            number, {"type": "message", "id": f"msg_{number}", "role": "assistant", "status": "completed",
                               "content": [{"type": "output_text", "text": "done", "annotations": []}]})


def _session(codex: str, root: Path, tmp_path: Path, model: Model) -> subprocess.CompletedProcess:
    home = Path(os.environ["HOME"])
    codex_home = home / ".codex"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model = "gpt-5"\nmodel_provider = "standin"\n\n[model_providers.standin]\nname = "model stand-in"\n'
        f'base_url = "{model.url}/v1"\nwire_api = "responses"\nenv_key = "{KEY_VARIABLE}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
    xdg = tmp_path / "xdg"
    env.update({"CODEX_HOME": str(codex_home), "XDG_DATA_HOME": str(xdg / "data"),
                "XDG_CACHE_HOME": str(xdg / "cache"), "XDG_STATE_HOME": str(xdg / "state"),
                KEY_VARIABLE: "sk-offline-test", "NO_COLOR": "1", "CTX_HOME": str(root), "CTX_AUTHOR": "Codex"})
    assert run_ctx("init", "--yes").returncode == 0
    wired = run_ctx("wire", "codex", "--apply", env={"CODEX_HOME": str(codex_home), "CTX_AUTHOR": "Codex"})
    assert wired.returncode == 0, wired.stderr
    assert "/hooks" in wired.stdout  # it says how to trust the hooks
    work = tmp_path / "work"
    work.mkdir()
    return subprocess.run([codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
                           "--dangerously-bypass-approvals-and-sandbox", "Look into the upload failures."],
                          cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)


def _given(model: Model) -> int:
    """How many times the reason was given: in the last request, the whole history."""
    return json.dumps(model.requests[-1].get("input", [])).count(MARK) if model.requests else 0


def test_codex_session_that_wrote_is_asked_once_and_its_start_payload_came_by_the_hook(codex, root, tmp_path):
    with Model(write=True) as model:
        session = _session(codex, root, tmp_path, model)
    why = (session.stdout[-2000:], session.stderr[-3000:])
    assert session.returncode == 0, why
    assert "=== RULES (RULES.md) ===" in json.dumps(model.requests[0].get("input", [])), why
    assert model.wrote and model.summarized, why
    assert _given(model) == 1, why
    [summary] = (root / "sessions").glob("*_session.md")
    assert "finding_proxy_codex" in summary.read_text(encoding="utf-8")


def test_codex_session_that_wrote_nothing_is_not_asked(codex, root, tmp_path):
    with Model(write=False) as model:
        session = _session(codex, root, tmp_path, model)
    assert session.returncode == 0, (session.stdout[-2000:], session.stderr[-3000:])
    assert model.requests and _given(model) == 0
    assert not list((root / "sessions").glob("*.md"))
