"""ctxgit/plumbing/spawn.py's ``detached``: the one way ctx starts a program it never waits
for (the background push, the packing)."""

from __future__ import annotations

import os
import time

from ctxgit.plumbing import spawn


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return False


def test_a_long_lived_caller_keeps_no_zombie_of_what_it_started(tmp_path):
    # the MCP server writes for hours: each packing or push it starts must be reaped
    first = spawn.detached(["/bin/true"], dict(os.environ))
    deadline = time.monotonic() + 10
    while not _zombie(first) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _zombie(first)  # ended, not yet reaped
    log = tmp_path / "log"
    second = spawn.detached(["/bin/sh", "-c", "echo out; echo err >&2"], dict(os.environ), str(log))
    assert not _zombie(first) and not os.path.exists(f"/proc/{first}")  # reaped by the next start
    os.waitpid(second, 0)
    spawn._detached.remove(second)
    assert log.read_text() == "out\nerr\n"  # stdout and stderr appended to the log
