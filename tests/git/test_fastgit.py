"""The commit written without libgit2 is the commit libgit2 would write."""

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


@pytest.mark.parametrize("slow", [False, True])
def test_fast_and_slow_commits_make_the_same_trees(tmp_path, runner, slow):
    from ctx.cli.app import cli
    trees = {}
    for mode in ("fast", "slow"):
        root = tmp_path / mode
        env = {"CTX_HOME": str(root), "CTX_AUTHOR": "Agent One", "CTX_GIT_SLOW": "1" if mode == "slow" else None}
        assert runner.invoke(cli, ["init"], env=env).exit_code == 0
        for args in WRITES:
            result = runner.invoke(cli, list(args), env=env)
            assert result.exit_code == 0, (args, result.output)
        trees[mode] = [line.split()[0] for line in _git(root, "log", "--format=%T %s").splitlines()]
        assert _git(root, "status", "--porcelain") == ""
        _git(root, "fsck", "--full", "--strict")
        # timestamps differ between the two runs; same number of commits, all clean
    assert len(trees["fast"]) == len(trees["slow"]) == len(WRITES) + 1


def test_fast_commits_match_libgit2_byte_for_byte(tmp_path, runner, monkeypatch):
    """With the same files, the fast way and libgit2 produce the same tree ids."""
    from ctx.cli.app import cli
    root = tmp_path / "ctx"
    env = {"CTX_HOME": str(root), "CTX_AUTHOR": "Agent One"}
    assert runner.invoke(cli, ["init"], env=env).exit_code == 0
    assert runner.invoke(cli, ["set", "a", "one"], env=env).exit_code == 0
    state = root / ".git" / "ctx" / "state.json"
    assert state.exists()
    assert runner.invoke(cli, ["set", "a", "two"], env=env).exit_code == 0   # the fast way
    fast_tree = _git(root, "rev-parse", "HEAD^{tree}").strip()
    # what git itself computes for the files on disk
    _git(root, "read-tree", "HEAD")
    _git(root, "add", "-A")
    assert _git(root, "write-tree").strip() == fast_tree


# what a plain write must not import: libgit2, and what costs milliseconds of start-up
HEAVY = ("pygit2", "click", "dataclasses", "inspect", "typing", "subprocess")


@pytest.mark.slow
def test_a_plain_write_does_not_load_libgit2_or_other_heavy_modules(root, run):
    assert run("set", "a", "one", author="A").exit_code == 0   # the first: libgit2 sets things up
    code = ("import sys\nsys.argv = ['ctx', 'set', 'b', 'two']\nfrom ctx.cli.fast import main\n"
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
    code = ("import sys\nsys.argv = ['ctx'] + sys.argv[1:]\nfrom ctx.cli.fast import main\n"
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


def test_an_outside_edit_sends_the_write_the_slow_way(root, run):
    assert run("set", "a", "one", author="A").exit_code == 0
    assert run("set", "b", "two", author="A").exit_code == 0
    path = store_path(root, "shared")
    path.write_text(path.read_text().replace('"one"', '"ONE"'))
    assert run("set", "c", "three", author="A").exit_code == 0
    subjects = _git(root, "log", "--format=%an|%s", "-3").splitlines()
    assert subjects[0] == "A|set shared/c: three"
    assert subjects[1].startswith("system|external change: memory/shared.json")
    assert _git(root, "status", "--porcelain") == ""


def test_a_forced_secret_is_refused_by_the_fast_way_too(root, run):
    assert run("set", "a", "one", author="A").exit_code == 0
    assert run("set", "b", "two", author="A").exit_code == 0
    leak = "AKIA" + "QWERTYUIOPASDFGH"
    assert run("set", "c", "x", "--tag", leak, author="A").exit_code == 4      # a tag, not checked by ops
    assert "c" not in json.loads(store_path(root, "shared").read_text())["entries"]  # nothing written
    assert leak not in _git(root, "log", "-p")


# --- lock files a killed commit leaves (fastgit.recover) -----------------------------------------

def _git_dir(tmp_path):
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    return git


@pytest.mark.parametrize("name", ["index.lock", "refs/heads/main.lock"])
def test_a_lock_ctx_made_is_known_by_its_mode_and_removed_whatever_its_age(tmp_path, name):
    from ctxgit.plumbing import fastcommit as fastgit
    git = _git_dir(tmp_path)
    os.close(fastgit._make_lock(git / name))
    os.utime(git / name, (1, 1))  # a day, a year: no intent file, no time window needed
    assert fastgit.recover(tmp_path) == [name] and not (git / name).exists()


@pytest.mark.parametrize("how", ["fast", "libgit2", None])
def test_an_operators_lock_is_left_alone_unless_a_libgit2_commit_just_died(tmp_path, how):
    from ctxgit.plumbing import fastcommit as fastgit
    git = _git_dir(tmp_path)
    if how:
        fastgit.begin_commit(git, how)  # ... and the process was killed
    (git / "index.lock").write_text("")  # an operator's `git add`, mode 0644 like any git's
    removed = fastgit.recover(tmp_path)
    if how == "libgit2":  # libgit2's locks look like any git's: the seconds after the intent decide
        assert removed == ["index.lock"]
    else:
        assert removed == [] and (git / "index.lock").exists()
    assert not (git / fastgit.INTENT).exists() or how is None


def test_a_lock_moved_into_place_gets_the_mode_of_the_file_it_replaces(tmp_path):
    from ctxgit.plumbing import fastcommit as fastgit
    git = _git_dir(tmp_path)
    ref = git / "refs" / "heads" / "main"
    ref.write_text("old\n")
    os.chmod(ref, 0o640)
    lock = ref.with_name("main.lock")
    fd = fastgit._make_lock(lock)
    assert os.stat(lock).st_mode & 0o100  # ctx's mark while it is a lock
    assert fastgit._commit_lock(fd, lock, ref, b"new\n")
    assert ref.read_text() == "new\n" and os.stat(ref).st_mode & 0o777 == 0o640 and not lock.exists()
    fd = fastgit._make_lock(lock)
    assert not fastgit._commit_lock(fd, lock, ref, b"newer\n", before_rename=lambda: False)
    assert ref.read_text() == "new\n" and not lock.exists()


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
