"""A context root's repository as ctx needs it: made with branch ``main``, ctx's pre-commit
hook installed, store files routed through ctx's merge driver (``.gitattributes`` and
the driver's config), and the lines ctx needs in ``.gitignore``. The first write, a
sync and ``ctx hooks install`` ask for it; every write checks it again (cheaply)."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from ctx.errors import GitError, StoreError
from ctx.storage.files import atomic_write
from ctxgit.gitfiles.layout import ATTRIBUTES, BRANCH
from ctxgit.plumbing.repo import open_repo
from hooks.unsafe_paths import IGNORE_LINES


def ensure_repo(root: Path) -> tuple[pygit2.Repository, list[str]]:
    """Open or create the repository (branch ``main``); returns it and the
    files this call created or repaired (.gitignore), to commit with the next write."""
    repo = open_repo(root)
    if repo is None:
        try:
            repo = pygit2.init_repository(str(root), initial_head=BRANCH)
        except pygit2.GitError as exc:
            raise GitError(f"cannot create a repository in {root}: {exc}") from None
        from hooks.install import install
        install(root)
    touched = []
    if ensure_gitignore(root):
        touched.append(".gitignore")
    if ensure_gitattributes(root):
        touched.append(".gitattributes")
    ensure_as_written(repo)
    ensure_merge_driver(repo)
    ensure_loose_compression(repo, root)
    return repo, touched


ATTRIBUTES_LINE = "memory/*.json merge=ctx"
# Every file of the context is committed byte for byte as ctx wrote and checked it: no line
# ending conversion, clean filter, `$Id$` expansion or re-encoding that the operator's git
# settings (core.autocrlf, core.attributesFile...) give their other repositories, nor that a
# .gitattributes a remote brought asks for. In .git/info/attributes: it decides over every
# .gitattributes, and no remote reaches it (tests/git/test_git_settings.py).
AS_WRITTEN_LINE = "* -text -filter -ident -working-tree-encoding"


def driver_command() -> str:
    """``ctx merge-driver %O %A %B %P``, by this installation's ``ctx`` script when it has one."""
    import shlex
    import sys
    script = Path(sys.executable).parent / "ctx"
    program = shlex.quote(str(script)) if script.is_file() else f"{shlex.quote(sys.executable)} -m ctx"
    return f"{program} merge-driver %O %A %B %P"


def _driver_works(command: str) -> bool:
    import shlex
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return False
    return "merge-driver" in command and os.access(program, os.X_OK)


def ensure_gitattributes(root: Path) -> bool:
    """Route store files through ctx's merge driver in a plain ``git merge``."""
    return _ensure_lines(root / ".gitattributes", (ATTRIBUTES_LINE,))


def ensure_as_written(repo: pygit2.Repository) -> None:
    """``AS_WRITTEN_LINE`` first in the repository's own attributes file (GitError when it
    cannot be written: no commit is made that could differ from the files)."""
    path = Path(repo.path) / ATTRIBUTES
    try:
        path.parent.mkdir(exist_ok=True)
        _ensure_lines(path, (), "# ctx: every file of the context is committed as ctx wrote it\n",
                      first=(AS_WRITTEN_LINE,))
    except (OSError, StoreError) as exc:
        raise GitError(f"cannot write {path}: {getattr(exc, 'strerror', None) or exc}") from None


def ensure_merge_driver(repo: pygit2.Repository) -> None:
    """git silently falls back to a line merge without the driver's config: keep it set."""
    try:
        config = repo.config
        if "merge.ctx.name" not in config:
            config["merge.ctx.name"] = "ctx entry-level merge of store files"
        # set when missing or broken, never flipped between working installations
        if "merge.ctx.driver" not in config or not _driver_works(str(config["merge.ctx.driver"] or "")):
            config["merge.ctx.driver"] = driver_command()
    except (pygit2.GitError, OSError):
        pass


# Every write stores the whole store file as a new loose object, which lives until the next
# packing (ctxgit/plumbing/pack.py: by the bytes written, CTX_PACK_THRESHOLD); the pack is
# compressed as git's settings say (pack.compression, core.compression), untouched here.
# Deflating each loose copy first (git's default, level 1) was most of git's part of a write
# at 10,000 entries: ctx's own repository keeps them stored (level 0), unless the operator's
# git says otherwise (tests/git/test_write_cost.py).
LOOSE_KEYS = ("core.looseCompression", "core.compression")


def ensure_loose_compression(repo: pygit2.Repository, root: Path) -> None:
    """Set ``core.looseCompression = 0`` in the repository's own config when no config git
    reads sets it or ``core.compression`` (once: then it is set). Only where git commits:
    libgit2 writes its loose objects at a level of its own."""
    from ctxgit.plumbing import gitcommit
    if gitcommit.program() is None:
        return
    try:
        config = repo.config
        if any(key in config for key in LOOSE_KEYS):
            return
        if not gitcommit.configured(root, LOOSE_KEYS):
            gitcommit.set_local(root, LOOSE_KEYS[0], "0")
    except (pygit2.GitError, GitError, OSError):
        pass  # a default, not a need: the write goes on at git's own level


def ensure_gitignore(root: Path) -> bool:
    """Add the ignore lines ctx needs, keeping every other line; True if changed."""
    return _ensure_lines(root / ".gitignore", IGNORE_LINES, "# ctx: local state that is never committed\n")


def _ensure_lines(path: Path, lines: tuple[str, ...], header: str = "", first: tuple[str, ...] = ()) -> bool:
    """Append the ``lines`` a file lacks and put the ``first`` it lacks at its top (after a
    new file's ``header``), keeping every other line; True if it changed."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in lines if line not in present]
    top = "".join(line + "\n" for line in first if line not in present)
    if not missing and not top:
        return False
    if text and not text.endswith("\n"):
        text += "\n"
    text = (header if not text else "") + top + text + "".join(line + "\n" for line in missing)
    try:
        mode = path.stat().st_mode & 0o777  # an existing file keeps its permissions
    except FileNotFoundError:
        mode = 0o600
    atomic_write(path, text.encode("utf-8"), mode=mode)
    return True
