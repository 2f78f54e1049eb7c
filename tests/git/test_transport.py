"""Which way fetch and push go (ctxgit/sync/transport.py); both ways run in tests/git/test_sync.py."""

from __future__ import annotations

import os

import pytest

from ctxgit.sync import transport


def test_git_is_used_when_installed_unless_libgit2_is_asked_for(monkeypatch):
    monkeypatch.delenv("CTX_GIT_TRANSPORT", raising=False)
    assert transport.use_git()
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "libgit2")
    assert not transport.use_git()
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "git")
    monkeypatch.setenv("PATH", "/nonexistent")
    assert not transport.use_git()  # no git on the PATH: libgit2, whatever was asked


@pytest.mark.parametrize("stderr, expected", [
    ("fatal: 'x' does not appear to be a git repository\nfatal: Could not read from remote repository.\n",
     "fatal: 'x' does not appear to be a git repository"),
    ("warning: something\nerror: failed to push some refs\n", "error: failed to push some refs"),
    ("", "git gave no reason"),
])
def test_the_line_of_gits_output_that_says_why(stderr, expected):
    assert transport._last_words(stderr) == expected


def test_the_operators_ssh_set_up_is_kept_and_redirections_dropped(monkeypatch):
    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -i ~/.ssh/ctx_key")
    monkeypatch.setenv("GIT_DIR", "/elsewhere/.git")
    monkeypatch.setenv("GIT_WORK_TREE", "/elsewhere")
    env = transport.git_env()
    assert env["GIT_SSH_COMMAND"] == "ssh -i ~/.ssh/ctx_key"
    assert "GIT_DIR" not in env and "GIT_WORK_TREE" not in env
    assert env["GIT_TERMINAL_PROMPT"] == "0"


def test_the_operators_core_ssh_command_is_kept_wherever_git_reads_it(tmp_path, monkeypatch):
    monkeypatch.delenv("GIT_SSH_COMMAND", raising=False)
    monkeypatch.delenv("GIT_SSH", raising=False)
    assert transport.git_env()["GIT_SSH_COMMAND"] == "ssh -o BatchMode=yes"  # none of theirs: batch mode
    included = tmp_path / "ssh.gitconfig"
    included.write_text("[core]\n\tsshCommand = ssh -i ~/.ssh/ctx_key\n")
    with open(os.environ["GIT_CONFIG_GLOBAL"], "a") as config:
        config.write(f"[include]\n\tpath = {included}\n")
    assert "GIT_SSH_COMMAND" not in transport.git_env()  # git's own core.sshCommand applies
    assert "SSH_ASKPASS" not in transport.git_env() and transport.git_env()["SSH_ASKPASS_REQUIRE"] == "never"


@pytest.mark.slow
def test_a_remote_that_never_answers_is_given_up_and_the_next_sync_recovers(tmp_path, monkeypatch):
    """A fetch over a link that hangs (here: an ssh that never answers) is stopped after
    CTX_REMOTE_TIMEOUT with one clear line; the local context is untouched."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    hang = tmp_path / "ssh-that-hangs"
    hang.write_text("#!/bin/sh\nexec sleep 30\n")
    hang.chmod(0o755)
    root = tmp_path / "ctx"
    ctx = str(Path(sys.executable).parent / "ctx")
    env = dict(os.environ, CTX_HOME=str(root), CTX_AUTHOR="Agent", CTX_REMOTE_TIMEOUT="1",
               GIT_SSH_COMMAND=str(hang), CTX_GIT_TRANSPORT="git")
    for args in (["set", "k", "v"], ["remote", "add", "origin", "ssh://example.invalid/ctx.git"]):
        assert subprocess.run([ctx, *args], env=env, capture_output=True).returncode == 0
    head = (root / ".git" / "refs" / "heads" / "main").read_text()
    done = subprocess.run([ctx, "sync"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 6, done.stderr
    assert done.stderr.strip().splitlines() == [
        "ctx: example.invalid gave no answer in 1 s; git fetch was stopped (CTX_REMOTE_TIMEOUT): "
        "nothing here changed, run it again"], done.stderr
    assert (root / ".git" / "refs" / "heads" / "main").read_text() == head
    assert (root / ".git" / "ctx" / "remote-op").exists()  # the next operation cleans up after it
    # the hung ssh was stopped with its git: nothing holds the remote lock now
    again = subprocess.run([ctx, "sync"], env=dict(env, CTX_REMOTE_WAIT_SECONDS="2"), capture_output=True,
                           text=True, timeout=60)
    assert "gave no answer" in again.stderr and "another ctx is fetching" not in again.stderr, again.stderr
