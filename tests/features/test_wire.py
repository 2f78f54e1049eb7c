"""ctx wire: shows a unified diff without --apply; with it, keeps everything
else in the file, makes a backup, and applying twice changes nothing."""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest

from ctx.harness.edit import BEGIN, END, FAILURE_MARK, HOOK_MARK
from ctx.harness.texts import LAUNCHER_MARK

SETTINGS = {
    "permissions": {"allow": ["Bash(git status)"], "deny": []},
    "model": "sonnet",
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
    },
    "env": {"FOO": "bär"},
}


def ok(result):
    assert result.exit_code == 0, (result.output, result.stderr)
    return result


def ours(data) -> list[dict]:
    return [h for g in data["hooks"]["SessionStart"] for h in g["hooks"] if HOOK_MARK in h["command"]]


def test_claude_code_apply_twice_on_a_settings_file_with_other_content(run, root, home):
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    original = json.dumps(SETTINGS, indent=4, ensure_ascii=False) + "\n"
    path.write_text(original, encoding="utf-8")

    shown = ok(run("wire", "claude-code"))
    assert path.read_text(encoding="utf-8") == original  # without --apply nothing is written
    assert f"--- {path}\n+++ {path}\n" in shown.stdout and "+" in shown.stdout
    assert "not written" in shown.stdout

    ok(run("wire", "claude-code", "--apply"))
    data = json.loads(path.read_text(encoding="utf-8"))
    hook = ours(data)
    assert len(hook) == 1
    assert hook[0]["type"] == "command" and hook[0]["timeout"] > 0
    assert "ctx" in hook[0]["command"] and " start" in hook[0]["command"]
    assert "|| true" in hook[0]["command"] and str(root) in hook[0]["command"]
    # everything else is as it was: take ctx's one group out and compare
    data["hooks"]["SessionStart"] = [g for g in data["hooks"]["SessionStart"]
                                     if not any(HOOK_MARK in h["command"] for h in g["hooks"])]
    failure = data["hooks"].pop("PostToolUseFailure")  # the failing-command hook: a group of its own
    assert [g["matcher"] for g in failure] == ["Bash"] and FAILURE_MARK in failure[0]["hooks"][0]["command"]
    assert "event failure --harness claude-code" in failure[0]["hooks"][0]["command"]
    # everything else is as it was: take ctx's groups (one per event it wires) out and compare
    for event in list(data["hooks"]):
        data["hooks"][event] = [g for g in data["hooks"][event]
                                if not any("# ctx:" in h["command"] for h in g["hooks"])]
        if not data["hooks"][event]:
            del data["hooks"][event]
    assert data == SETTINGS
    assert path.read_text(encoding="utf-8").startswith('{\n    "permissions"')  # its indentation kept
    backup = path.with_name("settings.json.ctx-backup")
    assert backup.read_text(encoding="utf-8") == original

    after_first = path.read_bytes()
    second = ok(run("wire", "claude-code", "--apply"))
    assert "already wired" in second.stdout
    assert path.read_bytes() == after_first
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json", "settings.json.ctx-backup"]


def test_claude_code_on_a_missing_file_and_with_project(run, root, home, project):
    ok(run("wire", "claude-code", "--project", "--apply"))
    path = project / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    assert list(data) == ["hooks"] and len(ours(data)) == 1
    assert not (home / ".claude").exists()
    assert not path.with_name("settings.json.ctx-backup").exists()  # nothing to back up


def test_a_changed_hook_is_replaced_not_doubled(run, root, home, tmp_path):
    path = home / ".claude" / "settings.json"
    ok(run("wire", "claude-code", "--apply"))
    ok(run("wire", "claude-code", "--apply", env={"CTX_HOME": str(tmp_path / "elsewhere")}))
    hooks = ours(json.loads(path.read_text()))
    assert len(hooks) == 1 and "elsewhere" in hooks[0]["command"]


def test_only_under_limits_the_hook_to_a_directory(run, root, home, tmp_path):
    ok(run("wire", "claude-code", "--only-under", str(tmp_path / "projects"), "--apply"))
    command = ours(json.loads((home / ".claude" / "settings.json").read_text()))[0]["command"]
    assert command.startswith('case "$PWD/" in') and str(tmp_path / "projects") in command


def test_invalid_json_is_refused_and_left_alone(run, root, home):
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text("{ not json")
    result = run("wire", "claude-code", "--apply")
    assert result.exit_code == 2 and "not valid JSON" in result.stderr
    assert path.read_text() == "{ not json"
    assert not path.with_name("settings.json.ctx-backup").exists()


def test_agents_md_apply_twice_keeps_the_rest(run, root, project):
    path = project / "AGENTS.md"
    original = "# Project rules\n\n- Run the tests before a commit.\n"
    path.write_text(original)
    shown = ok(run("wire", "agents-md", "--agent", "Agent One"))
    assert "+<!-- ctx:begin -->" in shown.stdout and path.read_text() == original
    ok(run("wire", "agents-md", "--agent", "Agent One", "--apply"))
    text = path.read_text()
    assert text.startswith(original)
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    assert "run `ctx start --max-chars 8000`" in text and "Agent One: sign your session summary" in text
    assert path.with_name("AGENTS.md.ctx-backup").read_text() == original
    first = path.read_bytes()
    assert "already wired" in ok(run("wire", "agents-md", "--agent", "Agent One", "--apply")).stdout
    assert path.read_bytes() == first
    # a new name replaces the block in place; the text after it is kept
    path.write_text(text + "\n## More\nkept\n")
    ok(run("wire", "agents-md", "--apply", author="Agent Two"))
    text = path.read_text()
    assert text.count(BEGIN) == 1 and "Agent Two" in text and "Agent One" not in text
    assert text.startswith(original) and text.endswith("\n## More\nkept\n")
    assert path.with_name("AGENTS.md.ctx-backup.2").exists()  # the first backup is never overwritten


def test_agents_md_needs_a_name(run, root, project):
    result = run("wire", "agents-md")
    assert result.exit_code == 2 and "--agent" in result.stderr


def test_a_broken_block_is_refused(run, root, project):
    (project / "AGENTS.md").write_text(f"{BEGIN}\nhalf a block\n")
    result = run("wire", "agents-md", "--agent", "A", "--apply")
    assert result.exit_code == 2 and "broken" in result.stderr


def test_codex_and_gemini_paths(run, root, home, tmp_path, monkeypatch):
    ok(run("wire", "codex", "--apply"))
    assert "You are\nCodex:" in (home / ".codex" / "AGENTS.md").read_text()
    ok(run("wire", "gemini", "--apply", author="Gem"))
    assert "You are\nGem:" in (home / ".gemini" / "GEMINI.md").read_text()
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    (tmp_path / "codex-home").mkdir()
    (tmp_path / "codex-home" / "AGENTS.override.md").write_text("override\n")
    result = json.loads(ok(run("wire", "codex", "--json")).stdout)
    assert [f["path"] for f in result["files"]] == [str(tmp_path / "codex-home" / "AGENTS.md"),
                                                    str(tmp_path / "codex-home" / "hooks.json")]
    assert result["changed"] and not result["applied"] and result["files"][0]["backup"] is None
    assert all(f["diff"].startswith("--- /dev/null\n") for f in result["files"])
    assert any("AGENTS.override.md" in note for note in result["notes"])
    assert any("/hooks" in note and "trust" in note for note in result["notes"])  # what the user must do
    assert not (tmp_path / "codex-home" / "AGENTS.md").exists()
    assert not (tmp_path / "codex-home" / "hooks.json").exists()


@pytest.mark.slow
def test_launcher_is_written_executable_and_runs(run, root, home, tmp_path):
    ok(run("set", "current_focus", "Ship the upload fix"))
    shown = ok(run("wire", "launcher"))
    assert "+#!/bin/sh" in shown.stdout
    path = home / ".local" / "bin" / "ctx-launch"
    assert not path.exists()
    ok(run("wire", "launcher", "--apply", author="Agent One"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o755 and LAUNCHER_MARK in path.read_text()
    assert "already wired" in ok(run("wire", "launcher", "--apply", author="Agent One")).stdout
    # a fake harness that records its opening prompt
    fake = tmp_path / "fake-harness"
    fake.write_text('#!/bin/sh\nprintf "%s" "$1" > "$OUT"\n')
    fake.chmod(0o755)
    out = tmp_path / "prompt.txt"
    env = dict(os.environ, CTX_HOME=str(root), OUT=str(out))
    subprocess.run(["sh", str(path), str(fake), "Fix", "the", "bug"], env=env, check=True, timeout=60)
    prompt = out.read_text()
    assert "Ship the upload fix" in prompt and prompt.endswith("\n\nFix the bug")
    subprocess.run(["sh", str(path), str(fake)], env=env, check=True, timeout=60)
    assert out.read_text().endswith("READ ONLY. Say in a few lines where the last session left off, "
                                    "then wait for my instruction.")


def test_a_launcher_ctx_did_not_write_is_left_alone(run, root, home):
    path = home / ".local" / "bin" / "ctx-launch"
    path.parent.mkdir(parents=True)
    path.write_text("#!/bin/sh\necho mine\n")
    result = run("wire", "launcher", "--apply")
    assert result.exit_code == 2 and "not written by ctx" in result.stderr
    assert path.read_text() == "#!/bin/sh\necho mine\n"


def test_wire_never_touches_the_context(run, root, home):
    ok(run("wire", "claude-code", "--apply"))
    ok(run("wire", "gemini", "--apply"))
    assert not root.exists()


def test_rewiring_claude_code_updates_an_old_hook_command_in_place(run, root, home):
    """A settings file holding the hook an older ctx wrote (ctx start, no budget): --apply
    replaces that one command with the budgeted one, where it stands; the rest is kept."""
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    old = f"CTX_HOME=/old/root /usr/bin/ctx start 2>/dev/null || true  {HOOK_MARK}"
    settings = json.loads(json.dumps(SETTINGS))
    settings["hooks"]["SessionStart"].append({"hooks": [{"type": "command", "command": old, "timeout": 10}]})
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    ok(run("wire", "claude-code", "--apply"))
    data = json.loads(path.read_text(encoding="utf-8"))
    mine = ours(data)
    assert len(mine) == 1 and "start --max-chars 9000 " in mine[0]["command"]
    assert data["hooks"]["SessionStart"][0] == SETTINGS["hooks"]["SessionStart"][0]  # the other hook
    assert data["hooks"]["SessionStart"][1]["hooks"][0] is not None and len(data["hooks"]["SessionStart"]) == 2
    assert {k: v for k, v in data.items() if k != "hooks"} == {k: v for k, v in SETTINGS.items() if k != "hooks"}
    again = ok(run("wire", "claude-code", "--apply"))
    assert "already wired" in again.stdout


@pytest.mark.parametrize("target,budget", [("codex", 8000), ("agents-md", 8000), ("gemini", 16000)])
def test_each_pointer_carries_its_harness_budget(run, root, home, project, target, budget):
    ok(run("wire", target, "--agent", "Agent One", "--apply"))
    path = {"codex": home / ".codex" / "AGENTS.md", "agents-md": project / "AGENTS.md",
            "gemini": home / ".gemini" / "GEMINI.md"}[target]
    assert f"run `ctx start --max-chars {budget}`" in path.read_text(encoding="utf-8")


def test_gemini_writes_its_hook_into_settings_and_the_pointer_keeping_the_rest(run, root, home):
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    own = {"security": {"auth": {"selectedType": "gemini-api-key"}},
           "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo mine", "timeout": 500}]}]},
           "mcpServers": {"other": {"command": "other-mcp"}}}
    path.write_text(json.dumps(own, indent=4) + "\n", encoding="utf-8")
    ok(run("wire", "gemini", "--apply", author="Gem"))
    data = json.loads(path.read_text(encoding="utf-8"))
    hook = ours(data)
    assert len(hook) == 1 and hook[0]["type"] == "command" and hook[0]["timeout"] == 15000  # milliseconds
    assert "start --max-chars 16000 --format hook" in hook[0]["command"] and "CTX_AUTHOR=Gem " in hook[0]["command"]
    assert "2>/dev/null || true" in hook[0]["command"] and str(root) in hook[0]["command"]
    data["hooks"]["SessionStart"] = data["hooks"]["SessionStart"][:1]
    after = data["hooks"].pop("AfterTool")  # the failing-command hook
    assert after[0]["matcher"] == "run_shell_command" and after[0]["hooks"][0]["timeout"] == 10000
    assert sorted(data["hooks"]) == ["AfterAgent", "SessionEnd", "SessionStart"]  # its stop and its end
    assert "event stop --harness gemini" in data["hooks"]["AfterAgent"][0]["hooks"][0]["command"]
    data["hooks"] = {"SessionStart": data["hooks"]["SessionStart"]}
    assert data == own  # the operator's keys and hooks kept
    assert "You are\nGem:" in (home / ".gemini" / "GEMINI.md").read_text(encoding="utf-8")
    first = (path.read_bytes(), (home / ".gemini" / "GEMINI.md").read_bytes())
    assert "already wired" in ok(run("wire", "gemini", "--apply", author="Gem")).stdout
    assert (path.read_bytes(), (home / ".gemini" / "GEMINI.md").read_bytes()) == first
    # the MCP entry goes into the same file, beside the hook
    ok(run("wire", "gemini", "--mcp", "--apply", author="Gem"))
    data = json.loads(path.read_text(encoding="utf-8"))
    assert len(ours(data)) == 1 and "trust" not in data["mcpServers"]["ctx"]
    assert set(data["mcpServers"]) == {"other", "ctx"}


def test_gemini_project_and_trust(run, root, home, project):
    shown = json.loads(ok(run("wire", "gemini", "--project", "--json", author="Gem")).stdout)
    assert [f["path"] for f in shown["files"]] == [str(project / ".gemini" / "settings.json"),
                                                   str(project / "GEMINI.md")]
    trusted = run("wire", "gemini", "--mcp", "--trust", "--apply")
    assert trusted.exit_code == 0 and "without asking" in trusted.stderr
    assert json.loads((home / ".gemini" / "settings.json").read_text())["mcpServers"]["ctx"]["trust"] is True
    untrusted = run("wire", "gemini", "--mcp", "--apply")  # asked again without --trust: the key goes
    assert untrusted.exit_code == 0 and "--trust" in untrusted.stderr
    assert "trust" not in json.loads((home / ".gemini" / "settings.json").read_text())["mcpServers"]["ctx"]
    for args in (["gemini", "--trust"], ["claude-code", "--mcp", "--trust"]):
        done = run("wire", *args)
        assert done.exit_code == 2 and "--trust" in done.stderr, (args, done.stderr)


@pytest.mark.parametrize("harness_form", ["text", "hook"])
def test_start_prints_the_payload_or_the_hooks_json(run, root, harness_form):
    ok(run("set", "current_focus", "Ship the upload fix"))
    plain = ok(run("start", "--max-chars", "3000")).stdout
    shown = ok(run("start", "--max-chars", "3000", "--format", harness_form)).stdout
    if harness_form == "text":
        assert shown == plain
        return
    assert shown.endswith("}\n") and shown.count("\n") == 1  # one line of JSON, nothing else on stdout
    assert json.loads(shown) == {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": plain}}
