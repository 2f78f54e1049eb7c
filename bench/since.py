#!/usr/bin/env python3
"""SINCE YOUR LAST SESSION at scale: ``since_last_session`` on a 5,000-commit history.

    python bench/since.py [--commits 5000] [--runs 20]

Builds a context root whose history holds ``--commits`` writes by three agents
(sets, amends, supersedes, resolves, deletes, basis changes, multi-entry
imports and cleanups, outside changes, summaries, and side branches merged in
as a sync merges them), with the commit messages ctx's recorder writes
(``message_for``), using ``git fast-import``. Then, in process (imports done),
it times:

* cold: the first call, which reads the whole history into the log in the read
  index (write=True), and the same with write=False (read into memory, written
  nowhere); median of 3;
* warm: the log fresh (HEAD is its tip), median of ``--runs``, for an agent
  whose last commit is recent and for one with no commit (first session: the
  whole log is news);
* stale by one: one more write through the library (a loose commit), then
  write=False (the new commit read from .git/objects, kept in memory).

Prints milliseconds. Not a test.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from runs import fast_import, finish, git, median_call

AUTHORS = ["Agent One", "Agent Two", "Agent Three"]
EPOCH = 1_780_000_000  # 2026-05-28


def build(root: Path, commits: int, seed: int = 5) -> None:
    """A context root with ``commits`` commits after ``init``, made with git fast-import."""
    from ctx.changes import Change, Edit
    from ctxgit.recorder import external_message, message_for
    rng = random.Random(seed)
    shutil.rmtree(root, ignore_errors=True)
    (root / "memory").mkdir(parents=True, mode=0o700)
    git(root, "init", "-q", "-b", "main")
    importer, stream = fast_import(root)
    out = bytearray()
    mark = 0
    when = EPOCH
    entries: dict[str, dict] = {}

    def blob(data: bytes) -> int:
        nonlocal mark
        mark += 1
        out.extend(b"blob\nmark :%d\ndata %d\n" % (mark, len(data)) + data + b"\n")
        return mark

    def commit(ref: str, message: str, author: str, files: dict[str, int], merge: int | None = None) -> int:
        nonlocal mark, when
        when += rng.randint(5, 120)
        mark += 1
        email = author.lower().replace(" ", "-") + "@ctx.invalid"
        msg = message.encode()
        out.extend(b"commit %s\nmark :%d\n" % (ref.encode(), mark))
        for line in (b"author", b"committer"):
            out.extend(b"%s %s <%s> %d +0000\n" % (line, author.encode(), email.encode(), when))
        out.extend(b"data %d\n" % len(msg) + msg + b"\n")
        if merge is not None:
            out.extend(b"merge :%d\n" % merge)
        for path, m in files.items():
            out.extend(b"M 100644 :%d %s\n" % (m, path.encode()))
        return mark

    def store() -> dict[str, int]:
        data = {"type": "shared", "version": "1", "entries": entries}
        return {"memory/shared.json": blob((json.dumps(data, separators=(",", ":")) + "\n").encode())}

    def stamp() -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))

    def write(ref: str, author: str) -> int:
        keys = list(entries)
        roll = rng.random()
        if roll < 0.02:  # an outside change
            return commit(ref, external_message(["memory/shared.json"]), "system", store())
        if roll < 0.03:
            path = f"sessions/{time.strftime('%Y-%m-%d', time.gmtime(when))}_{author.split()[1].lower()}.md"
            m = blob(b"# Session\n\n## Open\n- something\n")
            return commit(ref, f"summary: {path}\n\nCtx-Operation: summary\n", author, {path: m})
        if roll < 0.05 and keys:  # several entries at once
            picked = rng.sample(keys, min(len(keys), rng.randint(2, 6)))
            if rng.random() < 0.5:
                edits = [Edit("shared", k, entries[k], dict(entries[k], value="imported")) for k in picked]
                op = "import"
            else:
                edits = [Edit("shared", k, entries.pop(k), None) for k in picked]
                op = "cleanup"
            for e in edits:
                if e.after is not None:
                    entries[e.key] = e.after
            return commit(ref, message_for(Change(op, edits, ["memory/shared.json"], author)), author, store())
        key = rng.choice(keys) if keys and rng.random() < 0.7 else f"entry_{rng.randrange(600):04d}"
        before = entries.get(key)
        op = "set" if before is None else rng.choices(
            ["set", "amend", "supersede", "resolve", "delete", "basis"], [60, 10, 5, 8, 10, 7])[0]
        after = None if op == "delete" else dict(
            before or {"source": "agent", "basis": "inferred", "scope": "global", "tags": [],
                       "created": stamp()},
            value=f"{op} by {author} at {stamp()}", timestamp=stamp())
        if after is not None and op == "amend":
            after["status"], after["status_note"] = "amended", "a correction"
        elif after is not None and op == "supersede":
            after["status"], after["superseded_by"] = "superseded", rng.choice(keys)
        elif after is not None and op == "resolve":
            after["status"] = "resolved"
        elif after is not None and op == "basis":
            after["basis"] = "verified"
        if after is None:
            entries.pop(key, None)
        else:
            entries[key] = after
        edit = Edit("shared", key, before, after)
        return commit(ref, message_for(Change(op, [edit], ["memory/shared.json"], author)), author, store())

    rules = blob(b"# Rules\n\n- Benchmark rules.\n")
    top = commit("refs/heads/main", "init: context root\n\nCtx-Operation: init\n", "operator",
                 {"RULES.md": rules, **store()})
    made = 1
    while made < commits:
        if rng.random() < 0.01 and commits - made > 10:
            # a side branch from another machine, merged in by the writer here
            side = f"refs/heads/side{made}"
            out.extend(b"reset %s\nfrom :%d\n" % (side.encode(), top))
            other = rng.choice(AUTHORS)
            for _ in range(rng.randint(2, 6)):
                tip = write(side, other)
                made += 1
            here = rng.choice(AUTHORS)
            top = commit("refs/heads/main", f"merge {side}: entries changed\n\nCtx-Operation: merge\n"
                         f"Ctx-Merge-Of: {side}\n", here, store(), merge=tip)
            made += 1
        else:
            # Agent One's last session ended a while ago: the last writes are the others'
            top = write("refs/heads/main", rng.choice(AUTHORS if commits - made > 40 else AUTHORS[1:]))
            made += 1
        if len(out) > 4 * 1024 * 1024:
            stream.write(out)
            out.clear()
    out.extend(b"done\n")
    stream.write(out)
    finish(importer)
    git(root, "checkout", "-q", "-f", "main")
    for ref in git(root, "for-each-ref", "--format=%(refname)", "refs/heads/side*").split():
        git(root, "update-ref", "-d", ref)
    (root / ".git" / "ctx").mkdir(mode=0o700, exist_ok=True)


def drop_log(root: Path) -> None:
    from ctx.storage import indextables
    from ctx.storage.index import index_path
    from ctxgit.gitfiles.layout import state_dir
    db = sqlite3.connect(index_path(state_dir(root)), isolation_level=None)
    indextables.drop(db, indextables.SINCE_LOG)
    db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--commits", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--keep", metavar="DIR", help="build in DIR and leave it there (for profiling)")
    args = parser.parse_args()
    import pygit2  # noqa: F401  (imported before timing: the cold figures are the reading, not the import)

    from ctx.context import Context
    from ctxgit.gitfiles.layout import state_dir
    from ctxgit.porcelain.since import since_last_session
    from ctxgit.recorder import recorder_for

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ctx-bench-since-"))
    root = work / "root"
    try:
        start = time.perf_counter()
        build(root, args.commits)
        count = subprocess.run(["git", "-C", str(root), "rev-list", "--count", "HEAD"],
                               capture_output=True, text=True, check=True).stdout.strip()
        merges = subprocess.run(["git", "-C", str(root), "rev-list", "--merges", "--count", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        print(f"built {count} commits ({merges} merges, 3 agents) in {time.perf_counter() - start:.1f} s")
        # the entries' index exists, as after any read (the log is added beside it)
        Context(root, author="Agent One", state_of=state_dir).counts()
        agent = "Agent One"

        def cold(write: bool):
            drop_log(root)
            return since_last_session(root, agent, write=write)
        ms_cold, since = median_call(lambda: cold(True), 3)
        print(f"cold  write=True  (read {count} commits into the log): {ms_cold:8.2f} ms")
        ms, _ = median_call(lambda: cold(False), 3)
        print(f"cold  write=False (whole history in memory):       {ms:8.2f} ms")
        since_last_session(root, agent)
        ms, since = median_call(lambda: since_last_session(root, agent), args.runs)
        print(f"warm  write=True  (log fresh, {agent}):        {ms:8.2f} ms  "
              f"[{len(since.changes)} shown, {since.more} more, last {since.last}]")
        ms, _ = median_call(lambda: since_last_session(root, agent, write=False), args.runs)
        print(f"warm  write=False (log fresh, {agent}):        {ms:8.2f} ms")
        ms, since = median_call(lambda: since_last_session(root, "Agent Nine", write=False), args.runs)
        print(f"warm  write=False (first session: all news):      {ms:8.2f} ms  "
              f"[{len(since.changes)} shown, {since.more} more]")
        writer = Context(root, author="Agent Two", recorder_factory=recorder_for, state_of=state_dir)
        writer.set("bench_key", "one more write")
        ms, since = median_call(lambda: since_last_session(root, agent, write=False), args.runs)
        print(f"stale write=False (1 loose commit since the tip):  {ms:8.2f} ms  "
              f"[newest: {since.changes[0].key} by {since.changes[0].author}]")
        ms, _ = median_call(lambda: since_last_session(root, agent), 1)
        print(f"stale write=True  (1 commit added to the log):     {ms:8.2f} ms")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
