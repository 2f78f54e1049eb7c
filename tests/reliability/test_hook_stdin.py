"""A harness's session-start hook (the command ``ctx wire`` writes) gets whatever the harness
writes on its stdin: ctx never reads it, so a stdin left open never blocks the session, and
megabytes of bytes that are not UTF-8 (or not JSON) change nothing: exit 0, the payload."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

from ctx.harness.texts import hook_command
from support.gitutil import CTX_EXE, merged_env, run_ctx

pytestmark = pytest.mark.slow

# ~8 MiB (more than a pipe holds) of bytes that are not UTF-8, with an OSC 52 clipboard write
HOSTILE = (b"\xff\xfe{\"session_id\": \"\xc0\x80" + b"\x1b]52;c;AAAA\x07" * 4096) * 160


@pytest.fixture
def stored(root: Path) -> Path:
    done = run_ctx("set", "current_focus", "the upload fix", env={"CTX_AUTHOR": "operator-typed"})
    assert done.returncode == 0, done.stderr
    return root


def hook(root: Path, as_json: bool) -> list[str]:
    return ["sh", "-c", hook_command(root, str(CTX_EXE), 4000, agent="Agent One", as_json=as_json)]


def run_hook(root: Path, as_json: bool, feed: bytes | None) -> subprocess.CompletedProcess:
    """The hook with its stdin a pipe: ``feed`` written by a harness that then keeps the pipe
    open until the hook exits (None: nothing written, never closed)."""
    proc = subprocess.Popen(hook(root, as_json), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=merged_env(None))
    assert proc.stdin is not None

    def harness() -> None:
        if feed is None:
            return
        try:
            assert proc.stdin is not None
            proc.stdin.write(feed)
            proc.stdin.flush()
        except (BrokenPipeError, ValueError):  # the hook ended without reading it: what a harness sees
            pass

    writer = threading.Thread(target=harness, daemon=True)
    writer.start()
    try:
        out, err = _read_until_exit(proc)
    finally:
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        writer.join(timeout=5)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _read_until_exit(proc: subprocess.Popen) -> tuple[bytes, bytes]:
    """stdout and stderr to the hook's exit, with stdin still open (communicate would close it)."""
    got: dict[str, bytes] = {}
    readers = [threading.Thread(target=lambda n=n, s=s: got.__setitem__(n, s.read()))
               for n, s in (("out", proc.stdout), ("err", proc.stderr))]
    for reader in readers:
        reader.start()
    try:
        proc.wait(timeout=60)  # a hook that read its stdin would wait here for an end that never comes
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    for reader in readers:
        reader.join(timeout=10)
    return got.get("out", b""), got.get("err", b"")


@pytest.mark.parametrize("feed", [None, HOSTILE], ids=["open-and-silent", "8MiB-not-utf8"])
def test_a_hook_never_waits_on_its_stdin_and_prints_the_payload(stored, feed):
    done = run_hook(stored, False, feed)
    assert done.returncode == 0 and done.stderr == b""
    assert "the upload fix" in done.stdout.decode("utf-8")


@pytest.mark.parametrize("feed", [None, HOSTILE], ids=["open-and-silent", "8MiB-not-utf8"])
def test_the_json_hook_prints_its_json_whatever_its_stdin_holds(stored, feed):
    done = run_hook(stored, True, feed)
    assert done.returncode == 0 and done.stderr == b""
    payload = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "the upload fix" in payload


def test_a_hook_on_a_context_it_cannot_read_still_exits_0_and_quietly(tmp_path):
    broken = tmp_path / "not a root"
    broken.write_text("a file, not a directory")
    done = run_hook(broken, True, HOSTILE)
    assert done.returncode == 0 and done.stderr == b""
    assert os.path.isfile(broken)
