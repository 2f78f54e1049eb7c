"""Each harness's memory, read from fixture files in the harness's real layout
(``ctx/harness/memory_*.py``): which memories, keys, kinds and sources each file gives."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctx.errors import NotFound
from ctx.harness.memory import claude as memory_claude
from ctx.harness.memory import codex as memory_codex
from ctx.harness.memory import cursor as memory_cursor
from ctx.harness.memory import files as memory_files
from ctx.harness.memory import gemini as memory_gemini
from support.memories import CLAUDE_INDEX, claude_folder, codex_root

# --- Claude Code -------------------------------------------------------------------------


def test_claude_project_key_is_claude_codes_rule():
    # expected values computed with the expression of Claude Code 2.1.197's bundle
    assert memory_claude.project_key(Path("/work/x_y z/app-v2")) == "-work-x-y-z-app-v2"
    long = Path("/home/someone/" + "very_long_folder_name_" * 12 + "/project with spaces/ünïcode")
    key = memory_claude.project_key(long)
    assert key == ("-home-someone-" + "very-long-folder-name-" * 8 + "very-long--u06yd6")
    assert memory_claude.project_key(Path("/tmp/\U0001F600" + "a" * 200)) == "-tmp---" + "a" * 193 + "-xi3prq"


def test_claude_memory_folder_is_found_from_the_git_root(home, project, monkeypatch):
    (project / ".git").mkdir()
    (project / "src").mkdir()
    monkeypatch.chdir(project / "src")
    assert memory_claude.default_path() == home / ".claude" / "projects" / memory_claude.project_key(
        project.resolve()) / "memory"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "elsewhere"))
    assert memory_claude.default_path().parent.parent == home / "elsewhere" / "projects"


def test_claude_topic_files_in_both_frontmatter_versions(home, project):
    claude_folder(home, project.resolve())
    source = memory_claude.read()
    got = {m.key: m for m in source.memories}
    assert sorted(got) == ["claude-code:project:feedback_tests", "claude-code:project:project_upload_limit",
                           "claude-code:project:reference_dashboards", "claude-code:project:user_role"]
    feedback = got["claude-code:project:feedback_tests"]
    assert feedback.kind == "feedback memory" and feedback.source == "operator"
    assert feedback.text.startswith("Run the tests before a commit — the user wants the suite green")
    assert "Run `make test` before each commit" in feedback.text and "originSessionId" not in feedback.text
    old = got["claude-code:project:project_upload_limit"]
    assert old.kind == "project memory" and old.source == "agent" and old.tags == ("memory-project",)
    assert got["claude-code:project:user_role"].source == "operator"
    assert got["claude-code:project:reference_dashboards"].source == "agent"
    assert source.scopes == {"claude-code:project:"}


def test_claude_index_links_are_not_memories_but_other_bullets_are(tmp_path, project):
    folder = tmp_path / "mem"
    folder.mkdir()
    (folder / "MEMORY.md").write_text(CLAUDE_INDEX + "- The staging database is reset every Monday\n")
    (folder / "x.md").write_text("no frontmatter at all\n")
    got = {m.key: m for m in memory_claude.read(folder).memories}
    assert sorted(got) == ["claude-code:project:the_staging_database_is_reset_every_monday",
                           "claude-code:project:x"]
    assert got["claude-code:project:x"].kind == "untyped memory"


# --- Codex -------------------------------------------------------------------------------

def test_codex_summary_and_the_project_s_blocks(home, project):
    codex_root(home, project.resolve())
    got = {m.key: m for m in memory_codex.read().memories}
    assert sorted(got) == [
        "codex:project:payments_service_migrations",
        "codex:user:ask_before_running_database_migrations",
        "codex:user:keep_commit_messages_under_72_characters",
        "codex:user:make_lint_needs_golangci_lint_1_61_or_later",
        "codex:user:release_workflow",
        "codex:user:user_profile",
    ]  # the other checkout's block is not this project's; rollout summaries are not memories
    assert got["codex:user:user_profile"].source == "operator"
    assert got["codex:user:user_profile"].text == "Works on a payments service in Go; reviews every migration by hand."
    assert got["codex:user:ask_before_running_database_migrations"].source == "operator"
    assert got["codex:user:make_lint_needs_golangci_lint_1_61_or_later"].source == "agent"
    block = got["codex:project:payments_service_migrations"]
    assert block.source == "agent" and block.kind == "MEMORY.md Task Group"
    assert "goose status first" in block.text and block.text.startswith("# Task Group: payments")


def test_codex_cwd_families_and_lists(tmp_path):
    project = tmp_path / "src" / "payments"
    assert memory_codex._applies(f"{tmp_path}/src/*", project)
    assert memory_codex._applies(f"/elsewhere, {project}", project)
    assert not memory_codex._applies("/elsewhere/*", project)
    assert memory_codex._applies("release workflow", project)


def test_codex_home_moves_the_root(home, project, monkeypatch, tmp_path):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    with pytest.raises(NotFound, match="cx/memories: no Codex memories folder"):
        memory_codex.read()


# --- Gemini CLI --------------------------------------------------------------------------

GEMINI_GLOBAL = """# My global context

Be brief.

## Gemini Added Memories
- My preferred test runner is pytest with -x
- I use fish as my shell

## Other notes
- not a saved memory
"""


def test_gemini_added_memories_global_project_and_tmp_slug(home, project):
    root = project.resolve()
    (home / ".gemini").mkdir()
    (home / ".gemini" / "GEMINI.md").write_text(GEMINI_GLOBAL)
    (root / "GEMINI.md").write_text("# Project\n\n## Gemini Added Memories\n- The API listens on 8443\n")
    (home / ".gemini" / "projects.json").write_text(json.dumps({"projects": {str(root): "project-1"}}))
    memory = home / ".gemini" / "tmp" / "project-1" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- Deploys go through the staging cluster first\n")
    got = {m.key: m for m in memory_gemini.read().memories}
    assert sorted(got) == ["gemini:project:deploys_go_through_the_staging_cluster_first",
                           "gemini:project:the_api_listens_on_8443",
                           "gemini:user:i_use_fish_as_my_shell",
                           "gemini:user:my_preferred_test_runner_is_pytest_with_x"]
    assert all(m.source == "agent" for m in got.values())
    assert got["gemini:user:i_use_fish_as_my_shell"].file == str(home / ".gemini" / "GEMINI.md")


def test_gemini_without_the_section_is_empty(home, project):
    (home / ".gemini").mkdir()
    (home / ".gemini" / "GEMINI.md").write_text("# Mine\n- a plain bullet\n")
    with pytest.raises(NotFound, match="holds no '## Gemini Added Memories' facts"):
        memory_gemini.read()


# --- Cursor ------------------------------------------------------------------------------

def test_cursor_rules_with_unquoted_globs(project):
    rules = project / ".cursor" / "rules"
    (rules / "frontend").mkdir(parents=True)
    (rules / "typescript.mdc").write_text(
        "---\ndescription: TypeScript style\nglobs: *.ts,*.tsx\nalwaysApply: false\n---\n"
        "Use strict mode; no any.\n")
    (rules / "frontend" / "react.mdc").write_text(
        "---\ndescription: \"React components\"\nglobs: src/**/*.tsx\n---\nFunction components only.\n")
    (rules / "always.mdc").write_text("---\nalwaysApply: true\n---\nAnswer in English.\n")
    (rules / "notes.md").write_text("not a rule file\n")
    got = {m.key: m for m in memory_cursor.read().memories}
    assert sorted(got) == ["cursor:project:always", "cursor:project:frontend_react", "cursor:project:typescript"]
    assert got["cursor:project:typescript"].text == "TypeScript style; for *.ts,*.tsx\n\nUse strict mode; no any."
    assert got["cursor:project:frontend_react"].text.startswith("React components; for src/**/*.tsx")
    assert got["cursor:project:always"].tags == ("cursor-rule", "always-apply")


def test_frontmatter_is_read_as_text_not_yaml():
    fields, body = memory_files.frontmatter("---\nglobs: *.ts,*.tsx\nmetadata:\n  type: user\n---\nbody\n")
    assert fields == {"globs": "*.ts,*.tsx", "metadata": "", "metadata.type": "user"} and body == "body\n"
    assert memory_files.frontmatter("---\nname: never closed\n") == ({}, "---\nname: never closed\n")


# --- untrusted input ---------------------------------------------------------------------

def test_links_out_of_the_source_are_not_followed(project, tmp_path):
    rules = project / ".cursor" / "rules"
    rules.mkdir(parents=True)
    outside = tmp_path / "secret-notes"
    outside.mkdir()
    (outside / "private.mdc").write_text("private text\n")
    (rules / "ok.mdc").write_text("a rule\n")
    os.symlink(outside / "private.mdc", rules / "link.mdc")
    os.symlink(outside, rules / "folder")
    source = memory_cursor.read()
    assert [m.key for m in source.memories] == ["cursor:project:ok"]
    assert any("a link out of" in note for note in source.notes)


def test_files_and_counts_are_bounded(project, monkeypatch):
    rules = project / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "big.mdc").write_text("x" * (memory_files.FILE_BOUND + 1))
    for n in range(5):
        (rules / f"r{n}.mdc").write_text(f"rule {n} " + "y" * (memory_files.TEXT_BOUND + 10))
    monkeypatch.setattr(memory_files, "FILE_COUNT", 3)
    source = memory_cursor.read()
    assert [m.key for m in source.memories] == ["cursor:project:r0", "cursor:project:r1"]
    assert all(len(m.text) < memory_files.TEXT_BOUND + 40 for m in source.memories)
    assert any("over" in note and "big.mdc" in note for note in source.notes)
    assert any("only the first 3 read" in note for note in source.notes)
