"""The real Gemini CLI (`gemini -p`) with the hooks `ctx wire gemini --apply` writes, offline,
its model a scripted stand-in on 127.0.0.1 (``GOOGLE_GEMINI_BASE_URL``; see
tests/mcp/test_mcp_gemini.py for what it needs). AfterAgent is its Stop: a session that wrote
an entry is asked once for its summary (the reason comes back as a new prompt), writes it
and ends; a session that wrote nothing is not asked. ``--yolo``: in its default approval
mode a ``-p`` session is offered no shell.

Gemini CLI comes from CTX_TEST_GEMINI or npm (``support/standin.py``); skipped when neither
can be had."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from ctx.handover import REASON
from support.gitutil import CTX_EXE, run_ctx
from support.standin import StandIn, gemini_from_npm, gemini_reply

pytestmark = pytest.mark.slow

MARK = "This is asked once per session."
MODEL = "gemini-2.5-flash"
SUMMARY = "## Done\n- Stored the proxy finding (finding_proxy_gemini)\n\n## Open\n- None\n"
assert REASON.endswith(MARK)


@pytest.fixture(scope="session")
def gemini(tmp_path_factory) -> str:
    return gemini_from_npm(tmp_path_factory.mktemp("gemini-cli"))


def _last(data: dict) -> str:
    contents = [c for c in data.get("contents", []) if c.get("role") == "user"]
    return json.dumps(contents[-1]) if contents else ""


class Model(StandIn):
    def __init__(self, root: Path, write: bool) -> None:
        super().__init__()
        self.write = write
        self.wrote = self.summarized = False
        self.ctx = f"CTX_HOME={shlex.quote(str(root))} CTX_AUTHOR=Gemini {shlex.quote(str(CTX_EXE))}"

    def answer(self, path: str, data: dict) -> tuple[str, bytes] | None:
        if ":streamGenerateContent" not in path:
            return None
        last = _last(data)
        command = None
        if MARK in last and not self.summarized:
            self.summarized = True
            command = "printf '" + SUMMARY.replace("\n", "\\n") + f"' | {self.ctx} summary new --from-stdin"
        elif self.write and not self.wrote:
            self.wrote = True
            command = f'{self.ctx} set finding_proxy_gemini "uploads over 2 GB fail: the proxy times out at 60 s"'
        if command:
            return "text/event-stream", gemini_reply([{"functionCall": {"name": "run_shell_command",
                                                                   "args": {"command": command}}}])
        return "text/event-stream", gemini_reply([{"text": "done"}])


def _session(gemini: str, model: Model, root: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    settings = Path(os.environ["HOME"]) / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}) + "\n")
    assert run_ctx("init", "--yes").returncode == 0
    wired = run_ctx("wire", "gemini", "--apply", env={"CTX_AUTHOR": "Gemini"})
    assert wired.returncode == 0, wired.stderr
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_", "CTX_"))}
    env.update({"GOOGLE_GEMINI_BASE_URL": model.url, "GEMINI_API_KEY": "offline-test-key", "NO_COLOR": "1"})
    return subprocess.run([gemini, "-p", "Look into the upload failures.", "--skip-trust", "--yolo", "-o", "json",
                           "-m", MODEL], cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=300)


def _given(model: Model) -> int:
    return sum(json.dumps(r.get("contents", [])[-1:]).count(MARK) for r in model.requests)


def test_gemini_session_that_wrote_is_asked_once_then_ends(gemini, root, tmp_path):
    with Model(root, write=True) as model:
        session = _session(gemini, model, root, tmp_path)
    why = (session.stdout[-2000:], session.stderr[-3000:])
    assert session.returncode == 0, why
    assert model.wrote and model.summarized, why
    assert _given(model) == 1, why
    [summary] = (root / "sessions").glob("*_session.md")
    assert "finding_proxy_gemini" in summary.read_text(encoding="utf-8")


def test_gemini_session_that_wrote_nothing_is_not_asked(gemini, root, tmp_path):
    with Model(root, write=False) as model:
        session = _session(gemini, model, root, tmp_path)
    assert session.returncode == 0, (session.stdout[-2000:], session.stderr[-3000:])
    assert model.requests and _given(model) == 0
    assert not list((root / "sessions").glob("*.md"))
