#!/usr/bin/env python3
"""What FOR YOU and DUE add to ``ctx start``: a 3,000-entry context with 200 letters.

    python bench/letters.py [--entries 3000] [--letters 200] [--due 40] [--runs 40] [--write]

Builds a context root (a repository, the read index warm) whose shared store holds
``--letters`` letters to four readers (a third of them answered, some resolved),
``--due`` entries with due dates, and ordinary entries up to ``--entries``; then times

* in process: ``build_brief`` as ``ctx start`` calls it (the index read-only), with
  FOR YOU and DUE and with both left out (their functions stubbed);
* whole process: ``ctx start`` for an agent with letters, the same two ways (a child
  process stubs the two functions before running the front door);

each ``--runs`` times, the two ways alternating. The median of the paired differences
is what the two sections cost. ``--write`` puts the table in
bench/results.md. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

READERS = ["Agent One", "Agent Two", "Agent Three", "operator"]
CTX = Path(sys.executable).parent / "ctx"


def _entry(value: str, when: str, **extra) -> dict:
    return {"value": value, "source": "agent", "author": "Agent Two", "basis": "inferred", "scope": "global",
            "tags": extra.pop("tags", []), "created": when, "timestamp": when, **extra}


def build(root: Path, entries: int, letters: int, due: int, seed: int = 3) -> None:
    from ctx.letters import new_key
    rng = random.Random(seed)
    env = {**os.environ, "CTX_HOME": str(root)}
    env.pop("CTX_AUTHOR", None)
    subprocess.run([str(CTX), "init", "--yes"], env=env, check=True, capture_output=True)
    shared: dict[str, dict] = {}
    start = 1_795_000_000
    keys: list[str] = []
    for n in range(letters):
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + n * 600))
        to = READERS[n % len(READERS)]
        sender = READERS[(n + 1) % len(READERS)]
        text = f"letter {n}: please look at the upload retry path and report what you find"
        key = new_key(to, text, when)
        extra = {"from": sender, "to": to, "shape": rng.choice(["request", "report", "ack"]), "tags": ["letter"]}
        if keys and n % 3 == 0:
            extra["re"] = rng.choice(keys)
        if n % 17 == 0:
            extra.update(status="resolved", status_timestamp=when)
        shared[key] = _entry(text, when, **extra)
        keys.append(key)
    today = time.strftime("%Y-%m-%d")
    for n in range(due):
        day = time.strftime("%Y-%m-%d", time.gmtime(time.time() + (n - due // 2) * 86400))
        shared[f"plan_due_{n}"] = _entry(f"something due {n}", f"{today}T00:00:00Z", due=day, due_set=today)
    for n in range(entries - letters - due):
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + rng.randint(0, 10_000_000)))
        shared[f"result_{n}"] = _entry(f"finding {n}: the due process overdue " * rng.randint(1, 4), when,
                                       tags=[rng.choice(["uploads", "db", "ui"])])
    data = {"type": "shared", "version": "1", "last_updated": today + "T00:00:00Z", "entries": shared}
    (root / "memory" / "shared.json").write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    subprocess.run([str(CTX), "set", "bench_marker", "commit the store"], env=env, check=True, capture_output=True)
    subprocess.run([str(CTX), "list", "--limit", "1"], env=env, check=True, capture_output=True)  # warm the index
    env["CTX_AUTHOR"] = "Agent One"
    subprocess.run([str(CTX), "brief"], env=env, check=True, capture_output=True)  # the since-log
    time.sleep(2.5)  # past the index's racy window: a store file this new is checked byte by byte
    subprocess.run([str(CTX), "list", "--limit", "1"], env=env, check=True, capture_output=True)


def _paired(first, second, runs: int) -> tuple[float, float, float]:
    """``first`` and ``second`` run alternately ``runs`` times each (the load of a shared
    machine moves; pairs see the same load): each one's median, and the median of the
    per-pair differences, in ms."""
    a, b, diff = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        first()
        t1 = time.perf_counter()
        second()
        t2 = time.perf_counter()
        a.append((t1 - t0) * 1000)
        b.append((t2 - t1) * 1000)
        diff.append(a[-1] - b[-1])
    return statistics.median(a), statistics.median(b), statistics.median(diff)


def in_process(root: Path, runs: int) -> tuple[tuple[float, float, float], int, int]:
    import ctx.brief as brief_module
    from ctx.context import Context
    from ctxgit.gitfiles.layout import state_dir
    real_for_you, real_due = brief_module._for_you, brief_module._due

    def once():
        return brief_module.build_brief(Context(root, author="Agent One", cache="read", state_of=state_dir))

    def without():
        brief_module._for_you = lambda *a: None
        brief_module._due = lambda *a: None
        try:
            once()
        finally:
            brief_module._for_you, brief_module._due = real_for_you, real_due
    shown = once()
    without()
    return _paired(once, without, runs), len(shown.for_you) + shown.for_you_more, len(shown.due) + shown.due_more


CHILD = """
import sys
sys.argv = ["ctx", "start"]
if {stub!r} == "stub":
    import ctx.brief as b
    b._for_you = lambda *a: None
    b._due = lambda *a: None
from ctx.cli.fast import main
main()
"""


def whole_process(root: Path, runs: int) -> tuple[float, float, float]:
    env = {**os.environ, "CTX_HOME": str(root), "CTX_AUTHOR": "Agent One"}

    def start(kind: str):
        return lambda: subprocess.run([sys.executable, "-c", CHILD.format(stub=kind)], env=env, check=True,
                                      capture_output=True)
    return _paired(start("real"), start("stub"), runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=3000)
    parser.add_argument("--letters", type=int, default=200)
    parser.add_argument("--due", type=int, default=40)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    # as a wheel install would leave it: byte-compiled (this machine sets PYTHONDONTWRITEBYTECODE)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "ctx"), str(HERE.parent / "ctxgit"),
                    str(HERE.parent / "hooks")], check=False)
    with tempfile.TemporaryDirectory(prefix="ctx-bench-letters-") as tmp:
        root = Path(tmp) / "ctx"
        build(root, args.entries, args.letters, args.due)
        (with_ms, without_ms, added_ms), letters_shown, due_shown = in_process(root, args.runs)
        real_ms, stub_ms, added_start = whole_process(root, args.runs)
    rows = [
        f"| {args.entries} | build_brief, in process (index read-only, as start) | {with_ms:.2f} | {without_ms:.2f} "
        f"| {added_ms:+.2f} |",
        f"| {args.entries} | ctx start, whole process | {real_ms:.1f} | {stub_ms:.1f} | {added_start:+.1f} |",
    ]
    print(f"{args.entries} entries, {args.letters} letters ({letters_shown} open to Agent One), "
          f"{args.due} due dates ({due_shown} in Agent One's DUE); medians of {args.runs}")
    print("| entries | what | with FOR YOU and DUE ms | without ms | added ms |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    if args.write:
        from resultsfile import prepend
        head = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        load = os.getloadavg()[0]
        prepend([f"## {time.strftime('%Y-%m-%d %H:%M')} · commit {head} · {platform.machine()}, "
                 f"{os.cpu_count()} cores shared with other work (load {load:.1f}), Python "
                 f"{platform.python_version()} · bench/letters.py", "",
                 "| entries | what | with FOR YOU and DUE ms | without ms | added ms |", "|---|---|---|---|---|",
                 *rows, "",
                 f"{args.letters} letters to four readers ({letters_shown} open to the reader), {args.due} due "
                 f"dates ({due_shown} in the DUE section); {args.runs} runs of each, alternating; added: the "
                 "median of the paired differences. Target: at most 5 ms added. Measured while other work "
                 "shared the two cores (the load above): every figure moves from run to run; the in-process "
                 "difference is the steadier one."])


if __name__ == "__main__":
    main()
