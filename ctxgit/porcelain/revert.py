"""Undo one commit's change to the stores, as a new commit (``ctx revert``).

Mark, don't rewrite: the reverted commit stays in history and the revert is
one more write, through the same write path as every other. An entry that a
later commit changed again is not silently overwritten: the revert is refused.
"""

from __future__ import annotations

from ctx.changes import Edit
from ctx.context import Context
from ctx.errors import Conflict, InvalidArgument
from ctx.model import STORES
from ctx.storage.files import StoreFile
from ctxgit.porcelain.commits import commit_info, entries_at, require_repo, resolve_rev


def revert(ctx: Context, rev: str) -> tuple[str, list[Edit]]:
    """Revert ``rev``; returns its short id and the edits the new commit made."""
    repo = require_repo(ctx.root)
    commit = resolve_rev(repo, rev)
    parent = commit.parents[0] if commit.parents else None
    plan: list[tuple[str, str, dict | None, dict | None]] = []
    for store in STORES:
        old, new = entries_at(repo, parent, store), entries_at(repo, commit, store)
        for key in list(dict.fromkeys(list(new) + list(old))):
            if old.get(key) != new.get(key):
                plan.append((store, key, new.get(key), old.get(key)))
    info = commit_info(commit)
    if not plan:
        raise InvalidArgument(f"commit {info.short} changed no entries; nothing to revert")

    def mutate(files: dict[str, StoreFile]) -> list[Edit]:
        later = [f"{s}/{k}" for s, k, was, _ in plan if files[s].entries.get(k) != was]
        if later:
            raise Conflict(f"cannot revert {info.short}: a later change touched "
                           f"{', '.join(later[:5])}{' …' if len(later) > 5 else ''}; "
                           "change those entries by hand instead")
        edits = []
        for store, key, was, target in plan:
            entries = files[store].entries
            if target is None:
                entries.pop(key, None)
            else:
                entries[key] = target
            edits.append(Edit(store, key, was, target))
        return edits

    stores = list(dict.fromkeys(s for s, *_ in plan))
    edits = ctx.transact("revert", stores, mutate, subject=f"revert {info.short}: {info.subject}",
                         trailers=[("Ctx-Revert-Of", info.id)])
    return info.short, edits
