"""Typed errors of the ctx core and git layer.

The core and the git layer raise these; only the front door (``ctx/cli/run.py``,
with ``ctx/cli/exits.py``) turns them into a one-line
message and an exit status (see ``ExitStatus`` there), in one place.
"""

from __future__ import annotations


class CtxError(Exception):
    """Base of every error ctx reports to its caller."""


class NotFound(CtxError):
    """A key, store entry, revision or summary that does not exist (§4)."""


class InvalidArgument(CtxError):
    """An argument the operation cannot take: a bad key, basis, time…"""


class StoreError(CtxError):
    """A store file ctx must not write: not JSON, a wrong version, a link."""


class CredentialRefused(CtxError):
    """A value, derivation or note that looks like a credential (§11)."""

    def __init__(self, message: str, findings: list | None = None) -> None:
        super().__init__(message)
        self.findings = findings or []


class LockTimeout(CtxError):
    """The context lock (memory/.lock) was held by another writer too long."""


class ContextRootError(CtxError):
    """The context root cannot be used: a file, unreadable, not writable."""


class GitError(CtxError):
    """The context's repository refused an operation."""


class Conflict(CtxError):
    """A change that cannot be applied cleanly (a revert over a later change)."""
