"""Helpers for the sync and merge tests: local bare repositories, "machines"
(one context root each, driven through the CLI with their own ``CTX_HOME``),
plain git clones to craft a remote's tree by hand, and convergence checks.

Everything is local: bare repositories are made with the real ``git init
--bare``; nothing touches the network.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from pygit2.enums import FileMode

from support.gitutil import CTX_EXE, git, git_out, make_bare, status_lines, wait_for
from support.stores import make_entry, read_entries, read_store_file, write_store_file


def ts(day: int, hour: int = 0, minute: int = 0) -> str:
    """A fixed timestamp in §3.3's form: 2025-03-DD at HH:MM UTC."""
    return f"2025-03-{day:02d}T{hour:02d}:{minute:02d}:00Z"


def entry(value: Any, when: str, **extra: Any) -> dict[str, Any]:
    """An entry written and last changed at ``when`` (``created`` can be overridden)."""
    created = extra.pop("created", when)
    e = make_entry(value, when=when, **extra)
    e["created"] = created
    return e


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise ``TimeoutError`` in the main thread after ``seconds`` (SIGALRM), so a
    merge that loops forever fails the test instead of hanging the suite."""
    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s: an endless loop?")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- bare repositories and plain git clones ---------------------------------------------

def bare_head(bare: Path, ref: str = "refs/heads/main") -> str | None:
    done = git(bare, "rev-parse", "--verify", "-q", ref, check=False)
    return done.stdout.strip() or None


def plain_clone(bare: Path, path: Path) -> Path:
    """A plain git working clone of ``main`` (no ctx), to craft a remote tree by hand."""
    done = subprocess.run(["git", "clone", "-q", "-b", "main", str(bare), str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return path


def plain_commit_and_push(work: Path, message: str = "by hand") -> str:
    git(work, "add", "-A", "-f")
    git(work, "commit", "-q", "--no-verify", "-m", message)
    git(work, "push", "-q", "origin", "main")
    return git_out(work, "rev-parse", "HEAD").strip()


# --- machines --------------------------------------------------------------------------

class Machine:
    """One machine: a context root of its own, driven by the ``ctx`` CLI with
    ``CTX_HOME`` set to that root and ``CTX_AUTHOR`` to the machine's agent."""

    def __init__(self, root: Path, author: str) -> None:
        self.root = root
        self.author = author
        self.runner = CliRunner()

    def __repr__(self) -> str:
        return f"Machine({self.author!r}, {str(self.root)!r})"

    @property
    def env(self) -> dict[str, str]:
        return {"CTX_HOME": str(self.root), "CTX_AUTHOR": self.author}

    # the CLI, in process, through the front door as the `ctx` executable runs it ...
    def run(self, *args: str, input: str | None = None) -> Result:
        from support.door import run_front_door
        return run_front_door(self.runner, list(args), input=input, env=self.env)

    def ok(self, *args: str) -> Result:
        result = self.run(*args)
        assert result.exit_code == 0, (f"{self.author}: ctx {' '.join(args)} exited "
                                       f"{result.exit_code}\nstdout: {result.stdout}\n"
                                       f"stderr: {result.stderr}\n{result.exception!r}")
        return result

    # ... and as a real subprocess (the installed console script)
    def sh(self, *args: str, check: bool = True, timeout: float = 120, cwd: Path | None = None,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """``ctx ARGS`` as a process, with the machine's variables and ``env`` over the test's
        environment, stdin closed (nothing waits on a prompt)."""
        full = dict(os.environ, **self.env, **(env or {}))
        done = subprocess.run([str(CTX_EXE), *args], env=full, capture_output=True, text=True,
                              timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL)
        if check:
            assert done.returncode == 0, (f"{self.author}: ctx {' '.join(args)} exited "
                                          f"{done.returncode}\n{done.stdout}\n{done.stderr}")
        return done

    # git in the machine's root
    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return git(self.root, *args, check=check)

    def git_out(self, *args: str) -> str:
        return git_out(self.root, *args)

    def head(self) -> str:
        return git_out(self.root, "rev-parse", "HEAD").strip()

    def is_ancestor(self, older: str, newer: str = "HEAD") -> bool:
        return git(self.root, "merge-base", "--is-ancestor", older, newer, check=False).returncode == 0

    def status(self) -> list[str]:
        return status_lines(self.root)

    # the stores on disk
    def entries(self, store: str = "shared") -> dict[str, Any]:
        return read_entries(self.root, store)

    def entry(self, key: str, store: str = "shared") -> dict[str, Any] | None:
        return self.entries(store).get(key)

    def store_data(self, store: str = "shared") -> dict[str, Any]:
        return read_store_file(self.root, store)

    def put(self, entries: dict[str, Any], store: str = "shared", **top: Any) -> None:
        """Write entries with chosen timestamps straight into a store file, then let a
        ctx write (``ctx init``) commit it as an outside change."""
        write_store_file(self.root, store, entries, **top)
        self.commit_outside()

    def commit_outside(self) -> None:
        before = self.head()
        self.ok("init")
        assert self.head() != before, "the outside change was not committed"
        assert self.git_out("log", "-1", "--format=%s").startswith("external change")

    def write_file(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def files(self) -> dict[str, bytes]:
        """Every file ctx versions (outside .git; no lock, no temporary file), with its bytes."""
        from hooks.unsafe_paths import forbidden
        out: dict[str, bytes] = {}
        for d, dirs, names in os.walk(self.root):
            if Path(d) == self.root and ".git" in dirs:
                dirs.remove(".git")
            for name in names:
                rel = os.path.relpath(os.path.join(d, name), self.root).replace(os.sep, "/")
                if not forbidden(rel):
                    out[rel] = (Path(d) / name).read_bytes()
        return out

    def store_files(self) -> dict[str, bytes]:
        return {p: b for p, b in self.files().items() if p.startswith("memory/")}


def clone_machine(bare: Path, root: Path, author: str) -> Machine:
    machine = Machine(root, author)
    result = machine.ok("clone", str(bare), str(root))
    assert str(root) in result.stdout
    return machine


def network(tmp_path: Path, *authors: str, seed: bool = True) -> tuple[Path, list[Machine]]:
    """One bare repository and one clone of it per author. The first machine
    clones the empty bare repository (a new context), writes ``seed`` and pushes;
    the others clone after that, so every machine shares that history."""
    bare = make_bare(tmp_path / "remote" / "ctx.git")
    first = clone_machine(bare, tmp_path / f"machine {authors[0]}", authors[0])
    if seed:
        first.ok("set", "seed", "shared by everyone", "--tag", "setup")
    first.ok("push")
    machines = [first] + [clone_machine(bare, tmp_path / f"machine {a}", a) for a in authors[1:]]
    return bare, machines


def one_line_error(done: subprocess.CompletedProcess, status: int = 6) -> str:
    """The one line ``ctx: ...`` on stderr of a process that exited ``status`` (6: a remote failed)."""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == status, (done.returncode, done.stdout, done.stderr)
    assert len(lines) == 1 and lines[0].startswith("ctx: "), done.stderr
    return lines[0]


def hanging_background_push(root: Path, url: str, *settings: tuple[str, str]) -> Machine:
    """A machine at ``root`` with auto-sync on (and ``settings``, as ``ctx config`` takes
    them) whose write started a background push that now holds the remote: ``url``, a
    server that never answers."""
    m = Machine(root, "M")
    m.sh("set", "first", "v")
    m.sh("remote", "add", "origin", url)
    m.git("config", "branch.main.remote", "origin")
    m.git("config", "branch.main.merge", "refs/heads/main")
    for setting in (("sync-auto", "true"), *settings):
        m.sh("config", *setting)
    m.sh("set", "second", "written while the server hangs")  # starts the background push
    assert wait_for(lambda: (m.root / ".git" / "ctx" / "remote-op").exists(), 10)
    return m


def sync_round(machines: Iterable[Machine]) -> None:
    for m in machines:
        m.ok("sync")


def assert_converged(machines: list[Machine], bare: Path | None = None) -> None:
    """Same head, byte-identical versioned files, clean work trees, everywhere."""
    heads = {m.author: m.head() for m in machines}
    assert len(set(heads.values())) == 1, heads
    if bare is not None:
        assert bare_head(bare) == machines[0].head()
    reference = machines[0].files()
    assert any(p.startswith("memory/") for p in reference)
    for m in machines[1:]:
        files = m.files()
        assert sorted(files) == sorted(reference), (m.author, sorted(files), sorted(reference))
        for path, data in reference.items():
            assert files[path] == data, f"{path} differs between {machines[0].author} and {m.author}"
    for m in machines:
        assert m.status() == [], (m.author, m.status())
        for store in ("operator", "shared", "agent"):
            path = m.root / "memory" / f"{store}.json"
            if path.exists():
                text = path.read_text(encoding="utf-8")
                json.loads(text)
                assert "<<<<<<<" not in text and ">>>>>>>" not in text


def sync_until_converged(machines: list[Machine], bare: Path | None = None, rounds: int = 4) -> int:
    """Sync every machine in turn until all heads agree; returns the rounds it took."""
    for n in range(1, rounds + 1):
        sync_round(machines)
        if len({m.head() for m in machines}) == 1:
            assert_converged(machines, bare)
            return n
    raise AssertionError(f"no convergence after {rounds} rounds: "
                         f"{ {m.author: m.head() for m in machines} }")


def commit_parents(machine: Machine, rev: str = "HEAD") -> list[str]:
    return machine.git_out("rev-list", "--parents", "-n", "1", rev).split()[1:]


def commit_message(machine: Machine, rev: str = "HEAD") -> str:
    return machine.git_out("log", "-1", "--format=%B", rev)


def build_tree(repo: Any, files: dict[str, bytes]) -> Any:
    """Write a tree holding exactly ``files`` (a merge test's base, ours and theirs)."""
    nested: dict = {}
    for path, data in files.items():
        node = nested
        parts = path.split("/")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = data

    def write(node: dict) -> Any:
        builder = repo.TreeBuilder()
        for name, value in sorted(node.items()):
            if isinstance(value, dict):
                builder.insert(name, write(value), FileMode.TREE)
            else:
                builder.insert(name, repo.create_blob(value), FileMode.BLOB)
        return builder.write()
    return write(nested)
