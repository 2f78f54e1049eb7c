"""Plain helpers for the git-layer tests: inspect a context's repository with
the real ``git`` CLI, run the real ``ctx`` executable, wait for a condition.

Every ``git`` call runs with an environment that has no variable that could
redirect git to another repository (``GIT_DIR``, ``GIT_WORK_TREE``…), so a
test that sets them for ctx still inspects the repository it means to.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# git variables that point git at another repository, index or object store
REDIRECTING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
               "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
               "GIT_CEILING_DIRECTORIES")

CTX_EXE = Path(sys.executable).parent / "ctx"


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in REDIRECTING}
    env.update(extra or {})
    return env


def git(repo: Path, *args: str, check: bool = True, env: Mapping[str, str] | None = None,
        text: bool = True) -> subprocess.CompletedProcess:
    """``git -C repo ARGS`` with a clean environment (any owner's repository is safe: a
    test may inspect one another user made); raises on failure when ``check``.
    ``text``: False gives stdout and stderr as bytes."""
    done = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(repo), *args], env=git_env(env),
                          capture_output=True, text=text)
    if check and done.returncode != 0:
        out, err = (done.stdout, done.stderr) if text else (_decode(done.stdout), _decode(done.stderr))
        raise AssertionError(f"git {' '.join(args)} failed ({done.returncode}):\n{out}\n{err}")
    return done


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "backslashreplace")


def head(repo: Path) -> str | None:
    """HEAD's commit id, or None (no repository, or no commit yet)."""
    done = git(repo, "rev-parse", "--verify", "-q", "HEAD", check=False)
    return done.stdout.strip() or None


def make_bare(path: Path, branch: str | None = None) -> Path:
    """``git init --bare`` (``branch``: its HEAD's branch; None: git's default, ``master``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    git(path.parent, "init", "--bare", "-q", *([f"--initial-branch={branch}"] if branch else []), str(path))
    return path


def git_out(repo: Path, *args: str) -> str:
    return git(repo, *args).stdout


def has_commits(repo: Path) -> bool:
    if not (repo / ".git").exists():
        return False
    return git(repo, "rev-parse", "--verify", "-q", "HEAD", check=False).returncode == 0


def commit_ids(repo: Path) -> list[str]:
    """Every commit reachable from HEAD, newest first ([] without a repository)."""
    if not has_commits(repo):
        return []
    return git_out(repo, "rev-list", "HEAD").split()


def commit_count(repo: Path) -> int:
    return len(commit_ids(repo))


def succeeded(result: Any) -> Any:
    """A command's result (an in-process run's), once it is known to have exited 0."""
    assert result.exit_code == 0, (result.stdout, result.stderr, getattr(result, "exception", None))
    return result


def log_rows(repo: Path, fmt: str = "%an|%ae|%cn|%ce|%s", rev: str = "HEAD") -> list[str]:
    """One formatted line per commit, newest first."""
    if not has_commits(repo):
        return []
    out = git_out(repo, "log", f"--format={fmt}", rev)
    return [line for line in out.split("\n") if line]


def message(repo: Path, rev: str = "HEAD") -> str:
    return git_out(repo, "log", "-1", "--format=%B", rev)


def subject(repo: Path, rev: str = "HEAD") -> str:
    return git_out(repo, "log", "-1", "--format=%s", rev).strip()


def author(repo: Path, rev: str = "HEAD") -> tuple[str, str]:
    name, email = git_out(repo, "log", "-1", "--format=%an%x00%ae", rev).strip().split("\x00")
    return name, email


def committer(repo: Path, rev: str = "HEAD") -> tuple[str, str]:
    name, email = git_out(repo, "log", "-1", "--format=%cn%x00%ce", rev).strip().split("\x00")
    return name, email


def trailers(text: str) -> list[tuple[str, str]]:
    """The ``Ctx-*`` trailer lines of a commit message, in order."""
    out = []
    for line in text.splitlines():
        if line.startswith("Ctx-") and ": " in line:
            name, value = line.split(": ", 1)
            out.append((name, value))
    return out


def parents(repo: Path, rev: str) -> list[str]:
    return git_out(repo, "rev-list", "--parents", "-n", "1", rev).split()[1:]


def tree_paths(repo: Path, rev: str = "HEAD") -> list[str]:
    return git_out(repo, "ls-tree", "-r", "--name-only", rev).split("\n")[:-1]


def changed_paths(repo: Path, rev: str) -> list[str]:
    """The paths one commit changed (against its first parent, or all for a root commit)."""
    out = git_out(repo, "diff-tree", "--root", "--no-commit-id", "--name-only", "-r", rev)
    return [p for p in out.split("\n") if p]


def show_file(repo: Path, rev: str, path: str) -> str:
    return git_out(repo, "show", f"{rev}:{path}")


def status_lines(repo: Path) -> list[str]:
    """``git status --porcelain``, untracked files included (ignored ones not)."""
    out = git_out(repo, "--no-optional-locks", "status", "--porcelain", "--untracked-files=all")
    return [line for line in out.split("\n") if line]


def loose_objects(repo: Path) -> list[str]:
    objects = repo / ".git" / "objects"
    return [f"{d.name}{f.name}" for d in objects.iterdir() if len(d.name) == 2 and d.is_dir()
            for f in d.iterdir()]


def fsck(repo: Path) -> None:
    """``git fsck --full --strict`` must pass and report nothing wrong."""
    done = git(repo, "fsck", "--full", "--strict", "--no-dangling", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "error" not in done.stderr.lower() and "missing" not in done.stdout.lower(), \
        done.stdout + done.stderr


def run_ctx(*args: str, env: Mapping[str, str | None] | None = None, input: str | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the installed ``ctx`` executable in a real subprocess."""
    return subprocess.run([str(CTX_EXE), *args], env=merged_env(env), input=input, capture_output=True,
                          text=True, timeout=timeout)


def merged_env(env: Mapping[str, str | None] | None) -> dict[str, str]:
    """The test's environment with ``env`` laid over it (a value of None removes the variable)."""
    full = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            full.pop(key, None)
        else:
            full[key] = value
    return full


def wait_for(condition: Callable[[], bool], timeout: float = 5.0, pause: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)


@contextmanager
def remote_held(root: Path, *args: Any, **kwargs: Any) -> Iterator[None]:
    """For the block, another thread holds ``locks.remote_operation(root, *args, **kwargs)``
    (flock is per open file description: a second open in this process contends as
    another process would)."""
    from ctxgit.plumbing import locks
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        with locks.remote_operation(root, *args, **kwargs):
            inside.set()
            release.wait(10)
    worker = threading.Thread(target=hold)
    worker.start()
    try:
        assert inside.wait(5)
        yield
    finally:
        release.set()
        worker.join()


def disk_paths(root: Path) -> list[str]:
    """Every file under the root outside ``.git``, relative with ``/``, except the
    lock file and temporary files (which are never committed): sorted."""
    from hooks.unsafe_paths import forbidden
    out = []
    for d, dirs, files in os.walk(root):
        if Path(d) == root and ".git" in dirs:
            dirs.remove(".git")
        for name in files:
            rel = os.path.relpath(os.path.join(d, name), root).replace(os.sep, "/")
            if not forbidden(rel):
                out.append(rel)
    return sorted(out)


def commit_details(repo: Path, count: int) -> list[tuple[str, str, str, list[str]]]:
    """The newest ``count`` commits as (id, author name, message, changed paths), in one
    ``git log`` call."""
    out = git_out(repo, "log", f"-n{count}", "--format=%x01%H%x00%an%x00%B%x00", "--name-only")
    rows = []
    for chunk in out.split("\x01")[1:]:
        commit, name, text, paths = chunk.split("\x00")
        rows.append((commit, name, text, [p for p in paths.split("\n") if p]))
    return rows
