"""Shared machinery of the reliability tests and of ``bench/soak.py``.

Everything here drives the installed ``ctx`` executable as a real process
(``Path(sys.executable).parent / "ctx"``) and inspects the result with the
real ``git`` and the store files on disk. Nothing imports pytest, so the
soak runs the very same trials outside the test suite.

* ``run_ctx`` / ``start_ctx``: one ``ctx`` process (arguments may be bytes).
* ``FAULTY``: ``ctx`` with a Python audit hook that, at a chosen file
  operation under the context root (an ``open`` for writing, a rename, a
  hard link, a removal), either SIGKILLs the process or makes the operation
  fail with ENOSPC or EIO (``enospc+git``: and an operator's git takes .git/index.lock
  at that moment). Events are named by a signature (operation and path, with the
  random parts of temporary names masked) and an occurrence number.
* ``inspect_root``: what must hold of a context root after anything at
  all happened to it: store files valid JSON, ``git fsck --full`` clean,
  no lock file git or ctx left behind.
* ``Model``: the possible states of each entry after writes that
  succeeded, failed, or were killed at an unknown moment.
* ``crash_trials`` / ``sync_crash_trials``: random SIGKILLs with recovery
  checks; the tests run a few dozen, the soak hundreds.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxgit.porcelain.sincelag import EVERY as SINCE_LAG_EVERY
from support import gitutil
from support.gitutil import CTX_EXE, head
from support.gitutil import status_lines as status_porcelain
from support.stores import read_entries
from support.stores import store_path as store_file

CTX = CTX_EXE
PY = sys.executable
STORES = ("operator", "shared", "agent")
KILLED = -signal.SIGKILL

# git lock files a process can leave behind when it dies holding them
GIT_LOCKS = ("index.lock", "HEAD.lock", "refs/heads/main.lock", "config.lock", "packed-refs.lock",
             "refs/remotes/origin/main.lock")


# --- environment -----------------------------------------------------------------------

def isolated_env(base: Path) -> dict[str, str]:
    """An environment like the test suite's (tests/conftest.py) under ``base``: a
    temporary HOME, git's global and system configuration cut off, UTC.

    The soak uses it; under pytest the conftest fixtures have done the same
    to ``os.environ`` already.
    """
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").touch()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "CTX_"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="Test Operator", GIT_AUTHOR_EMAIL="operator@example.invalid",
               GIT_COMMITTER_NAME="Test Operator", GIT_COMMITTER_EMAIL="operator@example.invalid",
               TZ="UTC")
    return env


def ctx_env(root: Path, author: str | None = None, base: Mapping[str, str] | None = None,
            **extra: str | None) -> dict[str, str]:
    """The environment of one ``ctx`` process on ``root``; ``None`` removes a variable."""
    env = dict(os.environ if base is None else base)
    for name in [k for k in env if k.startswith("CTX_")]:
        del env[name]
    env["CTX_HOME"] = str(root)
    if author is not None:
        env["CTX_AUTHOR"] = author
    for name, value in extra.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


@dataclass
class Done:
    """What one ``ctx`` process did: its exit status and its output (as text)."""

    args: list
    returncode: int
    stdout: str
    stderr: str
    seconds: float = 0.0

    @property
    def killed(self) -> bool:
        return self.returncode == KILLED

    def describe(self) -> str:
        shown = " ".join(a.decode("utf-8", "backslashreplace") if isinstance(a, bytes) else str(a)
                         for a in self.args)
        return (f"ctx {shown[:200]} -> {self.returncode}\n  stdout: {self.stdout[:400]!r}"
                f"\n  stderr: {self.stderr[:600]!r}")


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "backslashreplace")


def run_ctx(args: Sequence[str | bytes], env: Mapping[str, str], *, input: bytes | str | None = None,
            timeout: float = 120, preexec_fn=None, program: Sequence[str] | None = None,
            cwd: str | None = None) -> Done:
    """Run ``ctx ARGS`` to its end (``program`` replaces the executable, e.g. ``FAULTY``)."""
    if isinstance(input, str):
        input = input.encode("utf-8")
    started = time.monotonic()
    done = subprocess.run([*(program or [str(CTX)]), *args], env=dict(env), input=input,
                          capture_output=True, timeout=timeout, preexec_fn=preexec_fn,
                          cwd=cwd or env.get("HOME"))
    return Done(list(args), done.returncode, _decode(done.stdout), _decode(done.stderr),
                time.monotonic() - started)


def run_killed(args: Sequence[str], env: Mapping[str, str], delay: float,
               program: Sequence[str] | None = None) -> Done:
    """Start ``ctx ARGS``, SIGKILL it after ``delay`` seconds (unless it ended first)."""
    started = time.monotonic()
    proc = subprocess.Popen([*(program or [str(CTX)]), *args], env=dict(env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, cwd=env.get("HOME"))
    time.sleep(delay)  # the kill's timing is the point of the trial
    try:
        proc.send_signal(signal.SIGKILL)
    except ProcessLookupError:
        pass
    out, err = proc.communicate(timeout=120)
    return Done(list(args), proc.returncode, _decode(out), _decode(err), time.monotonic() - started)


# --- the faulty ctx: a SIGKILL or an ENOSPC at a chosen file operation ------------------------

FAULT_HOOK = r'''
import errno, os, re, signal, sys
_root = os.path.realpath(os.environ["CTX_HOME"]) + os.sep
_target = os.environ.get("CTX_FAULT_SIG", "")
_nth = int(os.environ.get("CTX_FAULT_NTH", "1") or 1)
_mode = os.environ.get("CTX_FAULT_MODE", "kill")
_log = os.environ.get("CTX_FAULT_LOG")
_logfd = os.open(_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600) if _log else None
_seen = {}
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_OBJ = re.compile(r"objects/[0-9a-f]{2}/")
_RANDOM = re.compile(r"[0-9a-f]{6,}|\d+")
_busy = False

def _signature(event, path):
    rel = os.path.relpath(os.path.realpath(path), _root[:-1])
    rel = _OBJ.sub("objects/??/", rel)
    return event + " " + _RANDOM.sub("*", rel)

def _hook(event, args):
    global _busy
    if _busy:
        return
    if event == "open":
        path, _, flags = args
        if not isinstance(flags, int) or not flags & _WRITING or isinstance(path, int):
            return
    elif event in ("os.rename", "os.link"):
        path = args[1]
    elif event == "os.remove":
        path = args[0]
    elif event in ("os.posix_spawn", "os.posix_spawnp"):
        argv = [os.fsdecode(a) for a in args[1]]
        if os.path.basename(argv[0]) != "git":
            return
        path = None  # git started: "spawn git <its command>" (after -C ROOT and -c NAME=VALUE)
        words, skip = [], False
        for a in argv[1:]:
            if skip or a in ("-C", "-c"):
                skip = not skip
                continue
            if not a.startswith("-"):
                words.append(a)
        sig = "spawn git " + (words[0] if words else "?")
    else:
        return
    if path is not None:
        try:
            path = os.fsdecode(path)
        except TypeError:
            return
        if not os.path.realpath(path).startswith(_root):
            return
    _busy = True
    try:
        sig = _signature(event, path) if path is not None else sig
        _seen[sig] = count = _seen.get(sig, 0) + 1
        hit = sig == _target and count == _nth
        if _logfd is not None:
            os.write(_logfd, (("HIT " if hit else "") + sig + "\t" + str(count) + "\n").encode())
    finally:
        _busy = False
    if hit:
        if _mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if _mode == "enospc+git":  # an operator's git takes the index lock at this very moment
            with open(_root + ".git/index.lock", "x") as lock:
                lock.write("an operator's git")
        raise OSError(errno.EIO if _mode == "eio" else errno.ENOSPC,
                      os.strerror(errno.EIO if _mode == "eio" else errno.ENOSPC), path)

sys.addaudithook(_hook)
sys.argv = ["ctx"] + sys.argv[1:]
from ctx.cli.fast import main
main()
'''

FAULTY = [PY, "-c", FAULT_HOOK]


@dataclass(frozen=True)
class Step:
    """One file operation of a ctx process: its signature and which occurrence."""

    sig: str
    nth: int

    def __str__(self) -> str:
        return f"{self.sig} #{self.nth}"


def read_steps(log: Path) -> tuple[list[Step], bool]:
    """The steps a faulty run logged, and whether the chosen one was reached."""
    steps: list[Step] = []
    hit = False
    if not log.exists():
        return steps, hit
    for line in log.read_text().splitlines():
        if line.startswith("HIT "):
            hit, line = True, line[4:]
        sig, _, nth = line.rpartition("\t")
        steps.append(Step(sig, int(nth)))
    return steps, hit


def run_faulty(args: Sequence[str], env: Mapping[str, str], step: Step | None, mode: str,
               log: Path, preexec_fn=None) -> tuple[Done, list[Step], bool]:
    """``ctx ARGS`` with a fault at ``step`` (None: a dry run that only logs the steps)."""
    log.unlink(missing_ok=True)
    fault_env = dict(env, CTX_FAULT_LOG=str(log), CTX_FAULT_MODE=mode,
                     CTX_FAULT_SIG=step.sig if step else "", CTX_FAULT_NTH=str(step.nth if step else 0))
    done = run_ctx(args, fault_env, program=FAULTY, preexec_fn=preexec_fn)
    steps, hit = read_steps(log)
    return done, steps, hit


# --- git and the store files -----------------------------------------------------------

def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """``support.gitutil.git`` with bytes out: what a crash left may not be text."""
    return gitutil.git(repo, *args, check=check, text=False)


def git_text(repo: Path, *args: str) -> str:
    return _decode(git(repo, *args).stdout)


def fsck_problems(repo: Path) -> list[str]:
    """What ``git fsck --full --strict`` finds wrong (dangling objects and git's own
    leftover temporary objects from an interrupted write are not problems)."""
    done = git(repo, "fsck", "--full", "--strict", "--no-dangling", "--no-progress", check=False)
    text = _decode(done.stdout) + _decode(done.stderr)
    bad = [line for line in text.splitlines()
           if line.strip() and not line.startswith(("warning: garbage found", "Checking", "notice:"))
           and "dangling" not in line]
    if done.returncode != 0 and not bad:
        bad = [f"git fsck exited {done.returncode}"]
    return bad


def stale_git_locks(repo: Path) -> list[str]:
    git_dir = repo / ".git"
    return [name for name in GIT_LOCKS if (git_dir / name).exists()]




def inspect_root(root: Path, *, committed: bool = False) -> list[str]:
    """Every way ``root`` is not in order; [] when all is well.

    Always: each store file is UTF-8 JSON with the store's shape, fsck is
    clean when there is a repository. With ``committed``: nothing is left
    uncommitted (``git status`` is clean) and HEAD holds the files on disk.
    """
    problems: list[str] = []
    for store in STORES:
        path = store_file(root, store)
        if not path.exists():
            continue
        try:
            data = json.loads(path.read_bytes().decode("utf-8"))
            if not isinstance(data, dict) or not isinstance(data.get("entries"), dict) \
                    or data.get("type") != store or data.get("version") != "1":
                problems.append(f"{path.name}: not a store file of the expected shape")
        except (UnicodeDecodeError, ValueError) as exc:
            problems.append(f"{path.name}: not valid JSON: {exc}")
    for name in os.listdir(root / "memory") if (root / "memory").is_dir() else []:
        if name.endswith(".json") and name[:-5] not in STORES:
            problems.append(f"memory/{name}: an unexpected file")
    if (root / ".git").is_dir():
        # a git a killed ctx started goes on to its end, as in life: fsck run meanwhile reads
        # the objects before that git writes its commit and the reflog after (a "missing commit")
        wait_for_orphan_git(root)
        problems += [f"fsck: {line}" for line in fsck_problems(root)]
        if committed:
            left = [line for line in status_porcelain(root)]
            if left:
                problems.append(f"uncommitted after a successful write: {left}")
    return problems


# --- the model of what the stores may hold -------------------------------------------------

ABSENT = "\x00absent"
_AMEND_DATE = re.compile(r"\[Amended \d{4}-\d{2}-\d{2}: ")


def normal(value: Any) -> Any:
    """A stored value with the dates of amend notes masked (a trial may cross midnight)."""
    if isinstance(value, str):
        return _AMEND_DATE.sub("[Amended D: ", value)
    return json.dumps(value, sort_keys=True)


class Model:
    """For each (store, key): the set of values it may hold now.

    A write that exited 0 leaves exactly its result; a write that was killed
    may or may not have happened; a write that failed left things as they
    were. ``observe`` checks the disk against the possibilities and collapses
    them to what is there, so the model stays exact between trials.
    """

    def __init__(self) -> None:
        self.possible: dict[tuple[str, str], set[Any]] = {}

    def definite(self, store: str, key: str) -> Any | None:
        values = self.possible.get((store, key), {ABSENT})
        return next(iter(values)) if len(values) == 1 else None

    def present_keys(self, store: str | None = None) -> list[tuple[str, str]]:
        return sorted(k for k, v in self.possible.items()
                      if (store is None or k[0] == store) and len(v) == 1 and ABSENT not in v)

    def apply(self, store: str, key: str, outcome: Done, change) -> None:
        """``change(value) -> value`` (ABSENT in and out allowed) for one write's outcome."""
        before = self.possible.get((store, key), {ABSENT})
        after = {change(v) for v in before}
        if outcome.returncode == 0:
            self.possible[(store, key)] = after
        elif outcome.killed:
            self.possible[(store, key)] = before | after
        # any other exit: the write did not happen

    def observe(self, root: Path) -> list[str]:
        problems = []
        actual = {s: read_entries(root, s) for s in STORES}
        for (store, key), values in sorted(self.possible.items()):
            entry = actual[store].get(key)
            found = ABSENT if entry is None else normal(entry.get("value"))
            if found not in values:
                problems.append(f"{store}/{key}: holds {str(found)[:80]!r}, expected one of "
                                f"{sorted(str(v)[:80] for v in values)}")
            self.possible[(store, key)] = {found}
        return problems


def amended(note: str):
    def change(value: Any) -> Any:
        return value if value is ABSENT else f"[Amended D: {note}]\n{value}"
    return change


def set_to(value: str):
    return lambda _old: value


def deleted(_old: Any) -> Any:
    return ABSENT


# --- random SIGKILL trials ------------------------------------------------------------------

@dataclass
class Report:
    trials: int = 0
    failures: list[str] = field(default_factory=list)
    known: dict[str, int] = field(default_factory=dict)
    kills_landed: int = 0  # trials whose process was killed before it finished

    def fail(self, trial: int, what: str) -> None:
        self.failures.append(f"trial {trial}: {what}")

    def merge(self, other: Report) -> None:
        self.trials += other.trials
        self.failures += other.failures
        self.kills_landed += other.kills_landed
        for name, count in other.known.items():
            self.known[name] = self.known.get(name, 0) + count


WRITE_OPS = ("set_new", "set_new", "set_again", "amend", "delete")


def _token(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(10))


def _random_write(rng: random.Random, model: Model, n: int) -> tuple[list[str], str, str, Any]:
    """One random write: its arguments, store, key and the model's change."""
    store = rng.choice(STORES)
    present = model.present_keys(store)
    op = rng.choice(WRITE_OPS)
    if op != "set_new" and not present:
        op = "set_new"
    if op == "set_new":
        key, value = f"k{n}_{_token(rng)}", f"value {n} {_token(rng)}"
        return ["set", key, value, "--store", store], store, key, set_to(value)
    key = rng.choice(present)[1]
    if op == "set_again":
        value = f"again {n} {_token(rng)}"
        return ["set", key, "--store", store, "--", *value.split()], store, key, set_to(value)
    if op == "amend":
        note = f"note {n} {_token(rng)}"
        return ["amend", key, note, "--store", store], store, key, amended(note)
    return ["delete", key, "--store", store], store, key, deleted


def _after_kill(root: Path, env: Mapping[str, str], report: Report, trial: int) -> bool:
    """The next ctx commands on a root whose writer was just killed. False: stop the trial."""
    read = run_ctx(["list", "--json"], env)
    if read.returncode != 0:
        report.fail(trial, f"a read after the kill failed: {read.describe()}")
        return False
    try:
        json.loads(read.stdout)
    except ValueError:
        report.fail(trial, f"a read after the kill printed no JSON: {read.describe()}")
        return False
    return True


def crash_trials(root: Path, env: Mapping[str, str], trials: int, rng: random.Random,
                 max_delay: float | None = None, model: Model | None = None) -> Report:
    """``trials`` rounds of: a random write (set, amend, delete; with and without
    CTX_AUTHOR, so both ways of committing) SIGKILLed after uniform(0, max_delay)
    seconds, a read, a recovery write, and the checks of ``inspect_root`` and
    ``Model.observe``. ``max_delay`` None: for each way, a little over one write of that way
    timed first here (a fixed 0.15 s let most kills of a 30 ms write come after it ended)."""
    report = Report()
    model = model or Model()
    seed = run_ctx(["set", "seed_entry", "seed value"], dict(env, CTX_AUTHOR="Seeder"))
    if seed.returncode != 0:
        report.fail(0, f"the first write failed: {seed.describe()}")
        return report
    model.apply("shared", "seed_entry", seed, set_to("seed value"))

    def env_of(author: str | None) -> dict[str, str]:
        return dict(env, CTX_AUTHOR=author) if author else \
            dict({k: v for k, v in env.items() if k != "CTX_AUTHOR"}, CTX_GIT_SLOW="1")
    delays = {}  # each way of committing: the longest delay its kills wait
    for way in ("Agent Crash", None):
        if max_delay is not None:
            delays[way] = max_delay
            continue
        probe = run_ctx(["set", "probe_entry", f"probe {way}"], env_of(way))  # cover a whole write
        if probe.returncode != 0:
            report.fail(0, f"a write before the trials failed: {probe.describe()}")
            return report
        model.apply("shared", "probe_entry", probe, set_to(f"probe {way}"))
        delays[way] = 1.2 * probe.seconds
    for n in range(1, trials + 1):
        report.trials += 1
        author = rng.choice(["Agent Crash", None])  # the operator's writes here go the libgit2 way
        wenv = env_of(author)
        args, store, key, change = _random_write(rng, model, n)
        outcome = run_killed(args, wenv, rng.uniform(0, delays[author]))
        if outcome.killed:
            report.kills_landed += 1
        elif outcome.returncode != 0:
            report.fail(n, f"a write that was not killed failed: {outcome.describe()}")
        model.apply(store, key, outcome, change)
        problems = inspect_root(root)
        if problems:
            report.fail(n, f"after {outcome.describe()}: {problems}")
        if not _after_kill(root, wenv, report, n):
            continue
        rkey, rvalue = f"recovery_{n}", f"recovered {n}"
        rstore = rng.choice(STORES)
        recovery = run_ctx(["set", rkey, rvalue, "--store", rstore], wenv)
        if recovery.returncode != 0:
            report.fail(n, f"the write after the kill failed (git locks: {stale_git_locks(root)}): "
                           f"{recovery.describe()}")
            for name in stale_git_locks(root):
                (root / ".git" / name).unlink()
            continue
        if stale_git_locks(root):
            report.fail(n, f"git locks still there after the next write: {stale_git_locks(root)}")
        model.apply(rstore, rkey, recovery, set_to(rvalue))
        problems = inspect_root(root, committed=True) + model.observe(root)
        if problems:
            report.fail(n, f"after killing {outcome.describe()}\n  and recovering: {problems}")
    report.failures += [f"history: {p}" for p in history_problems(root)]
    return report


def history_problems(root: Path) -> list[str]:
    """The repository's history is linear (no merge commits) on ``main`` only."""
    problems = []
    merges = git_text(root, "rev-list", "--min-parents=2", "HEAD").split()
    if merges:
        problems.append(f"merge commits: {merges}")
    refs = git_text(root, "for-each-ref", "--format=%(refname)", "refs/heads").split()
    if refs != ["refs/heads/main"]:
        problems.append(f"branches: {refs}")
    return problems


# --- sync under SIGKILL -------------------------------------------------------------------------

def make_bare(path: Path) -> Path:
    return gitutil.make_bare(path, branch="main")


def sync_crash_trials(base: Path, env: Mapping[str, str], trials: int, rng: random.Random,
                      max_delay: float | None = None) -> Report:
    """Two machines A and B syncing through a bare remote; one ``ctx sync`` per trial
    is SIGKILLed at a random moment. Afterwards the killed machine's next write and
    next sync succeed, its stores are valid JSON, fsck is clean everywhere, and every
    write that exited 0 on either machine reaches both after they sync."""
    report = Report()
    remote = make_bare(base / "remote.git")
    roots = {"A": base / "machine A", "B": base / "machine B"}
    envs = {name: dict(env, CTX_HOME=str(path), CTX_AUTHOR=f"Agent {name}") for name, path in roots.items()}
    written: dict[str, dict[str, str]] = {"A": {}, "B": {}}  # writes that exited 0, by machine

    def must(name: str, args: list[str], trial: int) -> Done | None:
        done = run_ctx(args, envs[name])
        if done.returncode != 0:
            report.fail(trial, f"machine {name}: {done.describe()}")
            return None
        return done

    if not (must("A", ["set", "a_seed", "from A"], 0) and must("A", ["remote", "add", "origin", str(remote)], 0)
            and must("A", ["sync"], 0)):
        return report
    written["A"]["a_seed"] = "from A"
    clone = run_ctx(["clone", str(remote), str(roots["B"])], envs["B"])
    if clone.returncode != 0:
        report.fail(0, f"clone: {clone.describe()}")
        return report
    if max_delay is None:  # cover the whole of a sync, whatever this machine's speed
        probe = run_ctx(["sync"], envs["B"])
        max_delay = max(0.15, probe.seconds * 1.2)
    for n in range(1, trials + 1):
        report.trials += 1
        for name in ("B", "A"):
            if rng.random() < 0.8:
                key, value = f"{name.lower()}_{n}", f"{name} wrote {n} {_token(rng)}"
                if must(name, ["set", key, value], n):
                    written[name][key] = value
            if name == "B" and rng.random() < 0.7 and not must("B", ["sync"], n):
                continue
        victim = rng.choice(["A", "A", "B"])
        outcome = run_killed(["sync"], envs[victim], rng.uniform(0, max_delay))
        if outcome.killed:
            report.kills_landed += 1
        elif outcome.returncode != 0:
            report.fail(n, f"a sync that was not killed failed on {victim}: {outcome.describe()}")
        problems = inspect_root(roots[victim])
        if problems:
            report.fail(n, f"machine {victim} after {outcome.describe()}: {problems}")
        key, value = f"{victim.lower()}_after_{n}", f"recovered {n}"
        if must(victim, ["set", key, value], n):
            written[victim][key] = value
        if stale_git_locks(roots[victim]):
            report.fail(n, f"machine {victim}: git locks still there after the next write: "
                           f"{stale_git_locks(roots[victim])}")
        for name in (victim, "B" if victim == "A" else "A", victim):  # the victim's sync recovers first
            must(name, ["sync"], n)
        left = [str(p) for p in [*roots[victim].joinpath(".git", "refs", "remotes").rglob("*.lock"),
                                 *remote.joinpath("refs").rglob("*.lock")]]
        if left:  # (BUG-1b, BUG-18: a killed fetch's or push's lock failed every later sync)
            report.fail(n, f"lock files a killed sync left, still there after the next sync: {left}")
        for name, path in roots.items():
            problems = inspect_root(path, committed=True)
            if problems:
                report.fail(n, f"machine {name}: {problems}")
        problems = fsck_problems(remote)
        if problems:
            report.fail(n, f"remote: {problems}")
        for name, path in roots.items():
            entries = read_entries(path, "shared")
            for origin, keys in written.items():
                for key, value in keys.items():
                    if key not in entries or entries[key].get("value") != value:
                        report.fail(n, f"machine {name} lacks {origin}'s {key}={value!r} after syncing "
                                       f"(has {entries.get(key, {}).get('value')!r})")
                        keys[key] = entries.get(key, {}).get("value")  # report once
    return report


# --- a fault at every file operation of a write --------------------------------------------------

# The steps after which git has taken (or may hold) its lock files: a kill there leaves a
# git running, or killed too (its locks: the next write must remove them). And the steps
# after the commit, where a failure once left a lock behind or made a committed write
# look undone.
KILL_LEAVES_LOCK = {Step("spawn git commit", 1)}
COMMIT_START = Step("spawn git commit", 1)  # a fault here: git never ran
POST_COMMIT_STEPS = {Step(s, 1) for s in (
    "os.remove .git/ctx/committing", "open .git/ctx/.state.json.*.tmp", "os.rename .git/ctx/state.json",
    "open .git/ctx/.loose-bytes.*.tmp", "os.rename .git/ctx/loose-bytes",
    "open .git/ctx/.since-lag.*.tmp", "os.rename .git/ctx/since-lag")}

# Every file operation (and git started) of a ``ctx set`` in a seeded root committed the
# one-``git commit`` way, in order: the sweep faults the steps its dry run takes, so one
# missing here would drop out of the sweep unseen (tests check the dry run takes all of
# them). A file ctx replaces is two steps, its temporary (``atomic_write``: a random name,
# masked) and the rename. git's own file operations are its own (and invisible to the hook).
FAST_SET_STEPS = [Step(s, 1) for s in (
    "open memory/.lock", "os.link memory/.shared.json.*.tmp", "open memory/.shared.json.*.tmp",
    "open .git/ctx/.writing.*.tmp", "os.rename .git/ctx/writing", "os.rename memory/shared.json",
    "open .git/ctx/.committing.*.tmp", "os.rename .git/ctx/committing", "spawn git commit",
    "open .git/ctx/committing.git", "os.remove .git/ctx/committing", "os.remove .git/ctx/committing.git",
    "open .git/ctx/.loose-bytes.*.tmp", "os.rename .git/ctx/loose-bytes",
    "open .git/ctx/.state.json.*.tmp", "os.rename .git/ctx/state.json", "os.remove .git/ctx/writing",
    "open .git/ctx/.since-lag.*.tmp", "os.rename .git/ctx/since-lag")]

# The same the way through the repository (CTX_GIT_SLOW, no CTX_AUTHOR): git asked what
# changed (``git status``), then the commit. No since-lag: only an authored write keeps it
# (it is the lag of an author's "since your last session"); FAST_SET_STEPS sweeps it.
LIBGIT2_SET_STEPS = [Step(s, 1) for s in (
    "open memory/.lock", "open memory/.shared.json.*.tmp", "os.rename memory/shared.json",
    "spawn git status", "open .git/ctx/.committing.*.tmp", "os.rename .git/ctx/committing", "spawn git commit",
    "os.remove .git/ctx/committing",
    "open .git/ctx/.loose-bytes.*.tmp", "os.rename .git/ctx/loose-bytes",
    "open .git/ctx/.state.json.*.tmp", "os.rename .git/ctx/state.json")]


@dataclass(frozen=True)
class Way:
    """One of the ways a write takes a step, chosen by what earlier writes left in a
    file: ``before`` is put there for the trial, and an unfaulted write that way
    leaves ``after`` (which proves the way is taken)."""

    name: str
    path: str  # relative to the root
    before: bytes
    after: bytes


# Steps taken in more than one way: faulted once per way, whatever the order of the
# trials left behind. An authored write counts itself in since-lag, and every
# EVERY-th brings the since-log up to HEAD first and writes 0 instead: the same steps.
SINCE_LAG_WAYS = (Way("counting", ".git/ctx/since-lag", b"1", b"2"),
                  Way("catching up", ".git/ctx/since-lag", b"%d" % (SINCE_LAG_EVERY - 1), b"0"))
STEP_WAYS: dict[str, tuple[Way, ...]] = {sig: SINCE_LAG_WAYS for sig in (
    "open .git/ctx/.since-lag.*.tmp", "os.rename .git/ctx/since-lag")}

SWEPT_WRITES = {
    "set": lambda i: ["set", f"swept_{i}", f"swept value {i}"],
    "amend": lambda i: ["amend", "seed0", f"swept note {i}"],
    "delete": lambda i: ["delete", f"doomed_{i}"],
}


def wait_for_orphan_git(root: Path, timeout: float = 15.0) -> None:
    """Until no git process run on ``root`` (``git -C ROOT``) is left: a ctx killed after it
    started git leaves that git running to its end, and what it writes meanwhile (objects,
    then the ref and its reflog) is not yet whole for fsck to read."""
    import time
    needle = os.fsencode(str(root))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = False
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as got:
                    argv = got.read().split(b"\0")
            except OSError:
                continue
            if argv and argv[0].endswith(b"git") and needle in argv:
                busy = True
                break
        if not busy:
            return
        time.sleep(0.02)


def sweep(root: Path, env: Mapping[str, str], op: str, mode: str, skip: set, log: Path, *,
          every_object: bool = True) -> tuple[list[Step], list[str]]:
    """Run ``op`` (set, amend, delete) once per file operation it makes under the root,
    faulted (``mode``: kill, enospc, eio) just before that operation, and check each
    outcome: the root in order, a failed write clear and without effect, the next
    write succeeding, the model of the entries holding. Returns the steps and the
    problems found. ``root`` must hold seed0 and seed1 (shared) already. Without
    ``every_object``, only the first of the commit's four object writes is faulted
    (the others run the same code)."""
    model = Model()
    for i in range(2):
        model.possible[("shared", f"seed{i}")] = {f"seed value {i}"}

    def prepare(i: int) -> list[str]:
        if op == "delete":
            done = run_ctx(["set", f"doomed_{i}", "to be deleted"], env)
            if done.returncode != 0:
                raise AssertionError(done.describe())
            model.possible[("shared", f"doomed_{i}")] = {"to be deleted"}
        return SWEPT_WRITES[op](i)

    change = {"set": lambda i: set_to(f"swept value {i}"), "amend": lambda i: amended(f"swept note {i}"),
              "delete": lambda i: deleted}[op]
    key = {"set": lambda i: f"swept_{i}", "amend": lambda i: "seed0", "delete": lambda i: f"doomed_{i}"}[op]
    done, steps, _ = run_faulty(prepare(0), env, None, mode, log)
    if done.returncode != 0 or len(steps) < 6:
        return steps, [f"the dry run failed or made too few steps: {done.describe()} {steps}"]
    model.apply("shared", key(0), done, change(0))
    problems = []
    trials: list[tuple[Step, Way | None]] = []
    for step in steps:
        if step in skip or (mode != "kill" and step.sig.startswith("os.remove")):
            continue  # (removing a file does not fail for want of space)
        if not every_object and ".git/objects/" in step.sig and step.nth > 1:
            continue
        trials += [(step, way) for way in STEP_WAYS.get(step.sig, (None,))]
    i = 0
    for way in dict.fromkeys(way for _, way in trials if way is not None):  # each way is taken, unfaulted
        i += 1
        (root / way.path).write_bytes(way.before)
        done = run_ctx(prepare(i), env)
        model.apply("shared", key(i), done, change(i))
        found = (root / way.path).read_bytes() if (root / way.path).exists() else None
        if done.returncode != 0 or found != way.after:
            problems.append(f"{way.path} {way.before!r}: the write did not go the way {way.name!r} "
                            f"(left {found!r}, not {way.after!r}): {done.describe()}")
    for step, way in trials:
        i += 1
        args = prepare(i)
        if way is not None:
            (root / way.path).write_bytes(way.before)
        before, head_before = store_file(root, "shared").read_bytes(), head(root)
        done, _, hit = run_faulty(args, env, step, mode, log)
        if not hit and not (op == "delete" and ".git/objects/" in step.sig and done.returncode == 0):
            # (a delete may bring back a store file git holds already: no object to write)
            problems.append(f"{step}{f' ({way.name})' if way else ''}: not reached "
                            f"(the write went another way: {done.describe()})")
        model.apply("shared", key(i), done, change(i))
        where = f"{mode} at {step}" + (f" ({way.name})" if way else "")
        problems += [f"{where}: {p}" for p in inspect_root(root)]  # (after a killed ctx's git ended)
        if mode != "kill" and done.returncode != 0:
            unclear = one_line_error(done)
            if unclear:
                problems.append(f"{where}: the failure is not clear ({unclear}): {done.describe()}")
            if store_file(root, "shared").read_bytes() != before:
                problems.append(f"{where}: the failed write changed the store file")
            if head(root) != head_before:
                problems.append(f"{where}: the failed write left a commit")
        if mode != "kill" and stale_git_locks(root):  # a process that exits cleans up after itself
            problems.append(f"{where}: the failed write left {stale_git_locks(root)}")
        recovery = run_ctx(["set", f"after_{i}", "recovered"], env)  # a killed one: the next recovers
        if recovery.returncode != 0:
            problems.append(f"{where}: the next write failed: {recovery.describe()}")
            for name in stale_git_locks(root):
                (root / ".git" / name).unlink()
            continue
        if stale_git_locks(root):
            problems.append(f"{where}: still there after the next write: {stale_git_locks(root)}")
        model.apply("shared", f"after_{i}", recovery, set_to("recovered"))
        problems += [f"{where}: {p}" for p in inspect_root(root, committed=True) + model.observe(root)]
    return steps, problems


# --- concurrent writers and a reader -----------------------------------------------------------

CONTENDED = "contended_key"


@dataclass
class WriteRecord:
    writer: str
    op: str           # the Ctx-Operation trailer the commit must carry
    store: str
    key: str
    done: Done


def _writer_plan(rng: random.Random, w: int, count: int) -> list[tuple[str, list[str], str, str, Any]]:
    """``count`` mixed writes of writer ``w`` on its own keys in all three stores (and
    now and then the one key every writer sets). Each changes something, so each
    successful one is exactly one commit."""
    plan: list[tuple[str, list[str], str, str, Any]] = []
    present: dict[tuple[str, str], str] = {}  # (store, key) -> basis
    n = 0
    while len(plan) < count:
        n += 1
        op = rng.choice(["set_new"] * 4 + ["set_again", "set_again", "amend", "amend", "resolve",
                                            "basis", "supersede", "delete", "delete", "contended"])
        if op not in ("set_new", "contended") and not present:
            op = "set_new"
        token = f"w{w}n{n}{_token(rng)[:4]}"
        if op == "contended":
            value = f"contended {token}"
            plan.append(("set", ["set", CONTENDED, value], "shared", CONTENDED, set_to(value)))
            continue
        if op == "set_new":
            store = rng.choice(STORES)
            key = f"w{w}_{n}"
            value = f"value {token}"
            present[(store, key)] = "inferred"
            plan.append(("set", ["set", key, value, "--store", store, "--tag", f"writer{w}"], store, key,
                         set_to(value)))
            continue
        store, key = rng.choice(sorted(present))
        if op == "set_again":
            value = f"again {token}"
            plan.append(("set", ["set", "--store", store, key, value], store, key, set_to(value)))
        elif op == "amend":
            note = f"note {token}"
            plan.append(("amend", ["amend", key, note, "-s", store], store, key, amended(note)))
        elif op == "resolve":
            plan.append(("resolve", ["resolve", key, "--note", f"done {token}", "--store", store], store, key,
                         lambda v: v))
        elif op == "basis":
            basis = rng.choice([b for b in ("verified", "reported", "inferred") if b != present[(store, key)]])
            present[(store, key)] = basis
            plan.append(("basis", ["basis", key, basis, "--store", store], store, key, lambda v: v))
        elif op == "supersede":
            others = [k for s, k in present if s == store and k != key]
            if not others:
                continue
            plan.append(("supersede", ["supersede", key, "--by", rng.choice(others), "--note", token,
                                       "--store", store], store, key, lambda v: v))
        else:
            del present[(store, key)]
            plan.append(("delete", ["delete", key, "--store", store], store, key, deleted))
    return plan


def commit_rows(repo: Path, since: str) -> list[tuple[str, list[str], dict[str, list[str]], str]]:
    """(commit, parents, trailers, author name) of each commit after ``since``, newest first."""
    out = git_text(repo, "log", "--format=%x01%H%x00%P%x00%an%x00%B", f"{since}..HEAD")
    rows = []
    for chunk in out.split("\x01")[1:]:
        commit, parents, author, body = chunk.split("\x00", 3)
        trailers: dict[str, list[str]] = {}
        for line in body.splitlines():
            if line.startswith("Ctx-") and ": " in line:
                name, value = line.split(": ", 1)
                trailers.setdefault(name, []).append(value)
        rows.append((commit, parents.split(), trailers, author))
    return rows


def concurrency_trial(root: Path, env: Mapping[str, str], rng: random.Random, writers: int = 4,
                      writes: int = 50) -> tuple[Report, dict[str, Any]]:
    """``writers`` processes' worth of ``ctx`` writes (``writes`` each, mixed, on all
    three stores) while a reader runs brief, search, history, get and list in a loop.

    Checks: every write and every read exits 0; no entry is lost (the model of each
    writer's own keys holds on disk); the history since the start is linear and its
    commits are exactly the successful writes, by author, operation, store and key.
    """
    import threading
    report = Report(trials=1)
    stats: dict[str, Any] = {"reads": 0}
    seed = run_ctx(["set", CONTENDED, "before the writers"], dict(env, CTX_AUTHOR="Seeder"))
    if seed.returncode != 0:
        report.fail(0, f"seed: {seed.describe()}")
        return report, stats
    start = head(root)
    assert start is not None, "a trial starts from a commit"
    plans = {w: _writer_plan(random.Random(rng.random()), w, writes) for w in range(1, writers + 1)}
    records: list[WriteRecord] = []
    reader_errors: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    barrier = threading.Barrier(writers + 1)

    def write(w: int) -> None:
        wenv = dict(env, CTX_AUTHOR=f"Writer {w}")
        barrier.wait()
        for op, args, store, key, _ in plans[w]:
            done = run_ctx(args, wenv)
            with lock:
                records.append(WriteRecord(f"Writer {w}", op, store, key, done))

    def read() -> None:
        renv = dict(env, CTX_AUTHOR="Reader")
        commands = [["brief"], ["search", "value"], ["history", CONTENDED, "-n", "5"],
                    ["get", CONTENDED, "--json"], ["list", "--json"], ["search", "w1", "--store", "agent"]]
        barrier.wait()
        i = 0
        while not stop.is_set():
            args = commands[i % len(commands)]
            i += 1
            done = run_ctx(args, renv)
            stats["reads"] += 1
            problem = None
            if done.returncode != 0:
                problem = "non-zero exit"
            elif done.stderr.strip():
                problem = "wrote to stderr"
            elif "--json" in args:
                try:
                    json.loads(done.stdout)
                except ValueError:
                    problem = "printed invalid JSON"
            if problem:
                reader_errors.append(f"{problem}: {done.describe()}")

    threads = [threading.Thread(target=write, args=(w,)) for w in plans]
    reader = threading.Thread(target=read)
    for t in threads + [reader]:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    reader.join()
    report.failures += [f"reader: {e}" for e in reader_errors]
    failed = [r for r in records if r.done.returncode != 0]
    report.failures += [f"{r.writer}: {r.done.describe()}" for r in failed]
    stats["writes"] = len(records)
    # no lost entry: replay each writer's successful writes on its own keys
    model = Model()
    for w in plans:
        done_by_w = [r for r in records if r.writer == f"Writer {w}"]
        for (_op, _args, store, key, change), rec in zip(plans[w], done_by_w, strict=False):
            if key != CONTENDED:
                model.apply(store, key, rec.done, change)
    report.failures += [f"lost or wrong: {p}" for p in model.observe(root)]
    contended = {normal(args[2]) for w in plans for op, args, s, key, _ in plans[w] if key == CONTENDED}
    final = read_entries(root, "shared").get(CONTENDED, {}).get("value")
    if contended and final not in contended:
        report.failures.append(f"{CONTENDED} holds {final!r}, which no writer wrote last")
    # the history: linear, and exactly one commit per successful write
    rows = commit_rows(root, start)
    previous = start
    for commit, parents, _, _ in reversed(rows):
        if parents != [previous]:
            report.failures.append(f"not linear at {commit[:8]}: parents {parents}, expected [{previous[:8]}]")
        previous = commit
    from collections import Counter
    committed = Counter((author, t.get("Ctx-Operation", ["?"])[0], t.get("Ctx-Store", ["?"])[0],
                         t.get("Ctx-Key", ["?"])[0]) for _, _, t, author in rows)
    expected = Counter((r.writer, r.op, r.store, r.key) for r in records if r.done.returncode == 0)
    if committed != expected:
        report.failures.append(f"commits are not the successful writes: extra {dict(committed - expected)}, "
                               f"missing {dict(expected - committed)}")
    stats["commits"] = len(rows)
    report.failures += inspect_root(root, committed=True) + history_problems(root)
    return report, stats


# --- small things ------------------------------------------------------------------------------

def one_line_error(done: Done) -> str | None:
    """None when ``done`` is a clear failure (non-zero exit, one line saying what is
    wrong, no traceback, no "internal error"); otherwise what is unclear about it."""
    if done.returncode == 0:
        return "exited 0"
    if done.returncode < 0:
        return f"died of signal {-done.returncode}"
    text = done.stderr
    if "Traceback" in text:
        return "printed a traceback"
    if "internal error" in text:
        return "reported an internal error"
    lines = [line for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("ctx: ", "Error: "))]
    if len(errors) != 1:
        return f"printed {len(errors)} error lines"
    if len(errors[0]) < 12:
        return "an error line that says nothing"
    return None


def new_workdir(prefix: str = "ctx-soak-") -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))
