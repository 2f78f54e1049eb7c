#!/usr/bin/env python3
"""The operator's view at scale: ``ctx view`` on 10,000 entries and 5,000 commits.

    python bench/view.py [--entries 10000] [--commits 5000] [--runs 3] [--browser]

Builds the context with ``bench/build.py`` (cached under the bench work
directory, ``$CTX_BENCH_DIR`` or the temporary directory's ``ctx-bench``),
then prints:

* the whole command, ``ctx view --out FILE`` as a process: the first run (the
  read index the brief uses is built then) and the median of ``--runs``;
* in process, the median of ``--runs``: the git walk (``gather``, store file
  reads included), the rendering, and the CPU time of both;
* the page: its size, the versions listed and how many were read in full,
  the store files read for them;
* with ``--browser``, headless Chromium loading the page (``--dump-dom``):
  the whole run, and when the page's script had finished (its own clock).

Not a test.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import build

CTX = str(Path(sys.executable).parent / "ctx")
WORK = Path(os.environ.get("CTX_BENCH_DIR", Path(tempfile.gettempdir()) / "ctx-bench"))


def timed_process(root: Path, out: Path) -> float:
    env = {**os.environ, "CTX_HOME": str(root)}
    start = time.perf_counter()
    subprocess.run([CTX, "view", "--out", str(out)], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def in_process(root: Path, runs: int) -> dict:
    from ctx.view.page import render
    from ctxgit.porcelain.viewdata import gather
    walks, renders, cpus = [], [], []
    for _ in range(runs):
        cpu = time.process_time()
        start = time.perf_counter()
        data = gather(root)
        middle = time.perf_counter()
        page = render(data)
        walks.append(middle - start)
        renders.append(time.perf_counter() - middle)
        cpus.append(time.process_time() - cpu)
    versions = [v for vs in data.versions.values() for v in vs]
    return {"gather": statistics.median(walks), "render": statistics.median(renders),
            "cpu": statistics.median(cpus), "bytes": len(page.encode("utf-8")), "versions": len(versions),
            "known": sum(v.known for v in versions), "reads": data.read_versions, "commits": data.total,
            "entries": sum(data.counts().values())}


def browser(page: Path) -> tuple[float, float] | None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return None
    with tempfile.TemporaryDirectory() as profile:
        start = time.perf_counter()
        done = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                               "--disable-background-networking", "--disable-component-update", "--disable-sync",
                               "--no-first-run", f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
                              capture_output=True, text=True, timeout=300)
        elapsed = time.perf_counter() - start
    ready = re.search(r'id="view-ready"[^>]*>ready after (\d+) ms<', done.stdout)
    if ready is None or 'id="view-error"' in done.stdout:
        raise SystemExit("the page's script did not finish in Chromium")
    return elapsed, int(ready.group(1)) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--commits", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--browser", action="store_true", help="Also time Chromium loading the page.")
    args = parser.parse_args()
    root = WORK / f"view-{args.entries}-{args.commits}"
    start = time.perf_counter()
    build.build(root, args.entries, args.commits)
    print(f"context: {root} ({args.entries} entries, {args.commits} commits; ready in "
          f"{time.perf_counter() - start:.1f} s)")
    out = Path(tempfile.mkdtemp(prefix="ctx-view-bench-")) / "view.html"
    first = timed_process(root, out)
    warm = statistics.median(timed_process(root, out) for _ in range(args.runs))
    print(f"ctx view (whole process): first {first:.2f} s, then median {warm:.2f} s of {args.runs}")
    figures = in_process(root, args.runs)
    print(f"in process (median of {args.runs}): walk {figures['gather']:.2f} s, render {figures['render']:.2f} s, "
          f"CPU {figures['cpu']:.2f} s")
    print(f"page: {figures['bytes'] / 1e6:.2f} MB ({figures['bytes']} bytes) for {figures['entries']} entries and "
          f"{figures['commits']} commits; {figures['versions']} versions listed, {figures['known']} with their "
          f"fields, {figures['reads']} store files read for them")
    if args.browser:
        loaded = browser(out)
        print("chromium: not installed" if loaded is None else
              f"chromium --dump-dom: {loaded[0]:.2f} s in all; the page's script done {loaded[1]:.2f} s "
              "after the navigation began")
    shutil.rmtree(out.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
