"""A foreground pull, push or sync kept waiting by auto-sync's own background push
(issue 26): the one line names who holds the remote (auto-sync's push, to which remote,
since when) and the wait that applied, and the default wait outlasts a background push
stuck on a silent server. Real processes, a silent socket on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess

import pytest

from ctx.errors import LockTimeout
from ctxgit.gitfiles.layout import AUTOSYNC_LOCK
from ctxgit.plumbing import locks
from support.gitutil import remote_held
from support.servers import SilentServer
from support.syncutil import hanging_background_push, one_line_error

BUSY = 5


@pytest.mark.slow
def test_a_foreground_command_names_auto_syncs_push_and_the_wait_it_used(tmp_path, monkeypatch):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "git")
    monkeypatch.setenv("CTX_REMOTE_TIMEOUT", "20")  # the background push hangs for the whole test
    silent = SilentServer()
    try:
        m = hanging_background_push(tmp_path / "m", f"http://127.0.0.1:{silent.port}/ctx.git")
        for command, env, wait in ((("pull",), {"CTX_REMOTE_WAIT_SECONDS": "1"}, "waited 1 s for it "
                                    "(CTX_REMOTE_WAIT_SECONDS)"),
                                   (("push",), {"CTX_REMOTE_WAIT_SECONDS": "1"}, "(CTX_REMOTE_WAIT_SECONDS)"),
                                   (("sync", "--timeout", "1"), {}, "waited 1 s for it (ctx sync --timeout)")):
            line = one_line_error(m.sh(*command, check=False, env=env), BUSY)
            assert "auto-sync's own background push has been fetching from origin for " in line, line
            assert "another ctx" not in line and wait in line, line
            assert "after 20 s without an answer from the server (CTX_REMOTE_TIMEOUT)" in line, line
        assert m.entry("second") is not None and m.status() == []
    finally:
        silent.stop()


@pytest.mark.slow
def test_the_default_wait_outlasts_a_background_push_stuck_on_a_silent_server(tmp_path, monkeypatch):
    """With CTX_REMOTE_WAIT_SECONDS unset, `ctx pull` waits for the stuck background push
    to be stopped (CTX_REMOTE_TIMEOUT) and then tries for itself: its error is the
    server's silence, not the wait."""
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "git")
    monkeypatch.delenv("CTX_REMOTE_WAIT_SECONDS", raising=False)
    monkeypatch.setenv("CTX_REMOTE_TIMEOUT", "3")
    silent = SilentServer()
    try:
        m = hanging_background_push(tmp_path / "m", f"http://127.0.0.1:{silent.port}/ctx.git")
        line = one_line_error(m.sh("pull", check=False), 6)
        assert "127.0.0.1 gave no answer in 3 s" in line and "auto-sync" not in line, line
    finally:
        silent.stop()


def test_the_holder_is_named_from_its_intent(tmp_path, monkeypatch):
    """In process: a holder whose pid is the one in autosync.lock is auto-sync's push; with
    any other pid it is another ctx, named by its pid; a dead pid is a git left running."""
    (tmp_path / ".git" / "ctx").mkdir(parents=True)
    git = tmp_path / ".git"
    monkeypatch.setenv("CTX_REMOTE_WAIT_SECONDS", "0.2")
    with remote_held(tmp_path, ("/some/where", "abc"), remote="backup"):
        with pytest.raises(locks.RemoteInUse) as caught:
            with locks.remote_operation(tmp_path):
                pass
        text = str(caught.value)
        assert f"another ctx (pid {os.getpid()}) has been pushing to backup for " in text, text
        assert "waited 0.2 s for it (CTX_REMOTE_WAIT_SECONDS) and gave up" in text, text
        assert not caught.value.auto and caught.value.remote == "backup"
        (git / AUTOSYNC_LOCK).write_text(f"{os.getpid()}\n")
        with pytest.raises(LockTimeout) as caught:
            with locks.remote_operation(tmp_path, wait=0.1, why="sync-timeout"):
                pass
        text = str(caught.value)
        assert text.startswith("auto-sync's own background push has been pushing to backup for "), text
        assert "waited 0.1 s for it (sync-timeout)" in text and "CTX_REMOTE_TIMEOUT" in text, text
        dead = subprocess.Popen(["true"])
        dead.wait()
        (git / locks.INTENT).write_text(f"{dead.pid}\tbackup\n")
        found = locks.holder(git)
        assert not found.alive and not found.auto and not found.pushing
        assert found.describe().startswith("a git command started by a ctx that has stopped has been fetching "
                                           "from backup for ")
