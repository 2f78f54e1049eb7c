"""ctx wire TARGET --mcp: each harness's MCP server entry for `ctx mcp`, with the
same rules as the rest of wire: the change shown, --apply with a backup,
everything else in the file kept, applying twice changes nothing."""

from __future__ import annotations

import json
import tomllib

import pytest

from ctx.harness.base import this_ctx as ctx_program

CLAUDE = {"numStartups": 12, "projects": {"/src/app": {"allowedTools": [], "mcpServers": {}}},
          "mcpServers": {"github": {"type": "stdio", "command": "npx", "args": ["-y", "gh-mcp"], "env": {}}},
          "oauthAccount": {"emailAddress": "me@example.invalid"}, "theme": "därk"}
CODEX = """\
# Codex settings, kept by hand
model = "o3"  # the default model
approval_policy = "on-request"

[mcp_servers.docs]
# the docs server
command = "npx"
args = ["-y", "docs-mcp"]

[profiles.fast]
model = "o4-mini"   # quick answers
"""


def ok(result):
    assert result.exit_code == 0, (result.output, result.stderr)
    return result


def entry(root, author, stdio=False):
    made = {"command": ctx_program(), "args": ["mcp"], "env": {"CTX_HOME": str(root), "CTX_AUTHOR": author}}
    return {"type": "stdio", **made} if stdio else made


def test_claude_code_user_scope_keeps_the_rest_of_claude_json(run, root, home):
    path = home / ".claude.json"
    original = json.dumps(CLAUDE, indent=2, ensure_ascii=False) + "\n"
    path.write_text(original, encoding="utf-8")
    shown = ok(run("wire", "claude-code", "--mcp"))
    assert path.read_text(encoding="utf-8") == original and "not written" in shown.stdout
    assert f"--- {path}\n+++ {path}\n" in shown.stdout and '+    "ctx": {' in shown.stdout
    ok(run("wire", "claude-code", "--mcp", "--apply"))
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["mcpServers"]["ctx"] == entry(root, "Claude", stdio=True)
    data["mcpServers"].pop("ctx")
    assert data == CLAUDE
    assert path.with_name(".claude.json.ctx-backup").read_text(encoding="utf-8") == original
    first = path.read_bytes()
    assert "already wired" in ok(run("wire", "claude-code", "--mcp", "--apply")).stdout
    assert path.read_bytes() == first
    assert not (home / ".claude" / "settings.json").exists()  # the hook is another wiring


def test_claude_code_project_scope_is_dot_mcp_json_and_the_agent_is_named(run, root, home, project):
    ok(run("wire", "claude-code", "--mcp", "--project", "--apply", author="Agent One"))
    data = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))
    assert data == {"mcpServers": {"ctx": entry(root, "Agent One", stdio=True)}}
    ok(run("wire", "claude-code", "--mcp", "--project", "--agent", "Agent Two", "--apply"))
    data = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))
    assert data["mcpServers"]["ctx"]["env"]["CTX_AUTHOR"] == "Agent Two"  # updated in place
    assert not (home / ".claude.json").exists()


def test_codex_edits_the_toml_text_and_keeps_its_comments(run, root, home):
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(CODEX, encoding="utf-8")
    ok(run("wire", "codex", "--mcp", "--apply"))
    text = path.read_text(encoding="utf-8")
    assert text.startswith(CODEX.rstrip("\n"))  # every line kept as it was, comments included
    assert text.endswith('[mcp_servers.ctx]\ncommand = ' + json.dumps(ctx_program()) + '\nargs = ["mcp"]\n'
                         f'env = {{ CTX_HOME = {json.dumps(str(root), ensure_ascii=False)}, CTX_AUTHOR = "Codex" }}\n')
    data = tomllib.loads(text)
    assert data["mcp_servers"]["ctx"] == entry(root, "Codex")
    assert data["mcp_servers"]["docs"]["command"] == "npx" and data["profiles"]["fast"]["model"] == "o4-mini"
    assert path.with_name("config.toml.ctx-backup").read_text(encoding="utf-8") == CODEX
    first = path.read_bytes()
    assert "already wired" in ok(run("wire", "codex", "--mcp", "--apply")).stdout
    assert path.read_bytes() == first


def test_codex_replaces_an_older_ctx_table_where_it_stands(run, root, home, monkeypatch, tmp_path):
    codex_home = tmp_path / "codex home"
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    codex_home.mkdir()
    old = CODEX.replace("[profiles.fast]", "# ctx, wired long ago\n[mcp_servers.ctx]\ncommand = \"/old/ctx\"\n"
                        "args = [\"mcp\"]\n\n[mcp_servers.ctx.env]\nCTX_HOME = \"/old/root\"\n\n"
                        "[profiles.fast]")
    (codex_home / "config.toml").write_text(old, encoding="utf-8")
    ok(run("wire", "codex", "--mcp", "--agent", "Agent One", "--apply"))
    text = (codex_home / "config.toml").read_text(encoding="utf-8")
    assert "/old/" not in text and text.count("[mcp_servers.ctx") == 1
    assert "# ctx, wired long ago\n[mcp_servers.ctx]\n" in text
    assert text.index("[mcp_servers.ctx]") < text.index("[profiles.fast]")  # where it stood
    assert text.endswith('[profiles.fast]\nmodel = "o4-mini"   # quick answers\n')
    assert tomllib.loads(text)["mcp_servers"]["ctx"] == entry(root, "Agent One")
    assert not (home / ".codex").exists()


@pytest.mark.parametrize("layout", [
    'mcp_servers = { ctx = { command = "x" } }\n',
    '[mcp_servers]\nctx.command = "x"\n',
    'model = "o3"\nbroken = \n',
])
def test_codex_refuses_what_it_cannot_edit_safely(run, root, home, layout):
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(layout, encoding="utf-8")
    done = run("wire", "codex", "--mcp", "--apply")
    assert done.exit_code == 2 and "ctx" in done.stderr
    assert path.read_text(encoding="utf-8") == layout


@pytest.mark.parametrize("target,rel,name", [("gemini", ".gemini/settings.json", "Gemini"),
                                             ("cursor", ".cursor/mcp.json", "Cursor")])
def test_gemini_and_cursor(run, root, home, project, target, rel, name):
    path = home / rel
    path.parent.mkdir(parents=True)
    other = {"theme": "GitHub", "mcpServers": {"other": {"command": "other-mcp"}}}
    path.write_text(json.dumps(other, indent=4) + "\n", encoding="utf-8")
    ok(run("wire", target, "--mcp", "--apply"))
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["mcpServers"]["ctx"] == entry(root, name)
    assert data["mcpServers"]["other"] == other["mcpServers"]["other"] and data["theme"] == "GitHub"
    assert path.read_text(encoding="utf-8").startswith('{\n    "theme"')  # its indentation kept
    assert "already wired" in ok(run("wire", target, "--mcp", "--apply")).stdout
    ok(run("wire", target, "--mcp", "--project", "--apply"))
    assert json.loads((project / rel).read_text(encoding="utf-8"))["mcpServers"]["ctx"] == entry(root, name)


def test_the_json_shape_and_what_is_refused(run, root, home):
    shown = json.loads(ok(run("wire", "cursor", "--mcp", "--json")).stdout)
    assert [f["path"] for f in shown["files"]] == [str(home / ".cursor" / "mcp.json")]
    assert shown["changed"] and not shown["applied"]
    for args, words in ((["cursor"], "cursor --mcp"), (["agents-md", "--mcp"], "no MCP side"),
                        (["launcher", "--mcp"], "no MCP side"),
                        (["claude-code", "--mcp", "--only-under", "/tmp"], "--only-under")):
        done = run("wire", *args)
        assert done.exit_code == 2 and words in done.stderr, (args, done.stderr)
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text('{"mcpServers": []}')
    done = run("wire", "cursor", "--mcp", "--apply")
    assert done.exit_code == 2 and "mcpServers" in done.stderr
    assert not root.exists()  # wiring never touches the context
