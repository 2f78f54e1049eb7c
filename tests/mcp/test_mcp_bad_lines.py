"""``ctx mcp`` fed lines that are not requests, as raw bytes on a real server's stdin: a line
that is not JSON gets a JSON-RPC parse error (-32700), JSON that is not a request an Invalid
Request (-32600), a line over the bound an error without being held whole in memory, each
with ``"id": null``, and the server answers the next request as if nothing had happened."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from ctx.cli.mcp.badlines import LINE_LIMIT
from support.gitutil import merged_env, run_ctx

pytestmark = pytest.mark.slow

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def get(id_: int, key: str = "k") -> bytes:
    return line({"jsonrpc": "2.0", "id": id_, "method": "tools/call",
                 "params": {"name": "get", "arguments": {"key": key}}})


class Served:
    """What one server process answered, and the most memory it held (KiB)."""

    def __init__(self, answers: list[dict[str, Any]], status: int, stderr: str, max_rss_kib: int) -> None:
        self.answers, self.status, self.stderr, self.max_rss_kib = answers, status, stderr, max_rss_kib

    def by_id(self) -> dict[Any, dict[str, Any]]:
        return {a["id"]: a for a in self.answers if a.get("id") is not None}

    def errors(self) -> list[dict[str, Any]]:
        return [a["error"] for a in self.answers if a.get("id") is None]


def serve_bytes(chunks: Iterable[bytes], wire: str = "pipe", tmp_path: Path | None = None) -> Served:
    """Run ``python -m ctx mcp`` with ``chunks`` as its stdin (a pipe written as they come, or
    a file holding them all) and the end of stdin after them."""
    command = [sys.executable, "-m", "ctx", "mcp"]
    if wire == "file":
        assert tmp_path is not None
        requests = tmp_path / "requests.bin"
        with open(requests, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
        stdin: Any = open(requests, "rb")
    else:
        stdin = subprocess.PIPE
    proc = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=merged_env(None))
    got: dict[str, bytes] = {}

    def drain(name: str, stream: Any) -> None:
        got[name] = stream.read()

    readers = [threading.Thread(target=drain, args=(n, s)) for n, s in (("out", proc.stdout), ("err", proc.stderr))]
    for reader in readers:
        reader.start()
    try:
        if wire == "pipe":
            assert proc.stdin is not None
            try:
                for chunk in chunks:
                    proc.stdin.write(chunk)
            except BrokenPipeError:  # the server died: what it answered says how
                pass
            finally:
                try:
                    proc.stdin.close()
                except BrokenPipeError:
                    pass
        for reader in readers:
            reader.join(timeout=120)
        _, wait_status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(wait_status)
    finally:
        if wire == "file":
            stdin.close()
        if proc.returncode is None:
            proc.kill()
            proc.wait()
    answers = [json.loads(text) for text in got.get("out", b"").decode().splitlines() if text.strip()]
    return Served(answers, proc.returncode, got.get("err", b"").decode(errors="replace"), usage.ru_maxrss)


def session(*middle: bytes) -> list[bytes]:
    """initialize, the given lines, then a real tools/call (id 9)."""
    return [line(INITIALIZE), line(INITIALIZED), *middle, get(9)]


@pytest.fixture
def stored(root):
    done = run_ctx("set", "k", "v", env={"CTX_AUTHOR": "Agent One"})
    assert done.returncode == 0, done.stderr
    return root


def assert_served_after(served: Served) -> None:
    """The real call after the bad lines was answered, and the server ended cleanly."""
    assert served.status == 0, served.stderr
    answered = served.by_id()
    assert {1, 9} <= set(answered), served.answers
    assert answered[9]["result"]["structuredContent"]["entry"]["value"] == "v"


@pytest.mark.parametrize("wire", ["pipe", "file"])
@pytest.mark.parametrize("bad", [b"not json\n", b"{\"jsonrpc\": \"2.0\", \"id\": 3,\n", b"\n",
                                 b"\"\\ud800\"\n", get(3, "\ud800")],
                         ids=["words", "cut-short", "blank", "lone-surrogate", "lone-surrogate-in-arguments"])
def test_a_line_that_is_not_json_gets_a_parse_error_and_the_next_call_is_served(stored, tmp_path, wire, bad):
    served = serve_bytes(session(bad), wire, tmp_path)
    assert_served_after(served)
    [error] = served.errors()
    assert error["code"] == -32700, error
    assert error["message"].startswith("Parse error"), error
    assert "\n" not in error["message"]


@pytest.mark.parametrize("wire", ["pipe", "file"])
@pytest.mark.parametrize("bad", [b"[1, 2]\n", b"42\n", b"{\"jsonrpc\": \"2.0\"}\n",
                                 b"{\"jsonrpc\": \"2.0\", \"id\": 4, \"method\": 3}\n",
                                 b"{\"jsonrpc\": \"1.0\", \"id\": 5, \"method\": \"ping\"}\n"],
                         ids=["array", "number", "no-method", "method-not-text", "wrong-version"])
def test_json_that_is_not_a_request_gets_an_invalid_request_error(stored, tmp_path, wire, bad):
    served = serve_bytes(session(bad), wire, tmp_path)
    assert_served_after(served)
    [error] = served.errors()
    assert error["code"] == -32600, error
    assert error["message"].startswith("Invalid Request"), error


def test_every_bad_line_gets_its_own_answer_before_the_first_request(stored, tmp_path):
    served = serve_bytes([b"nope\n", b"[]\n", *session(b"{\n")])
    assert_served_after(served)
    assert [e["code"] for e in served.errors()] == [-32700, -32600, -32700]


@pytest.mark.parametrize("wire", ["pipe", "file"])
def test_a_line_that_is_not_utf8_gets_a_parse_error_naming_the_byte(stored, tmp_path, wire):
    bad = b"{\"jsonrpc\": \"2.0\", \"id\": 6, \"method\": \"ping\", \"x\": \"\xff\"}\n"
    served = serve_bytes(session(bad), wire, tmp_path)
    assert_served_after(served)
    [error] = served.errors()
    assert error["code"] == -32700
    assert "UTF-8" in error["message"] and str(bad.index(b"\xff")) in error["message"], error


@pytest.mark.parametrize("wire", ["pipe", "file"])
def test_a_line_over_the_bound_is_refused_unread_and_the_server_goes_on(stored, tmp_path, wire):
    """Six times the bound in one line (written as it is read, or in a file): an error answer,
    the next call served, and the server never held the line (its memory grew by half the
    line at most)."""
    piece = b"x" * (1 << 20)
    over = [b"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"ping\", \"x\": \""]
    over += [piece] * (6 * LINE_LIMIT // len(piece))
    over += [b"\"}\n"]
    baseline = serve_bytes(session(), wire, tmp_path)
    assert_served_after(baseline)
    served = serve_bytes(session(*over), wire, tmp_path)
    assert_served_after(served)
    [error] = served.errors()
    assert error["code"] == -32700
    assert f"{LINE_LIMIT >> 20} MiB" in error["message"], error
    assert 7 not in served.by_id()
    grew_kib = served.max_rss_kib - baseline.max_rss_kib
    assert grew_kib < 3 * LINE_LIMIT // 1024, (grew_kib, served.max_rss_kib, baseline.max_rss_kib)


def test_a_line_just_under_the_bound_is_read(stored):
    key = "y" * (LINE_LIMIT - 4096)
    served = serve_bytes(session(line({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                                       "params": {"name": "get", "arguments": {"key": key}}})))
    assert_served_after(served)  # the long key's own answer may be an error (a key bound): it is answered
    assert served.errors() == []
