"""What the benchmarks share: git in a directory, and timing a process or a call.

Imported by the scripts beside it (``import runs``; they run with bench/ first on
``sys.path``).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any


def git(root: Path, *args: str, stdin: bytes | None = None) -> str:
    """``git -C ROOT ARGS``: its stdout. No ``GIT_*`` variable of the caller's reaches it
    (a hook's GIT_DIR would point it at another repository); fails on a non-zero exit."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(["git", "-C", str(root), *args], input=stdin, env=env, check=True, capture_output=True)
    return done.stdout.decode("utf-8", "replace")


def fast_import(root: Path) -> tuple[subprocess.Popen, IO[bytes]]:
    """``git fast-import`` started in ``root`` (no ``GIT_*`` of the caller's): the process,
    and the stream to write its commands to; ``finish`` ends it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    importer = subprocess.Popen(["git", "-C", str(root), "fast-import", "--quiet", "--done"],
                                stdin=subprocess.PIPE, env=env)
    assert importer.stdin is not None
    return importer, importer.stdin


def finish(importer: subprocess.Popen) -> None:
    """Close what ``fast_import`` started; the benchmark stops when git failed."""
    if importer.stdin is not None:
        importer.stdin.close()
    if importer.wait() != 0:
        raise SystemExit("git fast-import failed")


PEAK: list[float] = [0.0]  # the peak memory (MB) of the last process ``timed`` ran
CPU: list[float] = [0.0]   # ... and the processor time it took, user and system (ms)

# The processes ``timed`` runs are started by a small process of their own. A child's peak
# memory (maxrss) starts at the resident size of the process that forked it (Linux records
# the forked copy's high-water mark at exec), so a child started by a benchmark that holds
# a parsed 10,000-entry store reported the benchmark's 74 MB, not its own 31.
_SPAWNER = r"""
import json, os, subprocess, sys, tempfile, time
for line in sys.stdin:
    job = json.loads(line)
    start = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(job["args"], env=job["env"], stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        errors.seek(0)
        said = errors.read().decode(errors="replace")[:400]
    print(json.dumps({"ms": elapsed * 1000, "cpu": (usage.ru_utime + usage.ru_stime) * 1000,
                      "peak": usage.ru_maxrss / 1024,
                      "status": os.waitstatus_to_exitcode(status), "errors": said}), flush=True)
"""
_spawner: list[subprocess.Popen] = []


def _spawn(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    if not _spawner or _spawner[0].poll() is not None:
        _spawner[:] = [subprocess.Popen([sys.executable, "-I", "-c", _SPAWNER], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)]
    spawner = _spawner[0]
    assert spawner.stdin is not None and spawner.stdout is not None
    spawner.stdin.write(json.dumps({"args": args, "env": env}) + "\n")
    spawner.stdin.flush()
    return json.loads(spawner.stdout.readline())


def timed(args: list[str], env: dict[str, str], ok: Iterable[int] = (0,)) -> float:
    """Milliseconds one run of ``args`` took; stops the benchmark when it exits otherwise
    than ``ok`` (a read that finds nothing exits 1: pass ``(0, 1)``). Its peak memory
    and processor time (the child's own ``getrusage``, from ``wait4``) are left in
    ``PEAK`` and ``CPU``."""
    done = _spawn(args, env)
    if done["status"] not in tuple(ok):
        raise SystemExit(f"{' '.join(args)} failed: {done['errors']}")
    PEAK[0], CPU[0] = done["peak"], done["cpu"]
    return float(done["ms"])


_spawn([sys.executable, "-c", "pass"], dict(os.environ))  # started now, while this process is small


def quiet(root: Path, timeout: float = 120.0) -> None:
    """Wait until no git runs in ``root``: a packing a write started in the background
    (ctxgit/plumbing/pack.py) would share the machine with the first timings; then flush
    what the build left to write back (the kernel's writeback of a freshly built repository
    slowed the first rows). The wait is the tests' own (``relutil.wait_for_orphan_git``)."""
    tests = str(Path(__file__).resolve().parent.parent / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from support.relutil import wait_for_orphan_git
    wait_for_orphan_git(root, timeout)
    os.sync()


def median_call(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    """The median milliseconds of ``runs`` calls of ``fn``, and what the last one returned."""
    times = []
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), result
