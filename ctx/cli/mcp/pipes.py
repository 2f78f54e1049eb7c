"""stdin and stdout for the SDK's ``stdio_server``, on the event loop's own pipe
transports.

The SDK reads and writes stdio through ``anyio.wrap_file``: a worker-thread hop
for every line read, every write and every flush, a dozen per call (~1 ms of
a warm ``get``'s ~3). A harness talks to its server over pipes, which the
event loop can watch directly; these two objects give ``stdio_server`` what it
takes (lines to iterate over; ``write`` and ``flush``) with no thread at all.
Lines are read up to ``badlines.LINE_LIMIT`` and decoded strictly: a longer line
or one that is not UTF-8 is answered here, never handed on (the SDK's own
transport has no bound and replaces bad bytes).

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

from ctx.cli.mcp.badlines import LINE_LIMIT, not_utf8, too_long, wire_text


class Lines:
    """The lines of the wire, as ``stdio_server`` iterates over them. A line over
    ``LINE_LIMIT`` is dropped as it is read (never held whole) and one not UTF-8 is refused
    undecoded: each gets its error answer on ``writer`` and the next line is read."""

    def __init__(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        self.reader, self.writer = reader, writer

    def __aiter__(self) -> Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                line = await self.reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:  # the last line, without its newline
                if not end.partial:
                    raise StopAsyncIteration from None
                line = end.partial
            except asyncio.LimitOverrunError as over:
                await self._drop_line(over.consumed)
                await self.writer.answer(wire_text(too_long()))
                continue
            try:
                return line.decode("utf-8")
            except UnicodeDecodeError as error:
                await self.writer.answer(wire_text(not_utf8(error.start)))

    async def _drop_line(self, scanned: int) -> None:
        """Drop the rest of a line over the limit, through its newline: ``scanned`` bytes held
        have no newline (or end at it), taken off in small pieces, then the next ones."""
        while True:
            while scanned:
                piece = min(scanned, 1 << 16)
                await self.reader.readexactly(piece)
                scanned -= piece
            try:
                await self.reader.readuntil(b"\n")
                return
            except asyncio.IncompleteReadError:
                return
            except asyncio.LimitOverrunError as over:
                scanned = over.consumed


class Writer:
    """The wire's writing end, as ``stdio_server`` writes and flushes it."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()

    async def answer(self, text: str) -> None:
        """One whole line from the transport itself (``write`` takes it in one piece, so it
        never lands inside a message the SDK is writing)."""
        await self.write(text)
        await self.flush()


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
            wire = Writer(writer)
            yield Lines(reader, wire), wire
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
