#!/usr/bin/env python3
"""ctx benchmark: the credential scanner (``ctx.credentials.scan``) on the write path.

    python bench/scan.py [--repeat 15] [--no-corpus]

Prints, for 1 KB values (the size of a long memory entry):

- the time of one ``scan`` of a value that holds no credential, plain prose and a
  realistic entry (a commit id, a path, a URL, a UUID: the long runs the provider
  rules look at), and of the same entry with one token in it (timeit on the process's
  CPU clock: the median and the best of ``--repeat`` repeats, microseconds a scan);
- the time to import the scanner in a fresh interpreter (``-X importtime``, the
  median over ``--repeat`` processes; byte-code cached, as an installed ctx runs),
  and the first ``scan`` of a process (its prefilter is built then, and the
  expressions it needs compiled);
- the rule count and the corpus results of tests/hooks/test_secret_corpus.py
  (refused/total per form; ordinary entries refused), unless ``--no-corpus``.

Not a test: the machine's load moves the figures; the test suite asserts none.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROSE = ("The deploy pipeline now waits for the migration step before it restarts the web workers, "
         "and the queue drains in under a minute. We saw p95 latency drop from 1830 ms to 412 ms after "
         "raising the pool size to 20; the flaky upload test was a race between the cleanup hook and the "
         "upload worker, fixed by holding the lock while the temporary file is renamed. ")
# a long memory entry as agents write them: prose around a commit id, a path, a URL with a
# query string and a UUID (the long runs the provider rules look at), and the words key and token
ENTRY = ("Upload retries: fixed in commit 3f2a91c0d4e5b6a7980112233445566778899aab (PR #4812). The race "
         "was in tests/api/test_upload.py, between the cleanup hook and the upload worker; holding the "
         "lock while the temporary file is renamed fixes it. Dashboard: "
         "https://grafana.internal/d/abc123/uploads?orgId=1&from=now-6h&to=now shows the retry storm "
         "stopping at 14:05 UTC, and run 123e4567-e89b-12d3-a456-426614174000 is the last one that failed. "
         "The presigned URLs now live for 15 minutes instead of 5, which covers the slowest clients we "
         "saw (a 2 GB upload over a hotel network took 11 minutes). The API key rotation still runs "
         "monthly and the token lives in Vault, never here. Next: make the progress bar survive a page "
         "reload, and drop the old multipart code path once the mobile client stops using it; the "
         "metrics for that are on the same dashboard, panel 7, split by client version. ")
def kilobyte(text: str) -> str:
    return (text * (1024 // len(text) + 1))[:1024]


def per_call(function, repeat: int) -> tuple[float, float]:
    """(median, best) microseconds a call, over ``repeat`` repeats of a fixed number of calls.
    The clock is the process's CPU time: on a shared machine other processes' load moves it
    less than the wall clock."""
    timer = timeit.Timer(function, timer=time.process_time)
    number = max(1, int(0.2 / max(timer.timeit(20) / 20, 1e-7)))
    runs = [t / number * 1e6 for t in timer.repeat(repeat=repeat, number=number)]
    return statistics.median(runs), min(runs)


def fresh_env() -> dict[str, str]:
    """A child interpreter that caches byte-code (outside the tree), as an installed ctx does."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "ctx-bench-pycache")
    env["PYTHONPATH"] = str(ROOT)
    return env


def import_ms(repeat: int) -> tuple[float, float]:
    """(median, best) cumulative milliseconds of ``import ctx.credentials`` in a fresh process."""
    env = fresh_env()
    subprocess.run([sys.executable, "-c", "import ctx.credentials"], env=env, check=True)  # cache
    times = []
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import ctx.credentials"],
                              env=env, capture_output=True, text=True, check=True)
        line = next(line for line in done.stderr.splitlines() if line.rstrip().endswith("| ctx.credentials"))
        times.append(int(line.split("|")[1]) / 1000)
    return statistics.median(times), min(times)


FIRST_SCAN = """
import time
import ctx.credentials as c
text = {text!r}
start = time.perf_counter()
c.scan(text)
print((time.perf_counter() - start) * 1000)
"""


def first_scan_ms(text: str, repeat: int) -> float:
    env = fresh_env()
    times = [float(subprocess.run([sys.executable, "-c", FIRST_SCAN.format(text=text)], env=env,
                                  capture_output=True, text=True, check=True).stdout)
             for _ in range(repeat)]
    return statistics.median(times)


def corpus() -> list[str]:
    sys.path.insert(0, str(ROOT / "tests"))
    from ctx.credentials import scan
    from support.hookutil import FORMS, KEYWORD_CASES, KEYWORD_FORMS, ORDINARY_NOTES, PREFIXED, SAMPLES
    lines = []
    for form, write in FORMS.items():
        caught = sum(rule in {f.rule for f in scan(write(rule, SAMPLES[rule]))} for rule in PREFIXED)
        lines.append(f"prefixed formats, {form}: {caught}/{len(PREFIXED)} refused by their own rule")
    for form in KEYWORD_FORMS:
        cases = [text for f, _name, _value, text in KEYWORD_CASES if f == form]
        lines.append(f"keyword + high entropy, {form}: {sum(bool(scan(t)) for t in cases)}/{len(cases)} refused")
    refused = sum(bool(scan(text)) for text in ORDINARY_NOTES.values())
    lines.append(f"ordinary entries: {refused}/{len(ORDINARY_NOTES)} refused (false positives)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--no-corpus", action="store_true")
    args = parser.parse_args()

    from ctx.credentials import RULES, scan
    sys.path.insert(0, str(ROOT / "tests"))
    from support.hookutil import SAMPLES
    token = SAMPLES["gitlab-deploy-token"]
    plain, entry = kilobyte(PROSE), kilobyte(ENTRY)
    dirty = (entry[:480] + f" The deploy token is {token} (rotate it). " + entry[480:])[:1024]
    assert not scan(plain) and not scan(entry) and [f.rule for f in scan(dirty)] == ["gitlab-deploy-token"]

    load = f", load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    print(f"ctx.credentials: {len(RULES)} rules; Python {sys.version.split()[0]}, {os.cpu_count()} cores{load}")
    print(f"{'1 KB value':46} {'median':>9} {'best':>9}")
    for name, text in (("no credential, plain prose", plain),
                       ("no credential, entry with id, path, URL, UUID", entry),
                       ("one token in the entry", dirty)):
        median, best = per_call(lambda text=text: scan(text), args.repeat)
        print(f"{name:46} {median:6.1f} µs {best:6.1f} µs")
    median, best = import_ms(args.repeat)
    print(f"{'import ctx.credentials (fresh process)':46} {median:6.2f} ms {best:6.2f} ms")
    print(f"{'first scan in a process (prefilter built)':46} {first_scan_ms(dirty, 5):6.2f} ms")
    if not args.no_corpus:
        for line in corpus():
            print(line)


if __name__ == "__main__":
    main()
