"""``ctx mcp``: the MCP server over stdio, on the official SDK's low-level ``Server``.

Tools come from the command table (``tools.py``); each call runs the
command's handler through ``run.invoke``, exactly as the CLI's two doors do,
with a ``CapturingRun`` in place of the terminal:

- every call runs the command once: its text and its JSON object both come
  from ``Run.result`` (each command with ``--json`` ends in it; a read's
  text and JSON are made from what it read once);
- the result's text is what the CLI prints on stdout ("(nothing)" when that is
  nothing), then what it prints on stderr (warnings); the JSON is the
  structured content (a list under ``"results"``); ``start`` has no JSON;
- an error is what the CLI prints on stderr, as a tool error (``isError``)
  with the exit status and its reason: the server goes on serving.

One process serves one client for as long as the client keeps it: reads
share one ``Context`` (its read index stays open; every read checks the store
files' identity, so an outside write, a ``git pull`` or a hand edit is seen
at the next call), writes get a fresh one each, so each write's recorder
(its commit, its warnings) is its own. Handlers run one at a time on the
event loop's thread: a call never overlaps another.

Resources: ``ctx://rules`` (RULES.md), ``ctx://brief`` (the brief),
``ctx://summary/latest`` (the newest session summary).

stdio is the SDK's ``stdio_server``. Its ``stdin`` is ``stdin.py``'s, which reads lines up to a
bound and as strict UTF-8. ``drain.py`` holds back the end of stdin until every request has
its answer.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, cast

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from ctx import __version__, settings
from ctx.cli.exits import ExitStatus, error_line, internal_error_line
from ctx.cli.mcp.drain import answered_before_eof
from ctx.cli.mcp.stdin import claimed_stdin
from ctx.cli.mcp.tools import Tool, has_remote, structured, tools
from ctx.cli.run import CapturingRun, invoke, open_context
from ctx.display import name as shown_name
from ctx.errors import InvalidArgument, StoreError

INSTRUCTIONS = """\
ctx is the shared memory of an operator and their AI agents: entries (key, value, source,
basis, tags) in three stores (operator, shared, agent), each write one git commit.
At the start of a session call `start` (rules, brief, newest summary) and follow the rules it
returns. Record what you learn with `set` as you go (a decision, a result, an open issue);
mark knowledge that turned out wrong with `amend` or `supersede`, never by deleting it.
Before you finish, write a session summary with `summary_new`. Each tool is the `ctx`
command of the same name; its result is the command's text, and its --json as structured content."""

RESOURCES = (
    ("ctx://rules", "rules", "RULES.md: the standing rules every agent follows.", "text/markdown"),
    ("ctx://brief", "brief", "The one-screen brief: focus, instructions, open items, decisions, changes.",
     "text/plain"),
    ("ctx://summary/latest", "summary-latest", "The newest session summary.", "text/markdown"),
)


class ToolRun(CapturingRun):
    """A call's ``Run``: reads get the server's shared ``Context``, writes a fresh one."""

    def __init__(self, server: CtxServer, reads: bool, given: str = "") -> None:
        super().__init__(given)
        self.server, self.reads = server, reads

    def context(self, **options: Any):
        if not self.reads:
            return super().context(author=self.server.author, **options)
        context = self.server.shared_context(**options)
        self.contexts.append(context)
        return context


class CtxServer:
    """The state of one server: its tools, and the ``Context`` its reads share."""

    def __init__(self, author: str | None = None) -> None:
        from ctx.storage.index import index_path
        from ctxgit.gitfiles.layout import state_dir
        self.author = author  # None: CTX_AUTHOR, as every Context reads it
        self.root = Path(settings.home())
        self._index_path = index_path(state_dir(self.root))
        self._shared: dict[tuple, Any] = {}
        self._index_identity: tuple | None = None
        self.tools = {t.name: t for t in tools(with_remote=True)}

    # --- contexts -----------------------------------------------------------------------

    def _check_index(self) -> None:
        """Drop the shared contexts when the read index file was made, removed or replaced
        (a first write, ``ctx reindex``) since they opened it."""
        try:
            st = os.stat(self._index_path)
            identity: tuple | None = (st.st_dev, st.st_ino)
        except OSError:
            identity = None
        if identity != self._index_identity:
            self._shared.clear()
            self._index_identity = identity

    def shared_context(self, **options: Any):
        key = tuple(sorted(options.items()))
        context = self._shared.get(key)
        if context is None:
            context = self._shared[key] = open_context(author=self.author, **options)
        return context

    # --- tools ----------------------------------------------------------------------------

    def listed(self) -> list[Tool]:
        remote = has_remote(self.root)
        return [t for t in self.tools.values() if remote or t.name != "sync"]

    def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        tool = self.tools.get(name)
        if tool is None:
            # the name a client sent: visible and bounded (test_a_call_of_no_tool_is_one_bounded_line)
            return failure(f"ctx: no tool '{shown_name(name)}'; the tools are {', '.join(self.tools)}",
                           ExitStatus.USAGE)
        try:
            values, given = tool.values(arguments)
        except InvalidArgument as error:
            return failure(error_line(error), ExitStatus.USAGE)
        self._check_index()
        command = tool.command
        run = ToolRun(self, command.reads, given)
        status = self._invoke(command, values, run)
        if status:
            return failure("\n".join(run.errors) or run.text, status, run.text)
        payload: Any = run.result_payload if run.has_result else None
        content: list[types.ContentBlock] = [types.TextContent(text=run.text or "(nothing)")]
        if run.errors:
            content.append(types.TextContent(text="\n".join(run.errors)))
        return types.CallToolResult(content=content, structured_content=structured(payload)
                                    if tool.has_json and payload is not None else None)

    @staticmethod
    def _invoke(command, values: dict[str, Any], run: ToolRun) -> int:
        """``invoke``, and a bug (even with CTX_DEBUG) one line, never a dead server."""
        try:
            return invoke(command, values, run)
        except Exception as error:  # CTX_DEBUG re-raises from invoke; the server still serves
            run.err(internal_error_line(error))
            return ExitStatus.FAILED

    # --- resources -------------------------------------------------------------------------

    def read_resource(self, uri: str) -> str:
        from ctx.cli.table_entries import find
        self._check_index()
        if uri == "ctx://rules":
            from ctx.storage.files import read_text
            try:  # never through a link (tests/reliability/test_root_links.py)
                return read_text(self.root / "RULES.md", follow=False)
            except FileNotFoundError:
                raise MCPError(types.INVALID_PARAMS, f"no RULES.md at {self.root}: `ctx init` writes one") from None
            except StoreError as exc:
                raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        if uri == "ctx://brief":
            command, values = find("brief"), {"as_json": False}
        elif uri == "ctx://summary/latest":
            command, values = find("summary show"), {"name": None}
        else:
            raise MCPError(types.INVALID_PARAMS, f"no resource {uri!r}; there are "
                           f"{', '.join(r[0] for r in RESOURCES)}")
        run = ToolRun(self, True)
        status = self._invoke(command, {**command.defaults(), **values}, run)
        if status:
            raise MCPError(types.INVALID_PARAMS, "\n".join(run.errors) or f"{uri}: exit status {status}")
        return run.text


# What each exit status means, as `ctx --help` says it.
REASONS: dict[int, str] = {
    ExitStatus.NOT_FOUND: "not found", ExitStatus.USAGE: "invalid argument",
    ExitStatus.STORE: "store file or root unusable", ExitStatus.REFUSED: "refused", ExitStatus.BUSY: "busy",
    ExitStatus.FAILED: "failed", ExitStatus.INTERRUPTED: "interrupted"}


def failure(message: str, status: int, text: str = "") -> types.CallToolResult:
    """A tool error: the CLI's error line, its exit status and what that status means."""
    reason = REASONS.get(status, "failed")
    body = message.strip() or f"ctx: exit status {status}"
    content: list[types.ContentBlock] = [types.TextContent(text=f"{body}\n(exit status {status}: {reason})")]
    if text.strip() and text.strip() not in body:
        content.insert(0, types.TextContent(text=text))
    return types.CallToolResult(content=content, is_error=True,
                                structured_content={"error": body, "exit_status": status, "reason": reason})


def make_server(state: CtxServer) -> Server:
    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(t.definition()) for t in state.listed()])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        return state.call(params.name, params.arguments)

    async def list_resources(ctx, params) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(uri=uri, name=name, description=text, mime_type=mime)
            for uri, name, text, mime in RESOURCES])

    async def read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        mime = next((r[3] for r in RESOURCES if r[0] == uri), "text/plain")
        return types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=uri, mime_type=mime, text=state.read_resource(uri))])

    server = Server("ctx", version=__version__, title="ctx: shared memory",
                    instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool,
                    on_list_resources=list_resources, on_read_resource=read_resource)
    server.middleware = []  # the SDK's OpenTelemetry span per message (the documented opt-out): ctx exports none
    return server


def serve(author: str | None = None) -> None:
    """Serve until the client closes stdin. ``author`` signs the writes (else ``CTX_AUTHOR``)."""
    if author is not None and not author.strip():
        raise InvalidArgument("--author needs a name")
    settings.author()  # a bad environment is one line at start-up, not an error at every call
    from ctx.model import validate_author  # (--author: the rule CTX_AUTHOR follows, at start-up too)
    state = CtxServer(validate_author(author, "--author") if author else None)
    server = make_server(state)

    async def main() -> None:
        with claimed_stdin() as lines:
            # stdio_server types stdin as anyio's AsyncFile; it only iterates over its lines.
            async with stdio_server(cast(Any, lines)) as (read_stream, write_stream):
                lines.answer_on(write_stream)
                async with answered_before_eof(read_stream, write_stream) as (reads, writes):
                    await server.run(reads, writes, server.create_initialization_options())

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass

