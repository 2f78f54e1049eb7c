"""Running a program without the ``subprocess`` module: its input and output in files.

Every commit runs ``git`` and a signed one a signer; ``subprocess`` (with its
``selectors``, ``threading`` and ``signal`` imports) would be paid at every write.
``os.posix_spawnp`` with the child's standard streams opened on files in a private
scratch folder needs no pipe, so nothing can deadlock on a full one.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


class Ran:
    """What a program did: its exit status and what it wrote."""

    def __init__(self, returncode: int, stdout: bytes, stderr: bytes) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr

    def said(self) -> str:
        """The first line of its error output that is not a status line (gpg's ``[GNUPG:]``)."""
        for line in self.stderr.decode("utf-8", "replace").splitlines():
            if line.strip() and not line.startswith("[GNUPG:]"):
                return line.strip()
        return "no message"


class Scratch:
    """A private folder for a program's files, removed after (``with Scratch() as folder``)."""

    def __enter__(self) -> str:
        # a str, not a Path: a write imports no pathlib (tests/cli/test_fastcli.py,
        # test_a_clean_write_loads_neither_json_nor_re)
        base = os.environ.get("TMPDIR") or "/tmp"
        self.path = os.path.join(base, f"ctx-run-{os.getpid()}-{os.urandom(6).hex()}")
        os.mkdir(self.path, 0o700)
        return self.path

    def __exit__(self, *exc: object) -> None:
        for name in os.listdir(self.path):
            os.unlink(os.path.join(self.path, name))
        os.rmdir(self.path)


def run(argv: list[str], data: bytes | None, env: Mapping[str, str],
        started: Callable[[int], None] | None = None) -> Ran:
    """Run ``argv`` (``argv[0]`` looked up on PATH when it has no slash) with ``data``
    on its standard input (no working directory of its own: git is given ``-C``);
    OSError when it cannot be started. A Ctrl-C while it runs ends it too: a program
    never outlives the command that started it. ``started`` is told the child's pid."""
    with Scratch() as folder:
        streams = [os.path.join(folder, name) for name in ("stdin", "stdout", "stderr")]
        _write(streams[0], data or b"")
        actions = [(os.POSIX_SPAWN_OPEN, 0, streams[0], os.O_RDONLY, 0)]
        actions += [(os.POSIX_SPAWN_OPEN, fd, streams[fd], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                    for fd in (1, 2)]
        pid = os.posix_spawnp(argv[0], argv, dict(env), file_actions=actions)
        try:
            if started is not None:
                started(pid)
            status = os.waitpid(pid, 0)[1]
        except BaseException:
            try:
                os.kill(pid, 15)
                os.waitpid(pid, 0)
            except OSError:
                pass
            raise
        return Ran(os.waitstatus_to_exitcode(status), _read(streams[1]), _read(streams[2]))


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as out:
        out.write(data)


def _read(path: str) -> bytes:
    with open(path, "rb") as got:
        return got.read()


_detached: list[int] = []  # the children ``detached`` started, until reaped


def detached(argv: list[str], env: Mapping[str, str], log: str | None = None) -> int:
    """Start ``argv`` (``argv[0]`` a path) in a session of its own, no terminal, never
    waited for: stdin from /dev/null, stdout and stderr to ``log`` (appended) or
    /dev/null. It inherits none of the caller's files (Python opens them
    non-inheritable: tests/git/test_write_cost.py). Those started before that have
    ended are reaped first, so a long-lived caller (the MCP server) keeps no zombie.
    Returns the pid; OSError when it cannot be started."""
    for pid in list(_detached):
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                _detached.remove(pid)
        except ChildProcessError:
            _detached.remove(pid)
    out = ((os.POSIX_SPAWN_OPEN, 1, log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600) if log is not None
           else (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0))
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), out, (os.POSIX_SPAWN_DUP2, 1, 2)]
    pid = os.posix_spawn(argv[0], argv, dict(env), file_actions=actions, setsid=True)
    _detached.append(pid)
    return pid
