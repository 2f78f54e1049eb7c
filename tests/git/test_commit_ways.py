"""The ways a write is committed make the same commits: one ``git commit`` (the repository
as ctx left it), the way through the repository (git asked what changed), and libgit2
where git is not on PATH."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.stores import store_path


def _git(root, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env, check=True).stdout


WRITES = [("set", "a", "one", "--tag", "x"), ("set", "b", "two ü"), ("amend", "a", "a note"),
          ("resolve", "b", "--note", "done"), ("basis", "a", "verified"), ("set", "c", "3", "--store", "agent"),
          ("delete", "b"), ("set", "a", "{\"k\": [1, 2]}"), ("supersede", "a", "--by", "c")]


MODES = {"one-commit": {}, "repository": {"CTX_GIT_SLOW": "1"}, "libgit2": {"PATH": "/nonexistent"}}


def test_every_way_makes_the_same_trees(tmp_path, runner, monkeypatch):
    from ctx.cli.app import cli
    from ctxgit.plumbing import gitcommit
    trees = {}
    for mode, extra in MODES.items():
        root = tmp_path / mode
        env = {"CTX_HOME": str(root), "CTX_AUTHOR": "Agent One", **extra}
        monkeypatch.setattr(gitcommit, "program", (lambda: None) if mode == "libgit2" else gitcommit.program)
        assert runner.invoke(cli, ["init"], env=env).exit_code == 0
        for args in WRITES:
            result = runner.invoke(cli, list(args), env=env)
            assert result.exit_code == 0, (mode, args, result.output)
        monkeypatch.undo()
        trees[mode] = [line.split(" ", 1)[1] for line in _git(root, "log", "--format=%T %s").splitlines()]
        assert _git(root, "status", "--porcelain") == ""
        _git(root, "fsck", "--full", "--strict")
    assert trees["one-commit"] == trees["repository"] == trees["libgit2"]
    assert len(trees["libgit2"]) == len(WRITES) + 1


HERE = str(Path(__file__).resolve().parents[2])

# what a plain write must not import: libgit2, and what costs milliseconds of start-up
HEAVY = ("pygit2", "click", "dataclasses", "inspect", "typing", "subprocess")


@pytest.mark.slow
def test_a_plain_write_does_not_load_libgit2_or_other_heavy_modules(root, run):
    assert run("set", "a", "one", author="A").exit_code == 0   # the first: libgit2 sets things up
    code = (f"import sys\nsys.path.insert(0, {HERE!r})\n"  # (-I: this checkout, not the installed one)
            "sys.argv = ['ctx', 'set', 'b', 'two']\nfrom ctx.cli.fast import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            f"print('LOADED', [m for m in {HEAVY!r} if m in sys.modules])")
    env = dict(os.environ, CTX_HOME=str(root), CTX_AUTHOR="A")
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, env=env,
                         cwd=str(Path(__file__).resolve().parents[2]))
    assert "LOADED []" in out.stdout, out.stdout + out.stderr
    assert "set shared/b: two" in _git(root, "log", "-1", "--format=%s")


# ... nor what only another door or another path needs: click's commands, libgit2's commit,
# the repository's set-up, signing, sync, the full-text index, threads
WRITE_PATH_UNUSED = HEAVY + ("threading", "unicodedata", "ctx.cli.app", "ctxgit.plumbing.repo",
                             "ctxgit.guard.install", "ctxgit.plumbing.signing", "ctxgit.sync.remote",
                             "ctxgit.sync.auto", "hooks.unsafe_paths", "ctx.fulltext", "ctx.cli.mcp")


@pytest.mark.slow
def test_set_amend_and_a_letter_load_only_the_write_path(root, run):
    """Each everyday write through the fast door and the fast commit (no pygit2: libgit2's
    way was not taken) imports none of the modules above, and each is committed."""
    assert run("set", "a", "one", author="A").exit_code == 0   # the first: libgit2 sets things up
    assert run("set", "b", "two", author="A").exit_code == 0
    code = (f"import sys\nsys.path.insert(0, {HERE!r})\n"  # (-I: this checkout, not the installed one)
            "sys.argv = ['ctx'] + sys.argv[1:]\nfrom ctx.cli.fast import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            f"print('LOADED', [m for m in {WRITE_PATH_UNUSED!r} if m in sys.modules])")
    env = dict(os.environ, CTX_HOME=str(root), CTX_AUTHOR="A")
    for args in (["set", "c", "three"], ["set", "b", "two again"], ["amend", "b", "a note"],
                 ["send", "Agent Two", "a letter"]):
        out = subprocess.run([sys.executable, "-I", "-c", code, *args], capture_output=True, text=True,
                             env=env, cwd=str(Path(__file__).resolve().parents[2]))
        assert "LOADED []" in out.stdout, (args, out.stdout + out.stderr)
    subjects = _git(root, "log", "--format=%s", "-4").splitlines()
    assert [s.split(":")[0] for s in subjects][1:] == ["amend shared/b", "set shared/b", "set shared/c"], subjects


def test_an_outside_edit_is_committed_first_as_system(root, run):
    assert run("set", "a", "one", author="A").exit_code == 0
    assert run("set", "b", "two", author="A").exit_code == 0
    path = store_path(root, "shared")
    path.write_text(path.read_text().replace('"one"', '"ONE"'))
    assert run("set", "c", "three", author="A").exit_code == 0
    subjects = _git(root, "log", "--format=%an|%s", "-3").splitlines()
    assert subjects[0] == "A|set shared/c: three"
    assert subjects[1].startswith("system|external change: memory/shared.json")
    assert _git(root, "status", "--porcelain") == ""


def test_a_secret_is_refused_by_the_one_commit_way_too(root, run):
    assert run("set", "a", "one", author="A").exit_code == 0
    assert run("set", "b", "two", author="A").exit_code == 0
    leak = "AKIA" + "QWERTYUIOPASDFGH"
    assert run("set", "c", "x", "--tag", leak, author="A").exit_code == 4      # a tag, not checked by ops
    assert "c" not in json.loads(store_path(root, "shared").read_text())["entries"]  # nothing written
    assert leak not in _git(root, "log", "-p")


# --- lock files a killed commit leaves (lastcommit.recover) -----------------------------------------

def _dead_pid() -> int:
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


@pytest.mark.parametrize("when", ["its-git-killed", "long-before", "no-git-started", "no-commit"])
def test_a_lock_is_removed_only_when_the_git_of_a_killed_ctx_commit_left_it(tmp_path, when):
    from ctxgit.plumbing import lastcommit
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    if when != "no-commit":
        lastcommit.begin(git, "git")  # the ctx that began committing, then died
    from ctxgit.plumbing import gitcommit
    gitcommit.note_pids(None)
    if when in ("its-git-killed", "long-before"):
        (git / lastcommit.GIT_PID).write_text(f"{_dead_pid()}\n")  # its git, killed too
    lock = git / "index.lock"
    lock.write_text("")
    if when == "long-before":
        os.utime(lock, (1_000_000, 1_000_000))  # an operator's git, long before ctx's commit began
    assert lastcommit.recover(tmp_path) == (["index.lock"] if when == "its-git-killed" else [])
    assert lock.exists() == (when != "its-git-killed")
    assert not (git / "ctx" / "committing").exists() and not (git / lastcommit.GIT_PID).exists()


def test_recover_waits_for_the_git_a_killed_ctx_started(tmp_path):
    import time

    from ctxgit.plumbing import gitcommit, lastcommit
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    lastcommit.begin(git, "git")
    gitcommit.note_pids(None)
    lock = git / "index.lock"
    lock.write_text("")
    # the killed ctx's git: still running, it drops its lock as it ends
    finishing = subprocess.Popen(["sh", "-c", f"sleep 0.3; rm -f '{lock}'"], start_new_session=True)
    (git / lastcommit.GIT_PID).write_text(f"{finishing.pid}\n")
    started = time.monotonic()
    assert lastcommit.recover(tmp_path) == []
    assert time.monotonic() - started >= 0.2 and not lock.exists()
    finishing.wait()


def test_a_commit_removes_the_temporaries_a_killed_one_left_in_git_ctx(root, run):
    """The counters and markers under .git/ctx are replaced through a temporary: one that a
    killed ctx left is removed by the next commit once it is older than a write could be."""
    import time

    from ctx.storage.files import STALE_TEMPORARY
    assert run("set", "a", "one", author="A").exit_code == 0
    state = root / ".git" / "ctx"
    old, young = state / ".since-lag.abcdef012345.tmp", state / ".loose-bytes.0123456789ab.tmp"
    for path in (old, young):
        path.write_bytes(b"3")
    past = time.time() - 2 * STALE_TEMPORARY
    os.utime(old, (past, past))
    assert run("set", "a", "two", author="A").exit_code == 0
    assert not old.exists() and young.exists()
