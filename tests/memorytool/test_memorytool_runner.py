"""CtxMemoryTool run by the SDK itself: ``client.beta.messages.tool_runner`` against a
scripted Messages API on 127.0.0.1 (tests/support/standin.py's stand-in) that answers
with the memory tool_use blocks a model sends, then with text. What the model is shown
is read from the requests the runner sent back."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest

from ctx.context import Context
from ctx.memorytool import CtxMemoryTool
from support.gitutil import commit_count, log_rows
from support.standin import StandIn

MODEL = "claude-stand-in"


def tool_use(number: int, **command: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{number:02d}", "name": "memory", "input": command}


class ScriptedModel(StandIn):
    """Each POST to the Messages API gets the next scripted reply: tool calls, then text."""

    def __init__(self, replies: list[list[dict[str, Any]]]) -> None:
        super().__init__()
        self.replies = replies

    def answer(self, path: str, data: dict[str, Any]) -> tuple[str, bytes] | None:
        if not path.startswith("/v1/messages"):
            return None
        number = len(self.requests)
        content = self.replies[number - 1] if number <= len(self.replies) else [{"type": "text", "text": "?"}]
        calls = any(block["type"] == "tool_use" for block in content)
        message = {"id": f"msg_{number:02d}", "type": "message", "role": "assistant", "model": data.get("model"),
                   "content": content, "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
                   "usage": {"input_tokens": 10, "output_tokens": 5}}
        return "application/json", json.dumps(message).encode()


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of a request's last (user) message: what the model is shown."""
    last = request["messages"][-1]
    assert last["role"] == "user"
    return [block for block in last["content"] if block.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


@pytest.fixture
def model_server():
    servers: list[ScriptedModel] = []

    def start(replies: list[list[dict[str, Any]]]) -> ScriptedModel:
        server = ScriptedModel(replies)
        server.__enter__()
        servers.append(server)
        return server
    yield start
    for server in servers:
        server.__exit__(None, None, None)


def run_tools(server: ScriptedModel, tool: CtxMemoryTool) -> list[Any]:
    client = anthropic.Anthropic(base_url=server.url, api_key="sk-ant-stand-in", max_retries=0)
    runner = client.beta.messages.tool_runner(
        model=MODEL, max_tokens=256, tools=[tool],
        messages=[{"role": "user", "content": "Remember that I deploy on Fridays."}])
    return list(runner)


@pytest.mark.slow  # the SDK's client and its HTTP stack load first
def test_the_tool_runner_keeps_the_models_memory_in_ctx(model_server, root, monkeypatch):
    monkeypatch.setenv("CTX_AUTHOR", "claude-via-sdk")
    server = model_server([
        [{"type": "text", "text": "Let me check my memory."}, tool_use(1, command="view", path="/memories")],
        [tool_use(2, command="create", path="/memories/user/deploys.md", file_text="Deploys on Fridays.\n"),
         tool_use(3, command="str_replace", path="/memories/user/deploys.md", old_str="Mondays", new_str="x")],
        [tool_use(4, command="view", path="/memories/user/deploys.md")],
        [{"type": "text", "text": "Noted: you deploy on Fridays."}],
    ])
    messages = run_tools(server, CtxMemoryTool())
    assert [m.content[-1].type for m in messages] == ["tool_use", "tool_use", "tool_use", "text"]
    assert len(server.requests) == 4

    first = server.requests[0]
    assert first["path"].startswith("/v1/messages") and first["model"] == MODEL
    assert first["tools"] == [{"type": "memory_20250818", "name": "memory"}]

    (listing,) = tool_results(server.requests[1])
    assert listing["tool_use_id"] == "toolu_01" and not listing.get("is_error")
    assert result_text(listing) == ("Here're the files and directories up to 2 levels deep in /memories, "
                                    "excluding hidden items:\n0B\t/memories")
    created, missed = tool_results(server.requests[2])
    assert result_text(created) == "File created successfully at: /memories/user/deploys.md"
    assert missed["is_error"] is True and result_text(missed) == (
        "No replacement was performed, old_str `Mondays` did not appear verbatim in /memories/user/deploys.md.")
    (viewed,) = tool_results(server.requests[3])
    assert result_text(viewed) == ("Here's the content of /memories/user/deploys.md with line numbers:\n"
                                   "     1\tDeploys on Fridays.\n     2\t")

    assert Context(root).get("memories/user/deploys.md")["value"] == "Deploys on Fridays.\n"
    assert commit_count(root) == 1  # one change, one commit: the view and the failed edit wrote nothing
    assert log_rows(root, "%an|%s") == ["claude-via-sdk|memory create /memories/user/deploys.md"]


def test_a_refused_credential_is_an_error_the_model_sees(model_server, root):
    secret = "ghp_" + "a1B2c3D4e5F6g7H8" * 2 + "i9J0"
    server = model_server([
        [tool_use(1, command="create", path="/memories/token.md", file_text=f"the token is {secret}")],
        [{"type": "text", "text": "I will not keep it."}],
    ])
    run_tools(server, CtxMemoryTool(author="claude-via-sdk"))
    (result,) = tool_results(server.requests[1])
    assert result["is_error"] is True
    assert result_text(result).startswith("The file /memories/token.md was not written: its text looks like it "
                                          "holds a credential")
    assert secret not in json.dumps(server.requests[1])[json.dumps(server.requests[1]).find("tool_result"):]
    assert Context(root).find("memories/token.md", "shared") is None
