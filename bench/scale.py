#!/usr/bin/env python3
"""Two measurements at scale that need their own set-up (part of ``bench/run.py``).

- ``sync``: two clones of a 10,000-entry context, 1,000 divergent single-entry
  commits on each side, then one ``ctx sync``; reported with one ``ctx set``.
- ``repo size``: ``.git`` after 1,000 real ``ctx set`` writes to a
  10,000-entry store (background packing included).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import build
from runs import fast_import, finish, git, timed

from ctx.storage.textlayout import splice

PY = sys.executable
CTX = str(Path(PY).parent / "ctx")


def env_for(root: Path, author: str = "Bench Agent") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CTX_"))}
    env.update(CTX_HOME=str(root), CTX_AUTHOR=author)
    return env


def append_commits(root: Path, count: int, seed: int, author: str) -> None:
    """``count`` single-entry writes on top of main, as ctx would commit them."""
    rng = random.Random(seed)
    path = root / "memory" / "shared.json"
    raw = path.read_bytes()
    entries = json.loads(raw)["entries"]
    keys = [k for k in entries if k.startswith("entry_")]
    head = git(root, "rev-parse", "HEAD").strip()
    importer, out = fast_import(root)
    when = int(time.time()) - count
    for i in range(count):
        key = rng.choice(keys) if rng.random() < 0.5 else f"{author.split()[0].lower()}_{seed}_{i}"
        before = entries.get(key)
        entry = dict(before or entries[keys[0]])
        entry["value"] = build.make_value(rng)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when + i))
        entry["timestamp"] = stamp
        entries[key] = entry
        spliced = splice(raw, [(key, before, entry)], stamp)
        assert spliced is not None, "the store file is laid out as ctx writes it"
        raw = spliced
        message = f"set shared/{key}: bench\n\nCtx-Operation: set\nCtx-Store: shared\nCtx-Key: {key}\n".encode()
        out.write(b"blob\nmark :%d\ndata %d\n" % (i + 1, len(raw)) + raw + b"\n")
        person = b"%s <bench@ctx.invalid> %d +0000" % (author.encode(), when + i)
        out.write(b"commit refs/heads/main\nauthor %s\ncommitter %s\ndata %d\n%s\n"
                  % (person, person, len(message), message))
        if i == 0:
            out.write(b"from %s\n" % head.encode())
        out.write(b"M 100644 :%d memory/shared.json\n" % (i + 1))
    out.write(b"done\n")
    finish(importer)
    git(root, "reset", "-q", "--hard", "main")


def bench_sync(work: Path, n: int = 10000, writes: int = 1000) -> dict:
    base = build.build(work / f"ctx-{n}", n, commits=0 if n != 10000 else 5000)
    root = work / "sync"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    bare, a, b = root / "remote.git", root / "a", root / "b"
    subprocess.run(["git", "clone", "-q", "--bare", str(base), str(bare)], check=True)
    for side in (a, b):  # git's local clone hardlinks; ctx then sets up hooks, driver, upstream
        subprocess.run(["git", "clone", "-q", str(bare), str(side)], check=True)
        subprocess.run([CTX, "init"], env=env_for(side), check=True, capture_output=True)
    append_commits(a, writes, 1, "Agent A")
    subprocess.run([CTX, "push"], env=env_for(a), check=True, capture_output=True)
    append_commits(b, writes, 2, "Agent B")
    sync_ms = timed([CTX, "sync"], env_for(b))
    set_ms = sorted(timed([CTX, "set", f"after_sync_{i}", "a value"], env_for(b)) for i in range(5))[2]
    from ctxgit.sync.transport import use_git
    return {"sync_ms": sync_ms, "set_ms": set_ms, "writes_each_side": writes,
            "transport": "git" if use_git() else "libgit2"}


def bench_repo_size(work: Path, n: int = 10000, writes: int = 1000) -> dict:
    base = build.build(work / f"ctx-{n}-fresh", n, commits=0)  # a store of n entries, one commit
    root = work / "size"
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(base), str(root)], check=True)
    before = sum(f.stat().st_size for f in (root / ".git").rglob("*") if f.is_file())
    env = env_for(root)
    slowest = 0.0
    for i in range(writes):
        slowest = max(slowest, timed([CTX, "set", f"entry_{i * 7 % n:06d}", f"value number {i}"], env))
    deadline = time.time() + 120
    while (root / ".git" / "gc.pid").exists() and time.time() < deadline:
        time.sleep(1)
    after = sum(f.stat().st_size for f in (root / ".git").rglob("*") if f.is_file())
    return {"git_mb_before": before / 1e6, "git_mb_after": after / 1e6, "writes": writes,
            "slowest_write_ms": slowest}


if __name__ == "__main__":
    work = Path(os.environ.get("CTX_BENCH_DIR", "/tmp/ctx-bench"))
    which = sys.argv[1:] or ["sync", "size"]
    if "sync" in which:
        print(json.dumps(bench_sync(work), indent=2), flush=True)
    if "size" in which:
        print(json.dumps(bench_repo_size(work), indent=2), flush=True)
