"""stdin and stdout for the SDK's ``stdio_server``, on the event loop's own pipe
transports.

The SDK reads and writes stdio through ``anyio.wrap_file``: a worker-thread hop
for every line read, every write and every flush, a dozen per call (~1 ms of
a warm ``get``'s ~3). A harness talks to its server over pipes, which the
event loop can watch directly; these two objects give ``stdio_server`` what it
takes (lines to iterate over; ``write`` and ``flush``) with no thread at all.

As the SDK does when it claims stdio itself, the wire moves to private
descriptors and fd 0 then reads the null device and fd 1 writes to stderr, so
nothing a handler or a child process prints can corrupt a message. Anything
but a pipe or a socket on either side (a terminal, a file): ``None``, and the
SDK's own transport serves.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

LINE_LIMIT = 64 * 1024 * 1024  # one JSON-RPC message per line; a summary or an import can be large


class Lines:
    """The lines of the wire, as ``stdio_server`` iterates over them."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> Lines:
        return self

    async def __anext__(self) -> str:
        line = await self.reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class Writer:
    """The wire's writing end, as ``stdio_server`` writes and flushes it."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@asynccontextmanager
async def pipes() -> AsyncIterator[tuple[Lines, Writer] | None]:
    """``(lines, writer)`` on private copies of fds 0 and 1, or None (not pipes)."""
    if not (_is_pipe(0) and _is_pipe(1)):
        yield None
        return
    loop = asyncio.get_running_loop()
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    saved_in, saved_out = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3), fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", 0))
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                            os.fdopen(wire_out, "wb", 0))
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        try:
            yield Lines(reader), Writer(writer)
        finally:
            try:
                await writer.drain()
            except (ConnectionError, OSError):
                pass
            transport.close()
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)
