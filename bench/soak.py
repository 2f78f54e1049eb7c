#!/usr/bin/env python3
"""ctx reliability soak: the trials of tests/reliability at scale. Not a test.

    python bench/soak.py [--trials N] [--seconds S] [--seed N] [--examples N] [--keep]

Runs rounds in turn until N trials have run or S seconds have passed
(whichever comes first; a round that has started is finished):

  crash        set/amend/delete SIGKILLed at random moments, with and without
               CTX_AUTHOR; a read, a recovery write and every check after each
  sync         `ctx sync` SIGKILLed at random moments between two machines
  sweep        a SIGKILL, or ENOSPC, just before each file operation of a
               set, amend or delete (fast and libgit2 ways of committing)
  concurrency  4 writer processes x 50 mixed writes and a reader
  properties   the hypothesis properties of tests/reliability with
               --examples examples each (pytest, CTX_RELIABILITY_EXAMPLES;
               once per soak, one trial per property)

Every trial is the code the test suite runs (tests/support/relutil.py),
in fresh directories under the system's temporary directory. A known bug
(one with a strict xfail test) that a random trial runs into is counted
apart, not as a failure. Prints one line per round, then "trials run: N,
failures found: F"; exits 1 when F > 0.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests" / "reliability"
sys.path.insert(0, str(HERE.parent / "tests"))
from support import relutil as R

PROPERTIES = ("any_key or any_json or words_options or invalid_utf8_arguments_never "
              "or no_store_is_refused or another_layout")


class Soak:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.report = R.Report()
        self.dirs: list[Path] = []
        self.sweeps = [(op, mode, author) for mode in ("kill", "enospc") for op in ("set", "amend", "delete")
                       for author in ("Agent Soak", None)]
        self.rng.shuffle(self.sweeps)
        self.properties_done = False

    def workdir(self, name: str) -> tuple[Path, dict]:
        base = R.new_workdir(f"ctx-soak-{name}-")
        self.dirs.append(base)
        return base, R.isolated_env(base)

    # --- rounds ---------------------------------------------------------------------------

    def crash(self) -> R.Report:
        base, env = self.workdir("crash")
        root = base / "ctx root ü"
        return R.crash_trials(root, R.ctx_env(root, base=env), trials=25, rng=self.rng)

    def sync(self) -> R.Report:
        base, env = self.workdir("sync")
        return R.sync_crash_trials(base / "sync", R.ctx_env(base / "unused", base=env), trials=4, rng=self.rng)

    def sweep(self) -> R.Report:
        op, mode, author = self.sweeps[0]
        self.sweeps.append(self.sweeps.pop(0))
        base, env = self.workdir("sweep")
        root = base / "ctx root ü"
        env = R.ctx_env(root, author=author, base=env)
        report = R.Report()
        for i in range(2):
            done = R.run_ctx(["set", f"seed{i}", f"seed value {i}"], env)
            if done.returncode != 0:
                report.fail(0, done.describe())
                return report
        steps, problems = R.sweep(root, env, op, mode, set(), base / "fault.log")
        report.trials = len([s for s in steps if mode == "kill" or not s.sig.startswith("os.remove")])
        report.failures += [f"{op} ({mode}, {'fast' if author else 'libgit2'} way): {p}" for p in problems]
        self.last_label = f"sweep {op}/{mode}/{'fast' if author else 'libgit2'}"
        return report

    def concurrency(self) -> R.Report:
        base, env = self.workdir("concurrency")
        root = base / "ctx root ü"
        report, _ = R.concurrency_trial(root, R.ctx_env(root, base=env), self.rng)
        return report

    def properties(self) -> R.Report:
        self.properties_done = True
        base, env = self.workdir("properties")
        env = dict(env, CTX_RELIABILITY_EXAMPLES=str(self.args.examples),
                   CTX_RELIABILITY_SEED=str(self.rng.randrange(2**32)))
        done = subprocess.run([sys.executable, "-m", "pytest", str(TESTS / "test_hostile_input.py"), "-o", "addopts=",
                               "-q", "-p", "no:cacheprovider", "-k", PROPERTIES, "--basetemp", str(base / "pytest")],
                              cwd=HERE.parent, env=env, capture_output=True, text=True)
        report = R.Report()
        summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
        counts = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|error|errors|xfailed|xpassed)",
                                                         summary)}
        report.trials = sum(counts.values())
        if done.returncode != 0:
            report.failures.append(f"properties: {summary}\n{done.stdout[-3000:]}")
        self.last_label = f"properties x{self.args.examples} examples"
        return report

    # --- the loop ------------------------------------------------------------------------------

    def run(self) -> int:
        started = time.monotonic()
        schedule = ["crash", "sweep", "sync", "crash", "concurrency", "sweep", "properties", "crash", "sync",
                    "sweep"]
        print(f"ctx soak: seed {self.args.seed}, up to {self.args.trials} trials or {self.args.seconds} s",
              flush=True)
        n = rounds = 0
        while self.report.trials < self.args.trials and time.monotonic() - started < self.args.seconds:
            kind = schedule[n % len(schedule)]
            n += 1
            if kind == "properties" and (self.properties_done or self.args.examples <= 0):
                continue
            rounds += 1
            self.last_label = kind
            t0 = time.monotonic()
            try:
                report = getattr(self, kind)()
            except Exception as error:  # a broken trial is a failure, not the end of the soak
                report = R.Report(trials=1, failures=[f"{kind}: {type(error).__name__}: {error}"])
            self.report.merge(report)
            known = f", known bugs hit: {report.known}" if report.known else ""
            print(f"round {rounds:3d} {self.last_label:34s} trials {report.trials:4d}  failures {len(report.failures)}"
                  f"{known}  ({time.monotonic() - t0:5.1f} s)", flush=True)
            for failure in report.failures[:5]:
                print("    " + failure.replace("\n", "\n    ")[:2000], flush=True)
        elapsed = time.monotonic() - started
        print(f"elapsed: {elapsed:.0f} s")
        if self.report.known:
            print("known bugs hit (counted apart; each has a strict xfail test): "
                  + ", ".join(f"{k}: {v}" for k, v in self.report.known.items()))
        print(f"trials run: {self.report.trials}, failures found: {len(self.report.failures)}")
        if self.report.failures and not self.args.keep:
            print(f"work directories kept for inspection: {', '.join(str(d) for d in self.dirs)}")
        elif not self.args.keep:
            for d in self.dirs:
                shutil.rmtree(d, ignore_errors=True)
        return 1 if self.report.failures else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=1000, help="stop after this many trials (default 1000)")
    parser.add_argument("--seconds", type=float, default=300, help="stop after this long (default 300)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: a new one, printed)")
    parser.add_argument("--examples", type=int, default=100,
                        help="hypothesis examples per property (default 100; 0 skips the properties)")
    parser.add_argument("--keep", action="store_true", help="keep the work directories")
    args = parser.parse_args()
    if args.seed is None:
        args.seed = random.randrange(2**32)
    if not R.CTX.is_file():
        sys.exit(f"no ctx executable at {R.CTX}: run the soak with the project's virtualenv Python")
    os.environ.pop("CTX_HOME", None)
    sys.exit(Soak(args).run())


if __name__ == "__main__":
    main()
