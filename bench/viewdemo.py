#!/usr/bin/env python3
"""The context behind docs/view.png, and the screenshot itself.

    python bench/viewdemo.py [--out docs/view.png] [--keep DIR]

Builds a realistic context: about 300 entries in the three stores, written
by the operator and three agents over five weeks (a busy weekday rhythm,
quiet weekends), with amends, supersedes, resolves, deletions, basis
changes, tags and session summaries. Entries are made by ctx's own model
(``apply_set``, ``apply_status``), commit messages by its recorder
(``message_for``), and the history with ``git fast-import`` so that the
commits carry their own dates. Then ``ctx view`` writes the page and
headless Chromium takes a 1280×800 screenshot of it. Not a test.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ctx import model
from ctx.changes import Change, Edit
from ctx.storage.textlayout import serialize
from ctxgit.recorder import message_for

AUTHORS = {"Claude (api)": 0.38, "Codex (web)": 0.30, "Gemini (infra)": 0.22, None: 0.10}  # None: the operator
TOPICS = {
    "uploads": ["chunked uploads", "the upload proxy timeout", "resumable uploads", "the progress bar",
                "multipart retries", "the 50 MB limit"],
    "db": ["the connection pool", "the orders index", "read replicas", "the nightly vacuum",
           "migration 0042", "slow query logging"],
    "auth": ["token refresh", "the session cookie", "SSO with the identity provider", "rate limits on login",
             "password reset mail", "service accounts"],
    "ci": ["the flaky e2e suite", "build caching", "the release pipeline", "dependency updates",
           "the arm64 runners", "test sharding"],
    "ui": ["the settings page", "dark mode", "the empty states", "keyboard shortcuts", "the onboarding flow",
           "table virtualisation"],
}
KINDS = ["decision", "finding", "result", "issue", "plan", "reference"]
SAYINGS = {
    "decision": ["Use {t} with a hard limit; revisit after the load test.",
                 "Keep {t} as it is for now: the risk of changing it this sprint is too high.",
                 "Move {t} behind a feature flag and enable it for 10% of traffic first."],
    "finding": ["{T} fails under load above 200 requests per second; p99 latency jumps to 4 s.",
                "{T} was misconfigured in staging: the value differs from production.",
                "{T} holds a lock for the whole request; that is where the timeouts come from."],
    "result": ["{T}: the benchmark went from 820 ms to 140 ms after the change.",
               "{T} passes on all three environments; 0 errors in 2,000 runs.",
               "{T} now retries three times with backoff; the error rate fell to 0.2%."],
    "issue": ["{T} breaks when the network drops for more than 30 s.",
              "{T} is undocumented and two teams depend on it.",
              "{T} leaks memory slowly: 40 MB an hour on the worker."],
    "plan": ["Next: measure {t} on production traffic, then decide.",
             "Split the work on {t} into three pull requests; the first one only adds tests.",
             "Ask the operator whether {t} can wait until after the release."],
    "reference": ["{T}: see the runbook section 4.2 and the dashboard 'edge-latency'.",
                  "{T} is owned by the platform team; contact them before changing it.",
                  "{T}: the design document is in docs/architecture.md."],
}
PREFERENCES = [("pref_one_question", "Ask one question at a time, and wait for the answer.", "preference"),
               ("pref_small_prs", "Keep pull requests under 400 changed lines.", "preference"),
               ("rule_no_prod_writes", "Never write to the production database from a session.", "directive"),
               ("rule_tests_first", "Add a failing test before fixing a bug.", "directive"),
               ("limit_budget", "Stay under 20 USD of API spend a day.", "constraint")]
DAY = 86400


class Builder:
    def __init__(self, root: Path, seed: int) -> None:
        self.root, self.rng = root, random.Random(seed)
        self.stores: dict[str, dict[str, dict]] = {s: {} for s in model.STORES}
        self.out = bytearray()
        self.mark = 0
        self.when = 0
        self.files: dict[str, int] = {}

    def blob(self, data: bytes) -> int:
        self.mark += 1
        self.out.extend(b"blob\nmark :%d\ndata %d\n" % (self.mark, len(data)) + data + b"\n")
        return self.mark

    def stamp(self) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.when))

    def commit(self, message: str, author: str | None, paths: list[str]) -> None:
        name = author or "operator"
        email = ("".join(c for c in name.lower() if c.isalnum()) or "operator") + "@ctx.invalid"
        for path in paths:
            if path.startswith("memory/"):
                store = path[len("memory/"):-len(".json")]
                data = {"type": store, "version": "1", "last_updated": self.stamp(), "entries": self.stores[store]}
                self.files[path] = self.blob(serialize(data))
        msg = message.encode()
        self.out.extend(b"commit refs/heads/main\n")
        for line in (b"author", b"committer"):
            self.out.extend(b"%s %s <%s> %d +0000\n" % (line, name.encode(), email.encode(), self.when))
        self.out.extend(b"data %d\n" % len(msg) + msg + b"\n")
        for path, m in self.files.items():
            self.out.extend(b"M 100644 :%d %s\n" % (m, path.encode()))

    def write(self, op: str, store: str, key: str, after: dict | None, author: str | None) -> None:
        before = self.stores[store].get(key)
        if after is None:
            self.stores[store].pop(key, None)
        else:
            self.stores[store][key] = after
        change = Change(op, [Edit(store, key, before, after)], [f"memory/{store}.json"], author)
        self.commit(message_for(change), author, [f"memory/{store}.json"])

    def value(self, kind: str, topic: str) -> str:
        return self.rng.choice(SAYINGS[kind]).format(t=topic, T=topic[0].upper() + topic[1:])

    def one_write(self, author: str | None) -> None:
        rng = self.rng
        shared = self.stores["shared"]
        roll = rng.random()
        keys = list(shared)
        if keys and roll < 0.30:
            key = rng.choice(keys)
            old = shared[key]
            if roll < 0.12:
                after = model.apply_set(old, old["value"].replace("200", str(rng.choice([150, 250, 400])))
                                        .replace("30 s", f"{rng.choice([45, 60, 90])} s") + " Checked again today.",
                                        author=author, when=self.stamp())
                self.write("set", "shared", key, after, author)
            elif roll < 0.17:
                note = rng.choice(["the numbers were from staging", "only on the arm64 runners",
                                   "confirmed by the operator", "the limit is per user, not per team"])
                self.write("amend", "shared", key, model.apply_status(old, "amended", author=author,
                                                                       when=self.stamp(), note=note), author)
            elif roll < 0.22 and not old.get("status"):
                note = rng.choice(["fixed in the release of this week", "no longer reproduces", "done"])
                self.write("resolve", "shared", key, model.apply_status(old, "resolved", author=author,
                                                                         when=self.stamp(), note=note), author)
            elif roll < 0.25 and key.startswith("decision"):
                by = rng.choice([k for k in keys if k.startswith("decision")])
                if by != key:
                    self.write("supersede", "shared", key, model.apply_status(old, "superseded", author=author,
                                                                               when=self.stamp(), by=by), author)
            elif roll < 0.27 and old.get("basis") != "verified":
                self.write("basis", "shared", key, model.apply_basis(old, "verified", author=author), author)
            elif roll < 0.29 and key.startswith("plan"):
                self.write("delete", "shared", key, None, author)
            return
        area = rng.choice(list(TOPICS))
        topic = rng.choice(TOPICS[area])
        kind = rng.choices(KINDS, [12, 30, 20, 14, 14, 10])[0]
        store = "agent" if rng.random() < 0.12 and author else "shared"
        key = f"{kind}_{topic.replace('the ', '').replace(' ', '_').replace('-', '_')}"
        if key in self.stores[store]:
            key = f"{key}_{rng.randint(2, 99)}"
        after = model.apply_set(None, self.value(kind, topic), author=author, when=self.stamp(),
                                source="agent" if author else "operator",
                                basis=rng.choice(["verified", "reported", "inferred"]),
                                tags=[area] + ([kind] if kind in ("decision", "issue", "result") else []))
        self.write("set", store, key, after, author)

    def build(self, days: int = 35) -> None:
        root, rng = self.root, self.rng
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        subprocess.run(["git", "-C", str(root), "init", "-q", "-b", "main"], env=env, check=True)
        now = int(time.time())
        self.when = now - days * DAY - 3600
        rules = b"# Rules\n\n- Record what you find with ctx set; mark what changed, never rewrite.\n"
        self.files["RULES.md"] = self.blob(rules)
        self.files[".gitignore"] = self.blob(b"memory/.lock\nmemory/.*.tmp\n*.tmp\n.ctx-cache/\n")
        self.commit("init: context root\n\nCtx-Operation: init\n", None, [])
        self.when += 60
        focus = model.apply_set(None, "Large uploads: find why uploads over 50 MB fail, then ship the progress bar.",
                                author=None, when=self.stamp(), source="operator", basis="reported")
        self.write("set", "shared", model.FOCUS_KEY, focus, None)
        for key, text, tag in PREFERENCES:
            self.when += 120
            entry = model.apply_set(None, text, author=None, when=self.stamp(), source="operator",
                                    basis="reported", tags=[tag])
            self.write("set", "operator", key, entry, None)
        for day in range(days):
            start = now - (days - day) * DAY
            weekday = time.gmtime(start).tm_wday
            count = rng.randint(2, 8) if weekday >= 5 else rng.randint(12, 40)
            moments = sorted(rng.randint(8 * 3600, 20 * 3600) for _ in range(count))
            for moment in moments:
                self.when = start - start % DAY + moment
                if self.when >= now:
                    break
                author = rng.choices(list(AUTHORS), list(AUTHORS.values()))[0]
                self.one_write(author)
            if weekday < 5 and rng.random() < 0.6:
                self.summary(author or "Claude (api)")
        self.out.extend(b"done\n")
        subprocess.run(["git", "-C", str(root), "fast-import", "--quiet", "--done"], input=bytes(self.out),
                       env=env, check=True)
        subprocess.run(["git", "-C", str(root), "reset", "-q", "--hard", "main"], env=env, check=True)

    def summary(self, author: str) -> None:
        day = time.strftime("%Y-%m-%d", time.gmtime(self.when))
        name = f"sessions/{day}_session.md"
        shared = [k for k in self.stores["shared"] if not k.startswith("current")]
        done = self.rng.sample(shared, min(3, len(shared)))
        text = (f"# Session {day}\n\n**Agent:** {author} · **Focus:** large uploads\n\n## Done\n"
                + "".join(f"- Recorded `{k}`.\n" for k in done)
                + "\n## Decisions\n- Keep the proxy timeout; chunk uploads instead (**decision_chunked_uploads**).\n"
                "\n## Open\n- Progress bar for uploads over *500 MB*.\n- Re-run the load test on staging.\n")
        self.files[name] = self.blob(text.encode())
        self.when += 30
        self.commit(f"summary: {name[len('sessions/'):]}\n\nCtx-Operation: summary\n", author, [])


def screenshot(page: Path, out: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("chromium is not installed")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                        f"--user-data-dir={profile}", f"--screenshot={out}", "--window-size=1280,800",
                        "--virtual-time-budget=3000", page.as_uri()], check=True, capture_output=True, timeout=300)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(HERE.parent / "docs" / "view.png"))
    parser.add_argument("--keep", metavar="DIR", help="build the context in DIR and leave it there")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ctx-view-demo-"))
    root = work / "ctx"
    Builder(root, args.seed).build()
    page = work / "view.html"
    env = {**os.environ, "CTX_HOME": str(root), "CTX_AUTHOR": ""}
    subprocess.run([str(Path(sys.executable).parent / "ctx"), "view", "--out", str(page)], env=env, check=True)
    screenshot(page, Path(args.out))
    counts = {s: len(json_entries(root, s)) for s in model.STORES}
    print(f"{args.out}: the view of {root} ({counts})")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


def json_entries(root: Path, store: str) -> dict:
    import json
    path = root / "memory" / f"{store}.json"
    return json.loads(path.read_text())["entries"] if path.exists() else {}


if __name__ == "__main__":
    main()
