"""Sync that keeps up with a fleet, and sync without thinking: races between real
processes (several clones, one bare remote), a remote that refuses, a remote that
hangs, auto-sync on two machines (ctxgit/sync/auto.py), ``ctx status`` in each
state (ctxgit/sync/state.py), and the progress line (ctx/progress.py).

The tests that start ``ctx`` as real processes are marked slow; they run with
git's transport and libgit2's where the difference matters.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ctx import progress
from ctxgit.gitfiles.layout import AUTOSYNC_LOCK
from ctxgit.sync import auto, trigger
from support.gitutil import wait_for
from support.syncutil import (
    Machine,
    assert_converged,
    bare_head,
    clone_machine,
    make_bare,
    network,
    sync_until_converged,
)


@pytest.fixture(autouse=True)
def transport(monkeypatch):
    """libgit2 in process for the quick tests; the slow ones choose their own."""
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "libgit2")
    return "libgit2"


@pytest.fixture(autouse=True)
def push_in_process(monkeypatch):
    """In process, the background push runs right away, in the writing process: the
    quick tests see its effect at once (the slow ones start ``ctx`` for real)."""
    monkeypatch.setattr(trigger, "spawn", lambda root: auto.run(root) or 0)


def auto_on(machine: Machine, timeout: str | None = None) -> None:
    machine.ok("config", "sync-auto", "true")
    if timeout:
        machine.ok("config", "sync-timeout", timeout)


def status(machine: Machine) -> dict:
    return json.loads(machine.ok("status", "--json").stdout)


# --- ctx status -----------------------------------------------------------------------------

def test_status_in_each_state(tmp_path):
    m = Machine(tmp_path / "solo", "Solo")
    m.ok("set", "k", "v")
    alone = status(m)
    assert alone.pop("remote_problem").startswith("no remote to use: add one")
    assert alone == {"remote": None, "ahead": None, "behind": None, "last_sync": None,
                     "last_sync_result": None, "auto_sync": False, "merge_in_progress": False,
                     "uncommitted": []}
    assert "remote: none" in m.ok("status").stdout
    bare = make_bare(tmp_path / "remote.git")
    m.ok("remote", "add", "origin", str(bare))
    m.ok("sync")
    synced = status(m)
    assert synced["remote"] == "origin" and synced["ahead"] == 0 and synced["behind"] == 0
    assert synced["last_sync_result"].startswith("pull: nothing to pull") and synced["last_sync"]
    m.ok("set", "k2", "v")
    m.ok("set", "k3", "v")
    assert (status(m)["ahead"], status(m)["behind"]) == (2, 0)
    text = m.ok("status").stdout
    assert "ahead: 2 commits not pushed" in text and "behind: 0 commits not pulled" in text
    other = clone_machine(bare, tmp_path / "other", "Other")
    other.ok("set", "from_other", "x")
    other.ok("push")
    m.git("fetch", "-q", "origin")  # what a fetch saw; nothing merged yet
    assert (status(m)["ahead"], status(m)["behind"]) == (2, 1)
    m.write_file("RULES.md", "# Rules\n\nedited by hand\n")
    assert status(m)["uncommitted"] == ["RULES.md"]
    m.ok("config", "sync-auto", "true")
    assert status(m)["auto_sync"] is True
    assert "auto-sync: on" in m.ok("status").stdout
    bare.rename(tmp_path / "gone.git")
    assert m.run("sync").exit_code == 6
    failed = status(m)
    assert failed["last_sync_result"].startswith("failed: cannot fetch from origin")
    assert "ago failed; auto-sync on)" in m.ok("brief").stdout.splitlines()[1]


def test_the_brief_header_names_the_sync_state(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    assert a.ok("brief").stdout.splitlines()[1].startswith("  sync: in step with origin")
    a.ok("set", "k", "v")
    assert a.ok("brief").stdout.splitlines()[1].startswith("  sync: 1 commit to push with origin")
    assert json.loads(a.ok("brief", "--json").stdout)["sync"].startswith("1 commit to push")
    solo = Machine(tmp_path / "solo", "Solo")
    solo.ok("set", "k", "v")
    assert "sync:" not in solo.ok("brief").stdout  # no remote: nothing said


# --- auto-sync, in process -----------------------------------------------------------------

def test_auto_sync_is_a_per_machine_key_listed_with_the_others(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    listed = json.loads(a.ok("config", "--json").stdout)
    assert listed["sync-auto"] is False and listed["sync-timeout"] == 3
    a.ok("config", "sync-auto", "true")
    a.ok("config", "sync-timeout", "1.5")
    assert json.loads(a.ok("config", "--json").stdout)["sync-timeout"] == 1.5
    assert json.loads((a.root / ".git" / "ctx" / "machine.json").read_text())["sync-auto"] is True
    assert not (a.root / "config.json").exists() and a.status() == []  # never committed, never synced
    assert json.loads(b.ok("config", "--json").stdout)["sync-auto"] is False
    assert a.run("config", "sync-timeout", "0").exit_code == 2
    assert a.run("config", "sync-auto", "maybe").exit_code == 2


def test_after_a_write_a_push_starts_only_when_on_and_ahead(tmp_path, monkeypatch):
    bare, (a,) = network(tmp_path, "A")
    started = []
    monkeypatch.setattr(trigger, "spawn", lambda root: started.append(root) or 1)
    a.ok("set", "k", "off")
    assert started == []  # auto-sync off: not even looked at
    a.ok("push")
    a.ok("config", "sync-auto", "true")
    assert started == []  # a machine key changes no commit: nothing to push
    a.ok("set", "k", "on")
    assert started == [a.root]
    a.ok("get", "k")
    assert len(started) == 1  # reads never push
    a.ok("sync")
    assert len(started) == 1  # sync pushes itself
    a.ok("delete", "k")
    assert len(started) == 2  # a delete is a write like any other
    a.ok("set", "k", "again")
    a.ok("purge", "k", "--yes")
    assert len(started) == 3  # the set pushes; a purge rewrites history and is published by hand
    monkeypatch.setenv("CTX_NO_GIT", "1")
    a.ok("set", "k", "no git")
    assert len(started) == 3


def test_a_running_background_push_is_not_doubled(tmp_path, monkeypatch):
    import fcntl
    bare, (a,) = network(tmp_path, "A")
    a.ok("config", "sync-auto", "true")
    started = []
    monkeypatch.setattr(trigger, "spawn", lambda root: started.append(root) or 1)
    lock = a.root / ".git" / AUTOSYNC_LOCK
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a background push runs
    try:
        a.ok("set", "k", "v")
        assert started == [] and auto.running(a.root)
    finally:
        os.close(fd)
    assert not auto.running(a.root)
    a.ok("set", "k", "v2")
    assert started == [a.root]


def test_the_background_run_coalesces_and_looks_again_after_letting_go(tmp_path, monkeypatch):
    import ctxgit.sync.remote as remote
    bare, (a,) = network(tmp_path, "A")
    a.ok("config", "sync-auto", "true")
    monkeypatch.setattr(trigger, "spawn", lambda root: 1)
    for i in range(3):
        a.ok("set", f"k{i}", "v")
    real = remote.sync
    calls = []

    def sync_and_write(ctx, *args, **kwargs):
        done = real(ctx, *args, **kwargs)
        calls.append(1)
        if len(calls) == 1:  # a write lands while this push runs
            a.ok("set", "during", "the push")
        return done
    monkeypatch.setattr(remote, "sync", sync_and_write)
    auto.run(a.root)
    assert len(calls) == 2  # three writes in one push, the one made meanwhile in the next
    assert bare_head(bare) == a.head()
    log = (a.root / ".git" / "ctx" / "sync.log").read_text()
    assert log.count("auto-sync: sent 3 commits to origin") == 1
    assert "auto-sync: sent 1 commit to origin" in log
    assert status(a)["last_sync_result"] == "sent 1 commit to origin; nothing to receive"


@pytest.mark.parametrize("why", ["detached", "merge"])
def test_auto_sync_skips_with_a_reason(tmp_path, why):
    bare, (a, b) = network(tmp_path, "A", "B")
    for m in (a, b):
        auto_on(m)
    if why == "detached":
        b.git("checkout", "-q", "--detach")
        reason = "HEAD is detached"
    else:
        (b.root / ".git" / "MERGE_HEAD").write_text(b.head() + "\n")
        reason = "waits"
    assert reason in auto.skip_reason(b.root)
    a.ok("set", "k", "v")
    a.ok("push")
    start = b.ok("start").stdout
    assert start.splitlines()[0].startswith("[ctx: auto-sync did not pull (") and reason in start.splitlines()[0]
    assert "k" not in b.entries()
    head = b.head()
    auto.run(b.root)
    assert b.head() == head
    assert "auto-sync skipped: " in (b.root / ".git" / "ctx" / "sync.log").read_text()


def test_start_and_brief_pull_first(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    auto_on(b)
    a.ok("set", "news", "from A")
    a.ok("push")
    assert "news" in b.ok("brief").stdout
    a.ok("set", "more", "from A again")
    a.ok("push")
    start = b.ok("start").stdout
    assert "more" in start and "[ctx:" not in start
    assert b.head() == a.head()  # a fast-forward: no commit of its own
    b.ok("config", "sync-auto", "false")
    a.ok("set", "later", "x")
    a.ok("push")
    assert "later" not in b.ok("start").stdout  # off: reads only


def test_start_with_an_unreachable_remote_shows_the_local_context(tmp_path):
    bare, (a,) = network(tmp_path, "A")
    auto_on(a)
    a.ok("set", "k", "still here")
    bare.rename(tmp_path / "unplugged.git")
    done = a.run("start")
    assert done.exit_code == 0
    first = done.stdout.splitlines()[0]
    assert first.startswith("[ctx: could not pull from origin (") and first.endswith("showing the local context]")
    assert "still here" in done.stdout


# --- the progress line ---------------------------------------------------------------------

class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_line_appears_on_a_terminal_after_a_while_and_is_erased(monkeypatch):
    monkeypatch.setattr(progress, "AFTER", 0.1)
    monkeypatch.setattr(progress, "REDRAW", 0.05)
    screen = Terminal()
    with progress.showing("ctx sync", screen):
        progress.step("fetching from origin")
        time.sleep(0.3)
        progress.count(1200, 5000, "sending objects")
        time.sleep(0.15)
    out = screen.getvalue()
    assert "\rctx sync: fetching from origin (0 s)\x1b[K" in out
    assert "ctx sync: sending objects 1,200 of 5,000" in out
    assert out.endswith("\r\x1b[K")
    quick = Terminal()
    with progress.showing("ctx sync", quick):
        progress.step("fetching")
    assert quick.getvalue() == ""  # done before the line was due: nothing
    pipe = io.StringIO()
    with progress.showing("ctx sync", pipe):
        progress.step("fetching")
        time.sleep(0.3)
    assert pipe.getvalue() == ""  # not a terminal: never
    progress.step("outside a block: nothing happens")


# --- real processes: races, refusals, hangs, auto-sync ------------------------------------------

def _run(machine: Machine, *args: str, env: dict | None = None, timeout: float = 120
         ) -> subprocess.CompletedProcess:
    full = dict(os.environ, **machine.env, **(env or {}))
    return subprocess.run([str(Path(sys.executable).parent / "ctx"), *args], env=full,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
@pytest.mark.parametrize("way", ["git", "libgit2"])
def test_machines_syncing_at_once_lose_no_race_and_no_write(tmp_path, monkeypatch, way):
    """Several clones write and sync after each write, all at once: no sync fails, no
    write is lost, and after a final round every machine is byte-identical."""
    monkeypatch.setenv("CTX_GIT_TRANSPORT", way)
    machines_n, writes = 4, 5
    bare, machines = network(tmp_path, *[f"M{i}" for i in range(machines_n)])

    def work(machine: Machine) -> list[tuple[int, str]]:
        failures = []
        for i in range(writes):
            for args in (("set", f"{machine.author}_{i}", f"write {i}"), ("sync",)):
                done = _run(machine, *args)
                if done.returncode != 0:
                    failures.append((done.returncode, done.stderr))
        return failures
    with ThreadPoolExecutor(machines_n) as pool:
        failures = [f for result in pool.map(work, machines) for f in result]
    assert failures == []
    sync_until_converged(machines, bare)
    expected = {"seed"} | {f"M{m}_{i}" for m in range(machines_n) for i in range(writes)}
    for m in machines:
        assert set(m.entries()) == expected


@pytest.mark.slow
def test_a_push_the_remote_refuses_is_reported_once_and_not_retried(tmp_path, monkeypatch):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "git")
    bare, (a,) = network(tmp_path, "A")
    calls = tmp_path / "hook-calls"
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\necho run >> '{calls}'\necho 'policy: no pushes today' >&2\nexit 1\n")
    hook.chmod(0o755)
    a.ok("set", "k", "v")
    done = _run(a, "sync")
    assert done.returncode == 4, done.stderr
    assert done.stderr.strip().splitlines()[-1] == \
        "ctx: origin refused the push (pre-receive hook declined): policy: no pushes today"
    assert calls.read_text().count("run") == 1  # asked once, not retried as a race
    assert status(a)["last_sync_result"].startswith("failed: origin refused the push")


@pytest.mark.slow
@pytest.mark.parametrize("way", ["git", "libgit2"])
def test_a_remote_that_hangs_bounds_start_brief_and_sync(tmp_path, monkeypatch, way):
    """An ssh that never answers: start and brief show the local context within their
    sync-timeout (+0.5 s); ``ctx sync --timeout`` gives up in its time; writes go on."""
    monkeypatch.setenv("CTX_GIT_TRANSPORT", way)
    hang = tmp_path / "ssh-that-hangs"
    hang.write_text("#!/bin/sh\nexec sleep 60\n")
    hang.chmod(0o755)
    m = Machine(tmp_path / "m", "M")
    m.ok("set", "k", "local value")
    m.ok("remote", "add", "origin", "ssh://example.invalid/ctx.git")
    m.git("config", "branch.main.remote", "origin")
    m.git("config", "branch.main.merge", "refs/heads/main")
    env = {"GIT_SSH_COMMAND": str(hang)}
    baseline = time.monotonic()
    assert _run(m, "start", env=env).returncode == 0
    plain = time.monotonic() - baseline  # start without auto-sync on this machine now
    auto_on(m, "1")
    for command in ("start", "brief"):
        began = time.monotonic()
        done = _run(m, command, env=env)
        took = time.monotonic() - began
        assert done.returncode == 0 and "local value" in done.stdout
        assert "did not answer within 1 s (sync-timeout); showing the local context" in done.stdout \
            or "could not pull from origin" in done.stdout, done.stdout  # libgit2: no ssh command
        assert took <= plain + 1 + 0.5, (command, took, plain)
    began = time.monotonic()
    done = _run(m, "sync", "--timeout", "2", env=env)
    took = time.monotonic() - began
    assert done.returncode == 6 and (("gave no answer" in done.stderr and "--timeout" in done.stderr)
                                     or way == "libgit2"), done.stderr
    assert took < plain + 2 + 1.5, took
    began = time.monotonic()
    assert _run(m, "set", "k2", "written while the remote hangs", env=env).returncode == 0
    assert time.monotonic() - began < plain + 1.5
    assert m.entries()["k2"]["value"] == "written while the remote hangs"


@pytest.mark.slow
def test_auto_sync_on_two_machines(tmp_path, monkeypatch):
    """A's writes reach the remote on their own within seconds; B's start shows them;
    B's writes come back to A's brief; no empty commits, nothing to resolve."""
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "git")
    bare, (a, b) = network(tmp_path, "A", "B")
    for m in (a, b):
        auto_on(m)
    began = time.monotonic()
    assert _run(a, "set", "from_a", "written on A").returncode == 0
    assert wait_for(lambda: bare_head(bare) == a.head(), timeout=5), "A's write did not reach the remote"
    reached = time.monotonic() - began
    start = _run(b, "start").stdout
    assert "from_a" in start and not start.startswith("[ctx:")
    for i in range(5):  # a burst: pushed in the background, coalesced
        assert _run(b, "set", f"from_b_{i}", "written on B").returncode == 0
    assert wait_for(lambda: bare_head(bare) == b.head() and not auto.running(b.root), timeout=10)
    assert "from_b_4" in _run(a, "brief").stdout
    assert a.head() == b.head() == bare_head(bare)
    log = (b.root / ".git" / "ctx" / "sync.log").read_text()
    assert "auto-sync: sent" in log and "failed" not in log
    assert log.count("auto-sync: sent") <= 5
    assert json.loads(_run(b, "status", "--json").stdout)["ahead"] == 0
    empty = b.git_out("log", "--format=%H %s", "--no-merges", "HEAD").splitlines()
    for line in empty:  # every commit changes something
        commit = line.split()[0]
        assert b.git_out("show", "--format=", "--name-only", commit).strip(), line
    assert_converged([a, b], bare)
    assert reached < 5


def test_the_background_sync_takes_what_it_pulled_into_the_since_log(tmp_path, monkeypatch):
    """Others' commits that a background sync brings in go into the since-log there, not
    into every later `ctx start`'s memory."""
    from support.contexts import index_file
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "git")
    _, (a, b) = network(tmp_path, "A", "B")
    for n in range(3):
        a.ok("set", f"news_{n}", "written on A")
    a.ok("push")
    b.ok("brief")  # B's log, at its HEAD
    b.ok("set", "mine", "written on B")  # main ahead: the background sync has something to do
    monkeypatch.setenv("CTX_AUTHOR", "B")
    auto.run(b.root)  # what the spawned process runs
    assert "received 3 commits" in (b.root / ".git" / "ctx" / "sync.log").read_text()
    import sqlite3
    db = sqlite3.connect(index_file(b.root))
    try:
        tip = db.execute("SELECT value FROM log_state WHERE name = 'tip'").fetchone()[0]
    finally:
        db.close()
    assert tip == b.head()


# --- conflict markers are never committed --------------------------------------------------

def test_conflict_markers_anywhere_are_reported_and_never_committed(tmp_path):
    m = Machine(tmp_path / "m", "M")
    m.ok("set", "k", "v")
    marked = "# Summary\n<<<<<<< ours\nmine\n=======\ntheirs\n>>>>>>> theirs\n"
    m.write_file("sessions/2025-03-04_session.md", marked)
    done = m.run("set", "k2", "v2")
    assert done.exit_code == 0
    assert "sessions/2025-03-04_session.md holds conflict markers" in done.stderr
    assert m.status() == ["?? sessions/2025-03-04_session.md"]  # the write went in without it
    doctor = m.run("doctor", "--check")
    assert doctor.exit_code == 1
    assert "sessions/2025-03-04_session.md holds conflict markers (lines 2, 6)" in doctor.stdout
    assert "merge" not in doctor.stdout.lower().split("markers")[0]
    m.write_file("sessions/2025-03-04_session.md", "# Summary\nmine and theirs\n")
    m.ok("set", "k3", "v3")
    assert m.status() == [] and m.ok("doctor", "--check").exit_code == 0
    # a Markdown heading's underline is not a marker
    m.write_file("RULES.md", "Rules\n=======\n\n- one\n")
    m.ok("set", "k4", "v4")
    assert m.status() == []


# --- how a push's failure is read: a race, or a refusal ------------------------------------------

@pytest.mark.parametrize("stdout, stderr, kind", [
    ("!\trefs/heads/main:refs/heads/main\t[rejected] (fetch first)\n", "", "Behind"),
    ("!\trefs/heads/main:refs/heads/main\t[rejected] (non-fast-forward)\n", "", "Behind"),
    ("!\trefs/heads/main:refs/heads/main\t[remote rejected] (failed to update ref)\n",
     "error: cannot lock ref 'refs/heads/main': is at 1111 but expected 2222\n", "Raced"),
    ("!\trefs/heads/main:refs/heads/main\t[remote rejected] (failed to update ref)\n",
     "remote: error: cannot lock ref 'refs/heads/main': Unable to create '/srv/ctx.git/refs/heads/main.lock': "
     "File exists.\n", "RemoteBusy"),
    ("!\trefs/heads/main:refs/heads/main\t[remote rejected] (failed to update ref)\n",
     "error: couldn't set 'refs/heads/main'\n", "RemoteBusy"),
    ("!\trefs/heads/main:refs/heads/main\t[remote rejected] (failed to update ref)\n",
     "remote: error: unable to write: Permission denied\n", "Conflict"),
    ("!\trefs/heads/main:refs/heads/main\t[remote rejected] (pre-receive hook declined)\n",
     "remote: policy: no pushes today\n", "Conflict"),
    ("!\trefs/heads/main:refs/heads/main\t[remote rejected] (protected branch hook declined)\n", "", "Conflict"),
])
def test_a_lost_race_is_told_from_a_refusal(tmp_path, monkeypatch, stdout, stderr, kind):
    from ctxgit.sync import transport
    done = subprocess.CompletedProcess([], 1, stdout, stderr)
    monkeypatch.setattr(transport, "_run", lambda *args, **kwargs: done)
    with pytest.raises(Exception) as caught:
        transport.git_push(tmp_path, "origin", "/srv/ctx.git", "refs/heads/main:refs/heads/main")
    assert type(caught.value).__name__ == kind, caught.value
    if kind == "Conflict":
        assert not isinstance(caught.value, transport.Raced)
        assert str(caught.value).startswith("origin refused the push (")
