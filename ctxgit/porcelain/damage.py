"""What ``ctx doctor`` finds damaged besides what the store files' own reading refuses:
links in the root, summaries from the future, temporaries of unfinished writes, a
store file naming a key twice at any depth, timestamps from the future, and what
``git fsck`` would find (an object of main's history missing, an index that cannot
be read). Each finding is ``(problem, kind)``: one line, and a kind doctor matches
repairs by. Only the temporaries are repairable (``doctor`` sweeps them under the lock).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ctx.display import name as shown
from ctx.model import STORES, ts_seconds
from ctx.storage.files import TMP_SUFFIX, is_link, temporary_name
from ctx.summaries import from_the_future, list_summaries
from ctxgit.gitfiles.layout import MANAGED_FILES

FUTURE_SECONDS = 86400  # a timestamp more than a day ahead was not made by a clock of this world
TIME_FIELDS = ("created", "timestamp", "status_timestamp")
Found = tuple[str, str]


def links(root: Path) -> list[Found]:
    """Every symbolic link where the root holds its files: ctx never follows or commits one."""
    places = [name for name in MANAGED_FILES]
    for folder in ("memory", "sessions"):
        try:
            places += [f"{folder}/{e.name}" for e in os.scandir(root / folder)]
        except OSError:
            continue
    return [(f"{shown(rel)} is a symbolic link: ctx never follows or commits it; put the file itself "
             "back (or remove the link)", f"link:{rel}")
            for rel in places if is_link(root / rel)]


def future_summaries(root: Path) -> list[Found]:
    return [(f"{shown(s.relpath)} is named for a date after tomorrow: listed, but never taken as the "
             "newest summary; rename it for the day it was written", f"future-summary:{s.name}")
            for s in from_the_future(list_summaries(root))]


def temporaries(root: Path) -> list[Found]:
    """Temporary files an unfinished write left in memory/ (a write holds one only under the
    context lock, for milliseconds)."""
    try:
        names = sorted(e.name for e in os.scandir(root / "memory")
                       if e.name.endswith(TMP_SUFFIX) and temporary_name(e.name))
    except OSError:
        return []
    if not names:
        return []
    return [(f"memory/ holds {len(names)} temporary file{'s' if len(names) > 1 else ''} of unfinished "
             f"writes ({', '.join(map(shown, names[:3]))}{' ...' if len(names) > 3 else ''}); the next write or "
             "`ctx doctor` removes them", "temporaries")]


def store_damage(root: Path) -> list[Found]:
    """Keys written twice at any depth of a store file, and timestamps from the future."""
    from ctx.jsoncodec import loads
    found: list[Found] = []
    limit = time.time() + FUTURE_SECONDS
    for name in STORES:
        path = root / "memory" / f"{name}.json"
        try:
            raw = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # (a file that cannot be read is reported by its reading)
        doubled: list[str] = []

        def pairs(items: list, doubled: list[str] = doubled) -> dict:
            made = dict(items)
            if len(made) != len(items) and not doubled:
                seen: set = set()
                for k, _ in items:
                    if k in seen:
                        doubled.append(k)
                        break
                    seen.add(k)
            return made
        try:
            data = loads(raw, object_pairs_hook=pairs)
        except (ValueError, RecursionError):
            continue
        if doubled:
            found.append((f"memory/{name}.json names the key '{shown(doubled[0])}' twice in one object: JSON "
                          "keeps only the last, and a write would drop the other; remove one by hand",
                          f"twice:{name}"))
        entries = data.get("entries") if isinstance(data, dict) else None
        if not isinstance(entries, dict):
            continue
        ahead = {key: field for key, entry in entries.items() if isinstance(entry, dict)
                 for field in reversed(TIME_FIELDS) if isinstance(entry.get(field), str)
                 and ts_seconds(entry[field]) > limit}  # (each key once, its first such field)
        if ahead:
            key, field = next(iter(ahead.items()))
            more = f" (and {len(ahead) - 1} more)" if len(ahead) > 1 else ""
            found.append((f"memory/{name}.json: entry '{shown(key)}'{more} has its {field} more than a day "
                          f"in the future ({shown(entries[key][field])}): it would win every later merge; set "
                          "it right by hand", f"future:{name}"))
    return found


def index_damage(repo) -> list[Found]:
    """The index as git would read it from disk: empty or garbled, every git command fails.
    Read by git where it is on PATH (``gitindex.tracked``: every form git writes, a split
    index too: tests/git/test_git_settings.py); a split one without git is named as such."""
    from ctx.errors import GitError
    from ctxgit.plumbing import gitcommit, gitindex
    from ctxgit.plumbing.repo import refuse_split_index
    found: list[Found] = []
    index = Path(repo.path) / "index"
    try:
        size = index.stat().st_size
    except FileNotFoundError:
        size = None
    if size == 0:
        found.append((".git/index is empty: git cannot read it; `git reset` (in the context root) "
                      "makes it again from main", "index"))
    elif size is not None:
        try:
            if gitcommit.program() is None:
                refuse_split_index(repo, "ctx cannot check it")
        except GitError as exc:
            return [(str(exc), "index")]
        try:
            gitindex.tracked(repo)
        except GitError as exc:
            found.append((f".git/index cannot be read ({_one_line(exc)}): `git reset` (in the context "
                          "root) makes it again from main", "index"))
    return found


def history_damage(repo) -> list[Found]:
    """What ``git fsck`` would find in main's history: its commits and trees walked to
    every blob (each object looked up, blobs never read whole)."""
    import pygit2
    found: list[Found] = []
    try:
        if repo.head_is_unborn:
            return found
        start = repo.head.target
    except pygit2.GitError as exc:
        return found + [(f"HEAD cannot be read ({_one_line(exc)})", "history")]
    missing = _missing_objects(repo, start)
    if missing:
        what, oid = missing
        found.append((f"the history is damaged: {what} {oid} is missing from .git/objects; `ctx history` "
                      "and sync will fail (restore it from a clone: `git fetch` it from a remote)", "history"))
    return found


def _missing_objects(repo, start) -> tuple[str, str] | None:
    """The first object of main's history that is not in the repository, as (kind, id)."""
    import pygit2
    seen_trees: set = set()
    commits = [start]
    seen_commits: set = set()
    odb = repo.odb
    while commits:
        oid = commits.pop()
        if oid in seen_commits:
            continue
        seen_commits.add(oid)
        try:
            commit = repo[oid]
        except (KeyError, ValueError, pygit2.GitError):
            return "commit", str(oid)
        if not isinstance(commit, pygit2.Commit):
            return "commit", str(oid)
        commits += list(commit.parent_ids)
        trees = [commit.tree_id]
        while trees:
            tree_id = trees.pop()
            if tree_id in seen_trees:
                continue
            seen_trees.add(tree_id)
            try:
                tree = repo[tree_id]
            except (KeyError, ValueError, pygit2.GitError):
                return "tree", str(tree_id)
            for item in tree:
                if item.type_str == "tree":
                    trees.append(item.id)
                elif item.type_str == "blob" and item.id not in odb:
                    return "blob", str(item.id)
    return None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:160]


def findings(root: Path, repo) -> list[Found]:
    """Everything above; ``repo`` None: no repository to look into."""
    found = links(root) + future_summaries(root) + temporaries(root) + store_damage(root)
    if repo is not None:
        found += history_damage(repo)
    return found


GIT_DAMAGE = frozenset(("index", "history"))  # kinds with which no git operation can be trusted
