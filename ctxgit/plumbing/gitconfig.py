"""git's configuration, read by git's rules, and the answer kept for the fast reads;
``upstream``: the remote to sync with, by ``ctxgit/gitfiles/config.py``'s rule.

What ctx needs of it: the remotes (every ``remote.NAME.*`` key, in the order git lists
them) and main's upstream (``branch.main.remote``: the last value wins). It asks git
itself (``git config --list -z --show-origin --includes``: comments, quoting, escapes,
``include`` and ``includeIf``, the global and system files, ``GIT_CONFIG_*``), or
libgit2's reader where ``git`` is not on PATH. ctx has no parser of its own.

``ctx start`` and ``ctx brief`` ask on every run, and a read never loads libgit2 nor
writes (tests/core/test_brief.py: "start writes nothing"). So the answer is kept in
``.git/ctx/gitconfig`` beside the identity (size, mtime_ns, ctime_ns, inode, or
"missing") of every file that went into it or could have (the repository's
``config`` and ``config.worktree``, the global, XDG and system files, each file an
include names, found or not, and ``.git/HEAD`` when an ``includeIf "onbranch:"``
is there) and the variables git finds them by (HOME, XDG_CONFIG_HOME, GIT_CONFIG*).
A read finding it fresh (a few stats) uses it; finding it stale or missing, it asks
git (one short process) and keeps nothing. Every write (the front door's
``after_write``) and every command that reaches a remote keeps it
(tests/git/test_gitconfig.py).
"""

from __future__ import annotations

import os

from ctx.errors import GitError
from ctxgit.gitfiles.config import Upstream, choose
from ctxgit.gitfiles.layout import BRANCH, GITCONFIG

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.storage.files import StrPath

MAGIC = b"ctx-gitconfig 1"
LARGEST = 1 << 20  # a kept answer bigger than this is not one ctx wrote: asked again
UPSTREAM_KEY = f"branch.{BRANCH}.remote"


class Answer:
    """``remotes``: every remote, in git's order; ``upstream``: what ``branch.main.remote``
    says (None when unset or empty)."""

    __slots__ = ("remotes", "upstream")

    def __init__(self, remotes: list[str], upstream: str | None) -> None:
        self.remotes, self.upstream = remotes, upstream

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Answer) and (self.remotes, self.upstream) == (other.remotes, other.upstream)

    def __repr__(self) -> str:
        return f"Answer({self.remotes!r}, {self.upstream!r})"


def read(root: StrPath, keep: bool = False) -> Answer:
    """git's answer for ``root``'s repository: the kept one when fresh, else asked (and
    kept when ``keep``: a command that writes, or already loads libgit2). Raises
    ``GitError`` (git's own line) when git refuses the configuration."""
    root = os.path.abspath(root)
    if not os.path.isdir(os.path.join(root, ".git")):
        return Answer([], None)
    kept = _kept(root)
    if kept is not None:
        return kept
    answer, files = _ask(root)
    if keep:
        _keep(root, answer, files)
    return answer


def keep(root: StrPath) -> None:
    """Keep the answer for the fast reads when it is stale. Never raises: it is a cache,
    and a read without it asks git."""
    try:
        read(root, keep=True)
    except Exception:  # a configuration git refuses: the command that needs it says so
        pass


def upstream(root: StrPath, named: str | None = None, keep: bool = False) -> Upstream:
    """The remote to sync ``root`` with (``named``: the one given on the command line), by
    ``ctxgit/gitfiles/config.py``'s rule. ``keep``: the caller writes or loads libgit2
    anyway, so git's answer is kept for the reads."""
    answer = read(root, keep=keep)
    return choose(answer.remotes, answer.upstream, named)


def remotes(root: StrPath) -> list[str]:
    """The remotes of the root's repository, in the order git lists them."""
    return read(root).remotes


# --- the kept answer ---------------------------------------------------------------------

def _environment() -> list[str]:
    return sorted(f"{k}={v}" for k, v in os.environ.items()
                  if k in ("HOME", "XDG_CONFIG_HOME") or k.startswith("GIT_CONFIG"))


def _candidates(root: str) -> list[str]:
    """Every file git may read for ``root`` before any include: present or not, a change
    to one (made, edited, removed) makes the kept answer stale."""
    home = os.environ.get("HOME", "")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    found = [os.path.join(root, ".git", "config"), os.path.join(root, ".git", "config.worktree"),
             os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config"), "/etc/gitconfig"]
    for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"):
        if os.environ.get(name):
            found.append(os.path.abspath(os.environ[name]))
    return found


def _identity(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    return f"{st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}"


def _kept(root: str) -> Answer | None:
    """The kept answer when every identity and variable it was made with still holds."""
    try:
        with open(os.path.join(root, ".git", GITCONFIG), "rb") as handle:
            raw = handle.read(LARGEST + 1)
    except OSError:
        return None
    if len(raw) > LARGEST:
        return None
    tokens = raw.decode("utf-8", "surrogateescape").split("\0")
    if not tokens or tokens[0] != MAGIC.decode() or tokens[-1] != "":
        return None
    remotes: list[str] = []
    upstream: str | None = None
    env: list[str] = []
    saw_root = False
    fields, i = tokens[1:-1], 0
    while i + 1 < len(fields):
        tag, value = fields[i], fields[i + 1]
        if tag == "root":
            if value != root:
                return None
            saw_root = True
        elif tag == "env":
            env.append(value)
        elif tag == "file":
            if i + 2 >= len(fields) or _identity(value) != fields[i + 2]:
                return None
            i += 1
        elif tag == "remote":
            remotes.append(value)
        elif tag == "upstream":
            upstream = value
        else:
            return None  # not what ctx writes: asked again
        i += 2
    if i != len(fields) or not saw_root or env != _environment():
        return None
    return Answer(remotes, upstream)


def _keep(root: str, answer: Answer, files: list[str]) -> None:
    from ctx.storage.files import atomic_write, ensure_private_dir
    fields = ["root", root]
    for item in _environment():
        fields += ["env", item]
    for path in dict.fromkeys(files):
        fields += ["file", path, _identity(path)]
    for name in answer.remotes:
        fields += ["remote", name]
    if answer.upstream is not None:
        fields += ["upstream", answer.upstream]
    if any("\0" in field for field in fields):
        return  # a NUL in a path or name cannot be kept in this form: the reads ask git
    ensure_private_dir(os.path.join(root, ".git", "ctx"))
    body = "\0".join([MAGIC.decode(), *fields, ""]).encode("utf-8", "surrogateescape")
    atomic_write(os.path.join(root, ".git", GITCONFIG), body, durable=False)  # a cache: made again when lost


# --- asking ----------------------------------------------------------------------------------

def _ask(root: str) -> tuple[Answer, list[str]]:
    """git's answer and the files it depends on. The candidates' identities are taken
    before asking, so an edit made while git reads shows as stale next time."""
    before = {path: _identity(path) for path in _candidates(root)}
    entries = _from_git(root)
    if entries is None:
        entries = _from_libgit2(root)
    files = list(before)
    remotes: dict[str, None] = {}
    upstream: str | None = None
    onbranch = False
    for origin, key, value in entries:
        if origin is not None:
            files.append(origin)
        if key.startswith("remote.") and key.rfind(".") > len("remote."):
            remotes.setdefault(key[len("remote."):key.rfind(".")], None)
        elif key == UPSTREAM_KEY:
            upstream = value or None
        if key.startswith("includeif.onbranch:"):
            onbranch = True
        if (key == "include.path" or key.startswith("includeif.")) and key.endswith(".path") and value:
            files.append(_included(value, origin, root))
    if onbranch:
        files.append(os.path.join(root, ".git", "HEAD"))
    if any(_identity(path) != seen for path, seen in before.items()):
        files.append(os.path.join(root, ".git", "changed while read"))  # never there: stale next time
    return Answer(list(remotes), upstream), files


def _included(value: str, origin: str | None, root: str) -> str:
    """The file an include names, as git finds it: ``~/`` is HOME, a relative path is
    relative to the file that names it."""
    if value.startswith("~/"):
        value = os.path.join(os.environ.get("HOME", ""), value[2:])
    if not os.path.isabs(value):
        value = os.path.join(os.path.dirname(origin or os.path.join(root, ".git", "config")), value)
    return os.path.normpath(value)


def _from_git(root: str) -> list[tuple[str | None, str, str | None]] | None:
    """``git config --list`` for ``root``; None when git is not on PATH."""
    argv = ["git", "-C", root, "--git-dir=" + os.path.join(root, ".git"), "config", "--list", "-z", "--show-origin",
            "--includes"]
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)]
    from ctxgit.plumbing.gitenv import clean_git_env  # (here: a read finding the kept answer asks no git)
    try:
        # (posix_spawn, not subprocess: a read that asks must not load subprocess's
        # threading and selectors: tests/cli/test_fastcli.py's list of what reads load)
        pid = os.posix_spawnp("git", argv, dict(clean_git_env(), GIT_TERMINAL_PROMPT="0", LC_ALL="C"),
                              file_actions=actions)
    except FileNotFoundError:
        return None
    finally:
        os.close(out_w)
        os.close(err_w)
    try:
        out = _drain(out_r)
        err = _drain(err_r)
    finally:
        os.close(out_r)
        os.close(err_r)
        _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        line = err.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git cannot read this repository's configuration: {line[0] if line else 'no reason given'}")
    return _entries(out, root)


def _drain(fd: int) -> bytes:
    parts = []
    while chunk := os.read(fd, 65536):
        parts.append(chunk)
    return b"".join(parts)


def _entries(out: bytes, root: str) -> list[tuple[str | None, str, str | None]]:
    """``-z --show-origin`` output: the origin, NUL, the key, then a newline and the value
    (none for a key without ``=``), NUL."""
    tokens = out.decode("utf-8", "surrogateescape").split("\0")
    found: list[tuple[str | None, str, str | None]] = []
    for i in range(0, len(tokens) - 1, 2):
        origin, entry = tokens[i], tokens[i + 1]
        key, newline, value = entry.partition("\n")
        path = os.path.join(root, origin[len("file:"):]) if origin.startswith("file:") else None
        found.append((os.path.normpath(path) if path else None, key, value if newline else None))
    return found


def _from_libgit2(root: str) -> list[tuple[str | None, str, str | None]]:
    """libgit2's reader, where git is absent: it names no origin, so an include's relative
    path is taken from the file of its level."""
    import pygit2
    from pygit2.enums import ConfigLevel
    home = os.environ.get("HOME", "")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    origins = {ConfigLevel.LOCAL: os.path.join(root, ".git", "config"),
               ConfigLevel.GLOBAL: os.path.join(home, ".gitconfig"),
               ConfigLevel.XDG: os.path.join(xdg, "git", "config"), ConfigLevel.SYSTEM: "/etc/gitconfig"}
    try:
        config = pygit2.Repository(os.path.join(root, ".git")).config
        return [(origins.get(entry.level), entry.name, entry.value) for entry in config]
    except (pygit2.GitError, ValueError) as e:
        raise GitError(f"libgit2 cannot read this repository's configuration: {e}") from e
