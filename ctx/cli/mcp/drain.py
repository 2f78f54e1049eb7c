"""Every line answered, and every request before the server hangs up.

A line the SDK's transport could not read as a message reaches the server as an
exception, which it would only log: it is answered here (``badlines.py``: a parse
error or an Invalid Request, ``"id": null``) and goes no further.

When stdin ends, the SDK's dispatcher cancels the requests still running (their
callers are gone, it assumes). A client that writes its requests and then closes
stdin (``printf '...' | ctx mcp``, a script, requests from a file) would lose
the answers to the last of them. So the server is handed streams of its own:
requests pass through and are counted, answers pass back and are ticked off,
and the end of stdin reaches the SDK only once every request has its answer (or
was cancelled by the client), or ``GRACE`` seconds have passed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import types
from mcp.shared.message import SessionMessage

from ctx.cli.mcp.badlines import for_error

GRACE = 60.0   # seconds a request still running at the end of stdin has to finish
POLL = 0.01


@asynccontextmanager
async def answered_before_eof(read_stream: Any, write_stream: Any) -> AsyncIterator[tuple[Any, Any]]:
    """The streams to run the server on, in place of ``read_stream`` and ``write_stream``."""
    pending: set[Any] = set()
    to_server, reads = anyio.create_memory_object_stream[Any](0)
    writes, from_server = anyio.create_memory_object_stream[Any](0)
    forwarded = anyio.Event()

    async def inbound() -> None:
        async with to_server:
            async for item in read_stream:
                if isinstance(item, Exception):
                    await write_stream.send(SessionMessage(for_error(item)))
                    continue
                message = item.message if isinstance(item, SessionMessage) else None
                if isinstance(message, types.JSONRPCRequest):
                    pending.add(message.id)
                elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
                    pending.discard((message.params or {}).get("requestId"))  # the SDK never answers it
                await to_server.send(item)
            with anyio.move_on_after(GRACE):
                while pending:
                    await anyio.sleep(POLL)

    async def outbound() -> None:
        try:
            async with from_server:
                async for item in from_server:
                    message = item.message if isinstance(item, SessionMessage) else None
                    if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
                        pending.discard(message.id)
                    await write_stream.send(item)
        finally:
            forwarded.set()
            await write_stream.aclose()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(inbound)
        tasks.start_soon(outbound)
        try:
            yield reads, writes
        finally:
            with anyio.move_on_after(5):  # the server has closed its end: the last answers go out
                await forwarded.wait()
            tasks.cancel_scope.cancel()  # stdin may still be open (the server stopped for another reason)
