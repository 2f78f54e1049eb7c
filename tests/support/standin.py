"""For the tests that run a real harness (Claude Code, Codex) offline: the harness
itself, from npm, and a stand-in for its model provider on 127.0.0.1 that records
every request it is sent (a subclass's ``answer`` says what each POST gets back)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import pytest


class StandIn:
    """``url`` is where the harness sends its model requests; ``requests`` holds each
    POST's JSON body, with its ``path`` and ``authorization`` header beside it."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    data = json.loads(body)
                except ValueError:
                    data = {}
                stand_in.requests.append({**data, "path": self.path,
                                          "authorization": self.headers.get("authorization")})
                found = stand_in.answer(self.path, data)
                if found is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                kind, out = found
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def do_GET(self) -> None:
                self.send_response(404)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, path: str, data: dict[str, Any]) -> tuple[str, bytes] | None:
        """The content type and body for a POST to ``path`` (None: 404)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def server_sent_events(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    """A stream of server-sent events: each an ``event:`` name and its JSON ``data``."""
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


def harness_from_npm(where: Path, package: str, program: str, given: str | None,
                     env: dict[str, str] | None = None) -> str:
    """A harness's executable: ``given`` (an environment variable's path), else ``package``
    installed from npm into ``where`` and checked with ``--version`` (``env`` added to the
    environment); the test is skipped when it cannot be had."""
    if given:
        return given
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    try:
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error", package],
                              cwd=where, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm install {package} timed out")
    found = where / "node_modules" / ".bin" / program
    if done.returncode != 0 or not found.exists():
        pytest.skip(f"{package} could not be installed: {done.stderr.strip()[-300:]}")
    try:
        version = subprocess.run([str(found), "--version"], capture_output=True, text=True, timeout=120,
                                 env={**os.environ, **(env or {})})
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"{program} does not run here: {exc}")
    if version.returncode != 0:  # e.g. an optional platform package was not installed
        pytest.skip(f"{program} does not run here: {version.stderr.strip()[-300:]}")
    return str(found)


def messages_reply(text: str) -> bytes:
    """An Anthropic Messages API answer that is not streamed (Claude Code asks one for a
    session's title, beside the agent's own streamed turns): one text block."""
    return json.dumps({
        "id": "msg_ctx", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}).encode()


def messages_stream(blocks: list[dict[str, Any]], stop: str, *, message_id: str = "msg_ctx",
                    input_tokens: int | None = None) -> bytes:
    """An Anthropic Messages API stream (server-sent events) of ``blocks`` (``tool_use`` or
    ``text``), as Claude Code reads it from ANTHROPIC_BASE_URL; ``input_tokens``, when given,
    is reported at the start and the end (what makes Claude Code compact)."""
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens or 1, "output_tokens": 1}}})]
    for i, block in enumerate(blocks):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        events += [("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}),
                   ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
                   ("content_block_stop", {"type": "content_block_stop", "index": i})]
    usage = {"output_tokens": 1} if input_tokens is None else {"input_tokens": input_tokens, "output_tokens": 1}
    events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": usage}),
               ("message_stop", {"type": "message_stop"})]
    return server_sent_events(events)


# --- the three harnesses, installed once per test session, and their providers' streams ---

def claude_from_npm(where: Path) -> str:
    """Claude Code (``CTX_TEST_CLAUDE``, else from npm into ``where``, HOME there)."""
    return harness_from_npm(where, "@anthropic-ai/claude-code", "claude", os.environ.get("CTX_TEST_CLAUDE"),
                            {"HOME": str(where)})


def codex_from_npm(where: Path) -> str:
    """Codex CLI (``CTX_TEST_CODEX``, else from npm into ``where``, a CODEX_HOME under it)."""
    home = where / "home"
    (home / ".codex").mkdir(parents=True)
    return harness_from_npm(where, "@openai/codex", "codex", os.environ.get("CTX_TEST_CODEX"),
                            {"HOME": str(home), "CODEX_HOME": str(home / ".codex")})


def gemini_from_npm(where: Path) -> str:
    """Gemini CLI (``CTX_TEST_GEMINI``, else from npm into ``where``, HOME there)."""
    return harness_from_npm(where, "@google/gemini-cli", "gemini", os.environ.get("CTX_TEST_GEMINI"),
                            {"HOME": str(where)})


def responses_stream(number: int, item: dict[str, Any]) -> bytes:
    """An OpenAI Responses API stream (server-sent events) whose one output item is ``item``
    (a message or a function call), as Codex reads it."""
    rid = f"resp_{number}"
    if item["type"] == "message":
        added = {**item, "content": []}
        deltas = [{"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
                   "content_index": 0, "delta": item["content"][0]["text"]}]
    else:
        added, deltas = {**item, "arguments": ""}, []
    usage = {"input_tokens": 1, "input_tokens_details": None, "output_tokens": 1, "output_tokens_details": None,
             "total_tokens": 2}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": rid}},
                                    {"type": "response.output_item.added", "output_index": 0, "item": added},
                                    *deltas,
                                    {"type": "response.output_item.done", "output_index": 0, "item": item},
                                    {"type": "response.completed", "response": {"id": rid, "usage": usage}}]
    return server_sent_events([(event["type"], event) for event in events])


def gemini_reply(parts: list[dict[str, Any]]) -> bytes:
    """A streamed GenerateContentResponse (one server-sent event) whose content is ``parts``."""
    body = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}
    return f"data: {json.dumps(body)}\r\n\r\n".encode()
