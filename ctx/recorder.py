"""What the write path tells the version-control layer: the ``Recorder`` protocol.

``Context.transact`` calls, under the context lock: ``prepare()`` before it
reads (settle what changed on disk outside ctx), ``intend(change, path,
identity)`` just before each file of the write takes its name (so that a write
killed before its commit is committed later as its own), ``record(change)`` after
its atomic write (commit it), and ``settle(subject, operation)`` when no
write follows (commit what ``prepare`` repaired). ``warnings`` collects what
the caller should show besides the result. The core knows only this
protocol; ``ctxgit.recorder.GitRecorder`` implements it with git, and
``NullRecorder`` (``CTX_NO_GIT=1``, and core tests) records nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from typing import Protocol

    from ctx.changes import Change
    from ctx.storage.files import StrPath

    class Recorder(Protocol):
        """Everything the core and the commands call on a recorder."""

        warnings: list[str]

        def prepare(self) -> None: ...

        def intend(self, change: Change, path: str, identity: tuple) -> None: ...

        def record(self, change: Change) -> None: ...

        def settle(self, subject: str = "init: repository", operation: str = "init") -> None: ...


class NullRecorder:
    """Records nothing: store files only (``CTX_NO_GIT=1``)."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    @classmethod
    def for_root(cls, root: StrPath) -> NullRecorder:
        return cls()

    def prepare(self) -> None:
        return None

    def intend(self, change: Change, path: str, identity: tuple) -> None:
        return None

    def record(self, change: Change) -> None:
        return None

    def settle(self, subject: str = "init: repository", operation: str = "init") -> None:
        return None
