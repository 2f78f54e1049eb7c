"""Three-way merge of two commits' trees, file by file, for ``ctx sync``/``pull``.

Store files go through the entry-level merge (``ctx/entrymerge.py``). Session
summaries from both sides are all kept: two different files under one name
keep the name for one (the smaller blob id, so both machines agree) and give
the other the next free suffix of §7's naming. Other text files (RULES.md,
.gitignore) get a line-based merge; a real conflict keeps git-style markers
in the file and is reported, never resolved silently.

A remote is data, not code: a symlink or a non-regular file where a store
file or a summary belongs is refused, and the lock file or temporary files
a remote carries are never taken.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pygit2
from pygit2.enums import FileMode

from ctx.errors import Conflict
from ctx.summaries import SUMMARY_NAME, suffix_sequence
from hooks.unsafe_paths import forbidden

from ctx.entrymerge import merge_store_bytes

REGULAR = (FileMode.BLOB, FileMode.BLOB_EXECUTABLE)


@dataclass
class TreeMerge:
    files: dict[str, bytes]                 # the merged tree: path -> content
    value_conflicts: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    text_conflicts: list[str] = field(default_factory=list)


def flatten(repo: pygit2.Repository, tree: pygit2.Tree | None, side: str,
            blobs: dict | None = None) -> dict[str, bytes]:
    """Every file of a tree by path; refuses links and special files. ``blobs``: contents
    already read, by id (a merge reads each side's big store files once)."""
    blobs = {} if blobs is None else blobs
    out: dict[str, bytes] = {}
    if tree is None:
        return out
    stack = [("", tree)]
    while stack:
        prefix, current = stack.pop()
        for item in current:
            path = prefix + item.name
            if item.filemode == FileMode.TREE:
                stack.append((path + "/", repo[item.id]))
                continue
            if item.filemode not in REGULAR:
                raise Conflict(f"{path} from {side} is not a regular file (mode {item.filemode:o}); "
                               "ctx refuses links and special files from a remote")
            if forbidden(path):
                continue
            if item.id not in blobs:
                blobs[item.id] = repo[item.id].data
            out[path] = blobs[item.id]
    return out


def _is_store(path: str) -> bool:
    return path.startswith("memory/") and path.endswith(".json") and path.count("/") == 1


def _line_merge(repo: pygit2.Repository, path: str, base: bytes | None, ours: bytes,
                theirs: bytes) -> tuple[bytes, bool]:
    """libgit2's line-based merge of one file; True when it kept conflict markers."""
    def entry(data: bytes | None):
        if data is None:
            return None
        return pygit2.IndexEntry(path, repo.create_blob(data), FileMode.BLOB)
    result = repo.merge_file_from_index(entry(base), entry(ours), entry(theirs))
    content = result.contents if isinstance(result.contents, bytes) else result.contents.encode("utf-8")
    return content, not result.automergeable


def _union_lines(ours: bytes, theirs: bytes) -> bytes:
    lines = ours.decode("utf-8", "replace").splitlines()
    for line in theirs.decode("utf-8", "replace").splitlines():
        if line not in lines:
            lines.append(line)
    return ("\n".join(lines) + "\n").encode("utf-8")


def _next_name(path: str, taken: set[str]) -> str:
    """The first free summary name of the same day after ``path`` in §7's order."""
    base = path.rsplit("/", 1)[-1]
    date = base[:10]
    after = False
    for suffix in suffix_sequence():
        candidate = f"{date}{suffix}_session.md"
        if candidate == base:
            after = True
        elif after and f"sessions/{candidate}" not in taken:
            return f"sessions/{candidate}"


def merge_trees(repo: pygit2.Repository, base: pygit2.Tree | None, ours: pygit2.Tree,
                theirs: pygit2.Tree, blobs: dict | None = None) -> TreeMerge:
    blobs = {} if blobs is None else blobs
    b = flatten(repo, base, "the ancestor", blobs)
    o = flatten(repo, ours, "here", blobs)
    t = flatten(repo, theirs, "the remote", blobs)
    result = TreeMerge(files={})
    clashes: list[tuple[str, bytes, bytes]] = []
    for path in sorted(set(b) | set(o) | set(t)):
        bv, ov, tv = b.get(path), o.get(path), t.get(path)
        if _is_store(path):
            merged, conflicts = merge_store_bytes(bv, ov, tv, path)
            result.value_conflicts += [f"{path[7:-5]}/{k}" for k in conflicts]
            if merged is not None:
                result.files[path] = merged
            continue
        if ov == tv or tv == bv:
            chosen = ov
        elif ov == bv:
            chosen = tv
        elif ov is None or tv is None:
            chosen = ov if ov is not None else tv  # deleted on one side, changed on the other
        elif path.startswith("sessions/") and SUMMARY_NAME.fullmatch(path[9:]):
            clashes.append((path, ov, tv))
            continue
        elif path == ".gitignore":
            chosen = _union_lines(ov, tv)
        else:
            chosen, conflicted = _line_merge(repo, path, bv, ov, tv)
            if conflicted:
                result.text_conflicts.append(path)
        if chosen is not None:
            result.files[path] = chosen
    for path, ov, tv in clashes:
        keep, move = sorted((ov, tv), key=lambda data: str(pygit2.hash(data)))
        result.files[path] = keep
        new_path = _next_name(path, set(result.files) | set(o) | set(t))
        result.files[new_path] = move
        result.renamed.append((path, new_path))
    return result


def build_tree(repo: pygit2.Repository, files: dict[str, bytes]) -> pygit2.Oid:
    """Write a tree holding exactly ``files``."""
    nested: dict = {}
    for path, data in files.items():
        node = nested
        parts = path.split("/")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = data

    def write(node: dict) -> pygit2.Oid:
        builder = repo.TreeBuilder()
        for name, value in sorted(node.items()):
            if isinstance(value, dict):
                builder.insert(name, write(value), FileMode.TREE)
            else:
                builder.insert(name, repo.create_blob(value), FileMode.BLOB)
        return builder.write()
    return write(nested)
