"""Keep the repository small: pack loose objects in the background.

Each write stores a new blob of the whole store file. ctx keeps a running
count of the loose bytes its commits added (``.git/ctx/loose-bytes``) and,
past a threshold, starts ``git gc`` detached, so packing never blocks a
write. Without a git executable, ``ctx doctor`` reports the growth instead.
"""

from __future__ import annotations

import os
from pathlib import Path


DEFAULT_THRESHOLD = 32 * 1024 * 1024
STATE = "ctx/loose-bytes"


def _threshold() -> int:
    try:
        return int(os.environ.get("CTX_PACK_THRESHOLD", DEFAULT_THRESHOLD))
    except ValueError:
        return DEFAULT_THRESHOLD


def loose_size(git_dir: Path, oid) -> int:
    text = str(oid)
    try:
        return (git_dir / "objects" / text[:2] / text[2:]).stat().st_size
    except OSError:
        return 0


# what would point git at another repository, index or object store; the rest of
# the operator's git environment (GIT_SSH_COMMAND, GIT_ASKPASS, GIT_CONFIG_*...) is theirs
REDIRECTING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
               "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
               "GIT_CEILING_DIRECTORIES", "GIT_PREFIX", "GIT_QUARANTINE_PATH")


def clean_git_env() -> dict[str, str]:
    """The caller's environment without the variables that would redirect git."""
    return {k: v for k, v in os.environ.items() if k not in REDIRECTING}


def after_commit(repo, oid) -> bool:
    """Account for the objects a commit added; start a packing past the threshold.

    Returns True when a background ``git gc`` was started.
    """
    git_dir = Path(repo.path)
    commit = repo[oid]
    added = loose_size(git_dir, oid) + loose_size(git_dir, commit.tree_id)
    parent_tree = commit.parents[0].tree if commit.parents else None
    for delta in repo.diff(parent_tree, commit.tree).deltas if parent_tree is not None else []:
        added += loose_size(git_dir, delta.new_file.id)
    return account(git_dir, added)


def account(git_dir: Path, added: int) -> bool:
    """Add ``added`` loose bytes to the running count; past the threshold, start a packing."""
    state = git_dir / STATE
    try:
        debt = int(state.read_text())
    except (OSError, ValueError):
        debt = 0
    debt += added
    started = False
    if debt >= _threshold():
        started = start_gc(git_dir.parent)
        if started:
            debt = 0
    state.parent.mkdir(exist_ok=True)
    state.write_text(str(debt))
    return started


def start_gc(root: Path) -> bool:
    """Start ``git gc --quiet`` detached in ``root``; False when git is missing."""
    import shutil
    import subprocess  # here, not at the top: most writes never pack, and start-up counts
    git = shutil.which("git")
    if git is None:
        return False
    subprocess.Popen([git, "-C", str(root), "gc", "--quiet"], env=clean_git_env(),
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    return True
