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
    """Every fast commit attempted from now on: its result (a tuple; None: it fell back to
    libgit2), or the error it raised."""
    from ctxgit.plumbing import fastcommit
    calls: list = []
    real = fastcommit.commit_store

    def spy(*args, **kwargs):
        try:
            done = real(*args, **kwargs)
        except Exception as exc:
            calls.append(exc)
            raise
        calls.append(done)
        return done
    monkeypatch.setattr(fastcommit, "commit_store", spy)
    return calls
