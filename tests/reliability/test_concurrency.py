"""Concurrency: many writers and a reader, and an operator's git holding git's locks.

Every write takes flock on memory/.lock, so writers queue; a reader takes no
lock and must never see a half-written file. An operator's ``git`` working
in the root holds ``.git/index.lock`` (or the branch's ref lock) for a
moment: ctx waits for it (``CTX_GIT_RETRY_SECONDS``) and then fails clearly,
never leaving the store or the history damaged.
"""

from __future__ import annotations

import fcntl
import os
import random
import threading
import time
from pathlib import Path

import pytest

from support import relutil as R

pytestmark = pytest.mark.slow  # real processes, kills, full disks, many examples

SEED = int(os.environ.get("CTX_RELIABILITY_SEED") or random.randrange(2**32))


def test_four_writers_and_a_reader(root):
    """4 processes x 50 mixed writes (set, amend, resolve, basis, supersede, delete)
    on all three stores while a fifth process runs brief, search, history, get and
    list in a loop: no lost entry, no reader error, a linear history whose commits
    are exactly the successful writes."""
    report, stats = R.concurrency_trial(root, R.ctx_env(root), random.Random(SEED), writers=4, writes=50)
    assert not report.failures, f"seed {SEED}:\n" + "\n".join(report.failures[:10])
    assert stats["writes"] == 200 and stats["commits"] == 200
    assert stats["reads"] >= 10, "the reader hardly ran while the writers wrote"


# --- an operator's git holding git's locks ----------------------------------------------------

def _seeded_root(root, author):
    env = R.ctx_env(root, author=author)
    for key in ("k1", "k2"):
        done = R.run_ctx(["set", key, f"value of {key}"], env)
        assert done.returncode == 0, done.describe()
    return env


@pytest.mark.parametrize("author", ["Agent Lock", None], ids=["fast-way", "libgit2-way"])
def test_a_held_index_lock_makes_the_write_wait_then_fail_clearly(root, author):
    env = _seeded_root(root, author)
    store = R.store_file(root, "shared")
    before = store.read_bytes()
    lock = root / ".git" / "index.lock"
    lock.write_bytes(b"")  # an operator's `git add` in progress
    started = time.monotonic()
    done = R.run_ctx(["set", "k3", "blocked"], dict(env, CTX_GIT_RETRY_SECONDS="1"))
    waited = time.monotonic() - started
    assert done.returncode != 0, done.describe()
    assert R.one_line_error(done) is None, done.describe()
    assert "lock" in done.stderr, done.describe()
    assert waited >= 0.9, f"gave up after {waited:.2f} s without waiting for the lock"
    assert store.read_bytes() == before
    assert lock.exists(), "ctx removed the operator's lock file"
    assert not R.inspect_root(root)
    lock.unlink()
    again = R.run_ctx(["set", "k3", "unblocked"], env)
    assert again.returncode == 0, again.describe()
    assert R.read_entries(root, "shared")["k3"]["value"] == "unblocked"
    assert not R.inspect_root(root, committed=True)


def test_a_write_that_failed_on_a_held_index_lock_leaves_no_commit(root):
    """(BUG-2, fixed in a74c462: the commit was made, the index write failed,
    the store file was put back, and the next write reverted the commit.)"""
    env = _seeded_root(root, None)
    start = R.head(root)
    lock = root / ".git" / "index.lock"
    lock.write_bytes(b"")
    done = R.run_ctx(["set", "k3", "blocked"], dict(env, CTX_GIT_RETRY_SECONDS="0.5"))
    assert done.returncode != 0
    lock.unlink()
    assert R.run_ctx(["set", "k4", "next"], env).returncode == 0
    subjects = [t.get("Ctx-Operation", ["?"])[0] + " " + t.get("Ctx-Key", [""])[0]
                for _, _, t, _ in R.commit_rows(root, start)]
    assert subjects == ["set k4"], f"the history after one failed and one good write: {subjects}"


def _set_while_a_lock_is_released(env: dict[str, str], lock: Path, held: str) -> R.Done:
    """``ctx set`` (waiting up to 10 s) while ``lock`` holds ``held`` and is removed 0.4 s later."""
    lock.write_text(held)
    timer = threading.Timer(0.4, lock.unlink)
    timer.start()
    try:
        return R.run_ctx(["set", "k3", "after the wait"], dict(env, CTX_GIT_RETRY_SECONDS="10"))
    finally:
        timer.join()


def test_an_index_lock_released_while_ctx_waits_lets_the_write_through(root):
    env = _seeded_root(root, None)
    start = R.head(root)
    done = _set_while_a_lock_is_released(env, root / ".git" / "index.lock", "")
    assert done.returncode == 0, done.describe()
    assert len(R.commit_rows(root, start)) == 1
    assert not R.inspect_root(root, committed=True)


def test_a_held_branch_lock_fails_the_write_clearly_and_harmlessly(root):
    env = _seeded_root(root, "Agent Lock")
    start, before = R.head(root), R.store_file(root, "shared").read_bytes()
    lock = root / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text(start + "\n")  # an operator's `git commit` moving main
    done = R.run_ctx(["set", "k3", "blocked"], dict(env, CTX_GIT_RETRY_SECONDS="0.5"))
    assert done.returncode != 0 and R.one_line_error(done) is None, done.describe()
    assert R.store_file(root, "shared").read_bytes() == before and R.head(root) == start
    lock.unlink()
    assert R.run_ctx(["set", "k3", "unblocked"], env).returncode == 0
    assert not R.inspect_root(root, committed=True)


def test_a_branch_lock_released_while_ctx_waits_lets_the_write_through(root):
    """(BUG-4, fixed in a74c462: libgit2 reports a locked ref as OSError, which
    ctx did not retry.)"""
    env = _seeded_root(root, "Agent Lock")
    done = _set_while_a_lock_is_released(env, root / ".git" / "refs" / "heads" / "main.lock", R.head(root) + "\n")
    assert done.returncode == 0, done.describe()


def test_a_held_context_lock_times_out_clearly(root):
    """Another writer holding memory/.lock longer than CTX_LOCK_TIMEOUT: exit 5 (busy)."""
    env = _seeded_root(root, "Agent Lock")
    before = R.store_file(root, "shared").read_bytes()
    fd = os.open(root / "memory" / ".lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        done = R.run_ctx(["set", "k3", "blocked"], dict(env, CTX_LOCK_TIMEOUT="0.5"))
    finally:
        os.close(fd)
    assert done.returncode == 5 and R.one_line_error(done) is None, done.describe()
    assert R.store_file(root, "shared").read_bytes() == before
    assert R.run_ctx(["set", "k3", "free"], env).returncode == 0
