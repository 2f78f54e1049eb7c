"""The real Gemini CLI, offline, wired by ctx: its model is a stand-in on 127.0.0.1
(``GOOGLE_GEMINI_BASE_URL``, a dummy ``GEMINI_API_KEY`` and ``"security": {"auth":
{"selectedType": "gemini-api-key"}}`` in settings.json, without which the base URL puts
Gemini in another login mode and ``-p`` exits 41; ``--skip-trust``, without which it
exits 55 in a folder it does not trust).

- ``ctx wire gemini --apply``: the SessionStart hook's JSON reaches the model's first
  request inline (``<hook_context>``, before the prompt): the rules, the focus and the
  open items, with no tool called.
- ``ctx wire gemini --mcp --trust --apply``: ctx's tools are offered (``mcp_ctx_get``...;
  Gemini waits for its MCP servers before the first request), and a ``functionCall`` of
  ``mcp_ctx_get`` brings the entry's value back in the next request.

Requests arrive as ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse``; the
stand-in answers each with one server-sent event, a ``GenerateContentResponse``. Gemini
CLI comes from npm (``@google/gemini-cli``) into a temporary folder, or from
CTX_TEST_GEMINI (a ``gemini`` executable); skipped when neither can be had."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from support.gitutil import run_ctx
from support.standin import StandIn, gemini_from_npm, gemini_reply

pytestmark = pytest.mark.slow

MODEL = "gemini-2.5-flash"  # named, so no routing request goes first
AUTH = {"security": {"auth": {"selectedType": "gemini-api-key"}}}


@pytest.fixture(scope="session")
def gemini(tmp_path_factory) -> str:
    return gemini_from_npm(tmp_path_factory.mktemp("gemini-cli"))


def _functions(data: dict) -> list[str]:
    return [f.get("name") for tool in data.get("tools", []) for f in tool.get("functionDeclarations", [])]


def _texts(data: dict) -> str:
    return "\n".join(part.get("text", "") for content in data.get("contents", [])
                     for part in content.get("parts", []))


class Model(StandIn):
    """The model on 127.0.0.1: calls ``mcp_ctx_get`` once when it is offered, else answers "done"."""

    def __init__(self) -> None:
        super().__init__()
        self.called = False

    def answer(self, path: str, data: dict) -> tuple[str, bytes] | None:
        if ":streamGenerateContent" not in path:
            return None
        if "mcp_ctx_get" in _functions(data) and not self.called:
            self.called = True
            return "text/event-stream", gemini_reply([{"functionCall": {"name": "mcp_ctx_get",
                                                                   "args": {"key": "decision_pool"}}}])
        return "text/event-stream", gemini_reply([{"text": "done"}])


def _session(gemini: str, model: Model, tmp_path: Path) -> subprocess.CompletedProcess:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_", "CTX_"))}
    env.update({"GOOGLE_GEMINI_BASE_URL": model.url, "GEMINI_API_KEY": "offline-test-key", "NO_COLOR": "1"})
    return subprocess.run([gemini, "-p", "What is the pool size decision?", "--skip-trust", "-o", "json",
                           "-m", MODEL], cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=300)


def _settings(own: dict) -> Path:
    path = Path(os.environ["HOME"]) / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(own, indent=2) + "\n")
    return path


def _context() -> None:
    for args in (["set", "current_focus", "Ship the upload fix"],
                 ["set", "decision_pool", "Use a pool of 20", "--tag", "decision"]):
        done = run_ctx(*args, env={"CTX_AUTHOR": "Agent One"})
        assert done.returncode == 0, done.stderr
    summary = "## Done\n- Measured the pool\n\n## Open\n- Retry the flaky upload test\n"
    done = run_ctx("summary", "new", "--from-stdin", input=summary, env={"CTX_AUTHOR": "Agent One"})
    assert done.returncode == 0, done.stderr


def test_the_hook_puts_the_start_payload_in_the_first_request(root, tmp_path, gemini):
    _context()
    own = {**AUTH, "ui": {"theme": "GitHub"}}
    path = _settings(own)
    wired = run_ctx("wire", "gemini", "--apply", env={"CTX_AUTHOR": "Gemini"})
    assert wired.returncode == 0, wired.stderr
    data = json.loads(path.read_text())
    assert {k: v for k, v in data.items() if k != "hooks"} == own  # the operator's keys kept
    again = run_ctx("wire", "gemini", "--apply", env={"CTX_AUTHOR": "Gemini"})
    assert again.returncode == 0 and "already wired" in again.stdout

    commits = run_ctx("log", "--json").stdout
    with Model() as model:
        session = _session(gemini, model, tmp_path)
    assert session.returncode == 0, (session.stdout[-2000:], session.stderr[-3000:])
    assert json.loads(session.stdout)["response"] == "done"
    first = model.requests[0]
    assert first["path"] == f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
    text = _texts(first)
    context = text[text.index("<hook_context>"):text.index("</hook_context>")]
    for words in ("=== RULES (RULES.md) ===", "Write only through `ctx`", "CURRENT FOCUS", "Ship the upload fix",
                  "Retry the flaky upload test", "Use a pool of 20"):
        assert words in context, (words, context)
    assert text.index("</hook_context>") < text.index("What is the pool size decision?")
    assert not _functions(first) or "mcp_ctx_get" not in _functions(first)  # no tool was needed
    assert run_ctx("log", "--json").stdout == commits  # start writes nothing


def test_wired_with_mcp_its_model_calls_ctx_get(root, tmp_path, gemini):
    _context()
    path = _settings(AUTH)
    wired = run_ctx("wire", "gemini", "--mcp", "--trust", "--apply", env={"CTX_AUTHOR": "Gemini"})
    assert wired.returncode == 0, wired.stderr
    assert "without asking" in wired.stderr  # what --trust means, said
    entry = json.loads(path.read_text())["mcpServers"]["ctx"]
    assert entry["trust"] is True and entry["env"] == {"CTX_HOME": str(root), "CTX_AUTHOR": "Gemini"}

    commits = run_ctx("log", "--json").stdout
    with Model() as model:
        session = _session(gemini, model, tmp_path)
    assert session.returncode == 0, (session.stdout[-2000:], session.stderr[-3000:])
    offered = _functions(model.requests[0])  # Gemini waits for its MCP servers
    assert {"mcp_ctx_get", "mcp_ctx_set", "mcp_ctx_start", "mcp_ctx_search"} <= set(offered), offered
    results = [part["functionResponse"] for data in model.requests for content in data.get("contents", [])
               for part in content.get("parts", []) if "functionResponse" in part]
    assert results and results[0]["name"] == "mcp_ctx_get", model.requests[-1]
    assert "Use a pool of 20" in json.dumps(results[0]["response"]), results
    assert run_ctx("log", "--json").stdout == commits  # a read: nothing written
