#!/usr/bin/env python3
"""ctx's MCP server, measured as a harness uses it: the SDK's client over stdio.

    python bench/mcp.py [--entries 10000] [--calls 10000] [--starts 5] [--samples 300]

On a context of ``--entries`` entries (``bench/build.py``), it prints:

* ready: process start to the first answer (``initialize``, the handshake a
  harness of today makes), median of ``--starts`` server starts; target 1.5 s;
* warm ``get`` and ``search`` through the client, median of ``--samples`` calls
  each after a warm-up; targets 5 ms and 15 ms;
* the server's resident memory (VmRSS) after the warm-up and then every 1,000
  calls over ``--calls`` calls (gets and searches, with a write by the CLI, an
  outside write, every 100 calls), and the spread of those readings; targets
  150 MB and flat within 10%.

Needs the mcp extra (``pip install -e '.[mcp]'``). Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# This file is named mcp.py: take its folder off the path so `import mcp` finds the SDK,
# and load build.py beside it by its path (and runs.py, which build.py imports by name).
sys.path[:] = [p for p in sys.path if Path(p or os.getcwd()).resolve() != HERE]


def _beside(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, HERE / file)
    assert spec is not None and spec.loader is not None
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_beside("runs", "runs.py")
build = _beside("ctx_bench_build", "build.py")

WORK = Path(os.environ.get("CTX_BENCH_DIR", Path(tempfile.gettempdir()) / "ctx-bench"))
CTX = str(Path(sys.executable).parent / "ctx")
TARGETS = {"ready": 1500.0, "get": 5.0, "search": 15.0, "rss": 150.0, "drift": 10.0}


def server_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(CTX_HOME=str(root), CTX_AUTHOR="Bench Agent")
    return env


def children(command_word: str) -> dict[int, tuple[float, float]]:
    """This process's children whose command line holds ``command_word``: their VmRSS in
    MB and the CPU time (user + system) they used, in ms."""
    found = {}
    me = os.getpid()
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) != me or command_word not in (entry / "cmdline").read_bytes().decode(errors="replace"):
                continue
            cpu = (int(fields[11]) + int(fields[12])) * 1000 / tick
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    found[int(entry.name)] = (int(line.split()[1]) / 1024, cpu)
        except (OSError, ValueError, IndexError):
            continue
    return found


def children_rss(command_word: str) -> dict[int, float]:
    return {pid: rss for pid, (rss, _) in children(command_word).items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()

    import anyio
    from mcp import Client, StdioServerParameters  # type: ignore[attr-defined]  # the SDK; mypy may take this file for it

    root = build.build(WORK / f"ctx-{args.entries}", args.entries)
    env = server_env(root)
    subprocess.run([CTX, "reindex"], env=env, check=True, capture_output=True)
    params = StdioServerParameters(command=sys.executable, args=["-m", "ctx", "mcp"], env=env)
    figures: list[tuple[str, float, float, str]] = []

    async def ready() -> tuple[float, float]:
        started = time.perf_counter()
        async with Client(params, mode="legacy"):  # spawn + initialize, as a harness does
            took = time.perf_counter() - started
            cpu = sum(c for _, c in children("mcp").values())
        return took * 1000, cpu

    async def session() -> None:
        async with Client(params, mode="legacy") as client:
            listed = await client.call_tool("list", {"store": "shared", "keys_only": True, "limit": 2000})
            keys = [r["key"] for r in listed.structured_content["results"]]
            rng = random.Random(3)
            words = build.WORDS

            async def timed(name: str, arguments: dict) -> float:
                started = time.perf_counter()
                done = await client.call_tool(name, arguments)
                took = (time.perf_counter() - started) * 1000
                if done.is_error:
                    raise SystemExit(f"{name} {arguments}: {done.content[0].text}")
                return took

            for _ in range(50):  # warm-up
                await timed("get", {"key": rng.choice(keys)})
                await timed("search", {"pattern": rng.choice(words)})
            def server_cpu() -> float:
                return sum(c for _, c in children("mcp").values())

            cpu = server_cpu()
            gets = [await timed("get", {"key": rng.choice(keys)}) for _ in range(args.samples)]
            get_cpu, cpu = (server_cpu() - cpu) / args.samples, server_cpu()
            searches = [await timed("search", {"pattern": rng.choice(words)}) for _ in range(args.samples)]
            search_cpu = (server_cpu() - cpu) / args.samples
            pairs = [await timed("search", {"pattern": f"{rng.choice(words)} {rng.choice(words)}"})
                     for _ in range(args.samples // 4)]
            nothing = [await timed("search", {"pattern": "no such words"}) for _ in range(args.samples // 10)]
            figures.append(("warm get", statistics.median(gets), TARGETS["get"],
                            f"ms, median of {args.samples}; p90 {statistics.quantiles(gets, n=10)[-1]:.2f}; "
                            f"the server's CPU time a call: {get_cpu:.2f}"))
            figures.append(("warm search", statistics.median(searches), TARGETS["search"],
                            f"ms, median of {args.samples} (search WORD: 50 results, as `ctx search` gives); "
                            f"p90 {statistics.quantiles(searches, n=10)[-1]:.2f}; server CPU a call "
                            f"{search_cpu:.2f}; two words "
                            f"{statistics.median(pairs):.2f}; no match (every entry read) "
                            f"{statistics.median(nothing):.2f}"))

            rss = [sum(children_rss("mcp").values())]
            outside = 0
            failed: list[str] = []
            started = time.perf_counter()
            for i in range(1, args.calls + 1):
                if i % 10 == 0:
                    await timed("search", {"pattern": rng.choice(words)})
                else:
                    await timed("get", {"key": rng.choice(keys)})
                if i % 100 == 0:  # an outside write: the CLI, between two calls
                    key = rng.choice(keys)
                    done = subprocess.run([CTX, "set", key, f"changed outside, call {i}"], env=env,
                                          capture_output=True, text=True)
                    if done.returncode:
                        failed.append(f"call {i}: exit {done.returncode}: {done.stderr.strip()}")
                    outside += 1
                if i % 1000 == 0:
                    rss.append(sum(children_rss("mcp").values()))
            elapsed = time.perf_counter() - started
            low, high = min(rss), max(rss)
            figures.append(("resident memory", high, TARGETS["rss"],
                            f"MB, the most of {len(rss)} readings (after the warm-up: {rss[0]:.1f})"))
            figures.append(("memory drift", (high - low) / low * 100, TARGETS["drift"],
                            f"% between the least and the most over {args.calls} calls "
                            f"({outside} outside writes; {elapsed:.0f} s): "
                            + " ".join(f"{r:.1f}" for r in rss)))
            for line in failed:
                print(f"outside write failed: {line}")

    starts = [anyio.run(ready) for _ in range(args.starts)]
    walls, cpus = [w for w, _ in starts], [c for _, c in starts]
    figures.insert(0, ("server ready", statistics.median(walls), TARGETS["ready"],
                       f"ms, median of {args.starts} starts: " + " ".join(f"{w:.0f}" for w in walls)
                       + f"; the server's CPU time to then (user + system): median {statistics.median(cpus):.0f}"))
    anyio.run(session)

    load = os.getloadavg()[0]
    print(f"ctx mcp at {args.entries:,} entries · {os.cpu_count()} cores · load {load:.1f} · "
          f"Python {sys.version.split()[0]}")
    for name, value, target, note in figures:
        verdict = "ok" if value <= target else "OVER"
        print(f"  {name:16} {value:9.2f}  (target {target:g}: {verdict})  {note}")


if __name__ == "__main__":
    main()
