"""ctx import --from HARNESS: what each harness's memory holds, as entries that search and
get find, one commit per import, idempotent, changes and deletions at the source, memories
holding a credential, --dry-run, --json, and a missing or empty source."""

from __future__ import annotations

import json

from support.gitutil import commit_count, git_out, subject
from support.memories import CLAUDE_FEEDBACK, claude_folder, codex_root
from support.stores import read_entries, snapshot

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8" * 2 + "i9J0"
FEEDBACK = "claude-code:project:feedback_tests"
UPLOAD = "claude-code:project:project_upload_limit"


def ok(result):
    assert result.exit_code == 0, (result.output, result.stderr)
    return result


def imported(run, *args, author=None):
    return json.loads(ok(run("import", "--from", *args, "--json", author=author)).stdout)


def keys(rows):
    return sorted(row["key"] for row in rows)


def test_claude_memories_become_entries_search_and_get_find(run, root, home, project):
    claude_folder(home, project.resolve())
    ok(run("set", "anchor", "x"))
    before = commit_count(root)
    result = imported(run, "claude-code")
    assert keys(result["added"]) == [FEEDBACK, UPLOAD, "claude-code:project:reference_dashboards",
                                     "claude-code:project:user_role"]
    assert result["from"] == "claude-code" and result["changed"] == [] and result["gone"] == []
    assert commit_count(root) == before + 1
    assert subject(root) == "import --from claude-code: 4 added, 0 changed"
    operator = read_entries(root, "operator")
    entry = operator[FEEDBACK]
    # the operator's knowledge, typed in by the harness: never shown as the operator's typing
    assert entry["source"] == "operator" and entry["author"] == "claude-code memory"
    assert entry["basis"] == "reported" and {"imported", "claude-code", "memory-feedback"} <= set(entry["tags"])
    assert "feedback_tests.md" in entry["derivation"] and "claude-code (feedback memory)" in entry["derivation"]
    shared = read_entries(root, "shared")
    assert shared[UPLOAD]["source"] == "agent" and shared[UPLOAD]["author"] == "claude-code memory"
    got = ok(run("get", FEEDBACK, "--store", "operator")).stdout
    assert "Run `make test` before each commit" in got and "by claude-code memory" in got
    found = ok(run("search", "body limit is 2 GB")).stdout
    assert UPLOAD in found


def test_the_brief_names_the_harness_that_typed_it(run, root, home, project):
    claude_folder(home, project.resolve())
    ok(run("set", "own_rule", "Ask before deleting", "--store", "operator", "--tag", "directive"))
    imported(run, "claude-code")
    out = ok(run("brief")).stdout
    lines = out[out.index("STANDING INSTRUCTIONS"):].splitlines()[1:4]
    assert "Ask before deleting" in lines[0] and "typed by" not in lines[0]  # the operator's own first
    assert all("(typed by claude-code memory)" in line for line in lines[1:3]), lines
    assert {"Run the tests before a commit", "Role"} == {line.split(": ", 1)[1].split(" — ")[0] for line in lines[1:3]}


def test_an_import_s_history_scans_clean(run, root, home, project):
    """ctx's own trailers naming the imported keys are not credentials (issue 39)."""
    claude_folder(home, project.resolve())
    imported(run, "claude-code")
    assert run("scan", "--history").exit_code == 0


def test_importing_again_adds_nothing_and_commits_nothing(run, root, home, project):
    claude_folder(home, project.resolve())
    imported(run, "claude-code")
    count, snap = commit_count(root), snapshot(root)
    again = imported(run, "claude-code")
    assert again["added"] == [] and again["changed"] == [] and len(again["kept"]) == 4
    assert commit_count(root) == count and snapshot(root) == snap


def test_a_changed_memory_updates_its_entry_and_history_shows_both(run, root, home, project):
    folder = claude_folder(home, project.resolve())
    imported(run, "claude-code")
    (folder / "feedback_tests.md").write_text(CLAUDE_FEEDBACK.replace("`make test`", "`make check`"))
    result = imported(run, "claude-code")
    assert keys(result["changed"]) == [FEEDBACK] and result["added"] == []
    assert "make check" in read_entries(root, "operator")[FEEDBACK]["value"]
    rows = json.loads(ok(run("history", FEEDBACK, "--store", "operator", "--json")).stdout)
    values = [(row["entry"] or {}).get("value", "") for row in rows]
    assert len(rows) == 2 and any("make test" in v for v in values) and any("make check" in v for v in values)


def test_a_memory_deleted_at_the_source_is_kept_and_said(run, root, home, project):
    folder = claude_folder(home, project.resolve())
    imported(run, "claude-code")
    (folder / "project_upload_limit.md").unlink()
    result = imported(run, "claude-code")
    assert result["gone"] == [{"store": "shared", "key": UPLOAD}]
    assert UPLOAD in read_entries(root, "shared")
    human = ok(run("import", "--from", "claude-code")).stdout
    assert f"? shared/{UPLOAD}  (gone from claude-code's memory; the entry is kept" in human
    assert "1 gone at the source (kept)" in human


def test_a_memory_holding_a_credential_is_named_and_the_rest_imported(run, root, home, project):
    folder = claude_folder(home, project.resolve())
    (folder / "reference_token.md").write_text(f"---\nname: CI token\nmetadata:\n  type: reference\n---\n"
                                               f"the CI uses token {SECRET}\n")
    result = ok(run("import", "--from", "claude-code"))
    assert "! claude-code:project:reference_token  (not imported: " in result.stdout
    assert "reference_token.md" in result.stdout and "4 added" in result.stdout
    assert SECRET not in result.stdout + result.stderr + git_out(root, "log", "-p", "--all")
    assert "claude-code:project:reference_token" not in read_entries(root, "shared")
    data = imported(run, "claude-code")
    assert [s["key"] for s in data["skipped"]] == ["claude-code:project:reference_token"]
    assert data["gone"] == []  # skipped is not gone


def test_dry_run_writes_nothing_and_lists_what_would_change(run, root, home, project):
    claude_folder(home, project.resolve())
    ok(run("set", "anchor", "x"))
    snap = snapshot(root)
    human = ok(run("import", "--from", "claude-code", "--dry-run"))
    assert f"+ operator/{FEEDBACK}" in human.stdout and "dry run: nothing written" in human.stdout
    dry = imported(run, "claude-code", "--dry-run")
    assert snapshot(root) == snap
    real = imported(run, "claude-code")
    assert dry["dry_run"] is True and {k: v for k, v in dry.items() if k != "dry_run"} == \
        {k: v for k, v in real.items() if k != "dry_run"}


def test_missing_and_empty_sources_are_one_line_and_exit_1(run, root, home, project):
    for harness in ("claude-code", "codex", "gemini", "cursor"):
        result = run("import", "--from", harness)
        assert result.exit_code == 1, (harness, result.output)
        assert result.stderr.count("\n") == 1 and "nothing imported" in result.stderr
    (project / ".cursor" / "rules").mkdir(parents=True)
    result = run("import", "--from", "cursor")
    assert result.exit_code == 1 and "holds no Cursor rules" in result.stderr
    assert not (root / ".git").exists()


def test_from_refuses_the_export_file_options(run, project):
    result = run("import", "--from", "cursor", "--store", "shared")
    assert result.exit_code == 2 and "for export files" in result.stderr
    assert run("import").exit_code == 2
    assert run("import", "--from", "vscode").exit_code == 2


def test_an_agent_s_import_passes_enforce_stores(run, root, home, project):
    claude_folder(home, project.resolve())
    ok(run("config", "enforce-stores", "true"))
    result = imported(run, "claude-code", author="Agent One")
    assert len(result["added"]) == 4
    assert read_entries(root, "operator")[FEEDBACK]["author"] == "claude-code memory"
    assert git_out(root, "log", "-1", "--format=%an").strip() == "Agent One"


def test_codex_memories_with_a_path_and_operator_preferences(run, root, home, project, tmp_path):
    memories = codex_root(tmp_path / "elsewhere", project.resolve())
    result = imported(run, "codex", str(memories))
    assert "codex:project:payments_service_migrations" in keys(result["added"])
    assert read_entries(root, "operator")["codex:user:ask_before_running_database_migrations"]["source"] == "operator"
    assert "codex:user:make_lint_needs_golangci_lint_1_61_or_later" in read_entries(root, "shared")


def test_control_characters_are_kept_in_the_value_and_escaped_when_shown(run, root, project):
    rules = project / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "term.mdc").write_text("Colour \x1b[31mred\x1b[0m output\n")
    imported(run, "cursor")
    assert "\x1b" in read_entries(root, "shared")["cursor:project:term"]["value"]
    assert "\x1b" not in ok(run("get", "cursor:project:term")).stdout


def test_a_file_name_with_a_line_break_stays_one_line_in_the_derivation(run, root, project):
    rules = project / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "two\nlines.mdc").write_text("a rule\n")
    imported(run, "cursor")
    derivation = read_entries(root, "shared")["cursor:project:two_lines"]["derivation"]
    assert "\n" not in derivation and "two\\nlines.mdc" in derivation


def test_a_credential_in_a_memory_s_first_words_is_not_shown_in_its_name(run, root, home, project):
    (home / ".gemini").mkdir()
    (home / ".gemini" / "GEMINI.md").write_text(f"## Gemini Added Memories\n- {SECRET} is the CI token\n"
                                                 "- The API listens on 8443\n")
    result = ok(run("import", "--from", "gemini"))
    assert "! gemini:user:(name withheld: it spells the credential)" in result.stdout
    assert SECRET.lower()[4:20] not in result.stdout.lower() and "1 added" in result.stdout
