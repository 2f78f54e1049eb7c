#!/usr/bin/env python3
"""What signing costs a write: ``ctx set`` with and without ssh signing, and the signer alone.

    python bench/signing.py [--runs 15] [--entries 200]

Builds two context roots with the same ``--entries`` entries and the same git
identity; the second's repository signs its commits with a fresh ed25519 key
(``gpg.format ssh``, ``commit.gpgsign true``). Then it times, alternating, the
median of ``--runs`` whole ``ctx set`` processes in each (one ``git commit``, as a
harness runs it), and the median of ``ssh-keygen -Y sign -n git`` on a
commit-sized buffer alone: what signing can cost at the least. Prints
milliseconds. ctx runs with its bytecode cached (in the bench's own folder,
``PYTHONPYCACHEPREFIX``), as an installed ctx does. Not a test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CTX = str(Path(sys.executable).parent / "ctx")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import build


def _env(root: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CTX_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # ctx as installed: its bytecode cached (outside the tree)
    env.update({"CTX_HOME": str(root), "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                "GIT_CONFIG_NOSYSTEM": "1", "CTX_AUTHOR": "Agent Bench",
                "PYTHONPYCACHEPREFIX": str(home / "pycache")})
    return env


def _run(argv: list[str], env: dict[str, str] | None = None, data: bytes | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, input=data, capture_output=True)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode(errors='replace')}")
    return elapsed


def _context(root: Path, home: Path, entries: int, key: Path | None) -> dict[str, str]:
    env = _env(root, home)
    (root / "memory").mkdir(parents=True, mode=0o700)
    for name, found in build.make_entries(entries).items():  # realistic entries, ~300-byte values
        (root / "memory" / f"{name}.json").write_bytes(build.store_bytes(name, found))
    _run([CTX, "init"], env)
    git = ["git", "-C", str(root), "config"]
    _run(git + ["user.name", "Bench Operator"], env)
    _run(git + ["user.email", "bench@example.org"], env)
    if key is not None:
        for name, value in (("gpg.format", "ssh"), ("user.signingkey", f"{key}.pub"), ("commit.gpgsign", "true")):
            _run(git + [name, value], env)
    _run([CTX, "set", "warm_up", "first write after the config: libgit2 records the state"], env)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--entries", type=int, default=200)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ctx-bench-signing-"))
    try:
        home = work / "home"
        home.mkdir()
        key = work / "key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        plain = _context(work / "plain", home, args.entries, None)
        signed = _context(work / "signed", home, args.entries, key)
        buffer = work / "commit"
        buffer.write_bytes(b"tree " + b"0" * 40 + b"\nparent " + b"1" * 40 + b"\n"
                           + b"author Agent Bench <a@ctx.invalid> 1 +0000\n"
                           + b"committer Bench Operator <bench@example.org> 1 +0000\n\n"
                           + b"set shared/k: a value\n\nCtx-Operation: set\nCtx-Store: shared\nCtx-Key: k\n")
        times: dict[str, list[float]] = {"unsigned": [], "signed": [], "signer": []}
        for n in range(args.runs):
            times["unsigned"].append(_run([CTX, "set", "k", f"value {n}"], plain))
            times["signed"].append(_run([CTX, "set", "k", f"value {n}"], signed))
            (work / "commit.sig").unlink(missing_ok=True)
            times["signer"].append(_run(["ssh-keygen", "-Y", "sign", "-n", "git", "-f", f"{key}.pub",
                                         str(buffer)], signed))
        check = subprocess.run(["git", "-C", str(work / "signed"), "cat-file", "commit", "HEAD"],
                               capture_output=True, text=True, env=signed).stdout
        assert "\ngpgsig -----BEGIN SSH SIGNATURE-----" in check, "the signed context's commit is not signed"
        median = {name: statistics.median(values) for name, values in times.items()}
        print(f"ctx set, median of {args.runs} ({args.entries} entries, one git commit):")
        print(f"  without signing          {median['unsigned']:7.1f} ms")
        print(f"  with ssh signing         {median['signed']:7.1f} ms")
        print(f"  difference               {median['signed'] - median['unsigned']:7.1f} ms")
        print(f"ssh-keygen -Y sign alone   {median['signer']:7.1f} ms")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
