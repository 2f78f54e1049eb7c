#!/usr/bin/env python3
"""Recall at a failing command (`ctx event failure`, issue 37): how well, and at what cost.

    python bench/recallhook.py [--entries 1000,10000] [--runs 3] [--no-timing]

1. The gate, on the failure set (tests/recall/failureset.py: the recall evaluation set plus
   16 stored fixes; 16 failures with a fix and 10 without in each half). For the model and for
   words alone, every gate (score for the command and its error, score for the error alone) is
   tried on the TUNING half; of those that find the most fixes while answering no unrelated
   failure, the gate is the one farthest from changing any answer (the largest margin). Then
   both halves are measured with it and with the gates ctx ships (ctx/failure_recall.py's
   GATES and WORDS_GATE): the share of failures with a stored fix that get it (target >= 0.8)
   and the share of failures without one that get anything (target <= 0.1).
2. The whole time a failing call adds: `ctx event failure --harness claude-code` as a process
   (what the hook runs), a Claude Code payload on stdin, at each size (the set's entries made
   distinct, again and again), median of --runs: with the vectors kept ("model cold": each
   hook is a new process that loads the model), before any vector was made (words alone,
   nothing made on the hook's time), and warm (in one process, the model and the matrix kept:
   the search alone). Target: 1.5 s cold at 10,000.
Not a test: it prints figures.
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
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "recall"))

import build
import evalset
import failureset

from ctx import failure_recall
from ctx.context import Context
from ctx.failure_recall import Failure, both_scores
from ctx.meaning import model as meaning_model
from ctxgit.gitfiles.layout import state_dir

CTX = str(Path(sys.executable).parent / "ctx")
WORK = Path(os.environ.get("CTX_BENCH_DIR", Path(tempfile.gettempdir()) / "ctx-bench")) / "recallhook"


def set_stores() -> dict[str, dict[str, dict]]:
    stores = evalset.entries_by_store()
    stores["shared"].update(failureset.fix_entries())
    return stores


# --- 1. the gate -------------------------------------------------------------------------------

def candidates(ctx: Context, items: list, embedder) -> list[tuple[str | None, list[tuple[str, float, float]]]]:
    """For each failure: the fix it wants, and its best entries with both scores."""
    out = []
    for command, error, key in items:
        # the model's own scores even before GATES lists it (``scored`` would fall back to words)
        found = both_scores(ctx, Failure(command, error), embedder)
        out.append((key, [(r.key, whole, alone) for r, whole, alone in found]))
    return out


def shares(scores, gate: tuple[float, float]) -> tuple[float, float]:
    """(share of failures with a fix that get it, share of failures without one that get anything)."""
    whole, alone = gate
    fixed = [key in [k for k, w, a in found if w >= whole and a >= alone] for key, found in scores if key]
    answered = [any(w >= whole and a >= alone for _, w, a in found) for key, found in scores if key is None]
    return sum(fixed) / len(fixed), sum(answered) / len(answered)


def margin(scores, gate: tuple[float, float]) -> float:
    """How far the gate is from changing an answer: the smaller of the distance the nearest
    unrelated entry (of any failure's candidates that the gate keeps out) is below it, and the
    distance the weakest entry it lets through is above it (in score units)."""
    whole, alone = gate
    inside = [min(w - whole, a - alone) for _, found in scores for _, w, a in found if w >= whole and a >= alone]
    outside = [max(whole - w, alone - a) for key, found in scores for k, w, a in found
               if not (w >= whole and a >= alone) and (key is None or k != key)]
    return min(min(inside, default=1.0), min(outside, default=1.0))


def pick(scores) -> tuple[tuple[float, float], int]:
    """Of the gates that find the most fixes answering no unrelated failure, the one farthest
    from changing any answer (``margin``); and how many gates tie at that most."""
    grid = [round(x * 0.01, 2) for x in range(10, 101)]
    best: list[tuple[float, float]] = []
    top = -1.0
    for whole in grid:
        for alone in grid:
            found, wrong = shares(scores, (whole, alone))
            if wrong > 0:
                continue
            if found > top:
                top, best = found, [(whole, alone)]
            elif found == top:
                best.append((whole, alone))
    return max(best, key=lambda gate: margin(scores, gate)), len(best)


def gate_report() -> None:
    root = build.make_root(WORK / "set", set_stores())
    ctx = Context(root=root, state_of=state_dir)
    embedder = meaning_model.load()
    ways: list[tuple[str, Any, tuple[float, float] | None]] = [("words alone", None, failure_recall.WORDS_GATE)]
    if embedder is not None:
        ways.insert(0, (embedder.name, embedder, failure_recall.GATES.get(embedder.name)))
    else:
        print("(the semantic extra is not installed: words alone only)")
    print(f"failure set: {sum(1 for *_, k in failureset.TUNING if k)} with a fix + "
          f"{sum(1 for *_, k in failureset.TUNING if not k)} without (tuning), "
          f"{sum(1 for *_, k in failureset.HELD_OUT if k)} + {sum(1 for *_, k in failureset.HELD_OUT if not k)}"
          f" (held out); {sum(len(s) for s in set_stores().values())} entries")
    print(f"{'way':<28} {'gate':<14} {'tuning: fix / none':<22} {'held out: fix / none':<22}")
    for name, emb, shipped in ways:
        if emb is not None:
            from ctx.meaning.rank import search
            search(ctx, "warm up", __import__("ctx.results", fromlist=["Filters"]).Filters(), 1, emb)  # vectors
        tuning, held = candidates(ctx, failureset.TUNING, emb), candidates(ctx, failureset.HELD_OUT, emb)
        picked, ties = pick(tuning)
        for label, gate in ((f"picked (of {ties})", picked), ("shipped", shipped)):
            if gate is None:
                print(f"{name:<28} {'(none)':<14}")
                continue
            t, h = shares(tuning, gate), shares(held, gate)
            print(f"{name + ' ' + label:<28} {str(gate):<14} {t[0]:.2f} / {t[1]:.2f}{'':<12} {h[0]:.2f} / {h[1]:.2f}")


# --- 2. the time ---------------------------------------------------------------------------------

def scaled(n: int) -> dict[str, dict[str, dict]]:
    """``n`` entries: the set's, then its entries again under new keys with a number in the value."""
    base = set_stores()
    flat = [(store, key, entry) for store, entries in base.items() for key, entry in entries.items()]
    stores: dict[str, dict[str, dict]] = {s: {} for s in base}
    for i in range(n):
        store, key, entry = flat[i % len(flat)]
        copy = i // len(flat)
        name = key if copy == 0 else f"{key}_{copy}"
        stores[store][name] = {**entry, "value": entry["value"] if copy == 0 else f"{entry['value']} (copy {copy})"}
    return stores


PAYLOAD = json.dumps({"session_id": "bench", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                      "tool_input": {"command": "kubectl get pods -n staging"},
                      "error": "Exit code 1\nerror: KUBECONFIG not set"})


def hook_once(root: Path) -> tuple[float, float, str]:
    """One hook's run: its wall time, its CPU time (user + system: what it costs on a machine not
    shared with others), and what it printed."""
    import resource
    env = {**os.environ, "CTX_HOME": str(root), "CTX_AUTHOR": "Bench"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([CTX, "event", "failure", "--harness", "claude-code"], input=PAYLOAD, env=env,
                          capture_output=True, text=True, timeout=60)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def figure(runs: list[tuple[float, float]]) -> str:
    return f"{statistics.median(w for w, _ in runs):.2f} s ({statistics.median(c for _, c in runs):.2f} cpu)"


def timing(sizes: list[int], runs: int) -> None:
    print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; wall (cpu) seconds, median of {runs}")
    print(f"{'entries':>8}  {'no vectors yet (words)':>24}  {'vectors kept, model cold':>26}  "
          f"{'warm (in process)':>18}")
    for n in sizes:
        root = build.make_root(WORK / f"t{n}", scaled(n))
        env = {**os.environ, "CTX_HOME": str(root)}
        subprocess.run([CTX, "list", "-n", "1"], env=env, capture_output=True, timeout=600)  # the read index
        fresh = []
        for _ in range(runs):  # a context used, never searched by meaning: no vectors; the hook makes none
            wall, cpu, out = hook_once(root)
            fresh.append((wall, cpu))
        subprocess.run([CTX, "search", "--semantic", "warm up"], env=env, capture_output=True,
                       timeout=600)  # the vectors, as a search by meaning keeps them
        cold = []
        for _ in range(runs):
            wall, cpu, out = hook_once(root)
            cold.append((wall, cpu))
        assert "fix_kubeconfig_unset" in out, out
        ctx = Context(root=root, state_of=state_dir, cache="read")
        embedder = meaning_model.shared()
        failure = Failure("kubectl get pods -n staging", "Exit code 1\nerror: KUBECONFIG not set")
        failure_recall.recall(ctx, failure, embedder)
        warm = []
        for _ in range(runs):
            start = time.perf_counter()
            failure_recall.recall(ctx, failure, embedder)
            warm.append(time.perf_counter() - start)
        print(f"{n:>8,}  {figure(fresh):>24}  {figure(cold):>26}  {statistics.median(warm) * 1000:>15.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", default="1000,10000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-timing", action="store_true")
    args = parser.parse_args()
    gate_report()
    if not args.no_timing:
        timing([int(x) for x in args.entries.split(",")], args.runs)


if __name__ == "__main__":
    main()
