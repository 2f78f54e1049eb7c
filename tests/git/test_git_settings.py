"""Commits are git's own: a repository's settings that change git's files (the index
version, a split index) and the writer's time zone hold for ctx's commits as for git's
(issue 36: ctx wrote the index and the commit by hand, and got them wrong)."""

from __future__ import annotations

import os
import subprocess
import time

import pytest


def _git(root, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=check)
    return done.stdout


@pytest.fixture
def zone(monkeypatch):
    """Set the process's time zone (``TZ``) for the rest of the test; put back after."""
    def use(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()
    yield use
    monkeypatch.delenv("TZ", raising=False)
    time.tzset()


@pytest.mark.parametrize("author", ["Agent One", None], ids=["authored", "operator"])
def test_index_version_4_leaves_git_status_clean(root, run, author):
    assert run("set", "k0", "first", author=author).exit_code == 0
    _git(root, "config", "index.version", "4")
    _git(root, "update-index", "--index-version", "4")
    for i in range(1, 5):
        done = run("set", f"k{i}", f"value {i}", author=author)
        assert done.exit_code == 0, done.output
    assert _git(root, "status", "--porcelain") == ""
    assert _git(root, "fsck", "--strict") == ""
    assert "k4" in _git(root, "show", "HEAD:memory/shared.json")


@pytest.mark.parametrize("author", ["Agent One", None], ids=["authored", "operator"])
def test_a_split_index_takes_every_write(root, run, author):
    assert run("set", "k0", "first", author=author).exit_code == 0
    _git(root, "config", "core.splitIndex", "true")
    _git(root, "update-index", "--split-index")
    assert any(n.startswith("sharedindex.") for n in os.listdir(root / ".git"))
    for i in range(1, 4):
        done = run("set", f"k{i}", f"value {i}", author=author)
        assert done.exit_code == 0, done.output
        assert "GitError" not in done.output
    assert _git(root, "status", "--porcelain") == ""
    assert "k3" in _git(root, "show", "HEAD:memory/shared.json")
    assert _git(root, "log", "--format=%s", "-1").startswith("set shared/k3")


@pytest.mark.parametrize("author", ["Agent One", None], ids=["authored", "operator"])
def test_a_commit_is_dated_in_the_writers_zone(root, run, zone, author):
    assert run("set", "k0", "first", author=author).exit_code == 0
    zone("EST+5")
    done = run("set", "k1", "in new york", author=author)
    assert done.exit_code == 0, done.output
    dates = _git(root, "log", "-1", "--format=%ai%n%ci").split()
    assert dates[2] == "-0500" and dates[5] == "-0500", dates
    # git's own commit in the same zone says the same
    (root / "notes.txt").write_text("x\n")
    env = dict(os.environ, TZ="EST+5")
    subprocess.run(["git", "-C", str(root), "add", "notes.txt"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "by git", "--no-verify"], check=True, env=env)
    assert _git(root, "log", "-1", "--format=%ai").split()[2] == "-0500"


def test_gits_hooks_do_not_run_for_a_commit_ctx_checked(root, run, tmp_path):
    """``-c core.hooksPath=/dev/null``: not only pre-commit (``--no-verify``'s), also a
    prepare-commit-msg that would rewrite ctx's trailers, and a post-commit."""
    assert run("set", "k0", "first", author="Agent One").exit_code == 0
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    ran = tmp_path / "ran"
    for name, body in (("pre-commit", "exit 1"), ("prepare-commit-msg", 'echo HOOKED >> "$1"'),
                       ("commit-msg", "exit 1"), ("post-commit", f"touch '{ran}'")):
        (hooks / name).write_text(f"#!/bin/sh\n{body}\n")
        (hooks / name).chmod(0o755)
    _git(root, "config", "core.hooksPath", str(hooks))
    for n, author in enumerate(("Agent One", None)):  # one git commit; the way through the repository
        done = run("set", f"k{n + 1}", "again", author=author, env={"CTX_GIT_SLOW": "1"} if n else {})
        assert done.exit_code == 0, done.output
        assert "HOOKED" not in _git(root, "log", "-1", "--format=%B")
    assert not ran.exists()


def _without_git(monkeypatch):
    from ctxgit.plumbing import gitcommit
    monkeypatch.setattr(gitcommit, "program", lambda: None)


def test_without_git_libgit2_commits_in_the_writers_zone(root, run, zone, monkeypatch):
    _without_git(monkeypatch)
    zone("EST+5")
    for i in range(2):
        assert run("set", f"k{i}", "v", author="Agent One").exit_code == 0
    assert _git(root, "log", "-1", "--format=%ai").split()[2] == "-0500"
    assert _git(root, "status", "--porcelain") == ""


@pytest.mark.parametrize("setting", ["core.splitIndex", "commit.gpgsign"])
def test_without_git_a_setting_libgit2_cannot_honour_is_refused_naming_it(root, run, monkeypatch, setting):
    assert run("set", "k0", "first", author="Agent One").exit_code == 0
    _git(root, "config", setting, "true")
    if setting == "core.splitIndex":
        _git(root, "update-index", "--split-index")
    before = (root / "memory" / "shared.json").read_bytes()
    head = _git(root, "rev-parse", "HEAD")
    _without_git(monkeypatch)
    done = run("set", "k1", "second", author="Agent One")
    assert done.exit_code != 0
    assert done.stderr.startswith(f"ctx: {setting}:") and done.stderr.count("\n") == 1, done.stderr
    assert (root / "memory" / "shared.json").read_bytes() == before
    assert _git(root, "rev-parse", "HEAD") == head
