"""Helpers for the signed-commit tests (ssh, openpgp, x509): the operator's git
identity, whether git verifies a commit, a commit altered after it was signed,
and a record of the fast commits a test's writes attempted."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support.gitutil import git, git_env, git_out


def identity(repo: Path, name: str = "Olive Operator", email: str = "olive@example.org") -> None:
    git(repo, "config", "user.name", name)
    git(repo, "config", "user.email", email)


def verified(repo: Path, rev: str = "HEAD") -> bool:
    """``git verify-commit`` accepts the commit's signature."""
    return git(repo, "verify-commit", rev, check=False).returncode == 0


def signature_header(repo: Path, rev: str = "HEAD") -> bool:
    return "\ngpgsig " in git_out(repo, "cat-file", "commit", rev)


def forge(repo: Path, old: str, new: str) -> str:
    """Point main at a copy of HEAD's commit whose text says ``new`` where it said ``old``,
    its signature kept as it was; returns the forged commit's id."""
    raw = git_out(repo, "cat-file", "commit", "HEAD")
    assert old in raw
    forged = subprocess.run(["git", "-C", str(repo), "hash-object", "-t", "commit", "-w", "--stdin"],
                            input=raw.replace(old, new), env=git_env(), capture_output=True, text=True,
                            check=True).stdout.strip()
    git(repo, "update-ref", "refs/heads/main", forged)
    return forged


def spy_fast_commits(monkeypatch: pytest.MonkeyPatch) -> list:
    """Every write's try at the one-``git commit`` way from now on: a tuple when it took
    it, None when it fell back to the way through the repository, or the error it raised."""
    from ctxgit.recorder import GitRecorder
    calls: list = []
    real = GitRecorder._record_fast

    def spy(self, change):
        try:
            done = real(self, change)
        except Exception as exc:
            calls.append(exc)
            raise
        calls.append(("git commit",) if done else None)
        return done
    monkeypatch.setattr(GitRecorder, "_record_fast", spy)
    return calls
