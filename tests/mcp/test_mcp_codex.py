"""The real OpenAI Codex CLI against `ctx mcp`, offline: `ctx wire codex --mcp
--apply` adds `[mcp_servers.ctx]` to `$CODEX_HOME/config.toml` and keeps the rest
of the file, `codex mcp list` and `codex mcp get ctx` read the entry back, and a
`codex exec` session, its model a stand-in on 127.0.0.1 (a `model_providers`
entry with wire_api = "responses"), is offered ctx's tools and calls `get`, whose
result reaches the next request.

Codex comes from npm (`@openai/codex`; its platform binary is an optional
dependency) into a temporary folder, or from CTX_TEST_CODEX (a `codex`
executable); skipped when neither can be had.

What Codex sends the model (0.171.0, asserted below): an MCP server's tools are
one Responses API tool of type "namespace" named `mcp__ctx`, whose "tools" are
the server's functions under their own names (`get`, `set`, `start`...). The
model calls one with a `function_call` item holding `"namespace": "mcp__ctx",
"name": "get"` (a flat `mcp__ctx__get` is refused: "unsupported call"), and the
result comes back in the next request as a `function_call_output` whose
`output` is text (a wall-time line, then the tool's result)."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from support.gitutil import run_ctx
from support.standin import StandIn, codex_from_npm, responses_stream

pytestmark = pytest.mark.slow

KEY_VARIABLE = "CTX_TEST_MODEL_KEY"  # the provider's env_key: Codex sends it as the bearer token
NAMESPACE = "mcp__ctx"


@pytest.fixture(scope="session")
def codex(tmp_path_factory) -> str:
    return codex_from_npm(tmp_path_factory.mktemp("codex"))


def _ctx_tools(data: dict) -> dict[str, dict]:
    """The functions of the ``mcp__ctx`` namespace a request offers the model, by name."""
    for tool in data.get("tools", []):
        if tool.get("type") == "namespace" and tool.get("name") == NAMESPACE:
            return {t.get("name"): t for t in tool.get("tools", [])}
    return {}


def _tool_names(data: dict) -> list[str]:
    """Every tool a request offers, a namespace's functions as ``namespace/name`` (for failure messages)."""
    names = []
    for tool in data.get("tools", []):
        inner = tool.get("tools") if tool.get("type") == "namespace" else None
        names += [f"{tool['name']}/{t.get('name')}" for t in inner] if inner else [tool.get("name") or tool["type"]]
    return names


class Model(StandIn):
    """The model on 127.0.0.1 (Codex POSTs to BASE_URL/responses): calls ctx's `get` once
    when it is offered, then answers "done"."""

    def __init__(self) -> None:
        super().__init__()
        self.called = False

    def answer(self, path: str, data: dict) -> tuple[str, bytes] | None:
        return ("text/event-stream", self.stream(data)) if path.endswith("/responses") else None

    def stream(self, data: dict) -> bytes:
        number = len(self.requests)
        if "get" in _ctx_tools(data) and not self.called:
            self.called = True
            return responses_stream(number, {"type": "function_call", "id": "fc_get", "call_id": "call_get",
                                    "namespace": NAMESPACE, "name": "get", "status": "completed",
                                    "arguments": json.dumps({"key": "decision_pool"})})
        return responses_stream(
            number, {"type": "message", "id": f"msg_{number}", "role": "assistant", "status": "completed",
                                "content": [{"type": "output_text", "text": "done", "annotations": []}]})


def _tool_results(requests: list[dict]) -> list[str]:
    out = []
    for data in requests:
        for item in data.get("input", []):
            if item.get("type") == "function_call_output" and item.get("call_id") == "call_get":
                inner = item.get("output")
                out.append(inner if isinstance(inner, str) else json.dumps(inner))
    return out


def _own_config(url: str) -> str:
    """The operator's config.toml before ctx wires anything: a comment, root keys and a
    provider table (the stand-in), all of which ``--apply`` must keep as they are."""
    return ("# the operator's own settings: ctx keeps them\n"
            'model = "gpt-5"\n'
            'model_provider = "standin"\n'
            "\n"
            "[model_providers.standin]  # the model stand-in of this test\n"
            'name = "model stand-in"\n'
            f'base_url = "{url}/v1"\n'
            'wire_api = "responses"\n'
            f'env_key = "{KEY_VARIABLE}"\n')


def _codex_env(tmp_path: Path, codex_home: Path) -> dict[str, str]:
    """The test's environment (HOME already under tmp_path) without any CODEX_/OPENAI_ variable
    of the caller's, with CODEX_HOME, the XDG folders and the provider's dummy key set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
    xdg = tmp_path / "xdg"
    env.update({"CODEX_HOME": str(codex_home), "XDG_DATA_HOME": str(xdg / "data"),
                "XDG_CACHE_HOME": str(xdg / "cache"), "XDG_STATE_HOME": str(xdg / "state"),
                KEY_VARIABLE: "sk-offline-test", "NO_COLOR": "1"})
    return env


def _codex_json(codex: str, *args: str, cwd: Path, env: dict[str, str]):
    done = subprocess.run([codex, *args, "--json"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    return json.loads(done.stdout)


def test_codex_reads_the_wired_ctx_server_and_its_model_calls_ctx_get(root, tmp_path, codex):
    codex_home = Path(os.environ["HOME"]) / ".codex"
    codex_home.mkdir()
    config = codex_home / "config.toml"
    done = run_ctx("set", "decision_pool", "use a pool of 4", "--tag", "decision", env={"CTX_AUTHOR": "Agent One"})
    assert done.returncode == 0, done.stderr
    work = tmp_path / "work"
    work.mkdir()
    env = _codex_env(tmp_path, codex_home)

    with Model() as model:
        own = _own_config(model.url)
        config.write_text(own)
        wire_env = {"CTX_HOME": str(root), "CODEX_HOME": str(codex_home), "CTX_AUTHOR": "Codex Agent"}
        wired = run_ctx("wire", "codex", "--mcp", "--apply", env=wire_env)
        assert wired.returncode == 0, wired.stderr
        text = config.read_text()
        assert text.startswith(own)  # the operator's lines, comments included, byte for byte
        assert "\n[mcp_servers.ctx]\n" in text
        parsed = tomllib.loads(text)
        entry = parsed.pop("mcp_servers")["ctx"]
        assert parsed == tomllib.loads(own)
        assert entry["args"] == ["mcp"] and entry["env"] == {"CTX_HOME": str(root), "CTX_AUTHOR": "Codex Agent"}
        again = run_ctx("wire", "codex", "--mcp", "--apply", env=wire_env)
        assert again.returncode == 0, again.stderr
        assert config.read_text() == text  # idempotent

        listed = _codex_json(codex, "mcp", "list", cwd=work, env=env)
        assert [server["name"] for server in listed] == ["ctx"], listed
        shown = _codex_json(codex, "mcp", "get", "ctx", cwd=work, env=env)
        assert shown["enabled"] is True
        assert {k: shown["transport"].get(k) for k in ("type", "command", "args", "env")} == {
            "type": "stdio", "command": entry["command"], "args": ["mcp"], "env": entry["env"]}

        # Codex offers an MCP server's tools from the first request after the server is up, and
        # waits for it only if it is `required`: the stand-in answers at once, so `ctx mcp` (about
        # 1.5 s to start) would come up after the turn has ended. --strict-config: every key in
        # config.toml, ctx's included, is one this Codex knows.
        commits = run_ctx("log", "--json").stdout
        session = subprocess.run([codex, "exec", "--skip-git-repo-check", "--ephemeral", "--strict-config",
                                  "--sandbox", "read-only", "-c", 'approval_policy="never"',
                                  "-c", "mcp_servers.ctx.required=true",
                                  "-c", "mcp_servers.ctx.startup_timeout_sec=60",
                                  "What is the pool size decision? Use ctx."],
                                 cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                 timeout=180)
    assert session.returncode == 0, (session.stdout[-2000:], session.stderr[-3000:])
    assert session.stdout.strip().endswith("done"), session.stdout[-2000:]
    assert model.requests and {d["path"] for d in model.requests} == {"/v1/responses"}
    assert {d["authorization"] for d in model.requests} == {"Bearer sk-offline-test"}
    offered = [data for data in model.requests if "get" in _ctx_tools(data)]
    assert offered, [_tool_names(data) for data in model.requests]
    tool = _ctx_tools(offered[0])["get"]
    assert tool["type"] == "function"
    assert tool["parameters"]["required"] == ["key"] and "store" in tool["parameters"]["properties"]
    assert {"set", "start", "search"} <= set(_ctx_tools(offered[0]))
    results = _tool_results(model.requests)
    assert results and "use a pool of 4" in results[0], (results, session.stderr[-3000:])
    assert run_ctx("log", "--json").stdout == commits  # a read: nothing written
