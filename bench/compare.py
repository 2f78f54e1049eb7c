#!/usr/bin/env python3
"""ctx A/B benchmark: this tree against an earlier revision, on the same stores, runs alternating.

    python bench/compare.py --against d8faf5b [--sizes 1000,10000] [--runs 15] [--write]
    python bench/compare.py --against 1ae57d6 --new HEAD --export --only start,brief,get \\
        --sizes 10000 --clock cpu

``bench/run.py`` compares ctx with a floor measured in the same minute; its
ratios are only comparable between tables when the machine and the built
stores are the same. This script answers "did this change make ctx slower?"
directly: it checks the revision out into a temporary git worktree, builds
each size once (``bench/build.py``), gives each side its own copy (the read
index and the history log are per copy) and settles it with ``ctx doctor`` as
bench/run.py does, and times the same commands on both
sides, alternating old and new run by run so that a busy minute hurts both
alike. It prints the medians and new/old; ``--write`` adds the table to
``bench/results.md``.

``--export`` takes each revision's files from ``git archive`` into a temporary
directory instead of a git worktree, so the repository measured is left as it is (no
worktree added, nothing checked out: it runs beside other work in the same
repository); ``--new REV`` measures that revision instead of this tree's files (an
archive too). ``--only`` times some of the commands; ``--clock cpu`` times each
process's own processor time (user and system, from ``wait4``) instead of its wall
time, which a loaded machine disturbs less.

Both sides run with the same interpreter and the same installed dependencies,
each from its own source tree (the editable install's import hook is left out
of both, so each side imports its own ``ctx``), byte-compiled first as a wheel
install would leave them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import tomllib
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE.parent
sys.path.insert(0, str(HERE))
import build
import resultsfile
import runs

PY = sys.executable
WORK = Path(os.environ.get("CTX_BENCH_DIR", Path(tempfile.gettempdir()) / "ctx-bench"))

# Runs `main` of the tree's console script; the editable install's finder would import this tree's ctx.
LAUNCH = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f)]; "
          "sys.path.insert(0, {tree!r}); from {module} import {func}; sys.exit({func}())")


def entry_point(tree: Path) -> tuple[str, str]:
    """The module and function the tree's ``ctx`` runs (it moved between revisions): its
    console script's entry point, or since bin/ctx (installed as written) what that imports."""
    data = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))
    script = data["project"].get("scripts", {}).get("ctx")
    if script:
        module, _, func = script.partition(":")
        return module, func
    import ast
    for node in ast.parse((tree / "bin" / "ctx").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "ctx":
            return node.module or "", node.names[0].name
    raise SystemExit(f"{tree}: no ctx entry point in pyproject.toml, nor an import of ctx in bin/ctx")


def commands(key: str) -> list[tuple[str, list[str]]]:
    """What is timed: every read a session starts with, and the three writes (``{i}``: the run)."""
    return [("get", ["get", key]), ("search WORD", ["search", "vacuum"]), ("list --tag T", ["list", "--tag", "infra"]),
            ("brief", ["brief"]), ("start", ["start"]), ("set (new key)", ["set", "ab_new_{i}", "a value {i}"]),
            ("set (update)", ["set", key, "an updated value {i}"]), ("amend", ["amend", key, "note {i}"]),
            ("set (letter, 3 KB)", ["set", "ab_letter_{i}", "{i} " + LETTER])]


LETTER = build.make_value(__import__("random").Random(5), 3000)  # a letter-sized value, as bench/run.py writes


class Side:
    def __init__(self, name: str, tree: Path, root: Path) -> None:
        self.name, self.tree, self.root = name, tree, root
        module, func = entry_point(tree)
        self.code = LAUNCH.format(tree=str(tree), module=module, func=func)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CTX_")) and k != "PYTHONPATH"}
        self.env.update(CTX_HOME=str(root), CTX_AUTHOR="Bench Agent")

    def settle(self) -> None:
        """What bench/run.py does before it times a command: ``ctx doctor`` on the copy, which
        leaves this machine's state as any write of ctx's would (git's configuration kept for
        the reads: ``ctxgit/plumbing/gitconfig.py``). A built context was never written by ctx,
        so without it every ``start`` and ``brief`` of a revision that keeps that answer would
        ask git again, and a side that never asks would be timed against a cost no context
        written by ctx pays."""
        subprocess.run([PY, "-c", self.code, "doctor"], env=self.env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        runs.quiet(self.root)  # (a packing the build started has ended)

    def run(self, args: list[str], i: int, clock: str = "wall") -> float:
        """Milliseconds of one run: its wall time, or (``clock`` "cpu") its processor time."""
        argv = [a.format(i=i) for a in args]
        try:
            elapsed = runs.timed([PY, "-c", self.code, *argv], self.env)
        except SystemExit as failed:
            sys.exit(f"{self.name}: ctx {' '.join(argv)}: {failed}")
        return runs.CPU[0] if clock == "cpu" else elapsed


def spread(times: list[float]) -> str:
    """The first and third quartiles: how far the runs of one side scatter."""
    q1, _, q3 = statistics.quantiles(times, n=4) if len(times) > 1 else (times[0],) * 3
    return f"{q1:.1f}-{q3:.1f}"


def compare(old: Side, new: Side, key: str, count: int, only: list[str] | None = None,
            clock: str = "wall") -> list[tuple[str, float, float]]:
    rows = []
    for name, args in commands(key):
        if only is not None and name.split()[0] not in only and name not in only:
            continue
        for side in (old, new):
            side.run(args, 0)  # warm: the read index, the history log
        times: dict[str, list[float]] = {"old": [], "new": []}
        for i in range(1, count + 1):
            for side in ((old, new) if i % 2 else (new, old)):
                times[side.name].append(side.run(args, i, clock))
        o, n = statistics.median(times["old"]), statistics.median(times["new"])
        rows.append((name, o, n))
        print(f"  {name:<16} old {o:7.1f} ms   new {n:7.1f} ms   new/old {n / o:.3f}   "
              f"(quartiles old {spread(times['old'])}, new {spread(times['new'])})", flush=True)
    return rows


def write(results: dict[int, list], against: str, head_rev: str, clock: str = "wall") -> None:
    timed = "process CPU (user + system)" if clock == "cpu" else "wall time"
    lines = [f"## {datetime.now().strftime('%Y-%m-%d %H:%M')} · A/B: commit {head_rev} against {against} · "
             f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}", "",
             f"Written by `python bench/compare.py`: the same stores, runs alternating old and new; medians "
             f"of {timed}.", "",
             "| entries | operation | old ms | new ms | new/old |", "|---|---|---|---|---|"]
    for n, rows in results.items():
        lines += [f"| {n} | {name} | {o:.1f} | {v:.1f} | {v / o:.3f} |" for name, o, v in rows]
    print(f"written to {resultsfile.prepend(lines)}")


def git(*args: str) -> str:
    return runs.git(TREE, *args).strip()


def exported(rev: str, into: Path) -> Path:
    """The files of ``rev`` written into ``into`` by ``git archive`` (no worktree, no checkout)."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(TREE), "archive", "--format=tar", rev], check=True,
                             capture_output=True, env={k: v for k, v in os.environ.items()
                                                       if not k.startswith("GIT_")}).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, help="the revision to compare with (a commit, tag or branch)")
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated entry counts (default 1000,10000)")
    parser.add_argument("--runs", type=int, default=15, help="runs of each command on each side (default 15)")
    parser.add_argument("--commits", type=int, default=100, help="commits of history in each store (default 100)")
    parser.add_argument("--write", action="store_true", help="add the table to bench/results.md")
    parser.add_argument("--export", action="store_true",
                        help="take each revision from `git archive` into a temporary directory, not a git worktree")
    parser.add_argument("--new", help="the revision measured as new (with --export; default: this tree's files)")
    parser.add_argument("--only", help="comma-separated commands to time (e.g. start,brief,get; default: all)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time each process's wall time or its processor time (default wall)")
    args = parser.parse_args()
    if args.new and not args.export:
        parser.error("--new needs --export (this tree is the new side otherwise)")
    only = [name.strip() for name in args.only.split(",")] if args.only else None
    known = {name.split()[0] for name, _ in commands("k")} | {name for name, _ in commands("k")}
    if only and not set(only) <= known:
        parser.error(f"--only: not a command timed here: {', '.join(sorted(set(only) - known))}")
    against = git("rev-parse", "--short", args.against)
    if args.new:
        head_rev = git("rev-parse", "--short", args.new)
    else:
        head_rev = git("rev-parse", "--short", "HEAD") + ("+" if git("status", "--porcelain", "--", "ctx", "ctxgit",
                                                                      "hooks") else "")
    WORK.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="ctx-ab-", dir=WORK))  # this run's own: others may run beside it
    old_tree = scratch / "old"
    results: dict[int, list] = {}
    try:
        new_tree = exported(args.new, scratch / "new") if args.new else TREE
        if args.export:
            exported(against, old_tree)
        else:
            git("worktree", "add", "--detach", "-f", str(old_tree), against)
        for tree in (old_tree, new_tree):
            subprocess.run([PY, "-m", "compileall", "-q", *(str(tree / p) for p in ("ctx", "ctxgit", "hooks")
                                                           if (tree / p).is_dir())], check=False)
        for n in (int(s) for s in args.sizes.split(",")):
            print(f"{n} entries, {args.commits} commits: {against} (old) against {head_rev} (new), "
                  f"{args.clock} time", flush=True)
            source = build.build(WORK / f"ctx-{n}", n, commits=args.commits)
            sides = []
            for name, tree in (("old", old_tree), ("new", new_tree)):
                copy = scratch / f"ab-{name}-{n}"
                shutil.copytree(source, copy, symlinks=True)
                side = Side(name, tree, copy)
                side.settle()
                sides.append(side)
            shared = json.loads((source / "memory" / "shared.json").read_text(encoding="utf-8"))["entries"]
            key = next(k for k in shared if k.startswith("entry_"))
            results[n] = compare(sides[0], sides[1], key, args.runs, only, args.clock)
            for side in sides:
                shutil.rmtree(side.root, ignore_errors=True)
    finally:
        if not args.export:
            subprocess.run(["git", "-C", str(TREE), "worktree", "remove", "--force", str(old_tree)],
                           capture_output=True, check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    if args.write and results:
        write(results, against, head_rev, args.clock)


if __name__ == "__main__":
    main()
