#!/usr/bin/env python3
"""What the fast door saves the letter commands: ``ctx send`` and ``ctx inbox``, whole
process, on a context of ``--entries`` entries (40 of them letters).

    python bench/send.py [--entries 1000] [--runs 15]

Builds the context as bench/letters.py does, then runs each command ``--runs`` times
through the fast door and through click (``CTX_SLOW_PATH=1``), alternating, and prints
each door's median and the median of the paired differences, in ms. Not a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

from letters import CTX, _paired, build


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ctx-bench-send-")) / "ctx"
    build(root, args.entries, 40, 10)
    env = {**os.environ, "CTX_HOME": str(root), "CTX_AUTHOR": "Agent One"}
    slow = {**env, "CTX_SLOW_PATH": "1"}
    counter = iter(range(10**6))

    def run(command: list[str], environ: dict[str, str]) -> None:
        done = subprocess.run([str(CTX), *command], env=environ, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"ctx {' '.join(command)}: {done.stderr}")

    def send(environ: dict[str, str]) -> None:
        run(["send", "Agent Two", f"note {next(counter)}: the retry path looks right", "--shape", "report"],
            environ)

    print(f"{args.entries} entries, {args.runs} runs each, doors alternating; "
          f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores")
    for name, call in (("send", send), ("inbox", lambda e: run(["inbox"], e))):
        fast, click, diff = _paired(lambda c=call: c(env), lambda c=call: c(slow), args.runs)
        print(f"ctx {name:<6} fast door {fast:6.1f} ms   click {click:6.1f} ms   saved (paired median) "
              f"{-diff:6.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
