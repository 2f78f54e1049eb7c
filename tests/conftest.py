"""Shared fixtures: every test runs in an isolated environment.

* ``CTX_HOME`` is a fresh, not yet existing directory under ``tmp_path``,
  named with a space and a non-ASCII letter on purpose.
* ``HOME`` is a temporary directory (also at import time, below, so that
  libgit2 never reads the real ``~/.gitconfig``), and libgit2's configuration
  search paths follow it test by test; git's global and system configuration
  are cut off and the git identity is fixed.
* ``CTX_AUTHOR`` is removed; ``TZ`` is UTC, so local dates equal UTC dates.

Helpers that read and write store files directly on disk (set-up with chosen
timestamps, checks of what ctx wrote) are in ``support/stores.py``; the git,
sync, credential and reliability helpers beside it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from support.door import run_front_door
from support.stores import read_entries, write_store_file

# --- import time: never let anything read the real home -----------------------------

_IMPORT_HOME = tempfile.mkdtemp(prefix="ctx-tests-home-")
atexit.register(shutil.rmtree, _IMPORT_HOME, True)
os.environ["HOME"] = _IMPORT_HOME
os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
os.environ["GIT_CONFIG_GLOBAL"] = os.path.join(_IMPORT_HOME, ".gitconfig")
open(os.environ["GIT_CONFIG_GLOBAL"], "a").close()
os.environ["XDG_CONFIG_HOME"] = os.path.join(_IMPORT_HOME, ".config")
os.environ["TZ"] = "UTC"
time.tzset()


def _libgit2_reads(home: str) -> None:
    """libgit2 finds the global, XDG and system configuration by search paths it computes once
    a process, from the HOME of its first use: without this, every test of a worker read the
    global configuration of the worker's first test (and never its own `git config --global`)."""
    import pygit2
    from pygit2.enums import ConfigLevel
    paths = pygit2.settings.search_path
    paths[ConfigLevel.GLOBAL] = home
    paths[ConfigLevel.XDG] = os.path.join(home, ".config", "git")
    paths[ConfigLevel.SYSTEM] = os.path.join(_IMPORT_HOME, "no-system")  # (GIT_CONFIG_NOSYSTEM, for libgit2)


_libgit2_reads(_IMPORT_HOME)

GIT_NAME = "Test Operator"
GIT_EMAIL = "operator@example.invalid"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--regen-golden", action="store_true", default=False,
                     help="rewrite tests/golden/ from what ctx writes now (then review the diff)")


# --- the isolated environment -------------------------------------------------------

@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "home"
    home.mkdir()
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("")
    ctx_home = tmp_path / "ctx home ü"
    monkeypatch.setenv("CTX_HOME", str(ctx_home))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("CTX_AUTHOR", raising=False)
    monkeypatch.delenv("CTX_LOCK_TIMEOUT", raising=False)
    monkeypatch.delenv("CTX_NO_GIT", raising=False)
    monkeypatch.delenv("CTX_AUTHOR_EMAIL", raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", GIT_NAME)
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", GIT_EMAIL)
    monkeypatch.setenv("GIT_COMMITTER_NAME", GIT_NAME)
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", GIT_EMAIL)
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    _libgit2_reads(str(home))
    yield ctx_home
    _libgit2_reads(_IMPORT_HOME)


@pytest.fixture
def root(_isolated_env: Path) -> Path:
    """The context root (``CTX_HOME``); it does not exist until something creates it."""
    return _isolated_env


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def run(runner: CliRunner, root: Path) -> Callable[..., Any]:
    """``run("set", "k", "v", author="Agent One")``: the ``ctx`` command line as agents
    reach it, through the fast door (``ctx.cli.main``: the fast parser, and click for what
    it leaves to click), in this process, with ``sys.argv``, the streams and the
    environment swapped for the call. Exceptions are caught, so error paths show as an
    exit status (1, with ``result.exception``); ``result.stdout`` and ``result.stderr`` are
    separate. ``click_run`` drives click's door alone, for tests of click's own behaviour.
    """
    def invoke(*args: str, author: str | None = None, input: str | None = None,
               env: dict[str, str | None] | None = None):
        extra: dict[str, str | None] = {"CTX_HOME": str(root), "CTX_AUTHOR": author}
        extra.update(env or {})
        return run_front_door(runner, list(args), input=input, env=extra)
    return invoke


@pytest.fixture
def click_run(runner: CliRunner, root: Path) -> Callable[..., Any]:
    """``run``, but through click's door (``ctx.cli.app.cli``) whatever the arguments: for
    tests whose subject is click's own behaviour (help, usage errors, completion)."""
    from ctx.cli.app import cli

    def invoke(*args: str, author: str | None = None, input: str | None = None,
               env: dict[str, str | None] | None = None):
        extra: dict[str, str | None] = {"CTX_HOME": str(root), "CTX_AUTHOR": author}
        extra.update(env or {})
        return runner.invoke(cli, list(args), input=input, env=extra)
    return invoke


@pytest.fixture
def entries(root: Path) -> Callable[[str], dict[str, Any]]:
    """``entries("shared")``: a store's entries read straight from disk."""
    def read(store: str = "shared") -> dict[str, Any]:
        return read_entries(root, store)
    return read


@pytest.fixture
def write_store(root: Path) -> Callable[..., Path]:
    """``write_store("shared", {key: make_entry(...)})``: set-up without ctx."""
    return lambda store, new_entries, **top: write_store_file(root, store, new_entries, **top)


@pytest.fixture
def context(root: Path):
    """A ``Context`` on the test root, its author taken from the (clean) environment;
    writes are files only (the null recorder), as in every core test."""
    from support.contexts import Context
    return Context(root)


@pytest.fixture
def git_context(root: Path):
    """A ``Context`` whose writes are commits, as the front door makes it."""
    from ctxgit.recorder import recorder_for
    from support.contexts import Context
    return Context(root, recorder_factory=recorder_for)


@pytest.fixture
def make_context(root: Path) -> Callable[..., Any]:
    """``make_context(author="Agent One")``: a ``Context`` on the test root (with
    ``git=True``, one whose writes are commits).

    With no author, the author comes from ``CTX_AUTHOR`` as it is when called.
    """
    from ctxgit.recorder import recorder_for
    from support.contexts import Context
    return lambda author=None, git=False: Context(root, author=author,
                                                  recorder_factory=recorder_for if git else None)
