"""Credentials and repository guards around the context's repository (§11):
the ``ctx-scan`` scanner (files, store files, ``--staged``), the git
pre-commit hook a manual ``git commit`` runs, ``ctx hooks install``, the
in-process refusal of a write (libgit2 runs no hooks), outside changes
that hold a credential, ``--force``, ``ctx scan [--history]``,
``ctx purge`` and the pre-commit framework's hook."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ctx.credentials import RULES
from hooks import scanner as hook_scan
from hooks.install import MARKER, hook_text
from support.gitutil import commit_count, commit_ids, fsck, git, git_out, tree_paths
from support.hookutil import SAMPLES, ctx_scan_exe, in_prose, manual_commit, secret_body, shows_part
from support.stores import make_entry, snapshot, store_path, write_store_file

RULE_IDS = [r.id for r in RULES]
DESCRIPTION = {r.id: r.description for r in RULES}
SUMMARY = "sessions/2026-11-30_session.md"
ACCEPTANCE_RULES = ["aws-access-token", "private-key", "generic-api-key", "slack-bot-token"]
# every kind end to end in the full run; the acceptance test's four in the quick one
# (-m "not slow"), where test_secrets.py still checks each kind's pattern
RULE_IDS_FOUR_QUICK = [r if r in ACCEPTANCE_RULES else pytest.param(r, marks=pytest.mark.slow)
                       for r in RULE_IDS]


# --- helpers -----------------------------------------------------------------------------

def ok(result):
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr)
    return result


def assert_not_shown(text: str, rule: str) -> None:
    """No part of the sample's secret shows in ``text`` (a short prefix may)."""
    body = secret_body(rule)
    assert body not in text
    assert shows_part(text, body) == [], shows_part(text, body)


def summary_text(secret_line: str) -> str:
    return ("# Session 2026-11-30\n\n**Agent:** Agent One\n\n## Done\n\n"
            "- Fixed the upload timeout\n\n## Notes\n\n" + secret_line + "\n\n## Open\n\n- progress bar\n")


def add_entry_by_hand(root: Path, key: str, value, **fields) -> Path:
    """Edit a store file the way an operator's editor would: ctx is not involved."""
    return write_store_file(root, "shared", {key: make_entry(value, **fields)})


def line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def all_git_objects(root: Path) -> str:
    """Every object in the repository, reachable or not, as text."""
    done = subprocess.run(["git", "-C", str(root), "cat-file", "--batch-all-objects", "--batch"],
                          capture_output=True, check=True)
    return done.stdout.decode("utf-8", "replace")


@pytest.fixture
def ctx_root(run, root):
    """A context with a repository (and ctx's pre-commit hook) and one clean entry."""
    ok(run("set", "plain", "The pool of 20 connections holds under load"))
    assert (root / ".git" / "hooks" / "pre-commit").exists()
    return root


# --- ctx-scan on files (the pre-commit framework's entry) ----------------------------------

def test_ctx_scan_console_script_exists():
    assert ctx_scan_exe().is_file() and os.access(ctx_scan_exe(), os.X_OK)


@pytest.mark.slow
def test_ctx_scan_script_on_files_with_and_without_secrets(tmp_path):
    clean = tmp_path / "notes.md"
    clean.write_text("# Notes\n\nmax_tokens=4096; see 3f2a91c and https://x.invalid/?a=1&b=2\n")
    store = tmp_path / "memory" / "shared.json"
    store.parent.mkdir()
    store.write_text(json.dumps({"type": "shared", "version": "1", "entries": {
        "fine": make_entry("ordinary value"),
        "leaked_key": make_entry(in_prose(SAMPLES["github-pat"]))}}, indent=2))
    dirty = tmp_path / "deploy.txt"
    dirty.write_text("first line\n" + in_prose(SAMPLES["aws-access-token"]) + "\n")

    done = subprocess.run([str(ctx_scan_exe()), str(clean)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and done.stdout == ""

    done = subprocess.run([str(ctx_scan_exe()), str(clean), str(store), str(dirty)],
                          capture_output=True, text=True)
    assert done.returncode == 1
    err = done.stderr
    assert "shared/leaked_key value" in err            # a store file: named by store/key
    assert f"{store}:{line_of(store, 'leaked_key')}" in err
    assert "[github-pat]" in err and DESCRIPTION["github-pat"] in err
    assert f"{dirty}:2" in err and "[aws-access-token]" in err
    assert str(clean) not in err
    assert_not_shown(err + done.stdout, "github-pat")
    assert_not_shown(err + done.stdout, "aws-access-token")


@pytest.mark.parametrize("rule", RULE_IDS_FOUR_QUICK)
@pytest.mark.parametrize("field", ["value", "derivation", "status_note"])
def test_ctx_scan_names_the_entry_and_field_of_a_store_file(tmp_path, capsys, rule, field):
    store = tmp_path / "memory" / "agent.json"
    store.parent.mkdir()
    entry = make_entry("an ordinary value")
    entry[field] = in_prose(SAMPLES[rule])
    store.write_text(json.dumps({"type": "agent", "version": "1",
                                 "entries": {"other": make_entry("fine"), "leak": entry}}, indent=2))
    assert hook_scan.main([str(store)]) == 1
    err = capsys.readouterr().err
    assert f"agent/leak {field}" in err and f"[{rule}]" in err
    assert "agent/other" not in err
    assert_not_shown(err, rule)


def test_ctx_scan_on_a_missing_file_or_directory_finds_nothing(tmp_path, capsys):
    assert hook_scan.main([str(tmp_path / "missing.md"), str(tmp_path)]) == 0


def test_ctx_scan_reads_a_broken_store_file_as_text(tmp_path, capsys):
    store = tmp_path / "memory" / "shared.json"
    store.parent.mkdir()
    store.write_text('{"entries": {"k": ' + json.dumps(SAMPLES["gitlab-pat"]) + "\n")  # not JSON
    assert hook_scan.main([str(store)]) == 1
    assert "[gitlab-pat]" in capsys.readouterr().err


def test_ctx_scan_finds_a_secret_in_an_unknown_field_of_a_store_file(tmp_path, capsys):
    store = tmp_path / "memory" / "shared.json"
    store.parent.mkdir()
    entry = make_entry("ordinary value", comment="ops: " + SAMPLES["aws-access-token"])
    store.write_text(json.dumps({"type": "shared", "version": "1", "entries": {"k": entry}}, indent=2))
    assert hook_scan.main([str(store)]) == 1


def test_ctx_scan_line_of_an_entry_named_like_a_field(tmp_path, capsys):
    store = tmp_path / "memory" / "shared.json"
    store.parent.mkdir()
    store.write_text(json.dumps({"type": "shared", "version": "1", "entries": {
        "first": make_entry("fine"), "source": make_entry(SAMPLES["github-pat"])}}, indent=2))
    assert hook_scan.main([str(store)]) == 1
    line = line_of(store, chr(34) + 'source' + chr(34) + ': {')
    assert re.search(rf"{re.escape(str(store))}:{line}[ :]", capsys.readouterr().err)


# --- the pre-commit framework -------------------------------------------------------------

def test_pre_commit_hooks_yaml_declares_the_hook():
    text = (Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml").read_text()
    lines = [line.strip() for line in text.splitlines()]
    assert "- id: ctx-credentials" in lines
    assert "entry: ctx-scan" in lines
    assert "language: python" in lines
    # the entry is a console script of this package
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert 'ctx-scan = "hooks.scanner:main"' in pyproject


@pytest.mark.skipif(importlib.util.find_spec("pre_commit") is None, reason="pre-commit is not installed")
@pytest.mark.slow
def test_pre_commit_try_repo(tmp_path):
    """``pre-commit try-repo`` builds the hook from this checkout (it needs PyPI for
    click and pygit2) and runs it on files with and without a secret."""
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / "clean.md").write_text("Ordinary notes: max_tokens=4096, see 3f2a91c\n")
    (project / "leak.md").write_text("notes\n" + in_prose(SAMPLES["slack-bot-token"]) + "\n")
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(repo), "ctx-credentials"]

    # one run (the hook's environment is built per run: ~10 s): a clean file and a leak
    done = subprocess.run(command + ["--files", "clean.md", "leak.md"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ctx-credentials" in done.stdout and "Failed" in done.stdout
    hook_output = done.stdout.split("- exit code: 1", 1)[1]
    assert "leak.md:2" in hook_output and "[slack-bot-token]" in hook_output
    assert "clean.md" not in hook_output
    assert_not_shown(done.stdout + done.stderr, "slack-bot-token")


# --- --staged: what the git hook runs ------------------------------------------------------

@pytest.mark.parametrize("rule", RULE_IDS_FOUR_QUICK)
def test_staged_scan_refuses_a_store_file_and_a_summary_with_each_kind(ctx_root, monkeypatch, capsys, rule):
    monkeypatch.chdir(ctx_root)
    path = add_entry_by_hand(ctx_root, "leaked", in_prose(SAMPLES[rule]))
    git(ctx_root, "add", "memory/shared.json")
    assert hook_scan.main(["--staged"]) == 1
    err = capsys.readouterr().err
    needle = json.dumps(SAMPLES[rule])[1:-1][:29]
    assert f"memory/shared.json:{line_of(path, needle)}:" in err
    assert f"[{rule}]" in err and DESCRIPTION[rule] in err
    assert_not_shown(err, rule)

    git(ctx_root, "reset", "-q", "--hard")
    assert hook_scan.main(["--staged"]) == 0
    path = ctx_root / SUMMARY
    path.write_text(summary_text(in_prose(SAMPLES[rule])))
    git(ctx_root, "add", SUMMARY)
    assert hook_scan.main(["--staged"]) == 1
    err = capsys.readouterr().err
    assert f"{SUMMARY}:{line_of(path, SAMPLES[rule].split(chr(10))[0])}:" in err
    assert f"[{rule}]" in err and DESCRIPTION[rule] in err
    assert_not_shown(err, rule)


def test_staged_scan_looks_only_at_added_lines(ctx_root, monkeypatch, capsys):
    """A secret already in HEAD (forced earlier) does not block an unrelated change."""
    leak = in_prose(SAMPLES["github-pat"])
    path = ctx_root / SUMMARY
    path.write_text(summary_text(leak))
    git(ctx_root, "add", SUMMARY)
    manual_commit(ctx_root, "--no-verify")
    path.write_text(summary_text(leak) + "\n- one more open item\n")
    git(ctx_root, "add", SUMMARY)
    monkeypatch.chdir(ctx_root)
    assert hook_scan.main(["--staged"]) == 0, capsys.readouterr().err


def test_parse_added_lines_numbers_the_new_file():
    diff = ("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -2,0 +3,2 @@\n+one\n+two\n"
            "@@ -9 +11 @@\n-old\n+new\n"
            "diff --git a/g b/g\n--- a/g\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n"
            "diff --git a/h b/h\nnew file mode 100644\n--- /dev/null\n+++ b/h\n@@ -0,0 +1 @@\n+first\n")
    assert list(hook_scan.parse_added_lines(diff)) == [
        ("f", 3, "one"), ("f", 4, "two"), ("f", 11, "new"), ("h", 1, "first")]


def test_staged_scan_reads_an_added_line_starting_with_plus_plus(ctx_root, monkeypatch, capsys):
    (ctx_root / SUMMARY).write_text(summary_text("++ " + in_prose(SAMPLES["github-pat"])))
    git(ctx_root, "add", SUMMARY)
    monkeypatch.chdir(ctx_root)
    assert hook_scan.main(["--staged"]) == 1


def test_staged_scan_outside_a_repository_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert hook_scan.main(["--staged"]) == 2
    assert "cannot read the staged changes" in capsys.readouterr().err


# --- the git pre-commit hook: a manual `git commit` ----------------------------------------

def test_hook_is_installed_with_the_repository(ctx_root):
    hook = ctx_root / ".git" / "hooks" / "pre-commit"
    assert hook.read_text() == hook_text()
    assert MARKER in hook.read_text()
    assert hook.stat().st_mode & stat.S_IXUSR


@pytest.mark.parametrize("rule", ACCEPTANCE_RULES)
@pytest.mark.slow
def test_manual_commit_of_a_store_file_with_a_credential_is_refused(ctx_root, rule):
    head = git_out(ctx_root, "rev-parse", "HEAD")
    path = add_entry_by_hand(ctx_root, "deploy_notes", in_prose(SAMPLES[rule]))
    git(ctx_root, "add", "memory/shared.json")
    done = manual_commit(ctx_root)
    assert done.returncode != 0
    line = line_of(path, json.dumps(SAMPLES[rule])[1:-1][:29])
    assert f"memory/shared.json:{line}:" in done.stderr
    assert DESCRIPTION[rule] in done.stderr and f"[{rule}]" in done.stderr
    assert_not_shown(done.stdout + done.stderr, rule)
    assert git_out(ctx_root, "rev-parse", "HEAD") == head


@pytest.mark.parametrize("rule", ACCEPTANCE_RULES)
@pytest.mark.slow
def test_manual_commit_of_a_summary_with_a_credential_is_refused(ctx_root, rule):
    head = git_out(ctx_root, "rev-parse", "HEAD")
    path = ctx_root / SUMMARY
    path.write_text(summary_text(in_prose(SAMPLES[rule])))
    git(ctx_root, "add", SUMMARY)
    done = manual_commit(ctx_root)
    assert done.returncode != 0
    line = line_of(path, SAMPLES[rule].split("\n")[0])
    assert f"{SUMMARY}:{line}:" in done.stderr
    assert DESCRIPTION[rule] in done.stderr and f"[{rule}]" in done.stderr
    assert_not_shown(done.stdout + done.stderr, rule)
    assert git_out(ctx_root, "rev-parse", "HEAD") == head


@pytest.mark.parametrize("path, reason", [
    ("memory/.lock", "the context lock file"),
    ("memory/.shared.json.tmp", "a temporary file of an unfinished write"),
    ("sessions/draft.md.swp", "a temporary file"),
])
@pytest.mark.slow
def test_manual_commit_of_a_forbidden_path_is_refused(ctx_root, path, reason):
    head = git_out(ctx_root, "rev-parse", "HEAD")
    full = ctx_root / path
    if not full.exists():
        full.write_text("")
    git(ctx_root, "add", "-f", path)
    done = manual_commit(ctx_root)
    assert done.returncode != 0
    assert f"{path}: {reason} must never be committed" in done.stderr
    assert git_out(ctx_root, "rev-parse", "HEAD") == head


@pytest.mark.slow
def test_manual_clean_commit_passes(ctx_root):
    before = commit_count(ctx_root)
    add_entry_by_hand(ctx_root, "note", "Fixed in 3f2a91c0d4e5b6a7980112233445566778899aabb; "
                      "max_tokens=4096; run 123e4567-e89b-12d3-a456-426614174000")
    (ctx_root / SUMMARY).write_text(summary_text("Used https://x.invalid/a?b=1&c=2 and token=${TOKEN}"))
    git(ctx_root, "add", "memory/shared.json", SUMMARY)
    done = manual_commit(ctx_root)
    assert done.returncode == 0, done.stderr
    assert commit_count(ctx_root) == before + 1
    assert "ctx-scan" not in done.stderr


@pytest.mark.parametrize("value", [
    "deploy creds:\n" + SAMPLES["aws-access-token"],
    "staging db\npassword=" + secret_body("generic-api-key"),
    'config: password="' + secret_body("generic-api-key") + '"',
])
@pytest.mark.slow
def test_manual_commit_of_a_multiline_value_with_a_credential_is_refused(ctx_root, value):
    add_entry_by_hand(ctx_root, "deploy_notes", value)
    git(ctx_root, "add", "memory/shared.json")
    assert manual_commit(ctx_root).returncode != 0


# --- ctx hooks install ----------------------------------------------------------------------

def test_hooks_install_is_idempotent_for_its_own_hook(run, ctx_root):
    hook = ctx_root / ".git" / "hooks" / "pre-commit"
    before = hook.read_bytes()
    first = ok(run("hooks", "install"))
    second = ok(run("hooks", "install"))
    assert "unchanged" in first.stdout and "unchanged" in second.stdout
    assert hook.read_bytes() == before
    assert hook.stat().st_mode & stat.S_IXUSR
    assert sorted(p.name for p in hook.parent.iterdir() if not p.name.endswith(".sample")) == ["pre-commit"]


def test_hooks_install_updates_an_older_ctx_hook(run, ctx_root):
    hook = ctx_root / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\n{MARKER} v0: an older ctx\nexit 0\n")
    result = ok(run("hooks", "install"))
    assert "updated" in result.stdout
    assert hook.read_text() == hook_text()


def test_hooks_install_never_overwrites_a_foreign_hook(run, ctx_root):
    hook = ctx_root / ".git" / "hooks" / "pre-commit"
    foreign = "#!/bin/sh\n# the operator's own hook\nexec lint-staged\n"
    hook.write_text(foreign)
    hook.chmod(0o755)
    for _ in range(2):
        result = run("hooks", "install")
        assert result.exit_code != 0
        said = result.stdout + result.stderr
        assert "not written by ctx" in said and str(hook) in said
        assert hook.read_text() == foreign


@pytest.mark.slow
def test_hooks_install_with_core_hooks_path_protects_or_says_so(run, ctx_root):
    git(ctx_root, "config", "core.hooksPath", ".githooks")
    result = run("hooks", "install")
    (ctx_root / SUMMARY).write_text(summary_text(in_prose(SAMPLES["github-pat"])))
    git(ctx_root, "add", SUMMARY)
    refused = manual_commit(ctx_root).returncode != 0
    assert refused or (result.exit_code != 0 and "hooksPath" in result.stdout + result.stderr)


def test_hooks_install_creates_the_repository_and_hook(run, root):
    result = ok(run("hooks", "install"))
    hook = root / ".git" / "hooks" / "pre-commit"
    assert hook.read_text() == hook_text()
    assert str(hook) in result.stdout


def test_hooks_install_on_a_repository_made_by_git_with_a_foreign_hook(run, root):
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    result = run("hooks", "install")
    assert result.exit_code != 0
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"


# --- in-process refusal: every write path ----------------------------------------------------

PLACES = ["value", "derivation", "amend", "resolve", "supersede"]


def write_args(place: str, text: str) -> list[str]:
    return {
        "value": ["set", "target", text],
        "derivation": ["set", "target", "An ordinary value", f"--derivation={text}"],
        "amend": ["amend", "target", text],
        "resolve": ["resolve", "target", f"--note={text}"],
        "supersede": ["supersede", "target", "--by", "plain", f"--note={text}"],
    }[place]


@pytest.mark.parametrize("rule", RULE_IDS_FOUR_QUICK)
def test_each_kind_is_refused_in_every_place_and_a_summary_is_not_committed(run, root, rule):
    """A value, a derivation, the note of amend, resolve and supersede: refused, and
    nothing changes. Then a summary written by hand: the next write warns and
    leaves it out of the repository."""
    ok(run("set", "plain", "The pool of 20 connections holds under load"))
    ok(run("set", "target", "The upload fails behind the proxy"))
    store = store_path(root).read_bytes()
    commits = commit_ids(root)
    sessions = snapshot(root / "sessions")
    for place in PLACES:
        result = run(*write_args(place, in_prose(SAMPLES[rule])), author="Agent One")
        assert result.exit_code == 4, (place, result.stdout, result.stderr)
        assert DESCRIPTION[rule] in result.stderr and "--force" in result.stderr, place
        assert_not_shown(result.stdout + result.stderr, rule)
        assert store_path(root).read_bytes() == store, place
        assert commit_ids(root) == commits, place
        assert snapshot(root / "sessions") == sessions, place
    assert git_out(root, "status", "--porcelain", "--untracked-files=all") == ""

    (root / SUMMARY).write_text(summary_text(in_prose(SAMPLES[rule])))
    result = ok(run("set", "next_step", "Ship the progress bar", author="Agent One"))
    assert SUMMARY in result.stderr and "credential" in result.stderr and "warning" in result.stderr
    assert_not_shown(result.stdout + result.stderr, rule)
    assert SUMMARY not in tree_paths(root)
    assert len(commit_ids(root)) == len(commits) + 1
    assert git_out(root, "log", "--format=%s", "-1").strip().startswith("set shared/next_step")
    assert SUMMARY in git_out(root, "status", "--porcelain", "--untracked-files=all")
    assert_not_shown(git_out(root, "log", "-p", "--all"), rule)


def test_a_summary_with_a_credential_warns_at_every_write_and_scan_lists_it(run, ctx_root):
    (ctx_root / SUMMARY).write_text(summary_text(in_prose(SAMPLES["anthropic-api-key"])))
    for value in ("Ship the progress bar", "Ship the progress bar today"):
        result = ok(run("set", "next_step", value))
        assert SUMMARY in result.stderr and "ctx scan" in result.stderr
    scan = run("scan")
    assert scan.exit_code == 1 and SUMMARY in scan.stdout and "[anthropic-api-key]" in scan.stdout
    assert_not_shown(scan.stdout, "anthropic-api-key")
    assert SUMMARY not in tree_paths(ctx_root)


def test_a_summary_written_by_hand_is_committed_once_the_credential_is_gone(run, ctx_root):
    path = ctx_root / SUMMARY
    path.write_text(summary_text(in_prose(SAMPLES["github-pat"])))
    ok(run("set", "a", "one"))
    path.write_text(summary_text("The token lives in the vault now"))
    result = ok(run("set", "b", "two"))
    assert "warning" not in result.stderr
    assert SUMMARY in tree_paths(ctx_root)
    assert_not_shown(git_out(ctx_root, "log", "-p", "--all"), "github-pat")


def test_a_store_file_edited_by_hand_with_a_credential_stays_uncommitted(run, ctx_root):
    path = add_entry_by_hand(ctx_root, "leak", in_prose(SAMPLES["aws-access-token"]))
    edited = path.read_bytes()
    head = commit_ids(ctx_root)
    # a write to the same store would commit it: refused, the file stays as it was
    result = run("set", "other", "An ordinary value")
    assert result.exit_code == 4
    assert "shared/leak" in result.stderr and "ctx delete leak" in result.stderr
    assert_not_shown(result.stdout + result.stderr, "aws-access-token")
    assert path.read_bytes() == edited
    assert commit_ids(ctx_root) == head
    # a write to another store goes through, with a warning; the leak stays out of git
    other = ok(run("set", "mine", "An agent note", "--store", "agent"))
    assert "memory/shared.json" in other.stderr and "warning" in other.stderr
    assert "memory/agent.json" in tree_paths(ctx_root)
    assert_not_shown(git_out(ctx_root, "log", "-p", "--all"), "aws-access-token")
    # removing it lets everything through
    ok(run("delete", "leak"))
    ok(run("set", "other", "An ordinary value"))
    assert_not_shown(git_out(ctx_root, "log", "-p", "--all"), "aws-access-token")
    assert git_out(ctx_root, "status", "--porcelain") == ""


def test_an_outside_multiline_value_with_a_credential_is_not_committed(run, ctx_root):
    add_entry_by_hand(ctx_root, "leak", "deploy creds:\n" + SAMPLES["aws-access-token"])
    run("set", "mine", "An agent note", "--store", "agent")
    assert_not_shown(git_out(ctx_root, "log", "-p", "--all"), "aws-access-token")


def test_force_does_not_commit_an_outside_credential_in_the_same_store(run, ctx_root):
    add_entry_by_hand(ctx_root, "leak", in_prose(SAMPLES["aws-access-token"]))
    run("set", "other", "token=" + "q7Lr2Vx9Kp4Wn8", "--force")
    assert_not_shown(git_out(ctx_root, "log", "-p", "--all"), "aws-access-token")


# --- --force -------------------------------------------------------------------------------

@pytest.mark.parametrize("place", PLACES)
def test_force_stores_and_commits_without_quoting(run, root, place):
    rule = "github-pat"
    text = in_prose(SAMPLES[rule])
    ok(run("set", "plain", "The pool of 20 connections holds under load"))
    ok(run("set", "target", "The upload fails behind the proxy"))
    before = commit_count(root)
    result = ok(run(*write_args(place, text), "--force", author="Agent One"))
    assert commit_count(root) == before + 1
    entry = json.loads(store_path(root).read_text())["entries"]["target"]
    stored = {"value": entry["value"], "derivation": entry.get("derivation"),
              "amend": entry.get("status_note"), "resolve": entry.get("status_note"),
              "supersede": entry.get("status_note")}[place]
    assert text in stored
    assert git_out(root, "status", "--porcelain") == ""
    assert json.loads(git_out(root, "show", "HEAD:memory/shared.json"))["entries"]["target"] == entry
    msg = git_out(root, "log", "-1", "--format=%B")
    assert_not_shown(msg, rule)
    assert "Staging deploy works again" not in msg and "the credential used was" not in msg
    assert msg.startswith({"value": "set shared/target", "derivation": "set shared/target",
                           "amend": "amend shared/target", "resolve": "resolve shared/target",
                           "supersede": "supersede shared/target"}[place])
    assert_not_shown(result.stdout, rule)


# --- ctx scan ------------------------------------------------------------------------------

def test_scan_on_a_clean_context(run, ctx_root):
    result = run("scan")
    assert result.exit_code == 0 and "no credentials found" in result.stdout
    result = run("scan", "--history", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout) == []


REPORT_KEYS = {"commit", "path", "line", "entry", "rule", "kind", "preview"}


def test_scan_finds_a_forced_secret_then_history_finds_it_after_delete(run, ctx_root):
    rule = "stripe-access-token"
    ok(run("set", "billing", in_prose(SAMPLES[rule]), "--force"))
    forced_commit = git_out(ctx_root, "rev-parse", "HEAD").strip()

    result = run("scan")
    assert result.exit_code == 1
    assert "shared/billing value" in result.stdout and f"[{rule}]" in result.stdout
    assert_not_shown(result.stdout + result.stderr, rule)

    result = run("scan", "--json")
    assert result.exit_code == 1
    reports = json.loads(result.stdout)
    assert len(reports) == 1 and set(reports[0]) == REPORT_KEYS
    r = reports[0]
    assert r["commit"] is None and r["path"] == "memory/shared.json"
    assert r["entry"] == "shared/billing value" and r["rule"] == rule
    assert r["kind"] == DESCRIPTION[rule] and isinstance(r["line"], int) and r["line"] >= 1
    assert_not_shown(r["preview"], rule)

    ok(run("delete", "billing"))
    assert run("scan").exit_code == 0
    result = run("scan", "--history")
    assert result.exit_code == 1 and forced_commit[:8] in result.stdout
    assert "shared/billing value" in result.stdout
    reports = json.loads(run("scan", "--history", "--json").stdout)
    assert reports and all(set(r) == REPORT_KEYS for r in reports)
    assert {r["commit"] for r in reports} == {forced_commit}  # each blob once: the first commit
    assert {(r["entry"], r["rule"]) for r in reports} == {("shared/billing value", rule)}
    assert_not_shown(json.dumps(reports), rule)


def test_scan_history_reads_commit_messages(run, ctx_root):
    root = ctx_root
    (root / SUMMARY).write_text(summary_text("nothing secret"))
    git(root, "add", SUMMARY)
    manual_commit(root, "--no-verify", message="notes\n\nused " + SAMPLES["gcp-api-key"])
    reports = json.loads(run("scan", "--history", "--json").stdout)
    assert [(r["path"], r["rule"]) for r in reports] == [("(commit message)", "gcp-api-key")]


def test_scan_history_does_not_take_ctx_key_trailers_for_api_keys(run, ctx_root):
    """Issue 39: ``Ctx-Key: claude-code:app-v2:ports`` read as ``key: <token>``; a key
    that is itself a credential is still found (by its provider's rule)."""
    ok(run("set", "claude-code:app-v2:ports", "x"))
    ok(run("set", "codex:memory-summary:use_uv_not_pip", "x"))
    result = run("scan", "--history")
    assert result.exit_code == 0, result.stdout
    ok(run("set", SAMPLES["gcp-api-key"], "x", "--force"))
    reports = json.loads(run("scan", "--history", "--json").stdout)
    assert ("(commit message)", "gcp-api-key") in [(r["path"], r["rule"]) for r in reports]


def test_scan_reads_status_notes_and_derivations(run, ctx_root):
    ok(run("set", "k", "An ordinary value", f"--derivation={in_prose(SAMPLES['gitlab-pat'])}", "--force"))
    ok(run("resolve", "k", f"--note={in_prose(SAMPLES['openai-api-key'])}", "--force"))
    reports = json.loads(run("scan", "--json").stdout)
    assert {(r["entry"], r["rule"]) for r in reports} == {
        ("shared/k derivation", "gitlab-pat"), ("shared/k status_note", "openai-api-key")}


# --- ctx purge -----------------------------------------------------------------------------

def versions(run, key: str, store: str = "shared") -> list[dict]:
    rows = json.loads(ok(run("history", key, "--store", store, "--json")).stdout)
    return [{k: v for k, v in row.items() if k != "commit"} for row in rows]


def test_purge_leaves_no_trace(run, root):
    rule = "github-fine-grained-pat"
    ok(run("set", "other_key", "First: a pool of 10", author="Agent One"))
    ok(run("set", "leak", in_prose(SAMPLES[rule]), "--force", author="Agent Two"))
    ok(run("set", "other_key", "Second: a pool of 20", author="Agent Three"))
    ok(run("amend", "leak", "the token was rotated", "--force", author="Agent Two"))
    ok(run("set", "third", "An unrelated note", "--store", "agent", author="Agent One"))
    ok(run("set", "other_key", "Third: a pool of 30"))
    assert SAMPLES[rule] in git_out(root, "log", "-p", "--all")   # the check below can fail
    before_other = versions(run, "other_key")
    before_third = versions(run, "third", "agent")
    count = commit_count(root)
    subjects = git_out(root, "log", "--format=%s%n%an%n%ae%n%ad%n%cd").split("\n")

    result = ok(run("purge", "leak", "--yes"))
    assert "purged shared/leak" in result.stdout
    assert "remotes" in result.stderr

    log = git_out(root, "log", "-p", "--all")
    assert_not_shown(log, rule)
    assert_not_shown(git_out(root, "log", "-p", "--all", "--reflog"), rule)
    assert_not_shown(all_git_objects(root), rule)   # the old objects are gone, not just unreachable
    fsck(root)
    assert commit_count(root) == count
    assert git_out(root, "log", "--format=%s%n%an%n%ae%n%ad%n%cd").split("\n") == subjects
    assert versions(run, "other_key") == before_other
    assert versions(run, "third", "agent") == before_third
    assert len(before_other) == 3
    assert [v["author"] for v in before_other] == ["operator", "Agent Three", "Agent One"]
    assert run("get", "leak").exit_code == 1
    assert run("history", "leak").exit_code == 1
    assert "leak" not in json.loads(store_path(root).read_text())["entries"]
    assert json.loads(git_out(root, "show", "HEAD:memory/shared.json")) == json.loads(
        store_path(root).read_text())
    assert git_out(root, "status", "--porcelain") == ""
    assert run("scan", "--history").exit_code == 0
    ok(run("set", "after", "writes go on after a purge"))


def test_purge_of_a_deleted_entry_and_a_quoting_message(run, root):
    value = "The wifi passphrase is Tr0ub4dor and3 correct horse battery staple"
    ok(run("set", "keep", "kept"))
    ok(run("set", "wifi", value))                     # not a pattern: quoted in the subject
    assert "Tr0ub4dor" in git_out(root, "log", "--format=%B")
    ok(run("delete", "wifi"))
    ok(run("purge", "wifi", "--yes"))
    log = git_out(root, "log", "-p", "--all")
    assert "Tr0ub4dor" not in log and "horse battery" not in log
    assert shows_part(log, value, 16) == []
    fsck(root)
    assert [v["entry"]["value"] for v in versions(run, "keep")] == ["kept"]


def test_purge_without_yes_refuses_and_changes_nothing(run, root):
    ok(run("set", "leak", in_prose(SAMPLES["aws-access-token"]), "--force"))
    head = commit_ids(root)
    store = store_path(root).read_bytes()
    result = run("purge", "leak")
    assert result.exit_code == 2
    assert "--yes" in result.stderr
    assert commit_ids(root) == head and store_path(root).read_bytes() == store
    assert SAMPLES["aws-access-token"] in git_out(root, "log", "-p", "--all")


def test_purge_of_an_unknown_key_is_not_found(run, root):
    ok(run("set", "k", "v"))
    head = commit_ids(root)
    result = run("purge", "nope", "--yes")
    assert result.exit_code == 1
    assert commit_ids(root) == head
