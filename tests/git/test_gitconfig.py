"""git's configuration read by git's rules (``ctxgit/gitfiles/gitconfig.py``): comments,
quoting, includes and includeIf as git reads them, and the answer kept in
``.git/ctx/gitconfig`` so ``ctx start``/``ctx brief`` neither load libgit2 nor write."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ctx.errors import GitError
from ctxgit.gitfiles.layout import GITCONFIG
from ctxgit.plumbing import gitconfig
from ctxgit.plumbing.gitconfig import upstream
from support.gitutil import git_out
from support.stores import snapshot
from support.syncutil import Machine, make_bare


@pytest.fixture(autouse=True)
def transport(monkeypatch):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "libgit2")


def machine(tmp_path) -> Machine:
    m = Machine(tmp_path / "m", "M")
    m.ok("set", "k", "v")
    return m


def append(m: Machine, text: str) -> None:
    with open(m.root / ".git" / "config", "a", encoding="utf-8") as handle:
        handle.write(text)


def kept(m: Machine):
    return m.root / ".git" / GITCONFIG


# --- the findings: what git reads, ctx reads -------------------------------------------------

def test_an_inline_comment_after_the_upstream_is_not_part_of_it(tmp_path):
    """`remote = origin # the usb disk` under [branch "main"]: git reads `origin`."""
    m = machine(tmp_path)
    bare = make_bare(tmp_path / "usb.git")
    m.ok("remote", "add", "origin", str(bare))
    append(m, '[branch "main"]\n\tremote = origin # the usb disk\n\tmerge = refs/heads/main ; too\n')
    assert git_out(m.root, "config", "branch.main.remote").strip() == "origin"
    assert upstream(m.root).remote == "origin" and upstream(m.root).is_set
    result = m.run("sync")
    assert result.exit_code == 0, result.stderr
    assert "no remote here" not in result.stderr
    assert git_out(bare, "rev-parse", "main").strip() == m.head()


def test_a_remote_in_an_included_file_is_seen(tmp_path):
    m = machine(tmp_path)
    bare = make_bare(tmp_path / "elsewhere.git")
    (m.root / ".git" / "remotes.inc").write_text(f'[remote "usb"]\n\turl = {bare}\n')
    append(m, "[include]\n\tpath = remotes.inc\n")
    assert upstream(m.root).remotes == ["usb"] and upstream(m.root).remote == "usb"
    status = json.loads(m.ok("status", "--json").stdout)
    assert status["remote"] == "usb" and status["remote_problem"] is None
    assert m.ok("sync").stdout.endswith("push: sent 1 commit to usb\n")


def test_include_if_gitdir_and_quoting_as_git_reads_them(tmp_path):
    m = machine(tmp_path)
    inc = tmp_path / "for-this-dir.inc"
    inc.write_text('[remote "from if"]\n\turl = "/x;y" # quoted, then a comment\n')
    other = tmp_path / "not-this-dir.inc"
    other.write_text('[remote "never"]\n\turl = /z\n')
    append(m, f'[includeIf "gitdir:{m.root}/"]\n\tpath = {inc}\n'
              f'[includeIf "gitdir:/nowhere/at/all/"]\n\tpath = {other}\n'
              '[branch "main"]\n\tremote = "from if" ; a semicolon comment\n')
    answer = upstream(m.root)
    assert answer.remotes == ["from if"] and answer.remote == "from if" and answer.is_set


def test_a_remote_in_the_global_config_counts_as_git_says(tmp_path):
    m = machine(tmp_path)
    with open(os.environ["GIT_CONFIG_GLOBAL"], "a", encoding="utf-8") as handle:
        handle.write('[remote "everywhere"]\n\turl = /nowhere\n')
    listed = git_out(m.root, "remote").split()
    assert upstream(m.root).remotes == listed == ["everywhere"]


def test_a_configuration_git_refuses_is_one_line(tmp_path):
    m = machine(tmp_path)
    append(m, "[branch \"main\"\n\tremote = x\n")
    result = m.run("sync")
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "config" in lines[0] and "/.git/config" in lines[0], result.stderr
    assert gitconfig.keep(m.root) is None  # (a cache: never raises)
    with pytest.raises(GitError, match="bad config line"):
        gitconfig.read(m.root)


def test_libgit2_answers_where_git_is_absent(tmp_path, monkeypatch):
    m = machine(tmp_path)
    (m.root / ".git" / "remotes.inc").write_text('[remote "usb"]\n\turl = /u\n')
    append(m, '[include]\n\tpath = remotes.inc\n[branch "main"]\n\tremote = usb # a comment\n')
    with_git = gitconfig.read(m.root)
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert gitconfig._from_git(str(m.root)) is None
    assert gitconfig.read(m.root) == with_git == gitconfig.Answer(["usb"], "usb")


# --- the kept answer ------------------------------------------------------------------------------

def test_a_write_keeps_the_answer_and_a_read_uses_it(tmp_path):
    m = machine(tmp_path)
    m.ok("remote", "add", "alpha", str(make_bare(tmp_path / "a.git")))
    m.ok("set", "k2", "v")
    assert kept(m).is_file()
    assert gitconfig._kept(str(m.root)) == gitconfig.Answer(["alpha"], None)


@pytest.mark.parametrize("change", ["config", "include", "global", "home", "xdg"])
def test_a_stale_answer_is_never_used_and_a_read_writes_nothing(tmp_path, monkeypatch, change):
    if change in ("home", "xdg"):
        monkeypatch.delenv("GIT_CONFIG_GLOBAL")  # (tests/conftest.py's: git then reads HOME's and XDG's)
    m = machine(tmp_path)
    inc = m.root / ".git" / "more.inc"
    append(m, "[include]\n\tpath = more.inc\n")
    m.ok("set", "k2", "v")  # keeps the answer: no remote
    assert gitconfig._kept(str(m.root)) == gitconfig.Answer([], None)
    remote = '[remote "late"]\n\turl = /late\n'
    if change == "config":
        append(m, remote)
    elif change == "include":
        inc.write_text(remote)  # a file named by an include, made after the answer was kept
    elif change == "global":
        with open(os.environ["GIT_CONFIG_GLOBAL"], "a", encoding="utf-8") as handle:
            handle.write(remote)
    elif change == "home":
        home = tmp_path / "other-home"
        home.mkdir()
        (home / ".gitconfig").write_text(remote)
        monkeypatch.setenv("HOME", str(home))
    else:
        xdg = tmp_path / "xdg"
        (xdg / "git").mkdir(parents=True)
        (xdg / "git" / "config").write_text(remote)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    assert gitconfig._kept(str(m.root)) is None
    before = snapshot(m.root, with_cache=True)
    assert upstream(m.root).remotes == ["late"]
    assert "sync: " in m.ok("start").stdout  # the brief ctx start shows sees the remote
    assert snapshot(m.root, with_cache=True) == before  # and start writes nothing
    m.ok("set", "k3", "v")
    assert gitconfig._kept(str(m.root)) == gitconfig.Answer(["late"], None)


@pytest.mark.parametrize("garbage", [b"", b"ctx-gitconfig 1\0remote\0x\0", b"not it",
                                     b"ctx-gitconfig 1\0bogus\0x\0", b"\xff" * 10])
def test_a_kept_answer_edited_by_hand_is_not_trusted(tmp_path, garbage):
    m = machine(tmp_path)
    m.ok("set", "k2", "v")
    kept(m).write_bytes(garbage)
    assert gitconfig._kept(str(m.root)) is None
    assert upstream(m.root).remotes == []


def test_a_kept_answer_moved_with_its_repository_is_stale(tmp_path):
    m = machine(tmp_path)
    m.ok("set", "k2", "v")
    moved = tmp_path / "moved"
    os.rename(m.root, moved)
    assert gitconfig._kept(str(moved)) is None


@pytest.mark.slow
def test_start_and_brief_load_no_libgit2_whether_the_answer_is_fresh_or_stale(tmp_path):
    m = machine(tmp_path)
    m.ok("remote", "add", "origin", str(make_bare(tmp_path / "o.git")))
    m.ok("sync")  # in step with origin: the brief's sync line is plain file reads
    code = ("import sys; sys.argv = ['ctx'] + sys.argv[1:]\n"
            "from ctx.cli import console\n"
            "import atexit; atexit.register(lambda: print('LOADED', [m for m in ('pygit2', 'subprocess') "
            "if m in sys.modules]))\n"
            "console()")
    env = dict(os.environ, **m.env)
    for stale in (False, True):
        if stale:
            append(m, "# an edit by hand\n")
        for args in (["start"], ["brief"]):
            out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)
            assert out.returncode == 0 and "sync: in step with origin" in out.stdout, (args, out.stdout, out.stderr)
            assert out.stdout.strip().endswith("LOADED []"), (stale, args, out.stdout[-300:], out.stderr)
    assert gitconfig._kept(str(m.root)) is None  # the reads kept nothing
