"""Crash safety: ``ctx set``/``amend``/``delete``/``sync`` SIGKILLed at any moment.

Two kinds of trial, both on real ``ctx`` processes:

* random: the process is killed after ``uniform(0, d)`` seconds, ``d`` a little
  over a whole write timed first on this machine, a few dozen times here and
  hundreds in ``bench/soak.py``;
* exhaustive: a Python audit hook in the ``ctx`` process kills it just
  before each file operation it makes under the context root (every open
  for writing, rename, hard link and removal), one trial per operation.

After each kill: every store file is valid JSON, ``git fsck --full`` is
clean, a read works, the next write succeeds without help and commits what
the killed write left on disk (as an "external change"), every write that
exited 0 is present, and a killed write either happened whole or not at all.
"""

from __future__ import annotations

import os
import random
import subprocess

import pytest

from support import relutil as R

pytestmark = pytest.mark.slow  # real processes, kills, full disks, many examples

SEED = int(os.environ.get("CTX_RELIABILITY_SEED") or random.randrange(2**32))


def _env(root, author="Agent Crash", **extra):
    return R.ctx_env(root, author=author, **extra)


def _seeded(root, env, n=2):
    for i in range(n):
        done = R.run_ctx(["set", f"seed{i}", f"seed value {i}"], env)
        assert done.returncode == 0, done.describe()


def _check_report(report: R.Report, what: str) -> None:
    assert not report.failures, (f"{what} (seed {SEED}): {len(report.failures)} failures in "
                                 f"{report.trials} trials:\n" + "\n".join(report.failures[:10]))


# --- random kills ------------------------------------------------------------------------------

def test_random_kills_of_writes_recover(root):
    """set/amend/delete processes, with and without CTX_AUTHOR (the fast and the
    libgit2 way of committing), killed at random moments (hundreds in the soak)."""
    report = R.crash_trials(root, _env(root, author=None), trials=14, rng=random.Random(SEED))
    _check_report(report, "random kills of writes")
    assert report.trials == 14
    assert report.kills_landed >= 4, "too few kills landed before the process ended: the trial proves little"


def test_random_kills_of_sync_recover(root, tmp_path):
    """``ctx sync`` killed at random moments while another machine pushes: the killed
    machine's next write and sync succeed and both machines end up with every write."""
    report = R.sync_crash_trials(tmp_path / "sync", R.ctx_env(root), trials=2, rng=random.Random(SEED))
    _check_report(report, "random kills of sync")


# --- a kill at every file operation of a write ------------------------------------------------------

def _sweep(root, env, op, mode, skip, tmp_path):
    steps, problems = R.sweep(root, env, op, mode, skip, tmp_path / "fault.log", every_object=False)
    assert not problems, "\n".join(problems)
    return steps


def test_kill_at_every_file_operation_of_a_fast_commit(root, tmp_path):
    """With the repository as ctx left it, a write is one ``git commit``: the store file,
    the write's intent, the commit marker, git's start, the record of the commit, the
    counters (loose bytes, the since-log's lag: both of its ways). A kill before any one
    of them is recovered."""
    env = _env(root)
    _seeded(root, env)
    steps = _sweep(root, env, "set", "kill", set(), tmp_path)  # amend, delete: the soak
    missing = [str(s) for s in R.FAST_SET_STEPS if s not in steps]
    assert not missing, f"the write did not take these steps, so the sweep did not cover them: {missing}"


def test_kill_at_every_file_operation_of_a_libgit2_commit(root, tmp_path):
    """With CTX_GIT_SLOW, ctx opens the repository with libgit2 and asks git what changed
    before committing (git's own file operations are invisible to the hook; the random
    kills cover them)."""
    env = _env(root, author=None, CTX_GIT_SLOW="1")
    _seeded(root, env)
    steps = _sweep(root, env, "set", "kill", set(), tmp_path)
    assert "os.rename .git/refs/heads/main" not in {s.sig for s in steps}
    missing = [str(s) for s in R.LIBGIT2_SET_STEPS if s not in steps]
    assert not missing, f"the write did not take these steps, so the sweep did not cover them: {missing}"


@pytest.mark.parametrize("lock", ["index.lock", "refs/heads/main.lock"])
def test_kill_while_holding_a_git_lock_is_recovered(root, tmp_path, lock):
    """(BUG-1, fixed in a74c462: a kill here left the lock, every later write
    failed on it, and doctor said the context was in order.) ctx killed as its git
    committed, the git killed too while it held its lock (a kill of the whole group)."""
    env = _env(root, CTX_GIT_RETRY_SECONDS="1")
    _seeded(root, env)
    done, _, hit = R.run_faulty(["set", "killed", "while holding a lock"], env,
                                R.Step("os.remove .git/ctx/committing", 1), "kill", tmp_path / "fault.log")
    assert hit and done.killed
    (root / ".git" / lock).write_text("")  # what the killed git left
    assert R.stale_git_locks(root)
    assert not R.inspect_root(root)
    after = R.run_ctx(["set", "next", "write"], env)
    if after.returncode != 0:  # acceptable only if doctor names the problem
        doctor = R.run_ctx(["doctor", "--check"], env)
        assert doctor.returncode != 0 and "lock" in doctor.stdout + doctor.stderr, \
            f"the next write failed and doctor saw nothing:\n{after.describe()}\n{doctor.describe()}"
    assert after.returncode == 0, after.describe()
    assert R.stale_git_locks(root) == [] and not R.inspect_root(root, committed=True)


@pytest.mark.parametrize("how", [
    "stale-intent",
    "failure-after-commit"])
def test_ctx_never_removes_a_lock_an_operators_git_holds(root, tmp_path, how):
    """(BUG-17, from a74c462's recovery: a lock taken within 5 s of a killed commit was
    removed; ctx now knows its own lock files by the mode they are born with.
    failure-after-commit: fixed in 5cc299b.)"""
    env = _env(root, CTX_GIT_RETRY_SECONDS="1")
    _seeded(root, env)
    lock = root / ".git" / "index.lock"
    if how == "stale-intent":
        # killed after announcing its commit, before taking any git lock ...
        done, _, hit = R.run_faulty(["set", "k", "v"], env, R.COMMIT_START, "kill", tmp_path / "fault.log")
        assert hit and done.killed and R.stale_git_locks(root) == []
        lock.write_text("")  # ... and later the operator's `git add` is in progress
        R.run_ctx(["set", "k2", "v2"], env)
    else:
        # recording the commit fails just as the operator's git takes the index lock
        done, _, hit = R.run_faulty(["set", "k", "v"], env, R.Step("open .git/ctx/.state.json.*.tmp", 1),
                                    "enospc+git", tmp_path / "fault.log")
        assert hit
    assert lock.exists(), "ctx removed a lock file an operator's git holds"


def _synced(root, tmp_path, env):
    remote = R.make_bare(tmp_path / "remote.git")
    for args in (["set", "k", "v"], ["remote", "add", "origin", str(remote)], ["sync"], ["set", "k2", "v2"]):
        assert R.run_ctx(args, env).returncode == 0
    return remote


def _killed_sync_intent(root, pushing: str = "") -> None:
    """What a `ctx sync` killed mid-fetch or mid-push leaves besides git's lock
    (ctxgit/locks.py: written before the fetch or push begins, removed after)."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    (root / ".git" / "ctx" / "remote-op").write_text(f"{dead.pid}\n{pushing}")


def test_a_lock_left_by_a_killed_fetch_is_recovered(root, tmp_path):
    """(BUG-1b: every later sync failed on it, and doctor said the context was in order.)"""
    env = _env(root, CTX_GIT_RETRY_SECONDS="1")
    _synced(root, tmp_path, env)
    _killed_sync_intent(root)
    lock = root / ".git" / "refs" / "remotes" / "origin" / "main.lock"
    lock.write_text("")  # as libgit2 leaves it, killed while updating the remote-tracking ref
    done = R.run_ctx(["sync"], env)
    assert done.returncode == 0, done.describe()
    assert "removed .git/refs/remotes/origin/main.lock left by an interrupted ctx sync" in done.stderr
    assert not lock.exists() and not (root / ".git" / "ctx" / "remote-op").exists()
    assert R.run_ctx(["doctor", "--check"], env).returncode == 0


def test_a_lock_ctx_did_not_leave_is_named_and_never_removed(root, tmp_path):
    """A lock in refs/remotes with no killed ctx sync behind it: an operator's `git fetch`
    running now, or one killed. Sync fails naming it (not a retry loop); doctor lists it."""
    env = _env(root, CTX_GIT_RETRY_SECONDS="1")
    _synced(root, tmp_path, env)
    lock = root / ".git" / "refs" / "remotes" / "origin" / "main.lock"
    lock.write_text("")
    done = R.run_ctx(["sync"], env)
    assert done.returncode == 6 and "refs/remotes/origin/main.lock is in the way" in done.stderr, done.describe()
    assert R.one_line_error(done) is None, done.describe()
    doctor = R.run_ctx(["doctor", "--check"], env)
    assert doctor.returncode == 1 and "lock file .git/refs/remotes/origin/main.lock" in doctor.stdout, \
        doctor.describe()
    assert lock.exists()
    lock.unlink()
    assert R.run_ctx(["sync"], env).returncode == 0


def test_a_lock_a_killed_push_left_in_a_local_remote_is_recovered(root, tmp_path):
    """(BUG-18: every later push from every machine failed with 'the remote kept moving;
    try again', which retrying never fixed, and doctor could not see it.)"""
    env = _env(root)
    remote = _synced(root, tmp_path, env)
    sending = R.head(root)
    _killed_sync_intent(root, f"push\t{remote}\t{sending}\n")
    lock = remote / "refs" / "heads" / "main.lock"
    lock.write_text(sending + "\n")  # libgit2's local transport died between writing and renaming it
    done = R.run_ctx(["sync"], env)
    assert done.returncode == 0, done.describe()
    assert f"removed {lock}" in done.stderr and not lock.exists()
    assert R.head(remote) == R.head(root)


def test_a_lock_in_the_remote_from_another_push_is_named_not_removed(root, tmp_path):
    """Another machine's push holds (or its killed push left) the remote's branch lock:
    the message names the file, never 'try again'; doctor names it too."""
    env = _env(root)
    remote = _synced(root, tmp_path, env)
    lock = remote / "refs" / "heads" / "main.lock"
    lock.write_text(R.head(remote) + "\n")
    done = R.run_ctx(["sync"], env)
    assert done.returncode == 6, done.describe()
    assert "kept moving" not in done.stderr and "try again" not in done.stderr, done.describe()
    assert f"{lock} is in the way" in done.stderr and R.one_line_error(done) is None, done.describe()
    doctor = R.run_ctx(["doctor", "--check"], env)
    assert doctor.returncode == 1 and f"lock file {lock}" in doctor.stdout, doctor.describe()
    assert lock.exists()


# --- what a kill leaves, one case at a time ------------------------------------------------------

def test_a_store_change_left_uncommitted_is_committed_as_the_killed_writes_own(root, tmp_path):
    """Killed after the store file was replaced, before any git object was written:
    the next write commits the file as the killed write would have (its author and
    message, recorded before the rename: issue 35 found it committed as an "external
    change" by system), then its own change; nothing of either is lost."""
    env = _env(root)
    _seeded(root, env)
    start = R.head(root)
    done, _, hit = R.run_faulty(["set", "half", "written"], env, R.COMMIT_START, "kill", tmp_path / "fault.log")
    assert hit and done.killed
    assert R.read_entries(root, "shared")["half"]["value"] == "written"
    assert R.status_porcelain(root) == [" M memory/shared.json"]
    after = R.run_ctx(["set", "next", "write"], env)
    assert after.returncode == 0, after.describe()
    rows = R.commit_rows(root, start)
    assert [(t["Ctx-Operation"][0], t["Ctx-Key"], author) for _, _, t, author in rows] == [
        ("set", ["next"], "Agent Crash"), ("set", ["half"], "Agent Crash")]
    entries = R.read_entries(root, "shared")
    assert entries["half"]["value"] == "written" and entries["next"]["value"] == "write"
    assert not R.inspect_root(root, committed=True)


def test_a_kill_once_git_committed_leaves_the_write_whole(root, tmp_path):
    """Killed after git made the commit, before ctx recorded it: the commit stands, fsck
    is clean, and the next write commits on top of it (nothing committed twice)."""
    env = _env(root)
    _seeded(root, env)
    start = R.head(root)
    done, _, hit = R.run_faulty(["set", "half", "made"], env, R.Step("os.remove .git/ctx/committing", 1),
                                "kill", tmp_path / "fault.log")
    assert hit and done.killed and R.head(root) != start
    assert not R.inspect_root(root)
    assert R.run_ctx(["set", "next", "write"], env).returncode == 0
    rows = R.commit_rows(root, start)
    assert len(rows) == 2 and rows[-1][1] == [start]
    assert R.read_entries(root, "shared")["half"]["value"] == "made"
    assert not R.inspect_root(root, committed=True)


def test_doctor_reports_and_commits_what_a_kill_left(root, tmp_path):
    env = _env(root)
    _seeded(root, env)
    done, _, hit = R.run_faulty(["delete", "seed1"], env, R.COMMIT_START, "kill", tmp_path / "fault.log")
    assert hit and done.killed
    check = R.run_ctx(["doctor", "--check"], env)
    assert check.returncode != 0 and "memory/shared.json" in check.stdout, check.describe()
    repair = R.run_ctx(["doctor"], env)
    assert repair.returncode == 0, repair.describe()
    assert R.status_porcelain(root) == []
    assert "seed1" not in R.read_entries(root, "shared")
    assert not R.inspect_root(root, committed=True)


def _half_made_repository(root) -> bool:
    """A .git that libgit2 was still creating when the process died: not a repository."""
    return (root / ".git").is_dir() and R.git(root, "rev-parse", "--git-dir", check=False).returncode != 0


def test_a_killed_first_write_leaves_a_root_the_next_write_completes(root):
    """Kills during the very first write (the repository is being created)."""
    rng = random.Random(SEED)
    for trial in range(4):
        trial_root = root.parent / f"first write {trial}"
        env = R.ctx_env(trial_root, author=rng.choice(["Agent", None]))
        outcome = R.run_killed(["set", "first", "write"], env, rng.uniform(0.02, 0.15))
        half = _half_made_repository(trial_root)  # killed inside init: the next write remakes it
        problems = R.inspect_root(trial_root) if trial_root.exists() and not half else []
        assert not problems, (outcome.describe(), problems)
        after = R.run_ctx(["set", "second", "write"], env)
        assert after.returncode == 0, (outcome.describe(), after.describe())
        entries = R.read_entries(trial_root, "shared")
        assert entries["second"]["value"] == "write"
        if outcome.returncode == 0:
            assert entries["first"]["value"] == "write"
        assert not R.inspect_root(trial_root, committed=True), outcome.describe()


def test_kill_at_every_file_operation_of_a_first_write(root):
    """The very first write makes the root: RULES.md (whole or not at all: a RULES.md
    cut short would be kept and committed), the store, git's hooks, .gitignore and
    .gitattributes, then commits. Killed before any one of them, in a root of its own,
    the next write completes the root."""
    env = _env(root)
    done, steps, _ = R.run_faulty(["set", "first", "write"], env, None, "kill", root.parent / "fault.log")
    assert done.returncode == 0 and R.Step("os.link RULES.md", 1) in steps, (done.describe(), steps)
    rules = (root / "RULES.md").read_bytes()
    for n, step in enumerate(steps):
        trial_root = root.parent / f"first write {n}"
        trial_env = R.ctx_env(trial_root, author="Agent Crash")
        done, _, hit = R.run_faulty(["set", "first", "write"], trial_env, step, "kill", root.parent / "fault.log")
        assert hit and done.killed, (step, done.describe())
        after = R.run_ctx(["set", "second", "write"], trial_env)
        assert after.returncode == 0, (step, after.describe())
        assert (trial_root / "RULES.md").read_bytes() == rules, step
        entries = R.read_entries(trial_root, "shared")
        assert entries["second"]["value"] == "write" and entries.get("first", {"value": "write"})["value"] == "write"
        assert not R.inspect_root(trial_root, committed=True), step


@pytest.mark.parametrize("half", ["empty", "no-HEAD", "config-lock"])
def test_a_repository_half_made_by_a_killed_first_write_is_recovered(root, half):
    """(BUG-19: every later write and doctor failed with 'not a usable repository'.)"""
    env = R.ctx_env(root, author="Agent Crash")
    assert R.run_ctx(["set", "first", "write"], dict(env, CTX_NO_GIT="1")).returncode == 0  # the store file ...
    (root / ".git").mkdir()  # ... and the repository libgit2 had begun when the kill came
    if half == "no-HEAD":
        for name in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "hooks", "info"):
            (root / ".git" / name).mkdir(parents=True)
        (root / ".git" / "description").write_text("Unnamed repository\n")
    if half == "config-lock":  # killed while libgit2 wrote the config (found by the random kills above)
        for name in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "hooks", "info"):
            (root / ".git" / name).mkdir(parents=True)
        (root / ".git" / "config.lock").write_text("[core]\n")
    assert _half_made_repository(root)
    after = R.run_ctx(["set", "second", "write"], env)
    if after.returncode != 0:
        doctor = R.run_ctx(["doctor"], env)
        assert doctor.returncode == 0, f"the next write failed and doctor too:\n{after.describe()}\n{doctor.describe()}"
        after = R.run_ctx(["set", "second", "write"], env)
    assert after.returncode == 0, after.describe()
    assert R.read_entries(root, "shared")["first"]["value"] == "write"
    assert not R.inspect_root(root, committed=True)
