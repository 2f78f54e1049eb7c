"""The core's ``Context`` as the front door makes it: its state folder (the read index,
the machine's settings) where the git layer keeps it (``ctxgit.gitfiles.layout.state_dir``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctx.context import Context as CoreContext
from ctxgit.gitfiles.layout import state_dir


class Context(CoreContext):
    """``ctx.context.Context`` with ``state_of`` given as ``ctx.cli.run.Run.context`` gives it."""

    def __init__(self, root: Path | None = None, author: str | None = None, **options: Any) -> None:
        options.setdefault("state_of", state_dir)
        super().__init__(root, author, **options)


def index_file(root: Path) -> Path:
    """The read index file of the context root ``root``."""
    from ctx.storage.index import index_path
    return Path(index_path(state_dir(root)))
