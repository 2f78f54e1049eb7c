#!/usr/bin/env python3
"""What the Stop hook (``ctx event stop``) costs a session's stop, as the harness runs it.

    python bench/stophook.py [--entries 10000] [--writes 20] [--runs 15]

Seeds a context with ``--entries`` entries (one import) and ``--writes`` commits of history,
notes a session's start (``ctx start --harness claude-code`` with the hook's stdin), then
times the whole process ``ctx event stop --harness claude-code`` (its stdin the Stop hook's
JSON; wall time, start-up included) in the cases where it lets the stop through: a session
this machine did not see start, a session that wrote nothing, one that wrote and then its
summary, one already asked, ``stop_hook_active``; and, for comparison, the stop it blocks
(the first stop of a session that wrote). Prints milliseconds (median and spread), beside
the floor on this machine at that moment (``python -c pass``, and ``ctx get`` of one entry:
a loaded machine's figures are read against it). The target: at most 100 ms when it lets
the stop through. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
CTX = Path(sys.executable).parent / "ctx"
TARGET_MS = 100


def ctx(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    done = subprocess.run([str(CTX), *args], env=env, capture_output=True, text=True, input=stdin)
    if done.returncode != 0:
        raise SystemExit(f"ctx {' '.join(args)}: {done.returncode}\n{done.stdout}{done.stderr}")
    return done


def stop_input(session: str, active: bool = False) -> str:
    return json.dumps({"session_id": session, "transcript_path": "/tmp/none.jsonl", "cwd": "/tmp",
                       "hook_event_name": "Stop", "stop_hook_active": active})


def start(env: dict[str, str], session: str) -> None:
    ctx(env, "start", "--harness", "claude-code", "--max-chars", "9000",
        stdin=json.dumps({"session_id": session, "source": "startup", "hook_event_name": "SessionStart"}))
    time.sleep(1.05)  # the session's writes come after the second it began in


def timed(env: dict[str, str], stdin: str, runs: int, expect_block: bool) -> list[float]:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        done = ctx(env, "event", "stop", "--harness", "claude-code", stdin=stdin)
        times.append((time.perf_counter() - began) * 1000)
        if bool(done.stdout.strip()) != expect_block:
            raise SystemExit(f"unexpected answer: {done.stdout!r} {done.stderr!r}")
    return times


def in_process(env: dict[str, str], stdin: str, runs: int) -> list[float]:
    """The handler's own work, start-up left out: ``ctx event stop`` run in this process
    (its modules loaded once before), the same stdin each time."""
    from ctx.cli.commands.events import stop
    from ctx.cli.run import CapturingRun
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        stop(CapturingRun(stdin), "claude-code")
        times = []
        for _ in range(runs):
            began = time.perf_counter()
            run = CapturingRun(stdin)
            stop(run, "claude-code")
            times.append((time.perf_counter() - began) * 1000)
            if run.text:
                raise SystemExit(f"unexpected answer: {run.text!r}")
        return times
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=20)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ctx-bench-stop-") as tmp:
        top = Path(tmp)
        (top / ".gitconfig").write_text("")
        env = {**os.environ, "HOME": str(top), "GIT_CONFIG_GLOBAL": str(top / ".gitconfig"),
               "GIT_CONFIG_NOSYSTEM": "1", "CTX_HOME": str(top / "ctx"), "CTX_AUTHOR": "Claude"}
        ctx(env, "init", "--yes")
        entries = {f"finding_{i:05d}": {"value": f"finding number {i} about the upload proxy", "source": "agent",
                                        "basis": "inferred", "scope": "global", "tags": ["bench"],
                                        "created": "2026-11-01T00:00:00Z", "timestamp": "2026-11-01T00:00:00Z"}
                   for i in range(args.entries)}
        export = {"format": "ctx-export", "version": "1", "exported": "2026-11-01T00:00:00Z",
                  "stores": {"shared": {"type": "shared", "version": "1", "last_updated": "2026-11-01T00:00:00Z",
                                        "entries": entries}}}
        (top / "seed.json").write_text(json.dumps(export))
        ctx(env, "import", str(top / "seed.json"))
        for i in range(args.writes):
            ctx(env, "set", f"history_{i}", f"an earlier write {i}")
        summary = "## Done\n- benched (history_0)\n\n## Open\n- None\n"
        rows: list[tuple[str, list[float], bool]] = []
        floor = []  # the floor on this machine now: the fast door's `ctx get` of one entry
        for _ in range(args.runs):
            began = time.perf_counter()
            ctx(env, "get", "history_0")
            floor.append((time.perf_counter() - began) * 1000)
        python = []
        for _ in range(args.runs):
            began = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            python.append((time.perf_counter() - began) * 1000)

        rows.append(("unknown session (no start noted)", timed(env, stop_input("never-seen"), args.runs, False), True))
        start(env, "quiet")
        rows.append(("session that wrote nothing", timed(env, stop_input("quiet"), args.runs, False), True))
        rows.append(("stop_hook_active", timed(env, stop_input("quiet", active=True), args.runs, False), True))
        start(env, "summarized")
        ctx(env, "set", "finding_new", "written in the session")
        ctx(env, "summary", "new", "--from-stdin", stdin=summary)
        rows.append(("session that wrote and summarized", timed(env, stop_input("summarized"), args.runs, False),
                     True))
        blocked = []
        for i in range(args.runs):
            start(env, f"wrote{i}")
            ctx(env, "set", f"finding_w{i}", "written in the session")
            blocked += timed(env, stop_input(f"wrote{i}"), 1, True)
        rows.append(("session that wrote: asked (blocks)", blocked, False))
        rows.append(("same session, next stop (asked already)", timed(env, stop_input("wrote0"), args.runs, False),
                     True))

        own = in_process(env, stop_input("quiet"), args.runs)
        print(f"ctx event stop, whole process, {args.entries:,} entries, {args.writes + 4 + 2 * args.runs} commits, "
              f"{args.runs} runs each (ms)")
        print(f"{'case':<44} {'median':>8} {'min':>8} {'max':>8}  target")
        for name, times in (("(floor) python -c pass", python), ("(floor) ctx get, one entry", floor)):
            print(f"{name:<44} {statistics.median(times):8.1f} {min(times):8.1f} {max(times):8.1f}")
        print(f"{'(its own work, in process) wrote nothing':<44} {statistics.median(own):8.2f} {min(own):8.2f} "
              f"{max(own):8.2f}")
        for name, times, through in rows:
            verdict = ("ok" if statistics.median(times) <= TARGET_MS else "OVER") if through else "-"
            print(f"{name:<44} {statistics.median(times):8.1f} {min(times):8.1f} {max(times):8.1f}  "
                  f"{'<= ' + str(TARGET_MS) + ' ' + verdict if through else verdict}")


if __name__ == "__main__":
    main()
