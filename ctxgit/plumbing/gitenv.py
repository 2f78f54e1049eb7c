"""The environment every git process ctx starts gets: the caller's, without what
would point git at another repository. The context's repository is shielded
from a GIT_DIR an agent's shell happens to export."""

from __future__ import annotations

import os

# what would point git at another repository, index or object store; the rest of
# the operator's git environment (GIT_SSH_COMMAND, GIT_ASKPASS, GIT_CONFIG_*...) is theirs
REDIRECTING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
               "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
               "GIT_CEILING_DIRECTORIES", "GIT_PREFIX", "GIT_QUARANTINE_PATH")


def clean_git_env() -> dict[str, str]:
    """The caller's environment without the variables that would redirect git."""
    return {k: v for k, v in os.environ.items() if k not in REDIRECTING}
