"""Which way fetch and push go (ctxgit/transport.py); both ways run in tests/test_sync.py."""

from __future__ import annotations

import pytest

from ctxgit import transport


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
