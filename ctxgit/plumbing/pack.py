"""Keep the repository small: pack loose objects in the background.

Each write stores a new blob of the whole store file. ctx keeps a running
count of the loose bytes its commits added (``.git/ctx/loose-bytes``) and,
past a threshold, starts a packing detached (``start_packing``: the loose objects
into one more pack, a whole ``git gc`` every ``PACKS`` packs), so packing never blocks
a write. Without a git executable, ``ctx doctor`` reports the growth instead.
"""

from __future__ import annotations

import os

from ctx import settings
from ctx.errors import StoreError
from ctx.storage.files import atomic_write, make_dir, read_text
from ctxgit.gitfiles.layout import LOOSE_BYTES as STATE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.storage.files import StrPath


def loose_size(git_dir: StrPath, oid) -> int:
    text = str(oid)
    try:
        return os.stat(os.path.join(git_dir, "objects", text[:2], text[2:])).st_size
    except OSError:
        return 0


def after_commit(repo, oid) -> bool:
    """Account for the objects a commit added; start a packing past the threshold.

    Returns True when a background ``git gc`` was started.
    """
    git_dir = repo.path
    commit = repo[oid]
    added = loose_size(git_dir, oid) + loose_size(git_dir, commit.tree_id)
    parent_tree = commit.parents[0].tree if commit.parents else None
    for delta in repo.diff(parent_tree, commit.tree).deltas if parent_tree is not None else []:
        added += loose_size(git_dir, delta.new_file.id)
    return account(git_dir, added)


def account(git_dir: StrPath, added: int) -> bool:
    """Add ``added`` loose bytes to the running count; past the threshold, start a packing."""
    state = os.path.join(git_dir, STATE)
    try:
        debt = int(read_text(state))
    except (OSError, ValueError):
        debt = 0
    debt += added
    started = False
    if debt >= settings.byte_count("CTX_PACK_THRESHOLD"):
        started = start_packing(os.path.dirname(os.path.normpath(git_dir)))
        if started:
            debt = 0
    make_dir(os.path.dirname(state))
    try:
        # replaced whole (a count cut short would read as a smaller one), never fsynced:
        # every write takes this path, and a count lost to a crash only delays a packing;
        # read only under the context lock
        atomic_write(state, str(debt).encode(), durable=False, unlink_first=True)
    except StoreError:  # .git/ctx is a link, never written through: the count goes unkept
        pass
    return started


# Each version of a store file is a new blob of the whole file, so a packing's cost is
# the delta search among the new blobs. Trying one neighbour (pack.window=1; git's default
# is 10; git sorts objects by path and size, so a version's neighbour is mostly another
# version of the same store file) found deltas as small:
# at 10,000 entries, 40 writes packed in well under half the CPU, the pack the same size,
# history, log and diff as fast (bench/build.py measures it).
PACK_WINDOW = "pack.window=1"


# A write's packing packs only the loose objects, into one more pack (``git repack -d -l``:
# the objects of its few writes, a delta chain among themselves), and a whole ``git gc``
# once ``PACKS`` packs are there: it puts them together, every version deltified against
# its neighbours, and expires what git expires. A whole gc every time repacked the entire
# history for a few new blobs (tests/git/test_git_commits.py:
# test_packings_add_a_pack_each_until_a_whole_gc_joins_them).
PACKS = 8


def pack_count(git_dir: StrPath) -> int:
    """How many packs the repository holds (``objects/pack/*.pack``)."""
    try:
        return sum(name.endswith(".pack") for name in os.listdir(os.path.join(git_dir, "objects", "pack")))
    except OSError:
        return 0


def start_packing(root: StrPath) -> bool:
    """A write's packing, detached: the loose objects into one more pack, or a whole
    ``git gc`` once ``PACKS`` packs are there (``start_gc``'s terms)."""
    if pack_count(os.path.join(root, ".git")) >= PACKS:
        return start_gc(root)
    return _spawn(root, ["-c", PACK_WINDOW, "repack", "-d", "-l", "-q"])


def start_gc(root: StrPath) -> bool:
    """Start ``git gc --quiet`` detached in ``root`` (a session of its own, its streams on
    /dev/null); False when git is missing or cannot be started (the count stays: the next
    write tries again). Spawned directly, not through ``subprocess``, whose imports a write
    that packs would pay (tests/git/test_write_cost.py); it inherits none of ctx's files,
    which Python opens non-inheritable (the same test)."""
    return _spawn(root, ["-c", PACK_WINDOW, "gc", "--quiet"])


def _spawn(root: StrPath, args: list[str]) -> bool:
    from ctxgit.plumbing.gitcommit import program
    from ctxgit.plumbing.gitenv import clean_git_env
    from ctxgit.plumbing.spawn import detached
    git = program()
    if git is None:
        return False
    try:
        detached([git, "-C", os.fspath(root), *args], clean_git_env())
    except OSError:
        return False
    return True
