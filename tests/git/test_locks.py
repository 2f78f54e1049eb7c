"""git lock files around fetch and push (ctxgit/locks.py)."""

from __future__ import annotations

import os
import time

import pytest

from ctx.errors import LockTimeout
from ctxgit.plumbing import locks
from support.gitutil import remote_held


def _git(tmp_path):
    git = tmp_path / ".git"
    (git / "refs" / "remotes" / "origin").mkdir(parents=True)
    return git


@pytest.mark.parametrize("text, lock", [
    ("failed to lock file '/r/.git/refs/remotes/origin/main.lock' for writing: ",
     "/r/.git/refs/remotes/origin/main.lock"),
    ("failed to create locked file '/r/HEAD.lock': File exists", "/r/HEAD.lock"),
    ("remote rejected: non-fast-forward", None),
])
def test_the_lock_file_a_libgit2_error_names(text, lock):
    assert locks.locked_file(text) == lock


def test_a_killed_operations_locks_are_removed_and_only_those(tmp_path):
    git = _git(tmp_path)
    old = git / "refs" / "remotes" / "origin" / "old.lock"
    old.write_text("")
    os.utime(old, (time.time() - 3600,) * 2)  # older than the killed operation: not its own
    (git / "ctx").mkdir()
    (git / locks.INTENT).write_text("12345\n")
    new = git / "refs" / "remotes" / "origin" / "main.lock"
    new.write_text("")
    assert locks.recover(git) == ["refs/remotes/origin/main.lock"]
    assert old.exists() and not new.exists() and not (git / locks.INTENT).exists()
    assert locks.recover(git) == []  # no intent: nothing is anyone's to remove


@pytest.mark.parametrize("content, removed", [("", True), ("abc123\n", True), ("fff999\n", False)])
def test_a_local_remotes_lock_is_removed_only_when_it_holds_the_killed_push(tmp_path, content, removed):
    git = _git(tmp_path)
    remote = tmp_path / "remote.git"
    (remote / "refs" / "heads").mkdir(parents=True)
    (git / "ctx").mkdir()
    (git / locks.INTENT).write_text(f"12345\npush\t{remote}\tabc123\n")
    lock = remote / "refs" / "heads" / "main.lock"
    lock.write_text(content)
    assert locks.recover(git) == ([str(lock)] if removed else [])
    assert lock.exists() != removed


@pytest.mark.slow
def test_remote_operations_in_one_root_take_turns(tmp_path, monkeypatch):
    _git(tmp_path)
    monkeypatch.setenv("CTX_REMOTE_WAIT_SECONDS", "0.2")
    with remote_held(tmp_path):
        with pytest.raises(LockTimeout, match=r"another ctx \(pid \d+\) has been talking to a remote for"):
            with locks.remote_operation(tmp_path):
                pass
    with locks.remote_operation(tmp_path) as operation:
        assert operation.removed == []


def test_every_git_lock_file_is_listed_with_its_age(tmp_path):
    git = _git(tmp_path)
    (git / "index.lock").write_text("")
    (git / "refs" / "remotes" / "origin" / "main.lock").write_text("")
    found = locks.stale_locks(git, now=time.time() + 60)
    assert [name for name, _ in found] == ["index.lock", "refs/remotes/origin/main.lock"]
    assert all(59 <= age <= 62 for _, age in found)


@pytest.mark.slow
def test_a_git_child_holds_the_turn_until_it_exits(tmp_path, monkeypatch):
    """A ctx killed while its `git fetch` runs on: the orphaned git keeps the flock,
    so no other ctx recovers (removes) the locks it is still using."""
    import subprocess
    _git(tmp_path)
    monkeypatch.setenv("CTX_REMOTE_WAIT_SECONDS", "0.3")
    with locks.remote_operation(tmp_path) as operation:
        child = subprocess.Popen(["sleep", "30"], pass_fds=(operation.fd,))
    try:
        with pytest.raises(LockTimeout):
            with locks.remote_operation(tmp_path):
                pass
    finally:
        child.kill()
        child.wait()
    with locks.remote_operation(tmp_path) as operation:
        assert operation.removed == []
