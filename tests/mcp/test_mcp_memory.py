"""``ctx mcp`` is a long-lived process: driven by the SDK's own client for thousands of calls,
its memory stays flat (issue 36: with the cyclic collector off it grew by a fifth between the
500th and the 4,000th call, since the SDK's objects on each request form reference cycles)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("mcp")

from support.gitutil import run_ctx
from support.mcputil import connect

pytestmark = pytest.mark.slow

WARM = 500
CALLS = 4000
GROWTH = 0.05  # the most the resident set may grow from the 500th call to the 4,000th


def _server_pid() -> int:
    """The one ``python -m ctx mcp`` this test process started (its child)."""
    found = []
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        with open(f"/proc/{os.getpid()}/task/{task}/children") as children:
            for pid in children.read().split():
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    if cmdline.read().split(b"\0")[1:4] == [b"-m", b"ctx", b"mcp"]:
                        found.append(int(pid))
    assert len(found) == 1, found
    return found[0]


def _resident_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def test_memory_stays_flat_over_thousands_of_calls(root):
    for n in range(20):
        done = run_ctx("set", f"key_{n}", f"value number {n}", "--tag", "t1",
                       env={"CTX_AUTHOR": "Agent One"})
        assert done.returncode == 0, done.stderr
    calls = (("get", {"key": "key_3"}), ("list", {"tags": ["t1"]}), ("search", {"pattern": "number"}))

    async def main() -> tuple[int, int]:
        async with connect(env={"CTX_AUTHOR": "Agent One"}) as client:
            pid = _server_pid()
            sizes = {}
            for n in range(1, CALLS + 1):
                name, arguments = calls[n % len(calls)]
                result = await client.call_tool(name, arguments)
                assert not result.is_error, (name, result)
                if n in (WARM, CALLS):
                    sizes[n] = _resident_kib(pid)
            return sizes[WARM], sizes[CALLS]

    import anyio
    warm, last = anyio.run(main)
    print(f"ctx mcp VmRSS: {warm} KiB after {WARM} calls, {last} KiB after {CALLS}")
    assert last <= warm * (1 + GROWTH), (f"{warm} KiB after {WARM} calls, {last} KiB after {CALLS}")
