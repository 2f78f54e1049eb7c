"""The MCP tools are built from the command table: their schemas, hints and
argument handling, checked in process against the table itself (no SDK, no
server); then the server's call path in process, without a transport."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

from ctx.cli.mcp.tools import JSON_DEST, build, has_remote, structured, tool_commands, tool_name, tools
from ctx.cli.params import FILTERS, FLAG, INT, MULTI, WORDS
from ctx.cli.run import handler_of
from ctx.cli.table import commands, find
from ctx.errors import InvalidArgument
from ctx.model import BASES, STORES

TOOL_COMMANDS = tuple(c.name for c in tool_commands())


def taken(command) -> set[str]:
    """The parameters ``command``'s handler takes by name; one that takes ``**given`` gets
    the filter options (``ctx/cli/commands/entries.filters``)."""
    parameters = inspect.signature(handler_of(command)).parameters
    names = {p for p, v in parameters.items() if v.kind is not v.VAR_KEYWORD} - {"run"}
    if any(v.kind is v.VAR_KEYWORD for v in parameters.values()):
        names |= {o.dest for o in FILTERS}
    return names

TYPES = {FLAG: "boolean", INT: "integer", MULTI: "array", WORDS: "string", "text": "string"}


def test_one_tool_per_command_named_as_the_command():
    names = [t.name for t in tools()]
    assert names == ["start", "brief", "get", "set", "amend", "supersede", "resolve", "basis", "delete",
                     "search", "list", "send", "inbox", "handoff", "remind", "review", "history", "log",
                     "diff", "summary_new", "sync"]
    assert [t.name for t in tools(with_remote=False)] == names[:-1]
    assert all(find(name) for name in TOOL_COMMANDS)


def test_what_a_command_does_is_in_its_row():
    """The rows say which commands reach a remote, pull, are slow, start no auto-sync
    push, and read stdin: the front door and the MCP server read only that."""
    rows = {c.name: c for c in commands()}
    assert {n for n, c in rows.items() if c.network} == {"sync", "pull", "push", "clone"}
    assert {n for n, c in rows.items() if c.pulls} == {"sync", "pull"}
    assert {n for n, c in rows.items() if c.slow} == {"sync", "clone", "pull", "push", "purge", "scan", "reindex"}
    no_push = {n for n, c in rows.items() if not c.reads and not c.auto_sync}
    assert {"sync", "pull", "push", "clone", "purge", "mcp", "wire", "merge-driver", "remote add"} <= no_push
    assert all(c.auto_sync for n, c in rows.items() if n in ("set", "delete", "summary new", "config"))
    stdin = rows["summary new"].stdin
    assert stdin is not None and stdin.option in [o.dest for o in rows["summary new"].options]
    assert [n for n, c in rows.items() if c.stdin is not None] == ["summary new"]
    for name, row in rows.items():  # every handler is found, and takes the row's parameters
        if row.handler is None:
            assert row.group, name
            continue
        assert taken(row) == set(row.defaults()), name


@pytest.mark.parametrize("name", TOOL_COMMANDS)
def test_each_schema_is_the_table_row(name):
    command = find(name)
    tool = build(command)
    schema = tool.input_schema()
    props = schema["properties"]
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    expected = [a.dest for a in command.args] + [o.dest for o in command.options
                                                 if o.dest != JSON_DEST and o.dest != "from_stdin" and not o.cli_only]
    if name == "summary new":
        expected.append("text")
    assert list(props) == expected
    assert JSON_DEST not in props
    params = {**{a.dest: a for a in command.args}, **{o.dest: o for o in command.options}}
    for dest, prop in props.items():
        if dest not in params:  # summary_new's text: what --from-stdin reads
            assert prop["type"] == "string"
            continue
        param = params[dest]
        assert prop["type"] == TYPES[param.kind], dest
        if param.choices is not None:
            enum = prop["items"]["enum"] if param.kind == MULTI else prop["enum"]
            assert enum == list(param.choices), dest
        else:
            assert "enum" not in prop
        default = getattr(param, "default", None)
        if param.kind == FLAG:
            assert prop["default"] is False
        elif param.kind == MULTI:
            assert prop["default"] == []
        elif default not in (None, ""):
            assert prop["default"] == default, dest
        else:
            assert "default" not in prop, dest
        if getattr(param, "minimum", None) is not None:
            assert prop["minimum"] == param.minimum
        assert prop.get("description", "") in (param.help, param.help.replace(
            " (its words are joined by spaces)", ""))
    required = [a.dest for a in command.args if a.required] + [o.dest for o in command.options if o.required]
    if name == "summary new":
        required.append("text")
    assert schema["required"] == required
    definition = tool.definition()
    assert definition["name"] == tool_name(command) and definition["description"] == command.help
    json.dumps(definition)  # plain JSON, as it goes on the wire


@pytest.mark.parametrize("name", TOOL_COMMANDS)
def test_hints_come_from_the_table(name):
    command = find(name)
    hints = build(command).annotations()
    assert hints["readOnlyHint"] is command.reads
    if command.reads:
        assert "destructiveHint" not in hints
    else:
        assert hints["destructiveHint"] is command.destructive
        assert hints["idempotentHint"] is command.idempotent
    assert hints["openWorldHint"] is (name == "sync")
    assert hints["title"] == command.summary


def test_the_hints_an_agent_relies_on():
    by = {t.name: t.annotations() for t in tools()}
    assert by["get"]["readOnlyHint"] and by["search"]["readOnlyHint"] and by["start"]["readOnlyHint"]
    assert by["set"]["readOnlyHint"] is False and by["set"]["destructiveHint"] is False
    assert by["delete"]["destructiveHint"] is True and by["delete"]["idempotentHint"] is False
    assert by["set"]["idempotentHint"] is True and by["resolve"]["idempotentHint"] is True


def test_words_are_one_string_and_the_store_and_basis_name_their_values():
    props = build(find("set")).input_schema()["properties"]
    assert props["value"] == {"type": "string", "description": "The value."}
    assert props["store"]["enum"] == list(STORES) and props["store"]["default"] == "shared"
    assert props["basis"]["enum"] == list(BASES)
    assert props["tags"]["type"] == "array"
    assert build(find("amend")).input_schema()["properties"]["note"]["type"] == "string"
    assert build(find("basis")).input_schema()["required"] == ["key", "basis"]
    assert build(find("supersede")).input_schema()["required"] == ["key", "by"]
    assert build(find("search")).input_schema()["properties"]["limit"] == {
        "type": "integer", "minimum": 0, "default": 50, "description": "At most this many."}


@pytest.mark.parametrize("name", TOOL_COMMANDS)
def test_values_are_exactly_the_handlers_parameters(name):
    """With only the required arguments, a call gives the handler every parameter it takes."""
    command = find(name)
    tool = build(command)
    sample = {"string": "x", "integer": 1, "boolean": False, "array": []}
    arguments = {}
    for dest in tool.input_schema()["required"]:
        prop = tool.input_schema()["properties"][dest]
        arguments[dest] = prop["enum"][0] if "enum" in prop else sample[prop["type"]]
    values, _ = tool.values(arguments)
    assert set(values) == taken(command)
    if any(o.dest == JSON_DEST for o in command.options):
        assert values[JSON_DEST] is False


def test_values_convert_as_the_cli_parses():
    tool = build(find("set"))
    values, given = tool.values({"key": "k", "value": "two  words", "tags": ["a", "b"], "basis": "verified",
                                 "force": True})
    assert values["value"] == ["two  words"] and values["tags"] == ["a", "b"] and values["force"] is True
    assert values["store"] == "shared" and values["source"] is None and given == ""
    assert tool.values({"key": "k", "value": "v", "tags": "one"})[0]["tags"] == ["one"]
    assert tool.values({"key": "k", "value": "v", "source": None})[0]["source"] is None
    summary = build(find("summary new"))
    values, given = summary.values({"text": "## Open\n- none\n", "focus": "F"})
    assert values["from_stdin"] is True and given == "## Open\n- none\n" and "text" not in values
    assert build(find("search")).values({"limit": 3.0})[0]["limit"] == 3


@pytest.mark.parametrize("name,arguments,words", [
    ("get", {}, "needs 'key'"),
    ("get", {"key": "k", "bogus": 1}, "unknown argument 'bogus'"),
    ("get", {"key": "k", "store": "nope"}, "store must be one of operator, shared, agent, not 'nope'"),
    ("set", {"key": "k", "value": "v", "basis": "guess"}, "basis must be one of verified, reported, inferred"),
    ("basis", {"key": "k", "basis": "maybe"}, "basis must be one of verified, reported, inferred"),
    ("set", {"key": "k", "value": 5}, "value must be a string"),
    ("set", {"key": "k", "value": "v", "tags": [1]}, "tags must be a list of strings"),
    ("search", {"limit": -1}, "limit must be at least 0"),
    ("search", {"limit": "5"}, "limit must be a whole number"),
    ("search", {"full_text": "yes"}, "full_text must be true or false"),
    ("supersede", {"key": "k"}, "needs 'by'"),
])
def test_bad_arguments_are_named(name, arguments, words):
    with pytest.raises(InvalidArgument) as caught:
        build(find(name)).values(arguments)
    assert words in str(caught.value)


def test_structured_content_is_always_an_object():
    assert structured({"a": 1}) == {"a": 1}
    assert structured([1, 2]) == {"results": [1, 2]}


def test_has_remote_reads_the_repository_config(tmp_path):
    assert not has_remote(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".git" / "config").write_text('[core]\n\tbare = false\n')
    assert not has_remote(tmp_path)
    (tmp_path / ".git" / "config").write_text('[core]\n[remote "origin"]\n\turl = /x # a comment\n')
    assert has_remote(tmp_path)
    (tmp_path / ".git" / "config").write_text('[core\n')  # git refuses it: no remote to offer
    assert not has_remote(tmp_path)


def test_mcp_is_a_row_of_the_table_with_its_author_option():
    command = find("mcp")
    from ctx.cli.commands import mcp
    assert handler_of(command) is mcp.serve and [o.dest for o in command.options] == ["author"]
    assert "mcp" not in TOOL_COMMANDS and all(c.name != "mcp" or not c.fast for c in commands())


def test_mcp_help_shows_each_harness(run):
    shown = run("mcp", "--help")
    assert shown.exit_code == 0
    for words in ("~/.claude.json", ".mcp.json", "config.toml", "[mcp_servers.ctx]", "~/.gemini/settings.json",
                  "~/.cursor/mcp.json", '"args": ["mcp"]', "CTX_HOME", "CTX_AUTHOR", "ctx-memory[mcp]"):
        assert words in shown.stdout, words


def test_without_the_sdk_ctx_mcp_says_how_to_install_it(run, monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a))
    done = run("mcp")
    assert done.exit_code == 2
    assert done.stderr.count("\n") == 1 and "pip install 'ctx-memory[mcp]'" in done.stderr
    assert done.stdout == ""


def test_neither_door_nor_help_imports_the_sdk(root, run):
    assert run("set", "k", "v").exit_code == 0
    code = ("import sys; sys.argv = ['ctx'] + sys.argv[1:]\n"
            "from ctx.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('LOADED', 'mcp' in sys.modules, 'mcp_types' in sys.modules)")
    import os
    for args in (["get", "k"], ["--help"], ["mcp", "--help"], ["wire", "--help"], ["wire", "cursor", "--mcp"]):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                             env=dict(os.environ))
        assert out.stdout.strip().endswith("LOADED False False"), (args, out.stdout, out.stderr)


# --- the server's call path, in process (the SDK's types, no transport) -----------------

@pytest.fixture
def server(root, run, monkeypatch):
    pytest.importorskip("mcp")
    from ctx.cli.mcp.server import CtxServer
    monkeypatch.setenv("CTX_AUTHOR", "Agent One")
    return CtxServer()


def test_a_call_gives_the_cli_text_and_the_json(server, run):
    done = server.call("set", {"key": "k", "value": "hello there", "tags": ["t"]})
    assert not done.is_error
    assert done.content[0].text == "set shared/k\n"
    assert done.structured_content["key"] == "k" and done.structured_content["warnings"] == []
    assert done.structured_content["entry"]["author"] == "Agent One"
    got = server.call("get", {"key": "k"})
    cli = run("get", "k", author="Agent One")
    assert got.content[0].text == cli.stdout
    assert got.structured_content == json.loads(run("get", "k", "--json", author="Agent One").stdout)
    listed = server.call("list", {"keys_only": True})
    assert listed.content[0].text == "shared/k\n"
    assert listed.structured_content == {"results": [{"store": "shared", "key": "k"}]}


READ_CALLS = {"start": {}, "brief": {}, "get": {"key": "k"}, "search": {"pattern": "hello"}, "list": {},
              "history": {"key": "k"}, "log": {}, "diff": {"rev": "HEAD~1"}}


def test_every_call_runs_its_command_once(server, monkeypatch):
    """The text and the JSON come from one run: a read is not run again for its JSON."""
    import ctx.cli.run as run_module
    server.call("set", {"key": "k", "value": "hello there"})
    server.call("amend", {"key": "k", "note": "and again"})
    ran: list[str] = []
    real = run_module.handler_of

    def counting(command):
        ran.append(command.name)
        return real(command)
    monkeypatch.setattr(run_module, "handler_of", counting)
    for name, arguments in READ_CALLS.items():
        ran.clear()
        done = server.call(name, arguments)
        assert not done.is_error, (name, done.content)
        assert ran == [name], name
        assert done.content[0].text.strip(), name
        if name != "start":  # start has no --json
            assert done.structured_content, name


def test_errors_are_tool_errors_and_the_server_goes_on(server):
    missing = server.call("get", {"key": "nope"})
    assert missing.is_error and "nope" in missing.content[0].text and "not found" in missing.content[0].text
    assert missing.structured_content["exit_status"] == 1
    bad = server.call("set", {"key": "k", "value": "v", "store": "elsewhere"})
    assert bad.is_error and "operator, shared, agent" in bad.content[0].text
    unknown = server.call("no_such_tool", {})
    assert unknown.is_error and "get" in unknown.content[0].text
    assert not server.call("set", {"key": "k", "value": "v"}).is_error


def test_a_bug_in_a_handler_is_one_line_even_with_ctx_debug(server, monkeypatch):
    import ctx.cli.commands.entries as entries
    monkeypatch.setenv("CTX_DEBUG", "1")
    monkeypatch.setattr(entries, "get", lambda run, **kw: 1 / 0)
    done = server.call("get", {"key": "k"})
    assert done.is_error and "internal error: ZeroDivisionError" in done.content[0].text


def test_letters_handoff_and_due_dates_as_tools(server, run):
    sent = server.call("send", {"to": "Agent Two", "text": "Please review the retry", "expects": "a report"})
    assert not sent.is_error, sent.content
    key = sent.structured_content["key"]
    assert key.startswith("comms:agent_two:") and sent.content[0].text == f"sent shared/{key} to Agent Two\n"
    assert server.call("set", {"key": "relay_baton", "value": "state", "due": "+3"}).structured_content[
        "entry"]["due"]
    handed = server.call("handoff", {"to": "operator", "baton": "relay_baton", "note": "yours now"})
    assert not handed.is_error and handed.structured_content["baton"]["holder"] == "operator"
    reminded = server.call("remind", {"key": "relay_baton", "date": "2099-01-01", "must_not_forget": True})
    assert reminded.structured_content["entry"]["must_not_forget"] is True
    reviewed = server.call("review", {"key": "relay_baton", "stale": True})
    assert reviewed.structured_content["entry"]["stale"] is True
    mine = server.call("inbox", {"all_letters": True})
    assert mine.structured_content == {"reader": "Agent One", "last_session": mine.structured_content[
        "last_session"], "letters": []}
    theirs = json.loads(run("inbox", "--json", author="agent two").stdout)["letters"]
    assert [x["key"] for x in theirs] == [key]
    assert server.call("review", {"key": "relay_baton", "stale": "yes"}).is_error
    assert server.call("remind", {"key": "relay_baton", "date": "soon"}).structured_content["exit_status"] == 2


@pytest.mark.parametrize("asked", ["x" * 100_000, "no\nsuch\x1b[2Jtool"], ids=["long", "controls"])
def test_a_call_of_no_tool_is_one_bounded_line(server, asked):
    from ctx.display import NAME_BOUND
    done = server.call(asked, {})
    assert done.is_error
    line = done.structured_content["error"]
    assert "\n" not in line and "\x1b" not in line and "no tool" in line
    assert len(line) < NAME_BOUND + 400  # the name cut at its bound, then the tools' names
