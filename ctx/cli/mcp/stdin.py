"""The ``stdin`` that ``ctx mcp`` hands the SDK's ``stdio_server``: the wire's lines, each at
most ``badlines.LINE_LIMIT`` bytes and strict UTF-8.

The SDK's transport reads stdin through a text wrapper of its own, which reads lines of any
length and replaces bytes that are not UTF-8. ``stdio_server`` takes the stream to read as
its ``stdin`` argument, and ``WireLines`` is that stream. It reads lines the way the SDK's
stream does (one worker-thread read per line), but from a binary reader with a bound. A
line over the bound is dropped as it is read and never held whole. A line that is not UTF-8
is refused without being decoded. Each refused line gets its answer (``badlines.py``) on the
SDK's own write stream, and then the next line is read. stdout stays the SDK's.

When ``stdin`` is passed, the SDK does not claim fd 0, so ``claimed_stdin`` claims it the way
the SDK claims fd 1. The wire is read from a private duplicate, fd 0 reads the null device
while the server runs (so no process a handler starts can read a message meant for the
server), and fd 0 is restored afterwards. Tests: tests/mcp/test_mcp_bad_lines.py.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

import anyio
from mcp import types
from mcp.shared.message import SessionMessage

from ctx.cli.mcp.badlines import LINE_LIMIT, not_utf8, too_long

_DROP_PIECE = 1 << 16  # the rest of a line over the bound is read and dropped this much at a time


class WireLines:
    """The lines of the wire, as ``stdio_server`` iterates over them (``async for line in
    stdin``). ``answer_on`` names the stream that a refused line's answer is sent on."""

    def __init__(self, binary: BinaryIO, limit: int = LINE_LIMIT) -> None:
        self.binary, self.limit = binary, limit
        self._answers: Any = None

    def answer_on(self, write_stream: Any) -> None:
        self._answers = write_stream

    def __aiter__(self) -> WireLines:
        return self

    async def __anext__(self) -> str:
        while True:
            # abandon_on_cancel: a server stopped for another reason does not wait for a line
            # that may never come (the thread goes on reading, and exits with the process).
            line, refusal = await anyio.to_thread.run_sync(self.read_line, abandon_on_cancel=True)
            if refusal is None:
                if not line:
                    raise StopAsyncIteration
                return line
            assert self._answers is not None, "answer_on() before the first line is read"
            await self._answers.send(SessionMessage(refusal))

    def read_line(self) -> tuple[str, types.JSONRPCError | None]:
        """The next line, with its newline (``""`` at the end), or why it was refused."""
        raw = self.binary.readline(self.limit + 1)
        if len(raw) > self.limit and not raw.endswith(b"\n"):
            del raw  # the bound's worth already read goes before the rest is read
            while (rest := self.binary.readline(_DROP_PIECE)) and not rest.endswith(b"\n"):
                pass
            return "", too_long()
        try:
            return raw.decode("utf-8"), None
        except UnicodeDecodeError as error:
            return "", not_utf8(error.start)


@contextmanager
def claimed_stdin() -> Iterator[WireLines]:
    """``WireLines`` on a private duplicate of fd 0, with fd 0 on the null device until exit."""
    try:
        wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:  # fd 0 cannot be duplicated: read it where it is, as the SDK then does
        yield WireLines(sys.stdin.buffer)
        return
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        # closefd=False, never closed: an abandoned read may still be blocked on it (as in the SDK).
        yield WireLines(os.fdopen(wire, "rb", closefd=False))
    finally:
        os.dup2(wire, 0)
