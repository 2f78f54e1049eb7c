"""What a pull brought besides entries, said aloud; and a weaker protection, refused.

A sync that only said "received 1 commit" let a remote rewrite RULES.md, empty
every store or turn ``enforce-stores`` off unseen. ``Arrived`` is the difference
between this side's tree before a pull and after it (fast-forward and merge
alike): RULES.md changed (by the received commits' authors that changed it),
entries deleted per store, config.json keys changed (old -> new), summaries
added. ``refuse_weaker`` runs before anything is taken in: a received commit
that turns a protective key of config.json off (``config.PROTECTIVE``) while
this side has it on is refused whole unless the operator accepts it on purpose
(``ctx sync --accept-weaker``). ``require-signed`` is kept per machine
(``machine.json``, never committed): no remote can change it.
(tests/reliability/test_sync_announces.py holds all of this.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pygit2

from ctx.display import excerpt
from ctx.errors import Conflict
from ctx.features.config import CONFIG_NAME, KEYS, PROTECTIVE
from ctx.model import STORES
from ctx.summaries import is_summary_name

RULES = "RULES.md"
SESSIONS = "sessions/"


@dataclass
class Arrived:
    rules_by: list[str] = field(default_factory=list)  # authors of received commits that changed RULES.md
    rules_changed: bool = False
    deleted: dict[str, int] = field(default_factory=dict)  # store -> entries the pull deleted
    config: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # key -> (old, new); None: unset
    summaries: list[str] = field(default_factory=list)  # summary files added

    def add(self, later: Arrived) -> Arrived:
        """This pull's and a later one's (a sync that pulled again), as one."""
        config = dict(self.config)
        for key, (old, new) in later.config.items():
            config[key] = (config[key][0] if key in config else old, new)
        deleted = dict(self.deleted)
        for store, n in later.deleted.items():
            deleted[store] = deleted.get(store, 0) + n
        return Arrived(list(dict.fromkeys(self.rules_by + later.rules_by)),
                       self.rules_changed or later.rules_changed, deleted,
                       {k: v for k, v in config.items() if v[0] != v[1]},
                       list(dict.fromkeys(self.summaries + later.summaries)))

    def lines(self) -> list[str]:
        """One line per kind of change; what came from the remote (authors, keys, values,
        names) each as an excerpt: one line, bounded (``ctx.display.excerpt``)."""
        out = []
        if self.rules_changed:
            out.append("RULES.md changed by " + (", ".join(_field(a) for a in self.rules_by) or "a merge"))
        if self.deleted:
            out.append("entries deleted: " + ", ".join(f"{n} in {s}" for s, n in self.deleted.items()))
        for key, (old, new) in self.config.items():
            out.append(f"config.json: {_field(key)} {_field(_shown(old))} -> {_field(_shown(new))}")
        if self.summaries:
            out.append("summaries added: " + ", ".join(_field(p) for p in self.summaries))
        return out

    def as_json(self) -> dict[str, Any]:
        return {"rules": {"changed": self.rules_changed, "by": self.rules_by}, "deleted": self.deleted,
                "config": [{"key": k, "old": o, "new": n} for k, (o, n) in self.config.items()],
                "summaries": self.summaries}


FIELD = 80  # characters of a remote's author, key, value or file name in a report line


def _field(text: str) -> str:
    return excerpt(text, FIELD)


def _shown(value: Any) -> str:
    return "(unset)" if value is None else json.dumps(value)


# --- reading trees -----------------------------------------------------------------------------

def _blob_id(tree: pygit2.Tree | None, path: str) -> pygit2.Oid | None:
    if tree is None:
        return None
    try:
        return tree[path].id
    except KeyError:
        return None


def _json(repo: pygit2.Repository, oid: pygit2.Oid | None) -> dict:
    if oid is None:
        return {}
    try:
        data = json.loads(repo[oid].peel(pygit2.Blob).data)
    except (ValueError, UnicodeDecodeError, pygit2.GitError, KeyError):
        return {}
    return data if isinstance(data, dict) else {}


def _own_keys(repo: pygit2.Repository, oid: pygit2.Oid) -> list[str]:
    """The entry keys of this side's store file: from ctx's layout when it has it (a parse
    of a big store is the slow part of a sync), else parsed."""
    from ctx.storage.textlayout import layout_keys
    try:
        found = layout_keys(repo[oid].peel(pygit2.Blob).data)
    except (KeyError, pygit2.GitError):
        return []
    if found is not None:
        return found
    entries = _json(repo, oid).get("entries", {})
    return list(entries) if isinstance(entries, dict) else []


def _keys_parsed(repo: pygit2.Repository, oid: pygit2.Oid | None) -> set[str]:
    """The entry keys of a store file from the remote: parsed, never read by its layout."""
    entries = _json(repo, oid).get("entries", {})
    return set(entries) if isinstance(entries, dict) else set()


def _config(repo: pygit2.Repository, tree: pygit2.Tree | None) -> dict:
    return _json(repo, _blob_id(tree, CONFIG_NAME))


def _value(config: dict, key: str) -> Any:
    return config.get(key, KEYS[key].default)


def _received(repo: pygit2.Repository, theirs: pygit2.Oid, head: pygit2.Oid | None) -> list[pygit2.Commit]:
    """The commits ``theirs`` brings that ``head`` lacks, newest first."""
    walker = repo.walk(theirs, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
    if head is not None:
        walker.hide(head)
    return list(walker)


def _parent_tree(commit: pygit2.Commit) -> pygit2.Tree | None:
    return commit.parents[0].tree if commit.parents else None


# --- the report ---------------------------------------------------------------------------------

def what_arrived(repo: pygit2.Repository, before: pygit2.Tree | None, after: pygit2.Tree,
                 theirs: pygit2.Oid, head: pygit2.Oid | None,
                 known: Mapping[pygit2.Oid, list[str]] | None = None) -> Arrived:
    """The difference between this side's tree ``before`` a pull and ``after`` it; the
    authors of RULES.md's change from the commits ``theirs`` brought (``head``: this side's
    commit before, None when it had none). ``known``: store blobs' entry keys the guard
    learned already (``incoming.Received.keys``), so a big store is not read again."""
    known = known or {}
    found = Arrived()
    if _blob_id(before, RULES) != _blob_id(after, RULES) and before is not None:
        found.rules_changed = True
        for commit in _received(repo, theirs, head):
            if _blob_id(commit.tree, RULES) != _blob_id(_parent_tree(commit), RULES) and len(commit.parents) < 2:
                found.rules_by.append(commit.author.name)
        found.rules_by = list(dict.fromkeys(reversed(found.rules_by)))  # oldest first, once each
    for store in STORES:
        path = f"memory/{store}.json"
        old, new = _blob_id(before, path), _blob_id(after, path)
        if old is None or old == new:
            continue
        kept = set(known[new]) if new is not None and new in known else _keys_parsed(repo, new)
        gone = [k for k in (known[old] if old in known else _own_keys(repo, old)) if k not in kept]
        if gone:
            found.deleted[store] = len(gone)
    if _blob_id(before, CONFIG_NAME) != _blob_id(after, CONFIG_NAME):
        old_config, new_config = _config(repo, before), _config(repo, after)
        for key in dict.fromkeys(list(old_config) + list(new_config)):
            if old_config.get(key) != new_config.get(key):
                found.config[key] = (old_config.get(key), new_config.get(key))
    if before is not None:
        found.summaries = sorted(_summaries(after) - _summaries(before))
    return found


def _summaries(tree: pygit2.Tree) -> set[str]:
    try:
        sessions = tree["sessions"]
    except KeyError:
        return set()
    if sessions.filemode != pygit2.enums.FileMode.TREE:
        return set()
    return {SESSIONS + name for name in (entry.name for entry in sessions.peel(pygit2.Tree))
            if name and is_summary_name(name)}


# --- a weaker protection ---------------------------------------------------------------------------

ACCEPT = "--accept-weaker"


def refuse_weaker(repo: pygit2.Repository, theirs: pygit2.Oid, head: pygit2.Oid | None, label: str,
                  accept: bool = False) -> None:
    """Refuse (Conflict) ``theirs`` when taking it in would turn off a protective key this
    side has on: the remote's value is off and differs from the merge base's (the remote
    changed it; a fast-forward's base is this side), naming the received commit that turned
    it off and its author. ``accept``: the operator takes it on purpose."""
    if accept or head is None:
        return
    base = repo.merge_base(head, theirs)
    ours = _config(repo, repo[head].peel(pygit2.Commit).tree)
    tip = _config(repo, repo[theirs].peel(pygit2.Commit).tree)
    was = _config(repo, repo[base].peel(pygit2.Commit).tree) if base is not None else {}
    weaker = [k for k in PROTECTIVE if _value(ours, k) is True and _value(tip, k) is not True
              and _value(tip, k) != _value(was, k)]
    if not weaker:
        return
    key = weaker[0]
    culprit = repo[theirs].peel(pygit2.Commit)  # the tip, unless a received commit turned it off itself
    for commit in _received(repo, theirs, head):
        if _value(_config(repo, _parent_tree(commit)), key) is True and \
                _value(_config(repo, commit.tree), key) is not True:
            culprit = commit
            break
    raise Conflict(f"{label} commit {str(culprit.id)[:8]} by {_field(culprit.author.name)} turns {key} off "
                   f"({_shown(_value(ours, key))} here, {_shown(_value(tip, key))} there, in config.json): "
                   f"refused, nothing was taken in; the operator takes it on purpose with `ctx sync {ACCEPT}`")


def refuse_agent_accepting(author: str | None) -> None:
    """Only the operator takes a weaker protection: an agent (``CTX_AUTHOR`` set) may not."""
    if author:
        raise Conflict(f"{ACCEPT}: only the operator takes a weaker protection from a remote; "
                       f"an agent ({_field(author)}) may not: ask the operator")
