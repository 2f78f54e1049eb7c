"""The git layer's commits: one commit per write in the context root's own
repository, authors, messages, reads that write nothing, outside changes,
invalid store files, nested repositories, GIT_* shielding, concurrent
writers, the lock file, ``ctx doctor`` and background packing."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hooks.unsafe_paths import IGNORE_LINES, forbidden
from support.gitutil import (
    author,
    changed_paths,
    commit_count,
    commit_details,
    commit_ids,
    committer,
    disk_paths,
    fsck,
    git,
    git_out,
    has_commits,
    log_rows,
    loose_objects,
    message,
    parents,
    run_ctx,
    show_file,
    status_lines,
    subject,
    trailers,
    tree_paths,
    wait_for,
)
from support.stores import make_entry, snapshot, store_path, write_store_file

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8" * 2 + "i9J0"  # a GitHub token's shape: ghp_ and 36 characters
OP_TRAILER = "Ctx-Operation"


def git_init_outer(path: Path) -> None:
    """A project repository made with the real git CLI, with one commit."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README").write_text("project\n")
    git(path, "add", "README")
    git(path, "-c", "user.name=Project", "-c", "user.email=p@example.invalid",
        "commit", "-q", "--no-verify", "-m", "project start")


def entry_in_head(root: Path, key: str, store: str = "shared", rev: str = "HEAD") -> dict | None:
    data = json.loads(show_file(root, rev, f"memory/{store}.json"))
    return data["entries"].get(key)


# --- one commit per write -----------------------------------------------------------

def test_first_write_on_a_fresh_root_is_one_commit_on_main(run, root):
    result = run("set", "k", "v")
    assert result.exit_code == 0, result.output
    assert commit_count(root) == 1
    assert git_out(root, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert git_out(root, "for-each-ref", "--format=%(refname)").split() == ["refs/heads/main"]
    assert {".gitignore", "RULES.md", "memory/shared.json"} <= set(tree_paths(root))
    assert sorted(tree_paths(root)) == disk_paths(root)  # everything ctx wrote, in one commit
    assert status_lines(root) == []
    assert subject(root) == "set shared/k: v"


def test_init_is_one_commit_and_again_none(run, root):
    assert run("init").exit_code == 0
    assert commit_count(root) == 1
    assert subject(root) == "init: context root"
    assert dict(trailers(message(root)))[OP_TRAILER] == "init"
    assert {".gitignore", "RULES.md"} <= set(tree_paths(root))
    assert not [p for p in tree_paths(root) if p.startswith("memory/")]
    assert sorted(tree_paths(root)) == disk_paths(root)
    before = snapshot(root)
    result = run("init")
    assert result.exit_code == 0, result.output
    assert commit_count(root) == 1
    assert snapshot(root) == before


WRITES = [
    (["set", "k", "new", "value", "--tag", "t"], "set shared/k: new value",
     [("Ctx-Operation", "set"), ("Ctx-Store", "shared"), ("Ctx-Key", "k")]),
    (["amend", "k", "the", "port", "is", "8443"], "amend shared/k: the port is 8443",
     [("Ctx-Operation", "amend"), ("Ctx-Store", "shared"), ("Ctx-Key", "k"),
      ("Ctx-Status", "amended")]),
    (["supersede", "k", "--by", "k2", "--note", "load test"], "supersede shared/k by k2",
     [("Ctx-Operation", "supersede"), ("Ctx-Store", "shared"), ("Ctx-Key", "k"),
      ("Ctx-Status", "superseded")]),
    (["resolve", "k", "--note", "fixed upstream"], "resolve shared/k: fixed upstream",
     [("Ctx-Operation", "resolve"), ("Ctx-Store", "shared"), ("Ctx-Key", "k"),
      ("Ctx-Status", "resolved")]),
    (["basis", "k", "verified"], "basis shared/k: verified",
     [("Ctx-Operation", "basis"), ("Ctx-Store", "shared"), ("Ctx-Key", "k")]),
    (["delete", "k"], "delete shared/k",
     [("Ctx-Operation", "delete"), ("Ctx-Store", "shared"), ("Ctx-Key", "k")]),
    (["set", "--store", "operator", "pref", "one question at a time"],
     "set operator/pref: one question at a time",
     [("Ctx-Operation", "set"), ("Ctx-Store", "operator"), ("Ctx-Key", "pref")]),
    (["delete", "a", "--store", "agent"], "delete agent/a",
     [("Ctx-Operation", "delete"), ("Ctx-Store", "agent"), ("Ctx-Key", "a")]),
]


@pytest.mark.parametrize("args, expected_subject, expected_trailers", WRITES,
                         ids=[w[0][0] + "-" + w[2][1][1] for w in WRITES])
def test_each_write_is_exactly_one_commit(run, root, args, expected_subject, expected_trailers):
    assert run("set", "k", "old value").exit_code == 0
    assert run("set", "a", "agent note", "--store", "agent").exit_code == 0
    before = commit_ids(root)
    result = run(*args, author="Agent One")
    assert result.exit_code == 0, result.output
    after = commit_ids(root)
    assert len(after) == len(before) + 1
    assert after[1:] == before
    assert parents(root, after[0]) == [before[0]]
    assert subject(root) == expected_subject
    assert trailers(message(root)) == expected_trailers
    store = dict(expected_trailers)["Ctx-Store"]
    assert changed_paths(root, "HEAD") == [f"memory/{store}.json"]
    assert author(root) == ("Agent One", "agent-one@ctx.invalid")
    assert status_lines(root) == []
    # the commit holds exactly what is on disk
    assert show_file(root, "HEAD", f"memory/{store}.json") == store_path(root, store).read_text()


def test_revert_is_one_commit(run, root):
    assert run("set", "k", "one").exit_code == 0
    assert run("set", "k", "two").exit_code == 0
    count = commit_count(root)
    result = run("revert", "HEAD")
    assert result.exit_code == 0, result.output
    assert commit_count(root) == count + 1
    assert changed_paths(root, "HEAD") == ["memory/shared.json"]
    assert entry_in_head(root, "k")["value"] == "one"
    assert status_lines(root) == []


def test_library_writes_are_one_commit_each(make_context, root):
    ctx = make_context(author="Agent Two", git=True)
    ctx.init()
    ctx.set("k", "v", tags=["decision"])
    ctx.amend("k", "more")
    ctx.supersede("k", "k2")
    ctx.resolve("k", note="done")
    ctx.set_basis("k", "reported")
    ctx.delete("k")
    ops = [dict(trailers(message(root, c)))[OP_TRAILER] for c in reversed(commit_ids(root))]
    assert ops == ["init", "set", "amend", "supersede", "resolve", "basis", "delete"]
    assert {author(root, c) for c in commit_ids(root)} == {("Agent Two", "agent-two@ctx.invalid")}


def test_a_write_that_changes_nothing_makes_no_commit(run, make_context, root):
    assert run("set", "k", "v", author="Agent One").exit_code == 0
    assert run("basis", "k", "verified", author="Agent One").exit_code == 0
    count = commit_count(root)
    before = snapshot(root)
    # the same basis by the same author: the entry is unchanged
    result = run("basis", "k", "verified", author="Agent One")
    assert result.exit_code == 0, result.output
    assert commit_count(root) == count
    assert snapshot(root) == before  # not even last_updated moved
    # a transaction whose edits change nothing
    from ctx.changes import Edit
    ctx = make_context(author="Agent One", git=True)
    entry = ctx.get("k")
    same = [Edit("shared", "k", entry, dict(entry))]
    assert ctx.transact("set", ["shared"], lambda files: same) == []
    assert ctx.transact("set", ["shared", "agent"], lambda files: []) == []
    assert commit_count(root) == count
    assert snapshot(root) == before


def test_a_failed_write_on_an_existing_root_changes_nothing(run, root):
    assert run("set", "k", "v").exit_code == 0
    before = snapshot(root)
    count = commit_count(root)
    assert run("delete", "missing").exit_code == 1
    assert run("amend", "missing", "note").exit_code == 1
    assert run("resolve", "missing").exit_code == 1
    refused = run("set", "token_key", SECRET)
    assert refused.exit_code == 4
    assert SECRET not in refused.output
    assert run("basis", "k", "nonsense").exit_code == 2
    assert commit_count(root) == count
    assert snapshot(root) == before


def test_a_failed_first_write_leaves_no_uncommitted_files(run, root):
    assert run("delete", "missing").exit_code == 1
    result = run("set", "k", "v")
    assert result.exit_code == 0, result.output
    assert commit_count(root) == 1, log_rows(root)
    assert author(root) == ("operator", "operator@ctx.invalid")


# --- authors ---------------------------------------------------------------------------

def test_author_is_ctx_author_with_a_derived_address(run, root):
    assert run("set", "k", "v", author="  Agent Ünö 7  ").exit_code == 0
    assert author(root) == ("Agent Ünö 7", "agent-n-7@ctx.invalid")
    assert committer(root) == author(root)
    from support.stores import read_entries
    assert read_entries(root)["k"]["author"] == "Agent Ünö 7"


def test_author_email_from_ctx_author_email(run, root):
    result = run("set", "k", "v", author="Agent One",
                 env={"CTX_AUTHOR_EMAIL": " one@agents.example.org "})
    assert result.exit_code == 0, result.output
    assert author(root) == ("Agent One", "one@agents.example.org")
    assert committer(root) == ("Agent One", "one@agents.example.org")


def test_blank_ctx_author_is_unset(run, root):
    assert run("set", "k", "v", author="   ").exit_code == 0
    assert author(root) == ("operator", "operator@ctx.invalid")


def test_without_ctx_author_the_operator_ignores_git_author_env(run, root):
    # conftest exports GIT_AUTHOR_NAME/EMAIL and GIT_COMMITTER_*: libgit2 ignores them
    assert os.environ["GIT_AUTHOR_NAME"] == "Test Operator"
    assert run("set", "k", "v").exit_code == 0
    assert author(root) == ("operator", "operator@ctx.invalid")
    assert committer(root) == ("operator", "operator@ctx.invalid")


def test_without_ctx_author_the_repository_git_config_identity(run, root):
    assert run("init").exit_code == 0
    git(root, "config", "user.name", "Jane Operator")
    git(root, "config", "user.email", "jane@example.org")
    assert run("set", "k", "v").exit_code == 0
    assert author(root) == ("Jane Operator", "jane@example.org")
    assert committer(root) == ("Jane Operator", "jane@example.org")
    # CTX_AUTHOR still wins over the configuration
    assert run("set", "k", "w", author="Agent One").exit_code == 0
    assert author(root) == ("Agent One", "agent-one@ctx.invalid")


def test_git_config_name_without_email_derives_the_address(run, root):
    assert run("init").exit_code == 0
    git(root, "config", "user.name", "Jane Q. Operator")
    assert run("set", "k", "v").exit_code == 0
    assert author(root) == ("Jane Q. Operator", "jane-q-operator@ctx.invalid")


@pytest.mark.slow
def test_global_git_config_identity_in_a_real_process(root):
    home = Path(os.environ["HOME"])
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Global Person\n\temail = global@example.org\n")
    done = run_ctx("set", "k", "v")
    assert done.returncode == 0, done.stderr
    assert author(root) == ("Global Person", "global@example.org")


@pytest.mark.parametrize("env", [{"CTX_AUTHOR": "Bob <bob@example.org>"},
                                 {"CTX_AUTHOR": "Bob", "CTX_AUTHOR_EMAIL": "<bob@example.org>"}],
                         ids=["name", "email"])
def test_author_with_angle_brackets_is_handled(run, root, env):
    """libgit2 refuses '<' and '>' in a signature: either ctx cleans the identity up, or the
    write fails cleanly (a ctx error, exit 6) and leaves nothing written or uncommitted."""
    assert run("init").exit_code == 0
    before = snapshot(root / "memory")
    result = run("set", "k", "v", author=env["CTX_AUTHOR"], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    if result.exit_code == 0:  # accepted, with a cleaned-up identity: one commit, nothing left
        assert commit_count(root) == 2
        assert status_lines(root) == []
        assert "<" not in author(root)[0]
    else:  # refused cleanly: a ctx error, nothing written
        assert result.exit_code == 6 and result.stderr.startswith("ctx: ")
        assert snapshot(root / "memory") == before
        assert status_lines(root) == []


def test_external_change_author_is_system(run, root, write_store):
    assert run("set", "k", "v").exit_code == 0
    write_store("shared", {"hand": make_entry("typed by hand")})
    assert run("set", "other", "x", author="Agent One").exit_code == 0
    assert author(root, "HEAD~1") == ("system", "system@ctx.invalid")
    assert committer(root, "HEAD~1") == ("system", "system@ctx.invalid")
    assert author(root, "HEAD") == ("Agent One", "agent-one@ctx.invalid")


# --- commit messages ----------------------------------------------------------------------

def test_subject_is_one_bounded_line_of_the_value(run, root):
    value = "first line of a long value\n\nsecond   paragraph " + "word " * 40
    assert run("set", "k", value).exit_code == 0
    text = message(root)
    head, _, rest = text.partition("\n")
    assert head.startswith("set shared/k: first line of a long value second paragraph word")
    assert head.endswith(" ...")
    assert len(head) <= len("set shared/k: ") + 60 + 4
    assert rest.startswith("\n")  # a blank line, then the trailers
    assert trailers(text) == [("Ctx-Operation", "set"), ("Ctx-Store", "shared"), ("Ctx-Key", "k")]


@pytest.mark.parametrize("args", [
    ["set", "k", SECRET, "--force"],
    ["set", "k", f"token = {SECRET}", "--force", "--derivation", "pasted"],
    ["amend", "k", f"the token is {SECRET}", "--force"],
    ["resolve", "k", "--note", f"rotated {SECRET}", "--force"],
    ["supersede", "k", "--by", "k2", "--note", f"see {SECRET}", "--force"],
], ids=["set", "set-assignment", "amend", "resolve", "supersede"])
def test_messages_never_quote_a_value_stored_with_force(run, root, args):
    assert run("set", "k", "plain").exit_code == 0
    refused = run(*[a for a in args if a != "--force"])
    assert refused.exit_code == 4  # refused without --force: the test value is a credential
    result = run(*args)
    assert result.exit_code == 0, result.output
    stored = json.dumps(json.loads(store_path(root, "shared").read_text())["entries"]["k"])
    assert SECRET in stored  # it was stored…
    assert SECRET in show_file(root, "HEAD", "memory/shared.json")  # …and committed…
    everything = git_out(root, "log", "--format=%B")
    assert SECRET not in everything  # …but no message quotes it, not even a good part of it
    for start in range(0, len(SECRET) - 12):
        assert SECRET[start:start + 12] not in everything
    op = args[0]
    assert subject(root).startswith(f"{op} shared/k")
    # reverting the forced write quotes nothing either
    assert run("revert", "HEAD").exit_code == 0
    assert SECRET[4:16] not in git_out(root, "log", "--format=%B")


# --- reads write nothing ---------------------------------------------------------------------

READS = [
    ["get", "k"], ["get", "k", "--all", "--json"], ["get", "k", "--at", "HEAD~1"],
    ["get", "k", "-v", "--store", "shared"], ["search", "val"], ["search", "--json"],
    ["list"], ["list", "--keys-only", "--store", "agent"], ["brief"], ["brief", "--json"],
    ["start"], ["history", "k"], ["history", "k", "--json", "--all-stores"], ["log"],
    ["log", "k", "--json"], ["log", "--author", "Agent", "-n", "2"], ["diff"], ["diff", "HEAD~2"],
    ["diff", "HEAD~3", "HEAD", "--json"], ["diff", "--since", "2020-01-01"],
    ["doctor", "--check"], ["get", "missing"], ["history", "missing"], ["get", "k", "--at", "zzz"],
    ["--help"], ["--version"],
]


@pytest.fixture
def populated(run, root, write_store):
    """A context with a few commits and an outside edit not committed yet."""
    assert run("init", "--focus", "Ship the fix").exit_code == 0
    assert run("set", "k", "value one", "--tag", "decision", author="Agent One").exit_code == 0
    assert run("set", "k", "value two", author="Agent Two").exit_code == 0
    assert run("set", "a", "agent note", "--store", "agent", author="Agent One").exit_code == 0
    assert run("amend", "k", "a note").exit_code == 0
    write_store("shared", {"hand": make_entry("typed by hand", tags=["decision"])})
    (root / "sessions" / "2026-01-01_session.md").write_text("**Agent:** Agent One\n\n## Done\n")
    return root


def test_reads_change_no_byte_and_make_no_commit(run, populated):
    root = populated
    before = snapshot(root)
    count = commit_count(root)
    assert len(before) > 40 and any("/.git/objects/" in p for p in before)
    for args in READS:
        result = run(*args, author="Agent One")
        expected = 1 if "missing" in args or "zzz" in args or "--check" in args else 0
        assert result.exit_code == expected, (args, result.exit_code, result.output)
        assert snapshot(root) == before, args
        assert commit_count(root) == count, args
    assert len(status_lines(root)) == 2  # the outside edits are still not committed


@pytest.mark.slow
def test_reads_in_a_real_process_change_nothing(populated):
    root = populated
    before = snapshot(root)
    for args in (["start"], ["history", "k"], ["diff", "HEAD~1"]):
        done = run_ctx(*args)
        assert done.returncode == 0, (args, done.stderr)
    assert snapshot(root) == before


def test_start_on_a_missing_root_writes_nothing(run, root):
    for args in (["start"], ["brief"], ["list"], ["search", "x"], ["log"]):
        result = run(*args)
        assert result.exit_code == 0, (args, result.output)
        assert not root.exists(), args
    assert run("get", "k").exit_code == 1
    assert run("history", "k").exit_code == 1
    assert run("diff").exit_code == 1
    assert not root.exists()


def test_start_on_a_root_without_repository_creates_none(run, root):
    assert run("set", "k", "v", env={"CTX_NO_GIT": "1"}).exit_code == 0
    assert not (root / ".git").exists()
    before = snapshot(root)
    for args in (["start"], ["brief"], ["get", "k"], ["log"], ["doctor", "--check"]):
        run(*args)
    assert run("history", "k").exit_code == 1
    assert snapshot(root) == before
    assert not (root / ".git").exists()


# --- outside changes --------------------------------------------------------------------------

def test_outside_edit_is_committed_as_found_before_the_write(run, root, write_store):
    assert run("set", "k", "v").exit_code == 0
    write_store("shared", {"hand": make_entry("typed by hand")})
    edited = store_path(root).read_text()
    before = commit_ids(root)
    result = run("set", "other", "by ctx", author="Agent One")
    assert result.exit_code == 0, result.output
    after = commit_ids(root)
    assert len(after) == len(before) + 2 and after[2:] == before
    # first: the edit exactly as found, by system
    assert subject(root, "HEAD~1") == "external change: memory/shared.json"
    assert dict(trailers(message(root, "HEAD~1")))[OP_TRAILER] == "external"
    assert author(root, "HEAD~1") == ("system", "system@ctx.invalid")
    assert changed_paths(root, "HEAD~1") == ["memory/shared.json"]
    assert show_file(root, "HEAD~1", "memory/shared.json") == edited
    # then the write, which kept the outside entry
    assert subject(root) == "set shared/other: by ctx"
    assert entry_in_head(root, "hand")["value"] == "typed by hand"
    assert entry_in_head(root, "other")["value"] == "by ctx"
    assert status_lines(root) == []


def test_outside_summary_deletion_and_other_store_are_committed(run, root, write_store):
    assert run("set", "k", "v").exit_code == 0
    assert run("set", "a", "x", "--store", "agent").exit_code == 0
    (root / "sessions" / "2026-01-02_session.md").write_text("**Agent:** Agent One\n")
    store_path(root, "agent").unlink()
    write_store("operator", {"pref": make_entry("short answers", source="operator")})
    (root / "notes.txt").write_text("not ctx's")  # not a managed file: never committed
    (root / "memory" / "scratch.txt").write_text("not a store")
    count = commit_count(root)
    assert run("set", "k", "w").exit_code == 0
    assert commit_count(root) == count + 2
    assert sorted(changed_paths(root, "HEAD~1")) == [
        "memory/agent.json", "memory/operator.json", "sessions/2026-01-02_session.md"]
    assert author(root, "HEAD~1")[0] == "system"
    paths = tree_paths(root)
    assert "memory/agent.json" not in paths
    assert "notes.txt" not in paths and "memory/scratch.txt" not in paths
    assert sorted(status_lines(root)) == ["?? memory/scratch.txt", "?? notes.txt"]


def test_outside_edits_are_never_committed_by_a_write_that_fails(run, root, write_store):
    assert run("set", "k", "v").exit_code == 0
    write_store("shared", {"hand": make_entry("typed by hand")})
    count = commit_count(root)
    # a refused write happens before the lock: the outside edit waits for the next write
    assert run("set", "t", SECRET).exit_code == 4
    assert commit_count(root) == count
    assert run("set", "k", "w").exit_code == 0
    assert commit_count(root) == count + 2


# --- a store file that is not valid JSON -----------------------------------------------------

BROKEN = b'{"type": "shared", "version": "1", "entries": {"k": {"value": "half'


def test_invalid_store_is_never_overwritten_nor_committed(run, root):
    assert run("set", "k", "good").exit_code == 0
    good = show_file(root, "HEAD", "memory/shared.json")
    store_path(root).write_bytes(BROKEN)
    count = commit_count(root)
    for args in (["set", "k2", "v"], ["set", "k", "again"], ["delete", "k"], ["amend", "k", "n"],
                 ["revert", "HEAD"]):
        result = run(*args)
        assert result.exit_code == 3, (args, result.output)
        assert "not valid JSON" in result.stderr
        assert store_path(root).read_bytes() == BROKEN
    assert run("get", "k").exit_code == 3
    assert commit_count(root) == count
    # a write to another store goes through; the broken file is left out of it
    result = run("set", "a", "1", "--store", "agent")
    assert result.exit_code == 0, result.output
    assert commit_count(root) == count + 1
    assert changed_paths(root, "HEAD") == ["memory/agent.json"]
    assert show_file(root, "HEAD", "memory/shared.json") == good
    assert store_path(root).read_bytes() == BROKEN
    for commit in commit_ids(root):
        if "memory/shared.json" in tree_paths(root, commit):
            assert json.loads(show_file(root, commit, "memory/shared.json"))
    # restored by hand to the committed version: the next write is one commit again
    store_path(root).write_text(good)
    assert run("set", "k3", "v").exit_code == 0
    assert commit_count(root) == count + 2
    assert entry_in_head(root, "k")["value"] == "good"
    assert status_lines(root) == []


def test_invalid_store_before_the_first_commit_is_never_committed(run, root):
    (root / "memory").mkdir(parents=True)
    store_path(root, "agent").write_bytes(b"not json at all")
    assert run("set", "k", "v").exit_code == 0
    assert "memory/agent.json" not in tree_paths(root)
    assert store_path(root, "agent").read_bytes() == b"not json at all"
    assert status_lines(root) == ["?? memory/agent.json"]


# --- nested repositories and GIT_* in the environment -------------------------------------

def test_root_inside_another_repository_commits_only_to_its_own(run, tmp_path):
    outer = tmp_path / "project"
    git_init_outer(outer)
    outer_head = git_out(outer, "rev-parse", "HEAD")
    outer_git = snapshot(outer / ".git")
    inner = outer / "docs" / "ctx root"
    env = {"CTX_HOME": str(inner)}
    assert run("init", env=env).exit_code == 0
    assert run("set", "k", "v", env=env, author="Agent One").exit_code == 0
    assert run("amend", "k", "n", env=env).exit_code == 0
    (inner / "sessions" / "s.md").write_text("summary\n")
    assert run("doctor", env=env).exit_code == 0
    assert run("revert", "HEAD~2", env=env).exit_code == 4  # the set: refused, amended since
    assert (inner / ".git").is_dir()
    assert commit_count(inner) == 4  # init, set, amend, the summary (doctor)
    assert git_out(inner, "rev-parse", "--show-toplevel").strip() == str(inner)
    # the project repository got nothing: no commit, no object, no index change
    assert git_out(outer, "rev-parse", "HEAD") == outer_head
    assert commit_count(outer) == 1
    assert snapshot(outer / ".git") == outer_git


@pytest.mark.slow
def test_root_inside_another_repository_in_a_real_process(tmp_path):
    outer = tmp_path / "project"
    git_init_outer(outer)
    outer_git = snapshot(outer / ".git")
    inner = outer / "ctx"
    done = run_ctx("set", "k", "v", env={"CTX_HOME": str(inner)})
    assert done.returncode == 0, done.stderr
    assert commit_count(inner) == 1
    assert snapshot(outer / ".git") == outer_git


def test_a_repository_whose_work_tree_is_elsewhere_is_refused(run, root, tmp_path):
    assert run("set", "k", "v").exit_code == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git(root, "config", "core.worktree", str(elsewhere))
    count = len(git_out(root, "--work-tree", str(root), "rev-list", "HEAD").split())
    result = run("set", "k", "w")
    assert result.exit_code == 6, result.output
    assert "another work tree" in result.stderr
    assert len(git_out(root, "--work-tree", str(root), "rev-list", "HEAD").split()) == count
    assert list(elsewhere.iterdir()) == []


@pytest.fixture
def decoy(tmp_path):
    """Another repository that GIT_DIR / GIT_WORK_TREE point at."""
    other = tmp_path / "decoy"
    git_init_outer(other)
    env = {"GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other),
           "GIT_INDEX_FILE": str(other / ".git" / "index"),
           "GIT_OBJECT_DIRECTORY": str(other / ".git" / "objects")}
    return other, env


def test_git_dir_and_work_tree_in_the_environment_are_ignored(run, root, decoy, monkeypatch):
    other, env = decoy
    before = snapshot(other)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert run("init").exit_code == 0
    assert run("set", "k", "v", author="Agent One").exit_code == 0
    (root / "sessions" / "s.md").write_text("x\n")
    assert run("resolve", "k").exit_code == 0
    assert run("history", "k").exit_code == 0
    assert run("doctor").exit_code == 0
    assert run("revert", "HEAD").exit_code == 0
    for name in env:
        monkeypatch.delenv(name)
    assert snapshot(other) == before
    assert commit_count(other) == 1
    assert [s.split("|")[-1] for s in log_rows(root)] == [
        f"revert {commit_ids(root)[1][:8]}: resolve shared/k", "resolve shared/k",
        "external change: sessions/s.md", "set shared/k: v", "init: context root"]


@pytest.mark.slow
def test_git_env_ignored_in_a_real_process_and_by_the_background_packing(root, decoy):
    other, env = decoy
    before = snapshot(other)
    done = run_ctx("set", "k", "v", env={**env, "CTX_PACK_THRESHOLD": "1"})
    assert done.returncode == 0, done.stderr
    assert commit_count(root) == 1
    head = commit_ids(root)[0]
    packed = wait_for(lambda: head not in loose_objects(root)
                      and not (root / ".git" / "gc.pid").exists(), timeout=10)
    assert packed, loose_objects(root)
    assert snapshot(other) == before


# --- concurrent writers -------------------------------------------------------------------

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from ctx.context import Context
    from ctxgit.gitfiles.layout import state_dir
    from ctxgit.recorder import recorder_for
    root, n, go = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    while not go.exists():
        time.sleep(0.001)
    ctx = Context(root, author=f"Writer {n}", recorder_factory=recorder_for, state_of=state_dir)
    for j in range(30):
        store = ("shared", "agent", "operator")[j % 3]
        ctx.set(f"w{n}_{j:02d}", {"writer": int(n), "j": j}, store=store)
""")


@pytest.mark.slow
def test_concurrent_writers_lose_nothing_and_keep_history_linear(run, root, tmp_path):
    assert run("init").exit_code == 0
    start = commit_ids(root)
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(n), str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in (1, 2, 3)]
    go.write_text("go")
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    ids = commit_ids(root)
    assert len(ids) == len(start) + 90
    assert ids[90:] == start
    # linear: every commit has at most one parent, each the previous commit
    lines = git_out(root, "rev-list", "--parents", "HEAD").splitlines()
    for line, older in zip(lines, lines[1:] + [""], strict=True):
        own = line.split()
        assert len(own) <= 2
        if len(own) == 2:
            assert own[1] == older.split()[0]
    assert git_out(root, "rev-list", "--min-parents=2", "HEAD") == ""
    assert git_out(root, "for-each-ref", "--format=%(refname)").split() == ["refs/heads/main"]
    # one commit per write, by its writer, none of them an outside change
    expected = {(f"Writer {n}", ("shared", "agent", "operator")[j % 3], f"w{n}_{j:02d}")
                for n in (1, 2, 3) for j in range(30)}
    seen = set()
    details = commit_details(root, 90)
    assert [d[0] for d in details] == ids[:90]
    for commit, name, text, paths in details:
        t = dict(trailers(text))
        assert t[OP_TRAILER] == "set"
        seen.add((name, t["Ctx-Store"], t["Ctx-Key"]))
        assert paths == [f"memory/{t['Ctx-Store']}.json"], commit
    assert seen == expected
    # nothing lost: every value on disk and in HEAD
    for store in ("shared", "agent", "operator"):
        on_disk = json.loads(store_path(root, store).read_text())["entries"]
        in_head = json.loads(show_file(root, "HEAD", f"memory/{store}.json"))["entries"]
        assert on_disk == in_head
        assert len(on_disk) == 30
    assert status_lines(root) == []
    fsck(root)


# --- the lock file and temporary files are never committed ----------------------------------

@pytest.mark.slow
def test_lock_is_never_committed_across_a_random_sequence(make_context, root):
    from ctx.errors import CtxError
    from ctxgit.plumbing.repo import is_managed
    from ctxgit.porcelain.doctor import examine
    from ctxgit.porcelain.revert import revert
    rnd = random.Random(20261130)
    authors = [None, "Agent One", "Agent Two"]
    keys = ["k1", "k2", "k3", "k4", "current_focus"]
    stores = ["shared", "agent", "operator"]
    make_context(git=True).init()
    done: dict[str, int] = {}
    for step in range(180):
        ctx = make_context(author=rnd.choice(authors), git=True)
        store, key = rnd.choice(stores), rnd.choice(keys)
        action = rnd.choice(["set", "set", "set", "set", "amend", "supersede", "resolve", "basis",
                             "delete", "revert", "outside", "lock", "tmp", "doctor", "gitignore"])
        try:
            if action == "set":
                ctx.set(key, rnd.choice(["a", "b c", {"n": step}, [1, 2], step]), store=store,
                        tags=rnd.choice([None, ["decision"], []]))
            elif action == "amend":
                ctx.amend(key, f"note {step}", store=store)
            elif action == "supersede":
                ctx.supersede(key, rnd.choice(keys[:4]), store=store)
            elif action == "resolve":
                ctx.resolve(key, note=rnd.choice([None, "done"]), store=store)
            elif action == "basis":
                ctx.set_basis(key, rnd.choice(["verified", "reported", "inferred"]), store=store)
            elif action == "delete":
                ctx.delete(key, store=store)
            elif action == "revert":
                revert(ctx, rnd.choice(["HEAD", "HEAD~1", "HEAD~3"]))
            elif action == "outside":
                write_store_file(root, store, {f"hand{step}": make_entry(f"by hand {step}")})
            elif action == "lock":
                git(root, "add", "-f", "memory/.lock")
            elif action == "tmp":
                (root / "memory" / f".{store}.json.x{step}.tmp").write_text("{half")
            elif action == "doctor":
                examine(ctx, repair=True)
            elif action == "gitignore":
                (root / ".gitignore").write_text("# mine\n")
        except CtxError:
            action += "-refused"
        done[action] = done.get(action, 0) + 1
    assert done.get("set", 0) > 20 and done.get("lock", 0) > 3 and done.get("revert", 0) > 2
    make_context(git=True).set("final", "v")
    ids = commit_ids(root)
    assert len(ids) > 60
    for commit in ids:
        paths = tree_paths(root, commit)
        assert "memory/.lock" not in paths, commit
        assert not [p for p in paths if forbidden(p)], (commit, paths)
        assert all(is_managed(p) for p in paths), (commit, paths)
    assert "memory/.lock" not in git_out(root, "ls-files", "--cached").split()
    assert (root / "memory" / ".lock").exists()
    for line in IGNORE_LINES:
        assert line in (root / ".gitignore").read_text().splitlines()
    assert status_lines(root) == []
    assert git_out(root, "rev-list", "--min-parents=2", "HEAD") == ""
    fsck(root)


def test_a_lock_staged_by_hand_is_taken_out_by_the_next_write(run, root):
    assert run("set", "k", "v").exit_code == 0
    (root / "memory" / ".shared.json.abc.tmp").write_text("{")
    git(root, "add", "-f", "memory/.lock", "memory/.shared.json.abc.tmp")
    assert "memory/.lock" in git_out(root, "ls-files")
    assert run("set", "k", "w").exit_code == 0
    assert sorted(tree_paths(root)) == disk_paths(root)
    assert "memory/.lock" not in tree_paths(root)
    assert "memory/.lock" not in git_out(root, "ls-files")
    assert ".tmp" not in git_out(root, "ls-files")


# --- ctx doctor -------------------------------------------------------------------------------

def test_doctor_on_an_orderly_context(run, root):
    assert run("set", "k", "v").exit_code == 0
    before = snapshot(root)
    result = run("doctor")
    assert result.exit_code == 0, result.output
    assert "is in order" in result.output
    assert run("doctor", "--json").stdout.strip() == "[]"
    assert snapshot(root) == before


def test_doctor_repairs_missing_gitignore_lines(run, root):
    assert run("set", "k", "v").exit_code == 0
    (root / ".gitignore").write_text("# mine\nnotes/\nmemory/.lock\n")
    before = snapshot(root)
    count = commit_count(root)
    check = run("doctor", "--check")
    assert check.exit_code == 1
    assert "[repairable]" in check.output and ".gitignore lacks" in check.output
    assert "*.tmp" in check.output and "memory/.lock" not in check.output.split("lacks", 1)[1]
    assert snapshot(root) == before  # --check changes nothing
    result = run("doctor", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows and all(r["repaired"] and r["fixable"] for r in rows)
    lines = (root / ".gitignore").read_text().splitlines()
    assert lines[:3] == ["# mine", "notes/", "memory/.lock"]
    assert all(line in lines for line in IGNORE_LINES)
    assert commit_count(root) > count
    assert show_file(root, "HEAD", ".gitignore") == (root / ".gitignore").read_text()
    assert author(root) == ("system", "system@ctx.invalid")
    assert status_lines(root) == []
    again = run("doctor")
    assert again.exit_code == 0 and "is in order" in again.output


def test_doctor_remakes_a_repository_a_killed_first_write_half_made(run, root, write_store):
    write_store("shared", {"hand": make_entry("kept")})
    (root / ".git" / "objects" / "pack").mkdir(parents=True)  # libgit2 died here
    (root / ".git" / "description").write_text("Unnamed repository\n")
    check = run("doctor", "--check")
    assert check.exit_code == 1 and "half made" in check.output and "[repairable]" in check.output
    assert (root / ".git" / "description").exists()  # --check changes nothing
    result = run("doctor")
    assert result.exit_code == 0, result.output
    assert has_commits(root) and entry_in_head(root, "hand")["value"] == "kept"
    assert status_lines(root) == []


@pytest.mark.parametrize("content", ["objects/ab/cdef", "refs/heads/main", "index", "ctx/state.json"])
def test_a_broken_repository_holding_anything_is_never_remade(run, root, content):
    assert run("set", "k", "v").exit_code == 0
    shutil.rmtree(root / ".git")
    (root / ".git" / content).parent.mkdir(parents=True, exist_ok=True)
    (root / ".git" / content).write_text("something\n")
    for args in (("set", "k2", "v2"), ("doctor",)):
        result = run(*args)
        assert result.exit_code == 6 and "not a usable repository" in result.output, result.output
    assert (root / ".git" / content).read_text() == "something\n"


def test_doctor_commits_uncommitted_changes(run, root, write_store):
    assert run("set", "k", "v").exit_code == 0
    write_store("shared", {"hand": make_entry("by hand")})
    (root / "sessions" / "2026-01-03_session.md").write_text("**Agent:** A\n")
    check = run("doctor", "--check")
    assert check.exit_code == 1
    assert "changed outside ctx and not committed" in check.output
    assert "memory/shared.json" in check.output and "sessions/2026-01-03_session.md" in check.output
    count = commit_count(root)
    result = run("doctor")
    assert result.exit_code == 0, result.output
    assert "[repaired]" in result.output
    assert commit_count(root) == count + 1
    assert subject(root).startswith("external change:")
    assert author(root) == ("system", "system@ctx.invalid")
    assert status_lines(root) == []
    assert entry_in_head(root, "hand")["value"] == "by hand"


def test_doctor_leaves_an_invalid_store_untouched(run, root):
    assert run("set", "k", "v").exit_code == 0
    good = show_file(root, "HEAD", "memory/shared.json")
    store_path(root).write_bytes(BROKEN)
    before = snapshot(root)
    result = run("doctor")
    assert result.exit_code == 1
    assert "[needs attention]" in result.output and "not valid JSON" in result.output
    assert snapshot(root) == before  # nothing else to repair: nothing touched at all
    # with something repairable besides, the repair leaves the store alone
    (root / ".gitignore").write_text("memory/.lock\n")
    (root / "sessions" / "s.md").write_text("x\n")
    result = run("doctor", "--json")
    assert result.exit_code == 1
    rows = json.loads(result.stdout)
    broken = [r for r in rows if "not valid JSON" in r["problem"]]
    assert broken == [{"problem": broken[0]["problem"], "repaired": False, "fixable": False}]
    assert all(r["repaired"] for r in rows if r is not broken[0])
    assert store_path(root).read_bytes() == BROKEN
    assert show_file(root, "HEAD", "memory/shared.json") == good
    assert "sessions/s.md" in tree_paths(root)
    assert status_lines(root) == [" M memory/shared.json"]


def test_doctor_does_not_claim_a_repair_it_did_not_make(run, root, write_store):
    assert run("set", "k", "v").exit_code == 0
    write_store("shared", {"t": make_entry(SECRET)})
    result = run("doctor")
    if result.exit_code == 0:  # it says all is repaired: then all must be in order
        assert status_lines(root) == []
        assert run("doctor", "--check").exit_code == 0
    else:
        assert "[repaired] changed outside ctx" not in result.output
    assert SECRET[4:20] not in result.output


def test_doctor_takes_a_staged_lock_out_of_the_index(run, root):
    assert run("set", "k", "v").exit_code == 0
    git(root, "add", "-f", "memory/.lock")
    check = run("doctor", "--check")
    assert check.exit_code == 1 and "memory/.lock" in check.output
    assert run("doctor").exit_code == 0
    assert "memory/.lock" not in git_out(root, "ls-files")
    assert run("doctor").exit_code == 0


def test_doctor_creates_the_repository_for_a_root_without_one(run, root):
    assert run("set", "k", "v", env={"CTX_NO_GIT": "1"}).exit_code == 0
    assert run("set", "a", "x", "--store", "agent", env={"CTX_NO_GIT": "1"}).exit_code == 0
    check = run("doctor", "--check")
    assert check.exit_code == 1 and "no repository" in check.output
    assert not (root / ".git").exists()
    result = run("doctor")
    assert result.exit_code == 0, result.output
    assert git_out(root, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert {".gitignore", "RULES.md", "memory/agent.json",
            "memory/shared.json"} <= set(tree_paths(root))
    assert sorted(tree_paths(root)) == disk_paths(root)
    assert status_lines(root) == []
    fsck(root)


def test_doctor_on_a_missing_root_creates_nothing(run, root):
    result = run("doctor")
    assert result.exit_code == 1
    assert "no context root" in result.output
    assert not root.exists()


# --- branch, repository health, size ----------------------------------------------------------

@pytest.mark.slow
def test_branch_is_main_whatever_the_default_branch_setting(root):
    home = Path(os.environ["HOME"])
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = trunk\n")
    probe = root.parent / "probe"
    git(root.parent, "init", "-q", str(probe))
    assert git_out(probe, "symbolic-ref", "HEAD").strip() == "refs/heads/trunk"  # the setting works
    done = run_ctx("set", "k", "v")
    assert done.returncode == 0, done.stderr
    assert git_out(root, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert git_out(root, "for-each-ref", "--format=%(refname)").split() == ["refs/heads/main"]


def test_fsck_is_clean_after_every_kind_of_write(run, root, write_store):
    assert run("init", "--focus", "f").exit_code == 0
    for args in (["set", "k", "v"], ["amend", "k", "n"], ["supersede", "k", "--by", "k2"],
                 ["resolve", "k"], ["basis", "k", "verified"],
                 ["set", "k2", "x", "--store", "agent"],
                 ["delete", "k"], ["revert", "HEAD"], ["set", "k", SECRET, "--force"]):
        assert run(*args).exit_code == 0, args
    write_store("operator", {"p": make_entry("by hand", source="operator")})
    assert run("doctor").exit_code == 0
    assert status_lines(root) == []
    fsck(root)


def test_no_packing_below_the_threshold(run, root):
    for i in range(3):
        assert run("set", f"k{i}", "v").exit_code == 0
    pack_dir = root / ".git" / "objects" / "pack"
    assert not list(pack_dir.glob("*.pack"))
    debt = int((root / ".git" / "ctx" / "loose-bytes").read_text())
    assert debt > 0
    assert run("set", "k9", "v").exit_code == 0
    assert int((root / ".git" / "ctx" / "loose-bytes").read_text()) > debt
    assert not (root / ".git" / "gc.pid").exists()


def test_a_write_past_the_threshold_packs_in_the_background(run, root):
    for i in range(5):
        assert run("set", f"k{i}", "value " * 50).exit_code == 0
    pack_dir = root / ".git" / "objects" / "pack"
    assert not list(pack_dir.glob("*.pack"))
    assert commit_ids(root)[0] in loose_objects(root)
    result = run("set", "last", "v", env={"CTX_PACK_THRESHOLD": "1"})
    assert result.exit_code == 0, result.output
    reachable = {line.split()[0]
                 for line in git_out(root, "rev-list", "--objects", "HEAD").splitlines()}

    def packed() -> bool:
        # (every reachable object, not the newest commit alone: git's prune-packed removes
        # the packed loose objects one folder after another, in no order of ctx's)
        return bool(not (root / ".git" / "gc.pid").exists() and list(pack_dir.glob("*.pack"))
                    and not reachable & set(loose_objects(root)))
    assert wait_for(packed, timeout=10), sorted(reachable & set(loose_objects(root)))
    assert (root / ".git" / "ctx" / "loose-bytes").read_text().strip() == "0"
    assert run("history", "k0").exit_code == 0
    fsck(root)


@pytest.mark.slow
def test_packings_add_a_pack_each_until_a_whole_gc_joins_them(run, root):
    from ctxgit.plumbing.pack import PACKS, pack_count
    git_dir = root / ".git"

    def settled(packs: int) -> bool:
        return not (git_dir / "gc.pid").exists() and pack_count(git_dir) == packs and not loose_objects(root)

    for n in range(1, PACKS + 1):  # each write past the threshold: its loose objects into one more pack
        result = run("set", f"k{n}", "value " * 50, env={"CTX_PACK_THRESHOLD": "1"})
        assert result.exit_code == 0, result.output
        assert wait_for(lambda n=n: settled(n), timeout=20), (n, pack_count(git_dir), loose_objects(root))
    result = run("set", "last", "v", env={"CTX_PACK_THRESHOLD": "1"})  # PACKS packs: a whole gc
    assert result.exit_code == 0, result.output
    assert wait_for(lambda: settled(1), timeout=20), (pack_count(git_dir), loose_objects(root))
    assert run("history", "k1").exit_code == 0
    fsck(root)
