#!/usr/bin/env python3
"""What the arrival guard (``ctxgit/sync/incoming.check``) and the announcements
(``ctxgit/sync/arrived.what_arrived``) cost a sync of 30 commits.

    python bench/guard.py [--entries 10000] [--commits 30] [--runs 5] [--cold]

Machine A seeds a context with ``--entries`` entries (one import), pushes it to a
bare repository, and machine B clones it. A then makes ``--commits`` writes and
pushes them. Each run puts B back where it was (main, the index, the work tree
and its remote-tracking ref at the old head) and times, in this process, what ``ctx sync``
does on the range it takes in: the guard alone (every commit's paths, the tip's changed store
entries against B's head); the one part of it the sync needs anyway (reading the tip's changed
store blob, which the guard hands to ``fast_forward``); the announcements, given what the
guard learned, as the sync gives it; then the real ``ctx sync`` taking the 30 commits in (a
process). Prints milliseconds (medians and spread) of wall time and of processor time (this
process's for the parts; the sync's own and its children's, from ``wait4``: a busy machine
disturbs it less), and the guard's share of the sync on each clock, without and with the
announcements. The target: the guard at most 5% of the sync. ``--cold``: the guard finds
no proof kept from an earlier sync (``.git/ctx/verified`` emptied before it: B's first sync,
or one after a merge), so it proves the base first; the sync is timed as ever. Not a test.
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import runs

CTX = Path(sys.executable).parent / "ctx"


def ctx(home: Path, *args: str, env: dict[str, str]) -> None:
    done = subprocess.run([str(CTX), *args], env={**env, "CTX_HOME": str(home)}, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SystemExit(f"ctx {' '.join(args)}: {done.returncode}\n{done.stdout}{done.stderr}")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--commits", type=int, default=30)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="no proof kept for the guard (the base proved first)")
    args = parser.parse_args()
    # byte-compiled first, as a wheel install leaves it: with PYTHONDONTWRITEBYTECODE set, every
    # sync would compile ctx again, and the sync's time would hold that too
    sources = [str(HERE.parent / part) for part in ("ctx", "ctxgit", "hooks")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *sources], check=False, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory(prefix="ctx-bench-guard-") as tmp:
        top = Path(tmp)
        env = {**os.environ, "HOME": str(top), "GIT_CONFIG_GLOBAL": str(top / ".gitconfig"),
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
               "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
        env.pop("CTX_AUTHOR", None)
        (top / ".gitconfig").write_text("")
        bare, a, b = top / "remote.git", top / "a", top / "b"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
        stamp = "2026-01-01T00:00:00Z"
        entries = {f"entry_{i:06d}": {"value": f"value number {i} " + "x" * 300, "source": "agent",
                                      "basis": "inferred", "scope": "global", "tags": ["bench"],
                                      "created": stamp, "timestamp": stamp} for i in range(args.entries)}
        export = top / "seed.json"
        export.write_text(json.dumps({"format": "ctx-export", "version": "1",
                                      "stores": {"shared": {"entries": entries}}}))
        ctx(a, "clone", str(bare), str(a), env=env)
        ctx(a, "import", str(export), env=env)
        ctx(a, "push", env=env)
        ctx(b, "clone", str(bare), str(b), env=env)
        for i in range(args.commits):
            ctx(a, "set", f"entry_{i * 7:06d}", f"changed by A, write {i}", env=env)
        ctx(a, "push", env=env)
        old, new = git(b, "rev-parse", "HEAD"), git(a, "rev-parse", "HEAD")
        size = (a / "memory" / "shared.json").stat().st_size

        import pygit2

        # each part on two clocks: wall time, and processor time (this process's for what runs
        # in it; the sync's own and its children's, from wait4), which a busy machine disturbs less
        wall: dict[str, list[float]] = {part: [] for part in PARTS}
        cpu: dict[str, list[float]] = {part: [] for part in PARTS}
        ctx(b, "sync", env=env)  # once, so the commits are here: the guard is timed on them before each sync
        for _ in range(args.runs):
            git(b, "reset", "-q", "--hard", old)  # B as before the sync: its files are the base's
            git(b, "update-ref", "refs/remotes/origin/main", old)
            if args.cold:
                shutil.rmtree(b / ".git" / "ctx" / "verified", ignore_errors=True)
            one_run(b, pygit2.Oid(hex=new), pygit2.Oid(hex=old), wall, cpu)
            wall["sync"].append(runs.timed([str(CTX), "sync"], {**env, "CTX_HOME": str(b)}))
            cpu["sync"].append(runs.CPU[0])
            assert git(b, "rev-parse", "HEAD") == new
        print(f"store: {args.entries:,} entries, {size / 1e6:.1f} MB; {args.commits} commits received; "
              f"{args.runs} runs (medians, spread){'; the guard cold (no kept proof)' if args.cold else ''}")
        report("wall", wall)
        report("cpu", cpu)


PARTS = ("guard", "announcements", "read", "sync")


def one_run(b: Path, tip_id, head_id, wall: dict[str, list[float]], cpu: dict[str, list[float]]) -> None:
    """The guard, the announcements as integrate asks them after a fast-forward, and the read of
    the tip's store blob that fast_forward needs anyway (the guard hands it over), each timed."""
    import pygit2

    from ctxgit.sync import arrived, incoming

    def timed(part: str, began: float, began_cpu: float) -> None:
        wall[part].append((time.perf_counter() - began) * 1000)
        cpu[part].append((time.process_time() - began_cpu) * 1000)
    repo = pygit2.Repository(str(b))
    began, began_cpu = time.perf_counter(), time.process_time()
    checked = incoming.check(repo, tip_id, head_id)
    timed("guard", began, began_cpu)
    before, after = repo[head_id].peel(pygit2.Commit).tree, repo[tip_id].peel(pygit2.Commit).tree
    began, began_cpu = time.perf_counter(), time.process_time()
    known = getattr(checked, "keys", None)  # (a revision before the guard handed its keys on: none)
    arrived.what_arrived(repo, before, after, tip_id, head_id, **({"known": known} if known is not None else {}))
    timed("announcements", began, began_cpu)
    repo = pygit2.Repository(str(b))
    tip = repo[tip_id].peel(pygit2.Commit).tree
    began, began_cpu = time.perf_counter(), time.process_time()
    repo.odb.read(tip["memory/shared.json"].id)
    timed("read", began, began_cpu)


def report(clock: str, times: dict[str, list[float]]) -> None:
    mid = {part: statistics.median(found) for part, found in times.items()}

    def ms(part: str) -> str:
        return f"{mid[part]:.1f} ms ({min(times[part]):.1f}-{max(times[part]):.1f})"

    def share(part: float) -> str:
        return f"{part:.1f} ms = {100 * part / mid['sync']:.1f}%"
    own = mid["guard"] - mid["read"]
    print(f"{clock} time: ctx sync (a process) {ms('sync')}; guard (incoming.check) {ms('guard')}, of which "
          f"the tip's store blob read that fast_forward takes over {ms('read')}; announcements "
          f"(arrived.what_arrived) {ms('announcements')}")
    print(f"  the guard's share of the sync, without arrived.py: {share(mid['guard'])}, its own part "
          f"(less the read) {share(own)}; with arrived.py: {share(mid['guard'] + mid['announcements'])}, "
          f"its own part {share(own + mid['announcements'])} (target: at most 5%)")


if __name__ == "__main__":
    main()
