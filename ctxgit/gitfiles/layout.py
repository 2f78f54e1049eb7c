"""Where ctx keeps things in a context root's repository: one home for each name.

The branch, the files ctx manages beside the stores, and every file of this
machine's own under ``.git/ctx/`` (never committed, never synced). Paths are
relative to ``.git``; ``path(root, NAME)`` makes one absolute. The functions take
a ``str`` or a ``Path`` and give a ``str``: a read reaches here, and no read imports
pathlib (tests/cli/test_fastcli.py: test_the_reads_load_neither_re_nor_pathlib).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import PathLike

BRANCH = "main"
BRANCH_REF = f"refs/heads/{BRANCH}"

# versioned files ctx manages beside memory/ and sessions/
MANAGED_FILES = ("RULES.md", ".gitignore", ".gitattributes", "config.json")


def holds(path: str) -> bool:
    """Whether a context's tree holds ``path`` (relative, with ``/``): a managed file, one of
    the three store files, or a Markdown file directly in ``sessions/`` (§7's summaries, and
    the notes §7 lets sit beside them). The one rule for what a write commits
    (``plumbing/repo.is_managed``) and what a remote may bring (``sync/incoming.py``): a
    file one machine commits is never one another refuses."""
    if path in MANAGED_FILES:
        return True
    top, _, name = path.partition("/")
    if not name or "/" in name or name.startswith("."):
        return False
    if top == "memory":
        from ctx.model import STORES
        return name.endswith(".json") and name[:-5] in STORES
    return top == "sessions" and name.endswith(".md")

# under .git/
ATTRIBUTES = "info/attributes"      # git's own, of this repository: ctx's line first (guard/install.py)
DIR = "ctx"
STATE = "ctx/state.json"            # the repository as ctx's last commit left it (plumbing/lastcommit.py)
COMMITTING = "ctx/committing"       # a commit under way (plumbing/lastcommit.py)
WRITING = "ctx/writing"             # a write's commit, recorded before its files take their names
LOOSE_BYTES = "ctx/loose-bytes"     # loose bytes written since the last pack
REMOTE_LOCK = "ctx/remote.lock"     # one fetch or push at a time
REMOTE_OP = "ctx/remote-op"         # the fetch or push under way (its lock files are ctx's)
AUTOSYNC_LOCK = "ctx/autosync.lock"  # one background push at a time
SYNC_LOG = "ctx/sync.log"           # what auto-sync did
SYNC_RECORD = "ctx/sync.json"       # how the last sync ended
MERGE = "ctx/merge.json"            # a merge that waits for a human
MACHINE = "ctx/machine.json"        # this machine's configuration keys (ctx/features/config.py's MACHINE_FILE)
GITCONFIG = "ctx/gitconfig"         # git's configuration as git read it, with what it was read from (gitconfig.py)
SINCE_LAG = "ctx/since-lag"         # writes since the since-log was brought up to HEAD
VIEW = "ctx/view"                   # where `ctx view` writes its page
VERIFIED = "ctx/verified"           # store blobs the arrival guard proved, by piece (sync/verified.py)
SHOWN = "ctx/shown.log"             # which entries reached which session (ctx/shown.py's LOG_NAME)
SESSIONS = "ctx/sessions.json"      # sessions a harness's hooks started here, and whether each was asked
#                                     for its handover (ctx/handover.py; ctx start --harness, ctx event stop)


def state_dir(root: str | PathLike[str]) -> str:
    """The folder the core keeps this machine's own state of ``root`` in (the read index,
    the machine's settings): what the front door hands ``Context`` as ``state_of``."""
    return path(root, DIR)


def path(root: str | PathLike[str], name: str) -> str:
    """``.git/NAME`` of the context root ``root``."""
    return os.path.join(root, ".git", name)


def tracking_ref(remote: str) -> str:
    """The remote-tracking ref of ``remote``'s main."""
    return f"refs/remotes/{remote}/{BRANCH}"
