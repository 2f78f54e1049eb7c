"""Whom to trust: ``require-signed``, this machine's policy on commits that are not signed
by an allowed signer (``ctx config require-signed true``). A pull refuses to take such
commits in; ``ctx doctor`` names those already in the history. The verdicts themselves
(git's own rules for ssh and openpgp signatures) are ``ctxgit/plumbing/signing.py``'s."""

from __future__ import annotations

import os
from pathlib import Path

from ctx.display import name  # (an author a remote chose is shown as one visible line, bounded)
from ctx.errors import Conflict
from ctxgit.gitfiles import layout
from ctxgit.plumbing.signing import GOOD, verify_config, verify_many

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

SHOWN = 5  # commits named in a refusal or a doctor finding; the rest are counted


def untrusted_commits(repo: Any, commit_ids: Iterable[Any]) -> list[tuple[str, str, str]]:
    """The commits among ``commit_ids`` not signed by an allowed signer, in the order
    given: (commit id, "Author <email>", why)."""
    workdir = Path(repo.workdir) if repo.workdir else None
    settings = verify_config(repo.config, workdir)
    ids = [str(cid) for cid in commit_ids]
    out = []
    for cid, verdict in zip(ids, verify_many(repo, ids, settings, workdir), strict=True):
        if verdict.status != GOOD:
            author = repo[cid].author
            out.append((cid, f"{author.name} <{author.email}>", verdict.why()))
    return out


def incoming(repo: Any, theirs: Any, head: Any = None) -> list[str]:
    """The commits ``theirs`` reaches and ``head`` does not, newest first."""
    from pygit2.enums import SortMode
    walker = repo.walk(theirs, SortMode.TOPOLOGICAL | SortMode.TIME)
    if head is not None:
        walker.hide(head)
    return [str(c.id) for c in walker]


def _listed(found: list[tuple[str, str, str]]) -> str:
    shown = "; ".join(f"{cid[:8]} by {name(author)}: {why}" for cid, author, why in found[:SHOWN])
    return shown + (f"; and {len(found) - SHOWN} more" if len(found) > SHOWN else "")


def require_signed(root: Path) -> bool:
    """This machine's ``require-signed`` (``ctx config``)."""
    from ctx.features.config import get_value
    return bool(get_value(Path(root), "require-signed", layout.state_dir(Path(root))))


def refuse_untrusted(root: Path, repo: Any, theirs: Any, label: str = "the remote") -> None:
    """With ``require-signed`` on, refuse (``Conflict``: exit 4) to take in the commits
    ``theirs`` brings that this machine lacks when one of them is unsigned or not signed
    by an allowed signer. Call it after the fetch, before the fast-forward or merge."""
    if theirs is None or not require_signed(root):
        return
    head = None if repo.head_is_unborn else repo.head.target
    found = untrusted_commits(repo, incoming(repo, theirs, head))
    if found:
        raise Conflict(f"require-signed is on: {label} holds {len(found)} commit"
                       f"{'s' if len(found) != 1 else ''} not signed by an allowed signer, so nothing "
                       f"was taken in: {_listed(found)}. Trusting a signer is yours to decide "
                       "(gpg.ssh.allowedSignersFile, your gpg keyring); `ctx config require-signed false` "
                       "turns the check off")


_HISTORY: dict[tuple, list[tuple[str, str, str]]] = {}  # doctor looks twice when it repairs


def untrusted_in_history(repo: Any) -> list[tuple[str, str, str]]:
    """``ctx doctor``: every commit in HEAD's history not signed by an allowed signer."""
    if repo.head_is_unborn:
        return []
    settings = verify_config(repo.config, Path(repo.workdir) if repo.workdir else None)
    allowed = settings["allowed"]
    seen = os.stat(allowed).st_mtime_ns if allowed and os.path.isfile(allowed) else None
    key = (repo.path, str(repo.head.target), repr(sorted(settings.items())), seen)
    if key not in _HISTORY:
        _HISTORY[key] = untrusted_commits(repo, incoming(repo, repo.head.target))
    return _HISTORY[key]


def history_problem(found: list[tuple[str, str, str]]) -> str:
    return (f"require-signed is on, and {len(found)} commit{'s' if len(found) != 1 else ''} in the history "
            f"{'are' if len(found) != 1 else 'is'} not signed by an allowed signer: {_listed(found)}")
