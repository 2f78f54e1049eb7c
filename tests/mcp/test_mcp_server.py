"""``ctx mcp`` driven as a harness drives it: the SDK's own client over stdio, a
real server process. Tools listed against the table, every tool called (its
text and JSON against the CLI's), every kind of error, outside writes seen,
and two servers and the CLI writing at once."""

from __future__ import annotations

import fcntl
import json
import threading

import anyio
import pytest

pytest.importorskip("mcp")

from ctx.cli.mcp.tools import build, tool_commands
from ctx.cli.table import find
from support.gitutil import commit_count, git, git_out, log_rows, run_ctx
from support.mcputil import connect, serve, text, wire

pytestmark = pytest.mark.slow

TOOL_COMMANDS = tuple(c.name for c in tool_commands())
AWS = "AKIA" + "ABCDEFGHIJKLMNOP"


def ctx_ok(*args: str, author: str | None = "Agent One", **kw):
    done = run_ctx(*args, env={"CTX_AUTHOR": author}, **kw)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def test_listed_tools_are_the_table_and_sync_comes_with_a_remote(root, tmp_path):
    ctx_ok("init", "--yes")

    async def body(client):
        listed = await client.list_tools()
        got = {t.name: wire(t) for t in listed.tools}
        assert list(got) == [name.replace(" ", "_") for name in TOOL_COMMANDS if name != "sync"]
        for name in TOOL_COMMANDS[:-1]:
            expected = build(find(name)).definition()
            tool = got[name.replace(" ", "_")]
            assert tool["inputSchema"] == expected["inputSchema"], name
            assert tool["description"] == find(name).help
            assert tool["annotations"] == expected["annotations"], name
        bare = tmp_path / "remote.git"
        git(tmp_path, "init", "-q", "--bare", str(bare))
        ctx_ok("remote", "add", "origin", str(bare))
        again = {t.name: wire(t) for t in (await client.list_tools()).tools}
        assert "sync" in again and again["sync"]["annotations"]["openWorldHint"] is True
        assert again["sync"]["inputSchema"] == build(find("sync")).definition()["inputSchema"]
    serve(body, env={"CTX_AUTHOR": "Agent One"})


def test_every_tool_answers_with_the_cli_text_and_json(root, tmp_path):
    ctx_ok("init", "--yes")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    ctx_ok("remote", "add", "origin", str(bare))
    ctx_ok("push", "origin")

    def same_as_cli(result, *args: str, json_too: bool = True):
        assert not result.is_error, text(result)
        assert text(result) == ctx_ok(*args).stdout, args
        if json_too:
            wanted = json.loads(ctx_ok(*args, "--json").stdout)
            assert result.structured_content == (wanted if isinstance(wanted, dict) else {"results": wanted})

    async def body(client):
        commits = commit_count(root)

        async def write(name, arguments, line):
            nonlocal commits
            done = await client.call_tool(name, arguments)
            assert not done.is_error, text(done)
            assert text(done) == line + "\n"
            commits += 1
            assert commit_count(root) == commits, name  # one commit per write
            assert log_rows(root, "%an")[0] == "Agent One"
            return done.structured_content

        made = await write("set", {"key": "decision_pool", "value": "Use a pool of 20", "tags": ["decision"],
                                   "basis": "verified"}, "set shared/decision_pool")
        assert made["entry"]["value"] == 20 or made["entry"]["value"] == "Use a pool of 20"
        assert made["entry"]["tags"] == ["decision"] and made["warnings"] == []
        await write("set", {"key": "decision_old", "value": "Use a pool of 10"}, "set shared/decision_old")
        await write("set", {"key": "issue_upload", "value": "Uploads time out", "store": "agent"},
                    "set agent/issue_upload")
        amended = await write("amend", {"key": "decision_pool", "note": "measured under load"},
                              "amended shared/decision_pool")
        assert amended["entry"]["status"] == "amended"
        await write("supersede", {"key": "decision_old", "by": "decision_pool", "note": "load test"},
                    "superseded shared/decision_old by decision_pool")
        await write("resolve", {"key": "issue_upload", "store": "agent", "note": "proxy timeout raised"},
                    "resolved agent/issue_upload")
        await write("basis", {"key": "decision_pool", "basis": "reported"}, "basis of shared/decision_pool: reported")
        summary = await write("summary_new", {"text": "## Done\n- Pooled.\n\n## Open\n- None\n", "focus": "Pool"},
                              f"wrote sessions/{(await _newest_summary_name(root))}")
        assert (root / "sessions" / summary["name"]).read_text().count("## Open") == 1
        deleted = await write("delete", {"key": "decision_old"}, "deleted shared/decision_old")
        assert deleted["deleted"] is True

        same_as_cli(await client.call_tool("get", {"key": "decision_pool"}), "get", "decision_pool")
        same_as_cli(await client.call_tool("get", {"key": "decision_pool", "verbose": True}),
                    "get", "decision_pool", "-v")
        same_as_cli(await client.call_tool("search", {"pattern": "pool"}), "search", "pool")
        same_as_cli(await client.call_tool("search", {"pattern": "pool", "full_text": True}),
                    "search", "pool", "--full-text")
        same_as_cli(await client.call_tool("search", {"pattern": "pool", "semantic": True}),
                    "search", "pool", "--semantic")
        same_as_cli(await client.call_tool("list", {"store": "agent", "status": "resolved"}),
                    "list", "--store", "agent", "--status", "resolved")
        same_as_cli(await client.call_tool("history", {"key": "decision_pool"}), "history", "decision_pool")
        same_as_cli(await client.call_tool("log", {"limit": 3}), "log", "-n", "3")
        same_as_cli(await client.call_tool("diff", {"rev": "HEAD~3"}), "diff", "HEAD~3")
        brief = await client.call_tool("brief", {"days": 3})
        assert not brief.is_error and text(brief).startswith("=== ctx brief")
        assert set(brief.structured_content) == set(json.loads(ctx_ok("brief", "--json").stdout))
        start = await client.call_tool("start", {"max_chars": 4000})
        assert not start.is_error and "decision_pool" in text(start) and len(text(start)) <= 4000
        assert start.structured_content is None  # ctx start has no --json
        synced = await client.call_tool("sync", {})
        assert not synced.is_error, text(synced)
        lines = text(synced).splitlines()
        assert lines[0].startswith("pull: ") and lines[-1].startswith("push: ") and "origin" in lines[-1]
        assert synced.structured_content["pushed"] == "origin"
        assert git_out(bare, "rev-parse", "main") == git_out(root, "rev-parse", "HEAD")
    serve(body, env={"CTX_AUTHOR": "Agent One"})


async def _newest_summary_name(root) -> str:
    """The name ``summary new`` will take: today's date, the next suffix (none yet here)."""
    from ctx.summaries import today
    return f"{today()}_session.md"


def test_every_error_is_a_tool_error_and_the_server_goes_on(root):
    ctx_ok("set", "k", "v")
    before = commit_count(root)

    async def body(client):
        async def error(name, arguments, *words):
            done = await client.call_tool(name, arguments)
            assert done.is_error, text(done)
            for w in words:
                assert w in text(done), (w, text(done))
            ok = await client.call_tool("get", {"key": "k"})  # still serving
            assert not ok.is_error and text(ok).startswith("shared/k\n")
            return done

        await error("get", {"key": "missing_key"}, "missing_key", "exit status 1", "not found")
        await error("get", {"key": "k", "store": "elsewhere"}, "operator, shared, agent")
        await error("set", {"key": "k2", "value": "v", "basis": "hunch"}, "verified, reported, inferred")
        await error("basis", {"key": "k", "basis": "hunch"}, "verified, reported, inferred")
        await error("set", {"key": "bad key!", "value": "v"}, "bad key!")
        await error("resolve", {"key": "ghost"}, "ghost", "not found")
        await error("set", {"key": "k"}, "'value'")
        await error("nonexistent", {}, "no tool 'nonexistent'")
        leak = await error("set", {"key": "k_leak", "value": f"the key is {AWS}"}, "credential", "exit status 4",
                           "refused")
        assert AWS not in text(leak) and AWS not in json.dumps(leak.structured_content)
        await error("amend", {"key": "k", "note": f"note {AWS}"}, "credential")
        assert commit_count(root) == before  # nothing committed
        assert "k_leak" not in (root / "memory" / "shared.json").read_text()
    serve(body, env={"CTX_AUTHOR": "Agent One"})


def test_a_lock_held_too_long_says_busy(root):
    ctx_ok("set", "k", "v")

    async def body(client):
        with open(root / "memory" / ".lock", "a") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            busy = await client.call_tool("set", {"key": "k", "value": "changed"})
            fcntl.flock(held, fcntl.LOCK_UN)
        assert busy.is_error and "busy" in text(busy) and "exit status 5" in text(busy), text(busy)
        assert busy.structured_content["reason"] == "busy"
        done = await client.call_tool("set", {"key": "k", "value": "changed"})
        assert not done.is_error, text(done)
    serve(body, env={"CTX_AUTHOR": "Agent One", "CTX_LOCK_TIMEOUT": "0.3"})
    assert json.loads(ctx_ok("get", "k", "--json").stdout)["entry"]["value"] == "changed"


def test_outside_writes_are_seen_by_the_next_call(root):
    ctx_ok("set", "k", "first")

    async def body(client):
        async def value():
            done = await client.call_tool("get", {"key": "k"})
            assert not done.is_error, text(done)
            return done.structured_content["entry"]["value"]

        assert await value() == "first"
        assert len((await client.call_tool("search", {"pattern": "first"})).structured_content["results"]) == 1
        ctx_ok("set", "k", "second")  # the CLI, between two calls
        assert await value() == "second"
        assert (await client.call_tool("search", {"pattern": "first"})).structured_content["results"] == []
        path = root / "memory" / "shared.json"  # a hand edit, the size unchanged
        path.write_text(path.read_text().replace('"second"', '"third!"'))
        assert await value() == "third!"
        git(root, "commit", "-qam", "hand edit")  # and a commit by git itself, as a pull makes
        ctx_ok("set", "other", "x")
        listed = await client.call_tool("list", {"keys_only": True})
        assert {r["key"] for r in listed.structured_content["results"]} == {"k", "other"}
        ctx_ok("reindex")  # the index file replaced under the server
        assert await value() == "third!"
        ctx_ok("set", "k", "fourth")
        assert await value() == "fourth"
    serve(body, env={"CTX_AUTHOR": "Agent One"})


def test_two_servers_and_the_cli_writing_at_once_lose_nothing(root):
    ctx_ok("set", "seed", "0")
    before = commit_count(root)
    n = 8

    async def main():
        async with connect("--author", "Agent A", env={"CTX_AUTHOR": None}) as a, \
                connect(env={"CTX_AUTHOR": "Agent B"}) as b:
            errors: list[str] = []

            async def writes(client, prefix):
                for i in range(n):
                    done = await client.call_tool("set", {"key": f"{prefix}_{i}", "value": f"{prefix} {i}"})
                    if done.is_error:
                        errors.append(text(done))

            def cli_writes():
                for i in range(n):
                    ctx_ok("set", f"c_{i}", f"c {i}", author="Agent C")

            cli = threading.Thread(target=cli_writes)
            cli.start()
            async with anyio.create_task_group() as group:
                group.start_soon(writes, a, "a")
                group.start_soon(writes, b, "b")
            cli.join()
            assert errors == []
            listed = await a.call_tool("list", {"prefix": ""})
            return {r["key"]: r["entry"] for r in listed.structured_content["results"]}

    found = anyio.run(main)
    for prefix, author in (("a", "Agent A"), ("b", "Agent B"), ("c", "Agent C")):
        for i in range(n):
            assert found[f"{prefix}_{i}"]["value"] == f"{prefix} {i}"
            assert found[f"{prefix}_{i}"]["author"] == author
    assert commit_count(root) == before + 3 * n  # one commit per write, nothing else
    rows = log_rows(root, "%an|%s")[:3 * n]
    assert sorted(r.split("|")[0] for r in rows) == ["Agent A"] * n + ["Agent B"] * n + ["Agent C"] * n
    assert all(r.split("|")[1].startswith("set shared/") for r in rows)


def test_resources(root):
    ctx_ok("init", "--yes")
    ctx_ok("set", "current_focus", "Ship the upload fix")
    run_ctx("summary", "new", "--from-stdin", env={"CTX_AUTHOR": "Agent One"},
            input="## Done\n- Things.\n\n## Open\n- The progress bar\n")

    async def body(client):
        listed = await client.list_resources()
        assert [str(r.uri) for r in listed.resources] == ["ctx://rules", "ctx://brief", "ctx://summary/latest"]
        rules = await client.read_resource("ctx://rules")
        assert rules.contents[0].text == (root / "RULES.md").read_text()
        brief = await client.read_resource("ctx://brief")
        assert brief.contents[0].text.startswith("=== ctx brief") and "Ship the upload fix" in brief.contents[0].text
        latest = await client.read_resource("ctx://summary/latest")
        newest = sorted((root / "sessions").iterdir())[-1]
        assert latest.contents[0].text == newest.read_text()
        from mcp import MCPError
        with pytest.raises(MCPError):
            await client.read_resource("ctx://nothing")
        assert not (await client.call_tool("get", {"key": "current_focus"})).is_error
    serve(body, env={"CTX_AUTHOR": "Agent One"})


def test_a_client_of_the_older_protocol_gets_the_same(root):
    """Harnesses of today handshake with `initialize` (protocol 2025-xx): tools, calls and
    structured content (an object) work the same."""
    ctx_ok("set", "k", "v")

    async def body(client):
        assert client.protocol_version.startswith("2025")
        names = [t.name for t in (await client.list_tools()).tools]
        assert "get" in names and "summary_new" in names
        found = await client.call_tool("search", {"pattern": "v"})
        assert found.structured_content["results"][0]["key"] == "k"
        assert text(found) == ctx_ok("search", "v").stdout
    serve(body, env={"CTX_AUTHOR": "Agent One"}, mode="legacy")


def test_an_empty_context_serves_and_the_first_write_makes_it(root):
    async def body(client):
        missing = await client.call_tool("get", {"key": "k"})
        assert missing.is_error
        start = await client.call_tool("start", {})
        assert not start.is_error
        assert not (await client.call_tool("set", {"key": "k", "value": "v"})).is_error
        got = await client.call_tool("get", {"key": "k"})
        assert not got.is_error and got.structured_content["entry"]["value"] == "v"
        assert (root / ".git" / "ctx").is_dir()  # the read index, made by the reads after the write
    serve(body, env={"CTX_AUTHOR": "Agent One"})
    assert commit_count(root) >= 1


@pytest.mark.parametrize("wire", ["file", "pipe"])
def test_requests_then_the_end_of_stdin_are_all_answered(root, tmp_path, wire):
    """A client that writes its requests and closes stdin at once (requests from a file: the
    SDK's own transport; or through a pipe) gets every answer, the last write's included:
    the SDK cancels what still runs at the end of stdin, so the server holds that end back."""
    import os
    import subprocess
    import sys
    ctx_ok("set", "k", "v")
    requests = tmp_path / "requests.jsonl"
    requests.write_text("\n".join(json.dumps(m) for m in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get", "arguments": {"key": "k"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "set", "arguments": {"key": "last", "value": "written at the end"}}},
    )) + "\n")
    answers = tmp_path / "answers.jsonl"
    command = [sys.executable, "-m", "ctx", "mcp"]
    with open(answers, "w") as stdout:
        if wire == "file":
            with open(requests) as stdin:
                done = subprocess.run(command, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                                      env=dict(os.environ), timeout=120)
        else:
            done = subprocess.run(command, input=requests.read_bytes(), stdout=stdout, stderr=subprocess.PIPE,
                                  env=dict(os.environ), timeout=120)
    assert done.returncode == 0, done.stderr
    replies = {m["id"]: m for m in map(json.loads, answers.read_text().splitlines())}
    assert sorted(replies) == [1, 2, 3], replies
    assert replies[1]["result"]["serverInfo"]["name"] == "ctx"
    assert replies[2]["result"]["structuredContent"]["entry"]["value"] == "v"
    assert replies[2]["result"]["content"][0]["text"] == ctx_ok("get", "k").stdout
    assert replies[3]["result"]["structuredContent"]["key"] == "last"
    assert json.loads(ctx_ok("get", "last", "--json").stdout)["entry"]["value"] == "written at the end"
