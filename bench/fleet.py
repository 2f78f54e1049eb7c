#!/usr/bin/env python3
"""Sync that keeps up with a fleet, and sync without thinking: the measures, side by side.

    python bench/fleet.py [fleet] [divergent] [auto] [--machines 8] [--writes 20] [--runs 3]

- ``fleet``: N clones of one context (one bare remote on this disk), each
  writing W entries with a ``ctx sync`` after each write, all at once. Counts
  the syncs that failed (a lost race reported as a refusal), the writes lost,
  whether every machine is byte-identical after a final round, and prints the
  median and 95th-percentile sync time.
- ``divergent``: a 10,000-entry context, 30 divergent single-entry commits on
  each side, then one ``ctx sync`` (median of ``--runs`` fresh copies), next
  to what the two git processes alone cost (``git fetch`` of the remote's 30
  commits, ``git push`` of this side's 30: the floor), and the ratio.
- ``auto``: what auto-sync costs a write (median ``ctx set`` with it off, then
  on: the write returns before the push), how long a write takes to reach a
  local bare remote, and how long ``ctx start`` takes with the remote hanging
  (an ssh that never answers) against its sync-timeout.

Quiet machine, compiled bytecode (``python -m compileall``) for figures to
compare. Not a test; it prints JSON lines and a table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import build
from runs import git
from scale import append_commits

PY = sys.executable
CTX = str(Path(PY).parent / "ctx")
WORK = Path(os.environ.get("CTX_BENCH_DIR", Path(tempfile.gettempdir()) / "ctx-bench"))


def env_for(root: Path, author: str = "Bench Agent", **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CTX_"))}
    env.update(CTX_HOME=str(root), CTX_AUTHOR=author, **extra)
    return env


def ctx(root: Path, *args: str, author: str = "Bench Agent", check: bool = True, **extra: str
        ) -> tuple[subprocess.CompletedProcess, float]:
    began = time.perf_counter()
    done = subprocess.run([CTX, *args], env=env_for(root, author, **extra), capture_output=True, text=True)
    took = (time.perf_counter() - began) * 1000
    if check and done.returncode != 0:
        raise SystemExit(f"ctx {' '.join(args)} in {root} failed ({done.returncode}): {done.stderr}")
    return done, took


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def files_of(root: Path) -> dict[str, bytes]:
    out = {}
    for d, dirs, names in os.walk(root):
        if Path(d) == root and ".git" in dirs:
            dirs.remove(".git")
        for name in names:
            if name == ".lock" or name.endswith(".tmp"):
                continue
            path = Path(d) / name
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


# --- the fleet --------------------------------------------------------------------------------

def bench_fleet(machines: int = 8, writes: int = 20) -> dict:
    root = WORK / "fleet"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    bare = root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    names = [f"m{i}" for i in range(machines)]
    ctx(root / names[0], "clone", str(bare), str(root / names[0]))
    ctx(root / names[0], "set", "seed", "shared by everyone")
    ctx(root / names[0], "push")
    for name in names[1:]:
        ctx(root / name, "clone", str(bare), str(root / name))
    syncs: list[tuple[str, int, float, str]] = []

    def machine(name: str) -> None:
        for i in range(writes):
            ctx(root / name, "set", f"{name}_write_{i:02d}", f"write {i} of {name}", author=name)
            done, took = ctx(root / name, "sync", author=name, check=False)
            syncs.append((name, done.returncode, took, done.stderr.strip()))
    began = time.perf_counter()
    with ThreadPoolExecutor(machines) as pool:
        list(pool.map(machine, names))
    wall = time.perf_counter() - began
    for _ in range(2):  # a final round: everyone takes in what was pushed after its last sync
        for name in names:
            ctx(root / name, "sync", author=name)
    expected = {"seed"} | {f"{n}_write_{i:02d}" for n in names for i in range(writes)}
    lost = 0
    for name in names:
        shared = json.loads((root / name / "memory" / "shared.json").read_text())["entries"]
        lost += len(expected - set(shared))
    reference = files_of(root / names[0])
    identical = all(files_of(root / n) == reference for n in names[1:])
    heads = {git(root / n, "rev-parse", "HEAD").strip() for n in names}
    times = [t for _, _, t, _ in syncs]
    failed = [(n, code, err.splitlines()[-1] if err else "") for n, code, _, err in syncs if code != 0]
    return {"measure": "fleet", "machines": machines, "writes_each": writes, "syncs": len(syncs),
            "syncs_failed": len(failed), "failures": failed[:5], "writes_lost": lost,
            "byte_identical": identical and len(heads) == 1, "sync_ms_median": statistics.median(times),
            "sync_ms_p95": percentile(times, 0.95), "sync_ms_max": max(times), "wall_s": wall,
            "transport": os.environ.get("CTX_GIT_TRANSPORT", "git")}


# --- 30 + 30 divergent writes at 10,000 entries -----------------------------------------------

def divergent_setup(writes: int = 30) -> Path:
    """A template: a bare remote with A's writes, and B with its own, not yet synced."""
    template = WORK / f"divergent-{writes}"
    if (template / ".done").exists():
        return template
    base = build.build(WORK / "ctx-10000", 10000, commits=5000)
    shutil.rmtree(template, ignore_errors=True)
    template.mkdir(parents=True)
    bare, a, b = template / "remote.git", template / "a", template / "b"
    subprocess.run(["git", "clone", "-q", "--bare", str(base), str(bare)], check=True)
    for side in (a, b):
        subprocess.run(["git", "clone", "-q", str(bare), str(side)], check=True)
        ctx(side, "init")
    append_commits(a, writes, 1, "Agent A")
    ctx(a, "push")
    append_commits(b, writes, 2, "Agent B")
    ctx(b, "status")  # settles the index the way a ctx write leaves it
    (template / ".done").write_text("")
    return template


def _fresh(template: Path, name: str) -> Path:
    copy = WORK / name
    shutil.rmtree(copy, ignore_errors=True)
    subprocess.run(["cp", "-a", str(template), str(copy)], check=True)
    for side in ("a", "b"):  # the copies' remote is the copy's own bare repository
        git(copy / side, "remote", "set-url", "origin", str(copy / "remote.git"))
        ctx(copy / side, "init")  # as a write leaves it (a copy's files have new inodes)
    return copy


def bench_divergent(runs: int = 3, writes: int = 30) -> dict:
    template = divergent_setup(writes)
    ours, floor = [], []
    for _ in range(runs):
        copy = _fresh(template, "divergent-run")
        done, took = ctx(copy / "b", "sync")
        ours.append(took)
        copy = _fresh(template, "divergent-floor")
        b = copy / "b"
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        began = time.perf_counter()
        for args in (["fetch", "--quiet", "--no-tags", "origin"],
                     ["push", "--quiet", "--porcelain", "origin", "main:refs/heads/floor"]):
            subprocess.run(["git", "-C", str(b), "-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0", *args],
                           env=env, check=True, capture_output=True)
        floor.append((time.perf_counter() - began) * 1000)
    shutil.rmtree(WORK / "divergent-run", ignore_errors=True)
    shutil.rmtree(WORK / "divergent-floor", ignore_errors=True)
    ms, floor_ms = statistics.median(ours), statistics.median(floor)
    return {"measure": "divergent sync", "entries": 10000, "writes_each_side": writes, "sync_ms": ms,
            "floor_ms": floor_ms, "ratio": ms / floor_ms, "runs": runs, "report": done.stdout.strip()}


# --- auto-sync --------------------------------------------------------------------------------

def _wait(condition, timeout: float) -> float | None:
    began = time.perf_counter()
    while time.perf_counter() - began < timeout:
        if condition():
            return time.perf_counter() - began
        time.sleep(0.01)
    return None


def bench_auto(runs: int = 15) -> dict:
    from ctxgit.sync.trigger import running
    root = WORK / "auto"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    bare = root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    m = root / "m"
    ctx(m, "clone", str(bare), str(m))
    ctx(m, "set", "seed", "x")
    ctx(m, "sync")

    def bare_head() -> str:
        done = subprocess.run(["git", "-C", str(bare), "rev-parse", "-q", "--verify", "refs/heads/main"],
                              capture_output=True, text=True)
        return done.stdout.strip()
    off, on, reach = [], [], []
    for i in range(runs):  # alternate, so a busy moment costs both alike
        ctx(m, "config", "sync-auto", "false")
        ctx(m, "sync")
        off.append(ctx(m, "set", f"off_{i}", "a value")[1])
        ctx(m, "sync")
        ctx(m, "config", "sync-auto", "true")
        began = time.perf_counter()
        on.append(ctx(m, "set", f"on_{i}", "a value")[1])
        head = git(m, "rev-parse", "HEAD").strip()
        arrived = _wait(lambda head=head: bare_head() == head, 10)
        reach.append((time.perf_counter() - began) if arrived is not None else float("inf"))
        _wait(lambda: not running(m), 10)
    from ctxgit.sync.trigger import after_write
    hook = []  # what the write path adds, in process: the checks and the spawn of the push
    for i in range(runs):
        ctx(m, "config", "sync-auto", "false")
        ctx(m, "set", f"hook_{i}", "a value")  # main is ahead: the hook starts a push
        ctx(m, "config", "sync-auto", "true")
        began = time.perf_counter()
        started = after_write(m)
        hook.append((time.perf_counter() - began) * 1000)
        assert started
        _wait(lambda: not running(m) and bare_head() == git(m, "rev-parse", "HEAD").strip(), 10)
    hang = root / "ssh-that-hangs"
    hang.write_text("#!/bin/sh\nexec sleep 60\n")
    hang.chmod(0o755)
    ctx(m, "remote", "add", "far", "ssh://example.invalid/ctx.git")
    git(m, "config", "branch.main.remote", "far")
    timeout = 3.0
    starts_off, starts_on = [], []
    for _ in range(3):
        ctx(m, "config", "sync-auto", "false")
        starts_off.append(ctx(m, "start", GIT_SSH_COMMAND=str(hang))[1])
        ctx(m, "config", "sync-auto", "true")
        done, took = ctx(m, "start", GIT_SSH_COMMAND=str(hang))
        starts_on.append(took)
    notice = done.stdout.splitlines()[0]
    git(m, "config", "branch.main.remote", "origin")
    return {"measure": "auto-sync", "set_ms_off": statistics.median(off), "set_ms_on": statistics.median(on),
            "write_cost_ms": statistics.median(on) - statistics.median(off),
            "hook_ms_median": statistics.median(hook), "hook_ms_max": max(hook),
            "reach_remote_s_median": statistics.median(reach), "reach_remote_s_max": max(reach),
            "start_ms_hanging_remote": statistics.median(starts_on), "start_ms_plain": statistics.median(starts_off),
            "sync_timeout_s": timeout, "start_notice": notice}


def table(results: list[dict]) -> str:
    rows = ["| measure | figure | target |", "|---|---|---|"]
    for r in results:
        if r["measure"] == "fleet":
            rows += [f"| fleet {r['machines']} x {r['writes_each']} ({r['transport']}) | {r['syncs_failed']} of "
                     f"{r['syncs']} syncs failed, {r['writes_lost']} writes lost, byte-identical: "
                     f"{r['byte_identical']} | 0, 0, yes |",
                     f"| fleet sync time | median {r['sync_ms_median']:.0f} ms, p95 {r['sync_ms_p95']:.0f} ms, "
                     f"max {r['sync_ms_max']:.0f} ms ({r['wall_s']:.0f} s in all) | |"]
        elif r["measure"] == "divergent sync":
            rows.append(f"| sync 30 + 30 divergent writes, 10,000 entries | {r['sync_ms']:.0f} ms; the two git "
                        f"processes alone {r['floor_ms']:.0f} ms; ratio {r['ratio']:.2f} | <= 1,500 ms |")
        elif r["measure"] == "auto-sync":
            rows += [f"| a write with auto-sync on | {r['set_ms_on']:.1f} ms vs {r['set_ms_off']:.1f} ms off "
                     f"({r['write_cost_ms']:+.1f} ms); the hook itself (checks and spawn, in process): median "
                     f"{r['hook_ms_median']:.2f} ms, max {r['hook_ms_max']:.2f} ms | <= +10 ms |",
                     f"| a write reaches a local bare remote | median {r['reach_remote_s_median']:.2f} s, max "
                     f"{r['reach_remote_s_max']:.2f} s | <= 5 s |",
                     f"| start, remote hanging, sync-timeout {r['sync_timeout_s']:g} s | "
                     f"{r['start_ms_hanging_remote']:.0f} ms (plain start {r['start_ms_plain']:.0f} ms) | "
                     f"<= timeout + 500 ms |"]
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", nargs="*", default=["fleet", "divergent", "auto"])
    parser.add_argument("--machines", type=int, default=8)
    parser.add_argument("--writes", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    results = []
    for which in args.which:
        if which == "fleet":
            result = bench_fleet(args.machines, args.writes)
        elif which == "divergent":
            result = bench_divergent(args.runs)
        elif which == "auto":
            result = bench_auto()
        else:
            raise SystemExit(f"unknown measure {which!r}: fleet, divergent or auto")
        print(json.dumps(result), flush=True)
        results.append(result)
    print(table(results))


if __name__ == "__main__":
    main()
