"""CtxMemoryTool as ctx: each memory file one entry, each change one commit by the agent,
what the operator does with them (get, history, revert), and what is refused."""

from __future__ import annotations

import json

import pytest
from anthropic.lib.tools import ToolError

from ctx.context import Context
from ctx.memorytool import FILE_BOUND, KEY_PREFIX, TAG, CtxMemoryTool, key_of, resolve
from ctx.model import KEY_BOUND
from support.gitutil import author, commit_count, log_rows, message, trailers

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8" * 2 + "i9J0"  # a GitHub token's shape


def call(tool: CtxMemoryTool, command: str, **fields) -> str:
    result = tool.call({"command": command, **fields})
    assert isinstance(result, str)  # every command's result is text, as the reference's
    return result


def refused(tool: CtxMemoryTool, command: str, **fields) -> str:
    with pytest.raises(ToolError) as caught:
        call(tool, command, **fields)
    return str(caught.value)


@pytest.fixture
def tool(root, monkeypatch) -> CtxMemoryTool:
    """The tool as an application makes it: CTX_AUTHOR names the agent, git records."""
    monkeypatch.setenv("CTX_AUTHOR", "claude-opus")
    return CtxMemoryTool()


@pytest.mark.slow  # five commits and a history, read through git
def test_each_change_is_one_commit_by_the_agent(tool, root, run):
    call(tool, "create", path="/memories/prefs.md", file_text="likes short answers\n")
    assert commit_count(root) == 1  # the context's first commit is this write's
    call(tool, "str_replace", path="/memories/prefs.md", old_str="short", new_str="terse")
    call(tool, "insert", path="/memories/prefs.md", insert_line=1, insert_text="uses vim")
    history = run("history", "memories/prefs.md", "--json")
    assert history.exit_code == 0, history.stderr
    assert [v["entry"]["value"] for v in json.loads(history.stdout)] == [
        "likes terse answers\nuses vim\n", "likes terse answers\n", "likes short answers\n"]
    call(tool, "rename", old_path="/memories/prefs.md", new_path="/memories/user/prefs.md")
    call(tool, "delete", path="/memories/user")
    assert commit_count(root) == 5
    assert log_rows(root, "%an|%s") == [
        "claude-opus|memory delete /memories/user",
        "claude-opus|memory rename /memories/prefs.md /memories/user/prefs.md",
        "claude-opus|memory insert /memories/prefs.md",
        "claude-opus|memory str_replace /memories/prefs.md",
        "claude-opus|memory create /memories/prefs.md"]
    assert ("Ctx-Memory-Command", "rename") in trailers(message(root, "HEAD~1"))
    assert {("Ctx-Key", "memories/prefs.md"), ("Ctx-Key", "memories/user/prefs.md")} <= \
        set(trailers(message(root, "HEAD~1")))


def test_an_entry_is_the_file_the_agent_wrote(tool, run, entries):
    call(tool, "create", path="/memories/project/ports.md", file_text="api 8443\n")
    entry = entries("shared")[KEY_PREFIX + "project/ports.md"]
    assert entry["value"] == "api 8443\n"
    assert (entry["source"], entry["author"], entry["tags"], entry["basis"]) == \
        ("agent", "claude-opus", [TAG], "inferred")
    shown = run("get", "memories/project/ports.md")
    assert shown.exit_code == 0 and "api 8443" in shown.stdout
    found = run("search", "8443")
    assert "memories/project/ports.md" in found.stdout


def test_the_operator_reverts_what_the_model_changed(tool, root, run):
    call(tool, "create", path="/memories/plan.md", file_text="ship friday\n")
    call(tool, "str_replace", path="/memories/plan.md", old_str="friday", new_str="never")
    undone = run("revert", "HEAD")
    assert undone.exit_code == 0, undone.stderr
    assert "ship friday" in call(tool, "view", path="/memories/plan.md")


def test_a_rename_keeps_the_memory_whole(tool, entries, monkeypatch):
    call(tool, "create", path="/memories/a/one.md", file_text="1")
    call(tool, "create", path="/memories/a/b/two.md", file_text="2")
    monkeypatch.setenv("CTX_AUTHOR", "someone-else")
    moved = CtxMemoryTool()
    call(moved, "rename", old_path="/memories/a", new_path="/memories/z")
    shared = entries("shared")
    assert sorted(k for k in shared if k.startswith(KEY_PREFIX)) == ["memories/z/b/two.md", "memories/z/one.md"]
    assert shared["memories/z/one.md"]["value"] == "1" and shared["memories/z/one.md"]["tags"] == [TAG]
    assert shared["memories/z/one.md"]["author"] == "someone-else"


def test_the_author_argument_wins_and_one_is_needed(root, monkeypatch):
    monkeypatch.setenv("CTX_AUTHOR", "from-env")
    tool = CtxMemoryTool(author="given")
    call(tool, "create", path="/memories/x.md", file_text="x")
    assert author(root)[0] == "given"
    monkeypatch.delenv("CTX_AUTHOR")
    with pytest.raises(ValueError, match="needs an author"):
        CtxMemoryTool()


def test_a_failed_command_writes_nothing(tool, root, entries):
    call(tool, "create", path="/memories/n.md", file_text="a a\n")
    before, count = entries("shared"), commit_count(root)
    refused(tool, "str_replace", path="/memories/n.md", old_str="a", new_str="b")
    refused(tool, "insert", path="/memories/n.md", insert_line=5, insert_text="b")
    refused(tool, "create", path="/memories/n.md", file_text="b")
    refused(tool, "rename", old_path="/memories/gone.md", new_path="/memories/m.md")
    refused(tool, "delete", path="/memories/gone.md")
    assert entries("shared") == before and commit_count(root) == count


def test_a_credential_is_refused(tool, root, entries):
    text = refused(tool, "create", path="/memories/keys.md", file_text=f"token {SECRET}\n")
    assert not (root / ".git").exists()  # refused before anything was written
    assert text.startswith("The file /memories/keys.md was not written: its text looks like it holds a credential")
    assert SECRET not in text
    call(tool, "create", path="/memories/keys.md", file_text="token PLACEHOLDER\n")
    count = commit_count(root)
    # a credential put together by an edit is refused too
    text = refused(tool, "str_replace", path="/memories/keys.md", old_str="PLACEHOLDER", new_str=SECRET)
    assert "credential" in text
    refused(tool, "insert", path="/memories/keys.md", insert_line=0, insert_text=SECRET)
    assert entries("shared")["memories/keys.md"]["value"] == "token PLACEHOLDER\n"
    assert commit_count(root) == count


def test_a_path_no_key_can_hold_is_refused(tool):
    text = refused(tool, "create", path="/memories/my notes.md", file_text="x")
    assert text.startswith("The path /memories/my notes.md cannot be kept in ctx")
    long = "/memories/" + "a" * (KEY_BOUND - len(KEY_PREFIX) + 1)
    assert "cannot be kept in ctx" in refused(tool, "create", path=long, file_text="x")
    call(tool, "create", path=long[:-1], file_text="x")  # the longest that fits
    assert "escape" in refused(tool, "create", path="/memories/\x1b[2J/../../x", file_text="x")
    shown = refused(tool, "view", path="/etc/\x1b]52;c;evil\x07")
    assert "\x1b" not in shown and "\\x1b" in shown


def test_what_the_reference_lets_out_as_an_os_error_is_a_tool_error(tool):
    call(tool, "create", path="/memories/f.md", file_text="x")
    call(tool, "create", path="/memories/d/g.md", file_text="y")
    assert refused(tool, "create", path="/memories/f.md/under.md", file_text="z") == \
        "The path /memories/f.md/under.md cannot be made: /memories/f.md is a file, not a directory"
    assert refused(tool, "rename", old_path="/memories/d", new_path="/memories/d/inner") == \
        "Cannot move /memories/d into itself"
    assert refused(tool, "rename", old_path="/memories/d/g.md", new_path="/memories/f.md/g.md") == \
        "The path /memories/f.md/g.md cannot be made: /memories/f.md is a file, not a directory"


def test_entries_written_by_hand_are_memory_files(tool, run):
    assert run("set", "memories/by_hand.md", "first\nsecond").exit_code == 0
    assert run("set", "notes_elsewhere", "not a memory").exit_code == 0
    assert run("set", "memories/esc.md", "bell \x07 here").exit_code == 0
    listing = call(tool, "view", path="/memories")
    assert "/memories/by_hand.md" in listing and "notes_elsewhere" not in listing
    assert call(tool, "view", path="/memories/by_hand.md").endswith("     1\tfirst\n     2\tsecond")
    shown = call(tool, "view", path="/memories/esc.md")
    assert "\x07" not in shown and "bell \\x07 here" in shown


def test_a_directory_is_there_while_a_file_is_under_it(tool):
    call(tool, "create", path="/memories/d/e/f.md", file_text="abc")
    assert call(tool, "view", path="/memories/d").splitlines()[1:] == \
        ["3B\t/memories/d", "3B\t/memories/d/e/", "3B\t/memories/d/e/f.md"]
    call(tool, "delete", path="/memories/d/e/f.md")
    assert refused(tool, "view", path="/memories/d") == \
        "The path /memories/d does not exist. Please provide a valid path."
    assert call(tool, "view", path="/memories").splitlines()[1:] == ["0B\t/memories"]


def test_another_store_and_context(root):
    tool = CtxMemoryTool(context=Context(root, author="agent-x"), store="agent")
    call(tool, "create", path="/memories/w.md", file_text="working note")
    assert Context(root).get("memories/w.md", "agent")["value"] == "working note"
    assert tool.clear_all_memory() == "All memory cleared"
    assert Context(root).find("memories/w.md", "agent") is None


def test_paths_resolve_as_the_reference_resolves_them():
    assert resolve("/memories") == "" and resolve("/memories/") == ""
    assert resolve("/memories//a/./b/../c.md") == "a/c.md"
    assert resolve("/memories/../memories/a") == "a"  # back inside: the reference resolves it so
    assert resolve("/memoriesX/a") == "X/a"  # the reference checks the prefix only
    for outside in ("/memories/..", "/memories/../x", "/memories/a/../../x", "/x/memories", "memories/a"):
        with pytest.raises(ToolError):
            resolve(outside)
    assert key_of("a/c.md", "/memories/a/c.md") == "memories/a/c.md"


def test_a_command_sent_wrong_is_one_line_for_the_model(tool):
    """The SDK builds a command without checking its fields: each is checked here."""
    assert refused(tool, "view", path=7) == "The view command needs `path`, a string"
    assert refused(tool, "create", path="/memories/a.md") == "The create command needs `file_text`, a string"
    assert refused(tool, "insert", path="/memories/a.md", insert_line="one", insert_text="x") == \
        "The insert command needs `insert_line`, a number"
    assert refused(tool, "view", path="/memories/a.md", view_range=["first", 2]).startswith("`view_range` must be")
    assert refused(tool, "format", path="/memories").startswith("Unknown command: format; use one of view, create")
    with pytest.raises(ToolError, match="Unknown command"):
        tool.call({"path": "/memories"})


def test_a_memory_file_has_a_bound(tool, entries):
    big = "x" * (FILE_BOUND + 1)
    assert refused(tool, "create", path="/memories/big.md", file_text=big) == (
        f"The file /memories/big.md was not written: {FILE_BOUND + 1:,} bytes, more than the 1 MiB ctx keeps "
        "in one memory file")
    call(tool, "create", path="/memories/big.md", file_text=big[:-2])
    assert "more than the 1 MiB" in refused(tool, "insert", path="/memories/big.md", insert_line=0, insert_text="yy")
    assert entries("shared")["memories/big.md"]["value"] == big[:-2]


@pytest.mark.slow  # two writers in threads, each write a commit
def test_two_tools_on_one_context_lose_no_change(root):
    """Each command reads the file under the context lock: edits made at once all stay."""
    import threading
    first = CtxMemoryTool(author="agent-one")
    call(first, "create", path="/memories/log.md", file_text="")
    tools = [first, CtxMemoryTool(author="agent-two")]

    def write(tool: CtxMemoryTool, name: str) -> None:
        for number in range(8):
            call(tool, "insert", path="/memories/log.md", insert_line=0, insert_text=f"{name} {number}")
    threads = [threading.Thread(target=write, args=(tool, tool.context.author)) for tool in tools]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = Context(root).get("memories/log.md")["value"].splitlines()
    assert sorted(lines) == sorted(f"{name} {n}" for name in ("agent-one", "agent-two") for n in range(8))
    assert commit_count(root) == 17
