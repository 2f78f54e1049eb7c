#!/usr/bin/env python3
"""ctx benchmark: whole processes, as a harness runs them, against the physical floor.

    python bench/run.py [--quick] [--sizes 1000,10000] [--runs 5] [--no-write-results]
    python bench/run.py --phases [--sizes 10000]     # where a write's time goes, phase by phase

For each context size it builds a context (three stores, ~300-byte values,
tags, statuses, summaries, a history), then times the median of ``--runs``
runs of each ctx command, alternating with its floor: a bare ``python -c``
process doing the least the operation must do (read: start, read, parse,
find; write: start, flock, read, parse, change, serialize, fsync, rename).
It prints a table of milliseconds and ratios, and writes it to
bench/results.md with the machine, date and commit. Not a test.
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
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build
import resultsfile
import runs as runs_
from runs import timed

HERE = Path(__file__).resolve().parent
PY = sys.executable
CTX = str(Path(PY).parent / "ctx")
WORK = Path(os.environ.get("CTX_BENCH_DIR", Path(tempfile.gettempdir()) / "ctx-bench"))

READ_FLOOR = """
import json, sys
stores = {stores!r}
hits = []
for name in stores:
    with open({memory!r} + "/" + name + ".json", encoding="utf-8") as f:
        data = json.load(f)
    entries = data["entries"]
    {find}
print(len(hits))
"""
FIND_KEY = "e = entries.get({key!r}); hits += [e] if e else []"
# the least a `ctx get` through the read index can do: start, open the index, look the key up,
# check the store file is the one indexed (a stat), decode the entry (its body and its value:
# ctx/storage/rows.py)
INDEX_FLOOR = """
import marshal, os, sqlite3
os.stat({path!r})
db = sqlite3.connect("file:" + {index!r} + "?mode=ro", uri=True)
row = db.execute("SELECT body, value FROM entries WHERE store = ? AND key = ?", ("shared", {key!r})).fetchone()
entry = marshal.loads(row[0])
entry["value"] = marshal.loads(row[1])
print(entry["value"][:20])
"""
FIND_WORD = "hits += [k for k, e in entries.items() if {word!r} in str(e.get('value')).lower()][:50]"
FIND_TAG = "hits += [k for k, e in entries.items() if {tag!r} in e.get('tags', [])]"
# the same, printing what `ctx list` prints of each hit: its name, time and the head of its value
# (the floor of `list --tag` above prints only a count)
FIND_TAG_PRINTED = ("found = [k for k, e in entries.items() if {tag!r} in e.get('tags', [])]; hits += found; "
                    "print('\\n'.join(name + '/' + k + '  ' + str(entries[k].get('timestamp', ''))[:16] + '  '"
                    " + ' '.join(str(entries[k].get('value')).split())[:100] for k in sorted("
                    "found, key=lambda k: entries[k].get('timestamp', ''), reverse=True)))")
FIND_ALL = "hits += sorted(entries.items(), key=lambda kv: kv[1].get('timestamp', ''))[-10:]"

WRITE_FLOOR = """
import fcntl, json, os
fd = os.open({lock!r}, os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
with open({path!r}, encoding="utf-8") as f:
    data = json.load(f)
data["entries"][{key!r}] = {{"value": "floor value", "source": "agent", "basis": "inferred",
    "scope": "global", "tags": [], "created": "2026-11-30T00:00:00Z", "timestamp": "2026-11-30T00:00:00Z"}}
text = json.dumps(data, indent=2, ensure_ascii=False) + "\\n"
tmp = {path!r} + ".floor.tmp"
with open(tmp, "w", encoding="utf-8") as f:
    f.write(text)
    f.flush()
    os.fsync(f.fileno())
os.replace(tmp, {path!r})
"""


def measure(ctx_args, floor_code: str | Callable[[int], str] | None, env, runs: int, before=None,
            peaks: list | None = None) -> tuple[float, float | None]:
    """Medians of ctx and its floor, run by run alternating; with ``peaks``, the median
    peak memory of each side is appended to it."""
    ours, floors, our_peak, floor_peak = [], [], [], []
    for i in range(runs):
        if before:
            before(i)
        args = ctx_args(i) if callable(ctx_args) else ctx_args
        ours.append(timed([CTX, *args], env, ok=(0, 1)))
        our_peak.append(runs_.PEAK[0])
        if floor_code is not None:
            code = floor_code(i) if callable(floor_code) else floor_code
            floors.append(timed([PY, "-c", code], env, ok=(0, 1)))
            floor_peak.append(runs_.PEAK[0])
    if peaks is not None:
        peaks.append((statistics.median(our_peak), statistics.median(floor_peak) if floor_peak else None))
    return statistics.median(ours), (statistics.median(floors) if floors else None)


LETTER = build.make_value(__import__("random").Random(5), 3000)


def floor_parts(path: Path, env, runs: int) -> list[tuple[str, float, float | None, str]]:
    """What a write's bytes cost on this machine, each alone, in this run (medians):
    Python's start, the store file written, fsynced and renamed, its git blob id (SHA-1),
    its zlib compression at level 1 (a loose object's)."""
    import hashlib
    import zlib
    raw = path.read_bytes()
    tmp = path.with_name(".floor-parts.tmp")

    def write() -> None:
        with open(tmp, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)

    def ms(action) -> float:
        times = []
        for _ in range(runs):
            began = time.perf_counter()
            action()
            times.append((time.perf_counter() - began) * 1000)
        return statistics.median(times)
    parts = [("python start", statistics.median(timed([PY, "-c", "pass"], env) for _ in range(runs))),
             ("write, fsync, rename", ms(write)),
             ("SHA-1 blob id", ms(lambda: hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest())),
             ("zlib level 1", ms(lambda: zlib.compress(raw, 1)))]
    total = sum(v for _, v in parts)
    size = f"{len(raw) / 1e6:.1f} MB store file"
    out: list[tuple[str, float, float | None, str]] = [
        (f"floor part: {name}", value, None, size) for name, value in parts]
    out.append(("floor: a write's bytes", total, None, "the sum of the parts above"))
    # what any `ctx` process costs before ctx's first line: the interpreter, and the installed
    # script's own lines (pip's entry-point script before pip 25 imports `re` first; bin/ctx,
    # installed as written, only sys): a floor of every command, a read's too
    preamble = script_preamble()
    out.append(("process: python start, the ctx script's lines", statistics.median(
        timed([PY, "-c", preamble], env) for _ in range(runs)), None, "; ".join(preamble.splitlines())))
    for name, value, _, _ in out:
        print(f"         {name:<36} {value:7.1f} ms", flush=True)
    return out


def fixed_parts(path: Path, env, runs: int) -> list[tuple[str, float, None, str]]:
    """What a command pays that ctx's own code does not decide (medians, this run): a read's
    module of the index (``_sqlite3``, which imports ``functools`` when it loads) and the
    interpreter's own exit, both beside Python's bare start; and a write's ``git commit``
    of the store file, with the options ctx gives it, beside one ``git hash-object`` of it
    (git hashes a file it commits twice: into the index, and when it writes the object)."""
    import tempfile

    from ctxgit.plumbing.gitcommit import OWN_SETTINGS
    python = [("python start", "pass"), ("python start, import _sqlite3", "import _sqlite3"),
              ("the same, no interpreter exit", "import _sqlite3, os; os._exit(0)")]
    out: list[tuple[str, float, None, str]] = [
        (f"fixed part: {name}", statistics.median(timed([PY, "-c", code], env) for _ in range(runs)), None, code)
        for name, code in python]
    git_env = {k: v for k, v in env.items() if not k.startswith(("GIT_", "CTX_"))}
    git_env.update(GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@ctx.invalid",
                   GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@ctx.invalid")
    with tempfile.TemporaryDirectory(prefix="ctx-bench-git-") as where:
        repo = Path(where)
        (repo / "memory").mkdir()
        store = repo / "memory" / "shared.json"
        raw = path.read_bytes()
        store.write_bytes(raw)
        for args in (["init", "-q", "-b", "main"], ["config", "core.looseCompression", "0"],
                     ["add", "memory/shared.json"], ["commit", "-q", "-m", "first"]):
            subprocess.run(["git", "-C", where, *OWN_SETTINGS, *args], env=git_env, check=True)
        commits = []
        for i in range(runs):
            store.write_bytes(raw.replace(b'"entries": {', b'"entries": {"bench_%d": 0, ' % i, 1))
            commits.append(timed(["git", "-C", where, *OWN_SETTINGS, "commit", "-q", "--include", "-m", f"w{i}",
                                  "--", "memory/shared.json"], git_env))
        hashed = statistics.median(timed(["git", "-C", where, "hash-object", "memory/shared.json"], git_env)
                                   for _ in range(runs))
    size = f"{len(raw) / 1e6:.1f} MB store file"
    out += [("fixed part: git commit of the store file", statistics.median(commits), None,
             f"{size}: git commit --include, as a write commits"),
            ("fixed part: git hash-object of it", hashed, None, "one pass of git's SHA-1 over the file")]
    for name, value, _, _ in out:
        print(f"         {name:<44} {value:7.1f} ms", flush=True)
    return out


def script_preamble() -> str:
    """The installed ``ctx`` script's statements before it imports ctx (docstring and
    comments left out): what every command runs before ctx's first line."""
    import ast
    tree = ast.parse(Path(CTX).read_text(encoding="utf-8"))
    lines = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom | ast.Import) and any(
                (getattr(node, "module", None) or alias.name).split(".")[0] == "ctx" for alias in node.names):
            break
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            lines.append(ast.unparse(node))
    return "\n".join(lines) or "pass"


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def bench_size(n: int, runs: int, commits: int) -> list[tuple[str, float, float | None, str]]:
    root = build.build(WORK / f"ctx-{n}", n, commits=commits)
    scratch = WORK / f"scratch-{n}"
    shutil.rmtree(scratch, ignore_errors=True)
    (scratch / "memory").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CTX_"))}
    env.update(CTX_HOME=str(root), CTX_AUTHOR="Bench Agent")
    subprocess.run([CTX, "doctor"], env=env, stdout=subprocess.DEVNULL)  # settle: hooks, config
    runs_.quiet(root)  # the build's last packing ended
    memory = str(root / "memory")
    all_stores = ["operator", "shared", "agent"]
    shared = json.loads((root / "memory" / "shared.json").read_text())["entries"]
    key = next(k for k in shared if k.startswith("entry_"))
    entry_keys = [k for k in shared if k.startswith("entry_")]
    middle = entry_keys[len(entry_keys) // 2]  # (a get reads the store file up to its key)
    rows = []

    def floor(stores, find):
        return READ_FLOOR.format(stores=stores, memory=memory, find=find)

    def add(name, result, note=""):
        ours, base = result
        rows.append((name, ours, base, note))
        ratio = f"{ours / base:.2f}" if base else "-"
        print(f"  {n:>7} {name:<24} {ours:9.1f} ms   floor {base or 0:9.1f} ms   ratio {ratio}", flush=True)

    add("get", measure(["get", key], floor(["shared"], FIND_KEY.format(key=key)), env, runs))
    add("get (a key mid-file)", measure(["get", middle], floor(["shared"], FIND_KEY.format(key=middle)), env, runs),
        "the key halfway through the store file (the row above: its first entry_ key)")
    from ctx.storage.index import index_path
    from ctxgit.gitfiles.layout import state_dir
    index = str(index_path(state_dir(root)))
    add("get (index floor)", measure(["get", key], INDEX_FLOOR.format(path=str(root / "memory" / "shared.json"),
                                                                       index=index, key=key), env, runs),
        "floor: python -c opening the SQLite index for the same query")
    add("search WORD", measure(["search", "vacuum"], floor(all_stores, FIND_WORD.format(word="vacuum")), env, runs))
    add("list --tag T", measure(["list", "--tag", "infra"], floor(all_stores, FIND_TAG.format(tag="infra")), env, runs))
    add("list --tag T (printed floor)", measure(["list", "--tag", "infra"],
                                               floor(all_stores, FIND_TAG_PRINTED.format(tag="infra")), env, runs),
        "floor: the same, printing a line per hit as ctx does")
    add("brief", measure(["brief"], floor(all_stores, FIND_ALL), env, runs))
    operator_env = {k: v for k, v in env.items() if k != "CTX_AUTHOR"}
    add("brief (the operator's)", measure(["brief"], floor(all_stores, FIND_ALL), operator_env, runs),
        "no CTX_AUTHOR: DUE looks for stale entries too, INSTRUCTIONS and the rest as above")
    add("start", measure(["start"], floor(all_stores, FIND_ALL), env, runs))
    brief_ms = next(row[1] for row in rows if row[0] == "brief")
    budgeted = measure(["start", "--max-chars", "9000"], floor(all_stores, FIND_ALL), env, runs)
    add("start --max-chars 9000", budgeted, f"{budgeted[0] / brief_ms:.2f} x brief (with SINCE: CTX_AUTHOR set)")

    shutil.copy(root / "memory" / "shared.json", scratch / "memory" / "shared.json")
    wpath, wlock = str(scratch / "memory" / "shared.json"), str(scratch / "memory" / ".lock")

    def wfloor(i):
        return WRITE_FLOOR.format(lock=wlock, path=wpath, key=f"floor_{i}")
    stamp = int(time.time())
    peaks: list = []
    add("set (new key)", measure(lambda i: ["set", f"bench_new_{stamp}_{i}", "a new value for the benchmark"],
                                 wfloor, env, runs))
    add("set (update)", measure(lambda i: ["set", key, f"an updated value {i}"], wfloor, env, runs, peaks=peaks))
    add("amend", measure(lambda i: ["amend", key, f"note {i}"], wfloor, env, runs))
    add("set (letter, 3 KB)", measure(lambda i: ["set", f"letter_{stamp}_{i}", f"{i} {LETTER}"], wfloor, env, runs),
        "a new entry holding a letter-sized value")
    ours_mb, floor_mb = peaks[0]
    rows.append(("set (update) peak memory", ours_mb, floor_mb, "MB: maxrss of the process (getrusage)"))
    print(f"  {n:>7} set (update) peak memory  {ours_mb:6.1f} MB   floor {floor_mb:6.1f} MB", flush=True)
    rows.extend(floor_parts(scratch / "memory" / "shared.json", env, runs))
    rows.extend(fixed_parts(scratch / "memory" / "shared.json", env, runs))
    get_ms = rows[0][1]
    hist = measure(["history", "entry_hot"], None, env, runs)
    add("history KEY", (hist[0], None), f"{hist[0] / get_ms:.1f} x get, {commits} commits")
    add("log -n 20", measure(["log", "-n", "20"], None, env, runs))
    add("diff HEAD~100", measure(["diff", "HEAD~100"], None, env, runs))
    size = dir_size(root / ".git")
    rows.append((".git size", size / 1e6, None, "MB"))
    print(f"  {n:>7} .git size {size / 1e6:.1f} MB", flush=True)
    return rows


def scan_cost() -> tuple[float, float]:
    """Microseconds to scan a 1 KB ordinary value, and one holding a credential (in-process)."""
    import timeit
    sys.path.insert(0, str(HERE.parent))
    from ctx.credentials import scan
    plain = build.make_value(__import__("random").Random(3), 1000)
    leaky = plain[:500] + " AKIA" + "QWERTYUIOPASDFGH " + plain[500:]
    scan(leaky)  # compile the expressions once, as a long-running hook would have
    n = 2000
    return (timeit.timeit(lambda: scan(plain), number=n) / n * 1e6,
            timeit.timeit(lambda: scan(leaky), number=n) / n * 1e6)


def git_commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def write_results(all_rows: dict[int, list], args) -> None:
    lines = [f"## {datetime.now().strftime('%Y-%m-%d %H:%M')} · commit {git_commit()} · "
             f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
             f"{' · quick' if args.quick else ''}", "",
             "| entries | operation | ctx ms | floor ms | ratio | note |", "|---|---|---|---|---|---|"]
    for n, rows in all_rows.items():
        for name, ours, base, note in rows:
            ratio = f"{ours / base:.2f}" if base else ""
            floor = f"{base:.1f}" if base else ""
            lines.append(f"| {n} | {name} | {ours:.1f} | {floor} | {ratio} | {note} |")
    print(f"written to {resultsfile.prepend(lines)}")


PHASES = ("start", "check", "prepare", "parse", "write", "hash", "compress", "commit", "index", "after")


def bench_phases(n: int, runs: int, commits: int) -> list[tuple[str, float, float | None, str]]:
    """Where a write's time goes at ``n`` entries: each write run ``runs`` times with
    ``CTX_PHASES`` set (ctx/phases.py), the median of each phase; "other" is the rest of
    the process's time (Python's start and the imports before the first lap)."""
    source = build.build(WORK / f"ctx-{n}", n, commits=commits)
    root = WORK / f"phases-{n}"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(source, root, symlinks=True)
    log = WORK / f"phases-{n}.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CTX_"))}
    env.update(CTX_HOME=str(root), CTX_AUTHOR="Bench Agent")
    shared = json.loads((root / "memory" / "shared.json").read_text())["entries"]
    key = next(k for k in shared if k.startswith("entry_"))
    for args in (["get", key], ["set", key, "warm"], ["set", key, "warm again"]):  # the index, the fast state
        timed([CTX, *args], env)
    env["CTX_PHASES"] = str(log)
    stamp = int(time.time())
    writes = [("set (update)", lambda i: ["set", key, f"an updated value {i}"]),
              ("set (new key)", lambda i: ["set", f"phase_new_{stamp}_{i}", "a new value"]),
              ("amend", lambda i: ["amend", key, f"note {i}"]),
              ("set (letter, 3 KB)", lambda i: ["set", f"phase_letter_{stamp}_{i}", f"{i} {LETTER}"])]
    rows: list[tuple[str, float, float | None, str]] = []
    print(f"  {n:>7} phase ms (median of {runs})  " + " ".join(f"{p:>8}" for p in PHASES) + "    other    total",
          flush=True)
    for name, args in writes:
        walls, laps = [], []
        for i in range(runs):
            log.unlink(missing_ok=True)
            walls.append(timed([CTX, *args(i)], env))
            lines = log.read_text().splitlines() if log.exists() else []
            laps.append(json.loads(lines[-1]) if lines else {})
        medians = {p: statistics.median(lap.get(p, 0.0) for lap in laps) for p in PHASES}
        other = statistics.median(w - sum(lap.values()) for w, lap in zip(walls, laps, strict=True))
        total = statistics.median(walls)
        print(f"  {n:>7} {name:<24} " + " ".join(f"{medians[p]:8.1f}" for p in PHASES)
              + f" {other:8.1f} {total:8.1f}", flush=True)
        note = ", ".join(f"{p} {medians[p]:.1f}" for p in PHASES) + f", other {other:.1f}"
        rows.append((f"phases: {name}", total, None, note))
    shutil.rmtree(root, ignore_errors=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="sizes 100 and 1,000, 3 runs, short histories")
    parser.add_argument("--sizes", help="comma-separated entry counts (default 100,1000,10000,100000)")
    parser.add_argument("--runs", type=int, help="runs per measurement (default 5; quick 3)")
    parser.add_argument("--no-write-results", action="store_true")
    parser.add_argument("--no-scale", action="store_true", help="skip the sync and repository-size runs")
    parser.add_argument("--commits", type=int, help="commits of history for every size (default: 5,000 at "
                        "10,000 entries, 500 up to 1,000, 20 above)")
    parser.add_argument("--phases", action="store_true", help="only where a write's time goes, per phase "
                        "(default size 10,000): parse, check, write, hash, compress, commit, index...")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else \
        ([100, 1000] if args.quick else [100, 1000, 10000, 100000])
    runs = args.runs or (3 if args.quick else 5)
    WORK.mkdir(parents=True, exist_ok=True)
    # as a wheel install would leave it: byte-compiled (this machine sets PYTHONDONTWRITEBYTECODE)
    subprocess.run([PY, "-m", "compileall", "-q", str(HERE.parent / "ctx"), str(HERE.parent / "ctxgit"),
                    str(HERE.parent / "hooks")], check=False)
    all_rows = {}
    if args.phases:
        for n in ([int(x) for x in args.sizes.split(",")] if args.sizes else [10000]):
            commits = args.commits if args.commits is not None else (5000 if n == 10000 else 500 if n <= 1000 else 20)
            print(f"building {n} entries with {commits} commits ...", flush=True)
            all_rows[n] = bench_phases(n, runs, commits)
        if not args.no_write_results:
            write_results(all_rows, args)
        return
    for n in sizes:
        commits = args.commits if args.commits is not None else \
            200 if args.quick else (5000 if n == 10000 else 500 if n <= 1000 else 20)
        print(f"building {n} entries with {commits} commits ...", flush=True)
        all_rows[n] = bench_size(n, runs, commits)
    if 10000 in sizes and not args.quick and not args.no_scale:
        import scale
        print("sync of 1,000 divergent writes on each side, 10,000 entries ...", flush=True)
        done = scale.bench_sync(WORK)
        ratio = done["sync_ms"] / done["set_ms"]
        all_rows[10000].append(("sync (1,000 × 2 writes)", done["sync_ms"], None,
                                f"{ratio:.1f} x one set ({done['set_ms']:.0f} ms)"))
        print(f"    sync {done['sync_ms']:.0f} ms = {ratio:.1f} x set", flush=True)
        print(".git after 1,000 writes to a 10,000-entry store ...", flush=True)
        size = scale.bench_repo_size(WORK)
        all_rows[10000].append((".git after 1,000 writes", size["git_mb_after"], None,
                                f"MB (from {size['git_mb_before']:.1f} MB; slowest write "
                                f"{size['slowest_write_ms']:.0f} ms)"))
        print(f"    .git {size['git_mb_after']:.1f} MB", flush=True)
    plain_us, leaky_us = scan_cost()
    print(f"credential scan of a 1 KB value: {plain_us:.1f} us ordinary, {leaky_us:.1f} us with a key", flush=True)
    all_rows.setdefault(0, []).append(("scan 1 KB value (us)", plain_us, None,
                                       f"{leaky_us:.1f} us when it holds a key; in-process"))
    if not args.no_write_results:
        write_results(all_rows, args)


if __name__ == "__main__":
    main()
