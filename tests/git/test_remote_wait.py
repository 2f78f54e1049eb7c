"""A foreground pull, push or sync kept waiting by auto-sync's own background push
(issue 26): the one line names who holds the remote (auto-sync's push, to which remote,
since when) and the wait that applied, and the default wait outlasts a background push
stuck on a silent server. Real processes, a silent socket on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ctx.errors import LockTimeout
from ctxgit.gitfiles.layout import AUTOSYNC_LOCK
from ctxgit.plumbing import locks
from support.gitutil import wait_for
from support.servers import SilentServer
from support.syncutil import Machine

BUSY = 5


def ctx(machine: Machine, *args: str, **env: str) -> subprocess.CompletedProcess:
    full = dict(os.environ, **machine.env, **env)
    return subprocess.run([str(Path(sys.executable).parent / "ctx"), *args], env=full, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def ok(machine: Machine, *args: str) -> subprocess.CompletedProcess:
    done = ctx(machine, *args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def one_line(done: subprocess.CompletedProcess, status: int) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == status, (done.returncode, done.stdout, done.stderr)
    assert len(lines) == 1 and lines[0].startswith("ctx: "), done.stderr
    return lines[0]


def hanging_background_push(tmp_path: Path, silent: SilentServer) -> Machine:
    """A machine with auto-sync on whose write started a background push that now
    holds the remote, talking to a server that never answers."""
    m = Machine(tmp_path / "m", "M")
    ok(m, "set", "first", "v")
    ok(m, "remote", "add", "origin", f"http://127.0.0.1:{silent.port}/ctx.git")
    m.git("config", "branch.main.remote", "origin")
    m.git("config", "branch.main.merge", "refs/heads/main")
    ok(m, "config", "sync-auto", "true")
    ok(m, "set", "second", "written while the server hangs")  # starts the background push
    assert wait_for(lambda: (m.root / ".git" / "ctx" / "remote-op").exists(), 10)
    return m


@pytest.mark.slow
def test_a_foreground_command_names_auto_syncs_push_and_the_wait_it_used(tmp_path, monkeypatch):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "git")
    monkeypatch.setenv("CTX_REMOTE_TIMEOUT", "20")  # the background push hangs for the whole test
    silent = SilentServer()
    try:
        m = hanging_background_push(tmp_path, silent)
        for command, env, wait in ((("pull",), {"CTX_REMOTE_WAIT_SECONDS": "1"}, "waited 1 s for it "
                                    "(CTX_REMOTE_WAIT_SECONDS)"),
                                   (("push",), {"CTX_REMOTE_WAIT_SECONDS": "1"}, "(CTX_REMOTE_WAIT_SECONDS)"),
                                   (("sync", "--timeout", "1"), {}, "waited 1 s for it (ctx sync --timeout)")):
            line = one_line(ctx(m, *command, **env), BUSY)
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
        m = hanging_background_push(tmp_path, silent)
        line = one_line(ctx(m, "pull"), 6)
        assert "127.0.0.1 gave no answer in 3 s" in line and "auto-sync" not in line, line
    finally:
        silent.stop()


def test_the_holder_is_named_from_its_intent(tmp_path, monkeypatch):
    """In process: a holder whose pid is the one in autosync.lock is auto-sync's push; with
    any other pid it is another ctx, named by its pid; a dead pid is a git left running."""
    (tmp_path / ".git" / "ctx").mkdir(parents=True)
    git = tmp_path / ".git"
    monkeypatch.setenv("CTX_REMOTE_WAIT_SECONDS", "0.2")
    inside, release = threading.Event(), threading.Event()

    def hold():
        with locks.remote_operation(tmp_path, ("/some/where", "abc"), remote="backup"):
            inside.set()
            release.wait(10)
    worker = threading.Thread(target=hold)
    worker.start()
    try:
        assert inside.wait(5)
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
    finally:
        release.set()
        worker.join()
