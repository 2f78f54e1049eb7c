"""Build benchmark contexts: realistic entries, three stores, summaries, history.

Used by ``bench/run.py``. Contexts are cached under the bench work directory
by their parameters, since the history (thousands of commits of a large
store) takes a while to make; it is made with ``git fast-import``, the way
such a history would be packed after ``git gc``.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from runs import fast_import, finish, git

WORDS = ("upload proxy timeout retry cache index schema migration deploy token budget "
         "latency review decision queue worker batch stream buffer session agent brief "
         "summary plan issue result finding reference config release branch merge "
         "network socket handler parser encoder storage replica shard vacuum quota").split()
TAGS = ["uploads", "infra", "api", "db", "ui", "decision", "result", "issue", "plan",
        "directive", "preference", "constraint", "reference", "finding"]
SPLIT = {"operator": 0.05, "shared": 0.85, "agent": 0.10}
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def make_value(rng: random.Random, size: int = 300) -> str:
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words).capitalize() + "."


def make_entries(n: int, seed: int = 7) -> dict[str, dict[str, dict]]:
    rng = random.Random(seed)
    stores: dict[str, dict[str, dict]] = {s: {} for s in SPLIT}
    for i in range(n):
        r = rng.random()
        store = ("operator" if r < SPLIT["operator"] else "shared" if r < SPLIT["operator"] + SPLIT["shared"]
                 else "agent")
        when = EPOCH + timedelta(seconds=i * 37)
        entry = {"value": make_value(rng), "source": rng.choice(["operator", "agent", "agent", "both"]),
                 "author": rng.choice(["Agent One", "Agent Two", "Operator"]),
                 "basis": rng.choice(["verified", "reported", "inferred"]), "scope": "global",
                 "tags": rng.sample(TAGS, rng.randint(0, 3)), "created": stamp(when), "timestamp": stamp(when)}
        if rng.random() < 0.1:
            entry["status"] = rng.choice(["amended", "resolved", "superseded"])
            entry["status_timestamp"] = stamp(when)
            if entry["status"] == "superseded":
                entry["superseded_by"] = f"entry_{i + 1:06d}"
        stores[store][f"entry_{i:06d}"] = entry
    stores["shared"]["current_focus"] = {"value": "Benchmark the context at scale.", "source": "operator",
                                         "basis": "reported", "scope": "global", "tags": [],
                                         "created": stamp(EPOCH), "timestamp": stamp(EPOCH)}
    return stores


def store_bytes(name: str, entries: dict) -> bytes:
    data = {"type": name, "version": "1", "last_updated": stamp(EPOCH), "entries": entries}
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def make_root(path: Path, stores: dict[str, dict[str, dict]]) -> Path:
    """A fresh git work tree at ``path`` holding ``stores`` (name -> entries) as store files,
    uncommitted (the recall benches' contexts)."""
    shutil.rmtree(path, ignore_errors=True)
    (path / "memory").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    for name, entries in stores.items():
        (path / "memory" / f"{name}.json").write_bytes(store_bytes(name, entries))
    return path


def summary(day: int) -> str:
    return (f"# Session 2026-11-{day:02d}\n\n**Agent:** Agent One · **Focus:** benchmark\n\n"
            "## Done\n- Built the benchmark.\n\n## Decisions\n- None.\n\n## Open\n"
            + "".join(f"- Open item {i} of day {day}: measure the thing properly.\n" for i in range(20))
            + "\n## Commits\n- none\n")


def build(root: Path, n: int, commits: int = 0, key_versions: int = 20) -> Path:
    """A context root with ``n`` entries and ``commits`` single-entry commits of history."""
    marker = root / ".bench-built"
    if marker.exists() and marker.read_text() == f"{n} {commits}":
        return root
    shutil.rmtree(root, ignore_errors=True)
    (root / "memory").mkdir(parents=True, mode=0o700)
    (root / "sessions").mkdir(mode=0o700)
    stores = make_entries(n)
    (root / "RULES.md").write_text("# Rules\n\n- Benchmark rules.\n")
    for day in range(1, 6):
        (root / "sessions" / f"2026-11-{day:02d}_session.md").write_text(summary(day))
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("memory/.lock\nmemory/.*.tmp\n*.tmp\n.ctx-cache/\n")
    (root / ".gitattributes").write_text("memory/*.json merge=ctx\n")
    importer, stream = fast_import(root)
    _history_stream(stream, root, stores, commits, key_versions)
    finish(importer)
    git(root, "reset", "-q", "--hard", "main")
    marker.write_text(f"{n} {commits}")
    return root


def _history_stream(sink, root: Path, stores: dict, commits: int, key_versions: int) -> None:
    """A fast-import stream: one commit with everything, then ``commits`` writes."""
    out = bytearray()
    mark = 0
    when = int(EPOCH.timestamp())

    def blob(data: bytes) -> int:
        nonlocal mark
        mark += 1
        out.extend(b"blob\nmark :%d\ndata %d\n" % (mark, len(data)))
        out.extend(data + b"\n")
        return mark

    def commit(message: str, files: dict[str, int], author: str) -> None:
        nonlocal when
        when += 60
        msg = message.encode()
        out.extend(b"commit refs/heads/main\n")
        person = b"%s <%s@ctx.invalid> %d +0000" % (author.encode(), author.split()[0].lower().encode(), when)
        out.extend(b"author %s\ncommitter %s\n" % (person, person))
        out.extend(b"data %d\n" % len(msg) + msg + b"\n")
        for path, m in files.items():
            out.extend(b"M 100644 :%d %s\n" % (m, path.encode()))
    files = {}
    for name in ("RULES.md", ".gitignore", ".gitattributes"):
        files[name] = blob((root / name).read_bytes())
    for path in sorted((root / "sessions").iterdir()):
        files[f"sessions/{path.name}"] = blob(path.read_bytes())
    for name, entries in stores.items():
        files[f"memory/{name}.json"] = blob(store_bytes(name, entries))
    commit("init: benchmark context\n\nCtx-Operation: init\n", files, "Operator")
    rng = random.Random(11)
    shared = stores["shared"]
    keys = [k for k in shared if k != "current_focus"]
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from ctx.storage.textlayout import splice  # each version's bytes from the last: a full dump per commit is slow
    raw = store_bytes("shared", shared)
    hot = "entry_hot"
    every = max(commits // key_versions, 1) if key_versions else 0
    for i in range(commits):
        key = hot if every and i % every == 0 else rng.choice(keys)
        before = shared.get(key)
        entry = dict(before or shared[keys[0]])
        entry["value"] = make_value(rng)
        entry["timestamp"] = stamp(EPOCH + timedelta(days=200, seconds=i * 60))
        shared[key] = entry
        raw = splice(raw, [(key, before, entry)], stamp(EPOCH)) or store_bytes("shared", shared)
        m = blob(raw)
        subject = f"set shared/{key}: {entry['value'][:50]} ..."
        commit(f"{subject}\n\nCtx-Operation: set\nCtx-Store: shared\nCtx-Key: {key}\n",
               {"memory/shared.json": m}, rng.choice(["Agent One", "Agent Two"]))
        if len(out) > 8 * 1024 * 1024:
            sink.write(out)
            out.clear()
    out.extend(b"done\n")
    sink.write(out)
