"""One rule for "which remote do I sync with" (``ctxgit/gitfiles/config.py``), the same
answer from every command that asks: status, sync, pull, push, the brief, auto-sync and
the view. Zero, one and several remotes, with and without an upstream, and a stale one."""

from __future__ import annotations

import json
import subprocess

import pytest

from ctxgit.gitfiles.config import choose
from ctxgit.plumbing.gitconfig import upstream
from ctxgit.plumbing.repo import open_repo
from ctxgit.porcelain.viewdata import sync_state
from ctxgit.sync import auto, trigger
from support.syncutil import Machine, make_bare


@pytest.fixture(autouse=True)
def transport(monkeypatch):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "libgit2")


# --- the rule, over what .git/config says ---------------------------------------------------

@pytest.mark.parametrize("remotes, configured, named, chosen, problem", [
    ([], None, None, None, "no remote to use"),
    (["alpha"], None, None, "alpha", None),
    (["alpha", "beta"], None, None, None, "several remotes (alpha, beta) and no upstream"),
    (["alpha", "origin"], None, None, "origin", None),
    (["alpha", "beta"], "beta", None, "beta", None),
    (["alpha", "origin"], "alpha", None, "alpha", None),
    (["alpha", "origin"], "gone", None, None, "main's upstream 'gone' is no remote here"),
    ([], "gone", None, None, "ctx remote add origin URL"),
    (["alpha", "beta"], None, "beta", "beta", None),
    (["alpha", "beta"], "gone", "alpha", "alpha", None),
    (["alpha"], "alpha", "beta", None, "no remote named 'beta' (have: alpha)"),
])
def test_the_rule(remotes, configured, named, chosen, problem):
    answer = choose(remotes, configured, named)
    assert answer.remote == chosen
    assert (answer.problem is None) == (problem is None)
    if problem:
        assert problem in answer.problem
    assert answer.stale == (configured is not None and configured not in remotes)
    assert answer.is_set == (configured is not None and chosen == configured)


def test_a_stale_upstream_says_how_to_fix_it():
    problem = choose(["alpha", "beta"], "gone", None).problem
    assert "`ctx sync alpha` makes alpha the upstream" in problem
    assert "`git config --unset branch.main.remote`" in problem


def test_config_is_read_as_git_writes_it(tmp_path):
    git = tmp_path / ".git"
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (git / "config").write_text('[core]\n\tbare = false\n[remote "alpha"]\n\turl = /a\n'
                                '[remote "be ta"]\n\turl = /b\n; a comment\n[branch "main"]\n'
                                '\tremote = be ta\n\tmerge = refs/heads/main\n')
    answer = upstream(tmp_path)
    assert answer.remotes == ["alpha", "be ta"] and answer.remote == "be ta" and answer.is_set
    assert upstream(tmp_path / "nowhere").remotes == []


# --- every command, in each case ---------------------------------------------------------------

def answers(m: Machine) -> dict:
    """What each command says about the remote it would use."""
    said = {}
    status = json.loads(m.ok("status", "--json").stdout)
    said["status"] = status["remote"]
    said["status_problem"] = status["remote_problem"]
    for command in ("pull", "push", "sync"):
        result = m.run(command)
        said[command] = (result.exit_code, result.stderr.strip())
    repo = open_repo(m.root)
    assert repo is not None
    state = sync_state(repo)
    said["view"] = None if state is None else (state.remote, state.problem)
    said["auto"] = trigger.auto_remote(m.root)
    brief = m.ok("brief").stdout.splitlines()
    said["brief"] = next((line.strip() for line in brief if line.strip().startswith("sync:")), None)
    return said


def machine(tmp_path, *remotes: str) -> Machine:
    m = Machine(tmp_path / "m", "M")
    m.ok("set", "k", "v")
    for name in remotes:
        m.ok("remote", "add", name, str(make_bare(tmp_path / f"{name}.git")))
    return m


def test_no_remote(tmp_path):
    said = answers(machine(tmp_path))
    assert said["status"] is None and "no remote to use" in said["status_problem"]
    for command in ("pull", "push", "sync"):
        assert said[command][0] == 2 and "ctx remote add" in said[command][1]
    assert said["view"] is None and said["auto"] is None and said["brief"] is None


def test_one_remote_is_the_one_whatever_its_name(tmp_path):
    m = machine(tmp_path, "alpha")
    assert json.loads(m.ok("status", "--json").stdout)["remote"] == "alpha"
    assert sync_state(open_repo(m.root)).remote == "alpha"
    assert trigger.auto_remote(m.root) is None  # no upstream yet: auto-sync waits for a first sync
    assert m.ok("sync").stdout.endswith("push: sent 1 commit to alpha\n")
    said = answers(m)
    assert said["status"] == said["auto"] == "alpha" and said["view"] == ("alpha", None)
    assert all(said[c][0] == 0 for c in ("pull", "push", "sync"))
    assert said["brief"].startswith("sync: in step with alpha")


def test_several_remotes_without_an_upstream_ask_for_a_name_everywhere(tmp_path):
    m = machine(tmp_path, "alpha", "beta")
    said = answers(m)
    assert said["status"] is None and said["status_problem"].startswith("several remotes (alpha, beta)")
    assert "remote: none (several remotes (alpha, beta)" in m.ok("status").stdout
    for command in ("pull", "push", "sync"):
        code, line = said[command]
        assert code == 2 and line.startswith("ctx: several remotes (alpha, beta) and no upstream"), line
    assert said["view"] == (None, said["status_problem"]) and said["auto"] is None
    assert said["brief"] == "sync: no remote chosen: see `ctx status`"
    page = m.ok("view", "--out", str(tmp_path / "page.html"))
    assert page.exit_code == 0 and "no remote chosen: several remotes" in (tmp_path / "page.html").read_text()
    # naming one makes it the upstream: then every command uses it
    assert m.ok("sync", "beta").stdout.endswith("push: sent 1 commit to beta\n")
    said = answers(m)
    assert said["status"] == said["auto"] == "beta" and said["view"] == ("beta", None)
    assert all(said[c][0] == 0 for c in ("pull", "push", "sync")), said
    assert said["brief"].startswith("sync: in step with beta")


def test_several_remotes_with_origin_use_origin(tmp_path):
    m = machine(tmp_path, "alpha", "origin")
    said = answers(m)
    assert said["status"] == "origin" and said["view"] == ("origin", None)
    assert all(said[c][0] == 0 for c in ("pull", "push", "sync")), said
    assert said["auto"] == "origin"  # the push made it the upstream


def test_an_upstream_wins_over_origin(tmp_path):
    m = machine(tmp_path, "alpha", "origin")
    m.ok("push", "alpha")
    said = answers(m)
    assert said["status"] == said["auto"] == "alpha" and said["view"] == ("alpha", None)
    assert said["sync"][0] == 0


def test_a_stale_upstream_is_reported_with_its_fix_everywhere(tmp_path):
    m = machine(tmp_path, "alpha", "origin")
    m.ok("sync", "alpha")
    m.git("config", "branch.main.remote", "gone")
    m.ok("config", "sync-auto", "true")
    said = answers(m)
    assert said["status"] is None
    assert said["status_problem"].startswith("main's upstream 'gone' is no remote here; have alpha, origin")
    for command in ("pull", "push", "sync"):
        code, line = said[command]
        assert code == 2 and "'gone' is no remote here" in line and "ctx sync alpha" in line, line
    assert said["view"] == (None, said["status_problem"]) and said["auto"] is None
    assert said["brief"] == "sync: no remote chosen: see `ctx status`"
    notice = auto.pull_first(m.root)
    assert notice.startswith("auto-sync did not pull (main's upstream 'gone' is no remote here")
    m.ok("set", "k2", "v")
    assert not trigger.after_write(m.root)  # no background push to a remote that is not there
    # the fix it names works
    m.ok("sync", "alpha")
    assert answers(m)["status"] == "alpha"


def test_a_stale_upstream_without_any_remote_says_add_one(tmp_path):
    m = machine(tmp_path)
    m.git("config", "branch.main.remote", "gone")
    said = answers(m)
    assert said["status"] is None and "ctx remote add origin URL" in said["status_problem"]
    assert said["sync"][0] == 2 and "'gone' is no remote here" in said["sync"][1]
    assert said["view"] == (None, said["status_problem"])


def test_a_named_remote_that_does_not_exist_is_not_found(tmp_path):
    m = machine(tmp_path, "alpha")
    for command in ("pull", "push", "sync"):
        result = m.run(command, "beta")
        assert result.exit_code == 1 and "no remote named 'beta' (have: alpha)" in result.stderr
