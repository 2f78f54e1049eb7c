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


# --- every path that changes the index or a ref, not only the write (issue 36) ---------------

INDEX_FORMS = ["split", "v4"]


def _index_form(root, form: str) -> None:
    """Turn ``root``'s index into ``form`` the way an operator would: the setting, then git
    rewriting the index it has."""
    if form == "split":
        _git(root, "config", "core.splitIndex", "true")
        _git(root, "update-index", "--split-index")
    else:
        _git(root, "config", "index.version", "4")
        _git(root, "update-index", "--index-version", "4")
    _assert_form(root, form)


def _assert_form(root, form: str) -> None:
    if form == "split":
        assert _git(root, "rev-parse", "--shared-index-path").strip(), "the index is no longer split"
    else:
        assert (root / ".git" / "index").read_bytes()[4:8] == b"\0\0\0\x04", "the index is no longer version 4"


def _assert_gits(root, form: str, moved_by: str | None = None, reflog: bool = True) -> None:
    """What git says after a ctx command: a clean status, a clean fsck, the index still in its
    form, and HEAD's and main's reflogs ending at HEAD (``moved_by``: the newest line says so;
    ``reflog`` False: there is none, a purge expires it)."""
    assert _git(root, "status", "--short") == ""
    done = subprocess.run(["git", "-C", str(root), "fsck", "--full", "--strict", "--no-dangling"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and "error" not in done.stderr.lower(), done.stdout + done.stderr
    _assert_form(root, form)
    head = _git(root, "rev-parse", "HEAD").strip()
    for ref in ("HEAD", "refs/heads/main") if reflog else ():
        newest = _git(root, "reflog", "show", "-1", "--format=%H %gs", ref).strip()
        assert newest.split(" ", 1)[0] == head, (ref, newest)
        if moved_by is not None:
            assert moved_by in newest, (ref, newest)


@pytest.fixture
def pair(tmp_path, monkeypatch):
    """Two machines sharing a bare remote (fetch and push in process: the subject is the index)."""
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "libgit2")
    from support.syncutil import network
    bare, (a, b) = network(tmp_path, "A", "B")
    return a, b


def _ok(machine, *args: str):
    done = machine.run(*args)
    assert done.exit_code == 0, (args, done.exit_code, done.stdout, done.stderr, done.exception)
    assert "GitError" not in done.stderr
    return done


@pytest.mark.parametrize("form", INDEX_FORMS)
@pytest.mark.parametrize("command", ["sync", "pull"])
def test_a_fast_forward_keeps_gits_index(pair, form, command):
    a, b = pair
    _ok(b, "set", "a:c", "two")
    _ok(b, "sync")
    _ok(a, "sync")
    _index_form(b.root, form)
    _ok(a, "set", "a:e", "four")
    _ok(a, "sync")
    assert _ok(b, command).stdout.startswith("pull: fast-forward")
    assert b.head() == a.head()
    _assert_gits(b.root, form, moved_by="fast-forward")
    _ok(b, "set", "after", "five")
    _assert_gits(b.root, form)


@pytest.mark.parametrize("form", INDEX_FORMS)
def test_a_merge_keeps_gits_index(pair, form):
    a, b = pair
    _index_form(b.root, form)
    _ok(a, "set", "from_a", "one")
    _ok(a, "sync")
    _ok(b, "set", "from_b", "two")
    assert _ok(b, "sync").stdout.startswith("pull: merge")
    assert len(_git(b.root, "rev-list", "--parents", "-n1", "HEAD").split()) == 3
    _assert_gits(b.root, form)


@pytest.mark.parametrize("form", INDEX_FORMS)
def test_sync_continue_keeps_gits_index(pair, form):
    a, b = pair
    rules = (a.root / "RULES.md").read_text(encoding="utf-8")
    first = rules.splitlines()[0]
    for m, side in ((a, "A"), (b, "B")):
        m.write_file("RULES.md", rules.replace(first, f"{first} (edited on {side})", 1))
        m.commit_outside()
    _ok(a, "sync")
    _index_form(b.root, form)
    assert b.run("sync").exit_code == 4
    b.write_file("RULES.md", rules.replace(first, f"{first} (edited on A and B)", 1))
    assert "merge: committed" in _ok(b, "sync", "--continue").stdout
    _assert_gits(b.root, form)


@pytest.mark.parametrize("form", INDEX_FORMS)
def test_doctor_reads_gits_index(root, run, form):
    assert run("set", "k0", "first").exit_code == 0
    _index_form(root, form)
    done = run("doctor", "--check")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "cannot be read" not in done.stdout and "GitError" not in done.stderr
    (root / "junk.tmp").write_text("half a write")
    _git(root, "add", "-f", "junk.tmp")  # local state in the index: doctor names it, then takes it out
    assert "in the index but never to be committed" in run("doctor", "--check").stdout
    done = run("doctor")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "junk.tmp" not in _git(root, "ls-files")
    (root / "junk.tmp").unlink()
    _assert_gits(root, form)


@pytest.mark.parametrize("form", INDEX_FORMS)
def test_purge_keeps_gits_index(root, run, form):
    assert run("set", "leak", "sk-not-a-real-secret-but-long").exit_code == 0
    assert run("set", "k1", "kept").exit_code == 0
    _index_form(root, form)
    done = run("purge", "leak", "--yes")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "leak" not in _git(root, "show", "HEAD:memory/shared.json")
    assert "leak" not in (root / "memory" / "shared.json").read_text()
    _assert_gits(root, form, reflog=False)  # (expired: the old commits are pruned)


@pytest.mark.parametrize("form", INDEX_FORMS)
def test_revert_keeps_gits_index(root, run, form):
    assert run("set", "k0", "first").exit_code == 0
    assert run("set", "k1", "second").exit_code == 0
    _index_form(root, form)
    done = run("revert", "HEAD")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "k1" not in _git(root, "show", "HEAD:memory/shared.json")
    _assert_gits(root, form)


@pytest.mark.parametrize("form", INDEX_FORMS)
@pytest.mark.parametrize("transport", ["git", "libgit2"])
def test_a_clone_then_a_write_keeps_gits_index(pair, tmp_path, monkeypatch, form, transport):
    """The setting in the operator's own git config: the clone's first index is git's too."""
    from support.syncutil import clone_machine
    monkeypatch.setenv("CTX_GIT_TRANSPORT", transport)
    a, _ = pair
    key, value = ("core.splitIndex", "true") if form == "split" else ("index.version", "4")
    subprocess.run(["git", "config", "--global", key, value], check=True)
    c = clone_machine(a.root.parent / "remote" / "ctx.git", tmp_path / "machine C", "C")
    assert c.entry("seed") is not None
    _assert_gits(c.root, form)
    _ok(c, "set", "k", "v")
    _assert_gits(c.root, form)


@pytest.mark.parametrize("git_on_path", [True, False], ids=["git", "libgit2"])
def test_a_fast_forward_whose_branch_cannot_move_puts_the_files_back(pair, monkeypatch, git_on_path):
    """The ref moves last; when it cannot (another git holds main's lock), the files and the
    index are as they were: never a work tree changed with the index and the ref behind."""
    a, b = pair
    _ok(a, "set", "from_a", "one")
    _ok(a, "set", "agent_a", "two", "--store", "agent")
    _ok(a, "sync")
    head, files = b.head(), b.files()
    if not git_on_path:
        _without_git(monkeypatch)
    monkeypatch.setenv("CTX_GIT_RETRY_SECONDS", "0")
    lock = b.root / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")
    done = b.run("pull")
    assert done.exit_code != 0
    assert done.stderr.startswith("ctx: ") and done.stderr.count("\n") == 1, done.stderr
    assert b.head() == head and b.files() == files
    lock.unlink()
    assert _git(b.root, "status", "--short") == ""
    assert _ok(b, "pull").stdout.startswith("pull: fast-forward")
    assert b.head() == a.head()


def test_without_git_a_pull_into_a_split_index_is_refused_naming_it(pair, monkeypatch):
    a, b = pair
    _ok(a, "set", "from_a", "one")
    _ok(a, "sync")
    _index_form(b.root, "split")
    head, files = b.head(), b.files()
    _without_git(monkeypatch)
    done = b.run("pull")
    assert done.exit_code != 0
    assert done.stderr.startswith("ctx: core.splitIndex:") and done.stderr.count("\n") == 1, done.stderr
    assert b.head() == head and b.files() == files
    doctor = b.run("doctor", "--check")
    assert "core.splitIndex:" in doctor.stdout and "GitError" not in doctor.stderr


@pytest.mark.parametrize("form", INDEX_FORMS)
def test_a_push_moves_the_remote_tracking_branch_through_git(pair, monkeypatch, form):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "git")  # (libgit2's push moves it itself)
    a, b = pair
    _index_form(b.root, form)
    _ok(b, "set", "from_b", "one")
    assert "push: sent" in _ok(b, "sync").stdout
    newest = _git(b.root, "reflog", "show", "-1", "--format=%H %gs", "refs/remotes/origin/main").split(" ", 1)
    assert newest == [b.head(), "update by push\n"], newest
    _assert_gits(b.root, form)
    monkeypatch.setenv("CTX_GIT_RETRY_SECONDS", "0")
    lock = b.root / ".git" / "refs" / "remotes" / "origin" / "main.lock"
    lock.write_text("")
    _ok(b, "set", "again", "two")
    done = b.run("push")
    assert done.exit_code != 0
    assert done.stderr.startswith("ctx: pushed to origin, but: ") and "main.lock is in the way" in done.stderr, \
        done.stderr


# --- the operator's own git settings never change what ctx commits ------------------------------
# (found here: `core.autocrlf true` with `core.safecrlf true` made every write fail, "fatal: LF
# would be replaced by CRLF in .gitattributes"; a clean filter in the user's attributes file
# committed its output in place of the store file; `i18n.commitEncoding` labelled ctx's UTF-8
# messages as another encoding, shown garbled by ctx's own log)

def _global(*args: str) -> None:
    subprocess.run(["git", "config", "--global", *args], check=True)


def _committed_as_on_disk(root) -> None:
    """Every file git tracks is committed byte for byte as it is on disk, and git sees no change."""
    for path in _git(root, "ls-files", "-z").split("\0"):
        if path:
            blob = subprocess.run(["git", "-C", str(root), "cat-file", "blob", f"HEAD:{path}"],
                                  capture_output=True, check=True).stdout
            assert blob == (root / path).read_bytes(), path
    assert _git(root, "status", "--porcelain") == ""


LINE_ENDINGS = {"autocrlf": [("core.autocrlf", "true"), ("core.safecrlf", "true")],
                "autocrlf-input": [("core.autocrlf", "input"), ("core.safecrlf", "true")],
                "eol-crlf": [("core.attributesFile", "ATTRIBUTES"), ("core.safecrlf", "true")]}


@pytest.mark.parametrize("way", ["git", "libgit2"])
@pytest.mark.parametrize("setting", sorted(LINE_ENDINGS))
def test_the_users_line_ending_settings_change_no_byte_ctx_commits(root, run, tmp_path, monkeypatch,
                                                                  setting, way):
    attributes = tmp_path / "attributes"
    attributes.write_text("* text eol=crlf\n")
    for name, value in LINE_ENDINGS[setting]:
        _global(name, str(attributes) if value == "ATTRIBUTES" else value)
    if way == "libgit2":
        _without_git(monkeypatch)
    for i, value in enumerate(["first", "two\nlines", "third"]):
        done = run("set", f"k{i}", value, author="Agent One" if i % 2 else None)
        assert done.exit_code == 0, done.output
    done = run("summary", "new", "--from-stdin", "--agent", "Agent One", input="## Open\n- a\n")
    assert done.exit_code == 0, done.output
    _committed_as_on_disk(root)


@pytest.mark.parametrize("way", ["git", "libgit2"])
def test_a_clean_filter_in_the_users_attributes_never_changes_what_ctx_commits(root, run, tmp_path,
                                                                               monkeypatch, way):
    attributes = tmp_path / "attributes"
    attributes.write_text("* filter=upper ident\n")
    _global("core.attributesFile", str(attributes))
    _global("filter.upper.clean", "tr a-z A-Z")
    if way == "libgit2":
        _without_git(monkeypatch)
    for i in range(3):
        done = run("set", f"k{i}", f"lower case $Id$ {i}", author="Agent One" if i % 2 else None)
        assert done.exit_code == 0, done.output
    _committed_as_on_disk(root)
    assert '"entries"' in _git(root, "show", "HEAD:memory/shared.json")


def test_a_commit_encoding_setting_never_relabels_ctxs_utf8_messages(root, run):
    assert run("set", "k0", "first").exit_code == 0
    _global("i18n.commitEncoding", "ISO-8859-1")
    for n, author in enumerate(("Agent One", None)):  # one git commit; the way through the repository
        done = run("set", f"k{n + 1}", "café déjà", author=author, env={"CTX_GIT_SLOW": "1"} if n else {})
        assert done.exit_code == 0, done.output
        raw = subprocess.run(["git", "-C", str(root), "cat-file", "commit", "HEAD"], capture_output=True,
                             check=True).stdout
        assert b"\nencoding " not in raw.split(b"\n\n", 1)[0]
        shown = run("log", "-n", "1")
        assert f"set shared/k{n + 1}: café déjà" in shown.stdout, shown.stdout


def test_a_context_made_before_the_attributes_line_gets_it_at_its_next_write(root, run):
    """ctx's record of its last commit (``.git/ctx/state.json``) from an older ctx: the next
    write looks at the repository again and puts the line first in .git/info/attributes."""
    from ctxgit.guard.install import AS_WRITTEN_LINE
    from ctxgit.plumbing import lastcommit
    assert run("set", "k0", "first").exit_code == 0
    own = root / ".git" / "info" / "attributes"
    own.write_text("*.md diff\n")  # an operator's line, kept below ctx's
    lastcommit.save(str(root), None, True)
    record = root / ".git" / "ctx" / "state.json"
    record.write_text(record.read_text().replace(f'"version":{lastcommit.VERSION}', '"version":2'))
    assert '"version":2' in record.read_text()
    _global("core.autocrlf", "true")
    _global("core.safecrlf", "true")
    done = run("set", "k1", "second")
    assert done.exit_code == 0, done.output
    assert own.read_text().splitlines() == [AS_WRITTEN_LINE, "*.md diff"]
    _committed_as_on_disk(root)


def test_a_remotes_attributes_never_change_what_ctx_commits(pair, tmp_path):
    """A .gitattributes from a remote asking for a filter the operator has (git-lfs's, say)."""
    a, b = pair
    _global("filter.upper.clean", "tr a-z A-Z")
    (a.root / ".gitattributes").write_text("memory/*.json merge=ctx\n* filter=upper text eol=crlf\n")
    _ok(a, "set", "from_a", "one")
    _ok(a, "sync")
    _ok(b, "sync")
    assert "filter=upper" in (b.root / ".gitattributes").read_text()
    _ok(b, "set", "on_b", "lower case")
    _committed_as_on_disk(b.root)
    assert '"entries"' in _git(b.root, "show", "HEAD:memory/shared.json")


# (found here: a global core.excludesFile ignoring `*.json`, or a remote's .gitignore ignoring
# `memory/`, made every write of a file git did not track yet fail: "staging the files failed:
# git said: The following paths are ignored by one of your .gitignore files:")

@pytest.mark.parametrize("way", ["git", "libgit2"])
def test_files_ctx_commits_are_committed_whatever_the_users_ignore_rules_say(root, run, tmp_path,
                                                                            monkeypatch, way):
    excludes = tmp_path / "excludes"
    excludes.write_text("*.json\n*.md\nsessions/\n.git*\n")
    _global("core.excludesFile", str(excludes))
    if way == "libgit2":
        _without_git(monkeypatch)
    assert run("init").exit_code == 0
    for store in ("shared", "agent", "operator"):
        done = run("set", f"in_{store}", "v", "--store", store, author=None if store == "operator" else "Agent")
        assert done.exit_code == 0, done.output
    done = run("summary", "new", "--from-stdin", "--agent", "Agent One", input="## Open\n- a\n")
    assert done.exit_code == 0, done.output
    tracked = set(_git(root, "ls-files").split())
    assert {"memory/shared.json", "memory/agent.json", "memory/operator.json", "RULES.md", ".gitignore",
            ".gitattributes"} <= tracked
    assert any(p.startswith("sessions/") for p in tracked)
    _committed_as_on_disk(root)


def test_a_remotes_gitignore_never_stops_a_write(pair):
    a, b = pair
    (a.root / ".gitignore").write_text((a.root / ".gitignore").read_text() + "memory/\nsessions/\n")
    _ok(a, "set", "from_a", "one")
    _ok(a, "sync")
    _ok(b, "sync")
    assert "sessions/" in (b.root / ".gitignore").read_text()
    _ok(b, "set", "first_in_agent", "v", "--store", "agent")
    done = b.run("summary", "new", "--from-stdin", "--agent", "B", input="## Open\n- a\n")
    assert done.exit_code == 0, done.stderr
    assert "memory/agent.json" in _git(b.root, "ls-files")
    _committed_as_on_disk(b.root)


def test_the_attributes_line_removed_by_hand_is_back_before_the_next_commit(root, run):
    """The record of ctx's last commit covers .git/info/attributes: a write after it changed
    looks at the repository anew (the one-`git commit` way would have committed without it)."""
    from ctxgit.guard.install import AS_WRITTEN_LINE
    from ctxgit.plumbing import lastcommit
    _global("core.autocrlf", "true")
    _global("core.safecrlf", "true")
    for i in range(2):
        assert run("set", f"k{i}", "v", author="Agent One").exit_code == 0
    own = root / ".git" / "info" / "attributes"
    own.unlink()
    assert lastcommit.check(str(root))[0] is None  # (the record notices: the next write asks git)
    done = run("set", "k2", "after", author="Agent One")
    assert done.exit_code == 0, done.output
    assert AS_WRITTEN_LINE in own.read_text().splitlines()
    _committed_as_on_disk(root)
