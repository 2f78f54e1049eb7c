"""Three-way merge of two commits' trees, file by file, for ``ctx sync``/``pull``.

Store files go through the entry-level merge (``ctx/entrymerge.py``). Session
summaries from both sides are all kept: two different files under one name
keep the name for one (the smaller blob id, so both machines agree) and give
the other the next free suffix of §7's naming. Other text files (RULES.md,
.gitignore) get a line-based merge; a real conflict keeps git-style markers
in the merged file and is reported (the merge then waits for a human: it is
never committed so, ``merging.py``). A text file both sides made on their
own (histories with no common ancestor: two contexts joined) has no base to
merge against: it is merged as a union of lines, in order, lines only one
side has all kept.

A remote is data, not code: what it brings passed ``incoming.check`` before
a merge starts; a link or a special file in any side's tree is refused
(``incoming.refuse_mode``), and the lock file or temporary files a remote
carries are never taken.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pygit2
from pygit2.enums import FileMode

from ctx.entrymerge import merge_store_sides
from ctx.summaries import is_summary_name, suffix_sequence
from ctxgit.sync.incoming import refuse_mode
from hooks.unsafe_paths import forbidden


@dataclass
class TreeMerge:
    files: dict[str, bytes]                 # the merged tree: path -> content
    value_conflicts: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    text_conflicts: list[str] = field(default_factory=list)
    stores: dict[str, dict] = field(default_factory=dict)  # store files merged entry by entry: parsed


def flatten(repo: pygit2.Repository, tree: pygit2.Tree | None, side: str,
            blobs: dict | None = None) -> dict[str, bytes]:
    """Every file of a tree by path; refuses links and special files. ``blobs``: contents
    already read, by id (a merge reads each side's big store files once)."""
    blobs = {} if blobs is None else blobs
    out: dict[str, bytes] = {}
    for path, oid in tree_ids(repo, tree, side).items():
        if oid not in blobs:
            blobs[oid] = repo[oid].peel(pygit2.Blob).data
        out[path] = blobs[oid]
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


def _union_in_order(ours: bytes, theirs: bytes) -> bytes:
    """Both sides' lines, in order: the lines they share once, where one side has lines
    the other lacks, ours first, then theirs."""
    from difflib import SequenceMatcher
    a = ours.decode("utf-8", "replace").splitlines()
    b = theirs.decode("utf-8", "replace").splitlines()
    out: list[str] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out += a[i1:i2]
        else:
            out += a[i1:i2] + [line for line in b[j1:j2] if line not in a[i1:i2]]
    return ("\n".join(out) + "\n").encode("utf-8")


def present(content: bytes | None) -> bytes:
    """A file's content where both sides have the file (the branch already made sure)."""
    assert content is not None
    return content


def _text(path: str) -> bool:
    return path.endswith((".md", ".txt")) or path in (".gitignore", ".gitattributes")


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
    raise AssertionError("suffix_sequence never ends")  # pragma: no cover


def tree_ids(repo: pygit2.Repository, tree: pygit2.Tree | None, side: str) -> dict[str, pygit2.Oid]:
    """Every file of a tree by path, as its blob id (nothing read); refuses links and
    special files, leaves out what a remote must never bring (``flatten`` without content)."""
    out: dict[str, pygit2.Oid] = {}
    if tree is None:
        return out
    stack = [("", tree)]
    while stack:
        prefix, current = stack.pop()
        for item in current:
            path = prefix + (item.name or "")
            if item.filemode == FileMode.TREE:
                stack.append((path + "/", repo[item.id].peel(pygit2.Tree)))
                continue
            refuse_mode(path, item.filemode, side)
            if not forbidden(path):
                out[path] = item.id
    return out


def merge_trees(repo: pygit2.Repository, base: pygit2.Tree | None, ours: pygit2.Tree,
                theirs: pygit2.Tree, blobs: dict | None = None,
                local: Mapping[str, tuple[bytes, dict | None]] | None = None,
                parsed_ahead: Mapping[pygit2.Oid, dict] | None = None) -> TreeMerge:
    """The three-way merge of two trees. Files are compared by blob id and read only
    where their content decides (a store file changed on both sides is read from all
    three). ``blobs``: contents already read, by id. ``local``: this side's files as
    read from disk (and parsed, for a store file), by path: taken for this side's blob
    when they hash to it, so neither read from git nor parsed again. ``parsed_ahead``: store
    files parsed already (``incoming.Received.parsed``), by blob id."""
    blobs = {} if blobs is None else blobs
    local = {} if local is None else local
    parsed: dict = dict(parsed_ahead or {})

    def content(oid: pygit2.Oid | None, path: str | None = None) -> bytes | None:
        if oid is None:
            return None
        if oid not in blobs:
            if path is not None and path in local and pygit2.hash(local[path][0]) == oid:
                blobs[oid] = local[path][0]
                if local[path][1] is not None:
                    parsed[oid] = local[path][1]
            else:
                blobs[oid] = repo[oid].peel(pygit2.Blob).data
        return blobs[oid]
    b = tree_ids(repo, base, "the ancestor")
    o = tree_ids(repo, ours, "here")
    t = tree_ids(repo, theirs, "the remote")
    result = TreeMerge(files={})
    clashes: list[tuple[str, bytes, bytes]] = []
    for path in sorted(set(b) | set(o) | set(t)):
        bi, oi, ti = b.get(path), o.get(path), t.get(path)
        if _is_store(path):
            if oi == ti or ti == bi:
                merged, conflicts = content(oi, path), list[str]()
            elif oi == bi:  # taken whole: read and its entries checked by incoming.check already
                merged, conflicts = content(ti), []
            else:
                raw = [content(bi), content(oi, path), content(ti)]
                sides = [(parsed.get(i) if i is not None else None) for i in (bi, oi, ti)]
                merged, conflicts, data = merge_store_sides(raw[0], raw[1], raw[2], path, sides)
                result.stores[path] = data
            result.value_conflicts += [f"{path[7:-5]}/{k}" for k in conflicts]
            if merged is not None:
                result.files[path] = merged
            continue
        if oi == ti or ti == bi:
            chosen = content(oi, path)
        elif oi == bi:
            chosen = content(ti)
        elif oi is None or ti is None:
            chosen = content(oi if oi is not None else ti)  # deleted on one side, changed on the other
        elif path.startswith("sessions/") and is_summary_name(path[9:]):
            clashes.append((path, present(content(oi)), present(content(ti))))
            continue
        elif path == ".gitignore":
            chosen = _union_lines(present(content(oi)), present(content(ti)))
        elif bi is None and _text(path):  # made on both sides on their own: no base to merge on
            chosen = _union_in_order(present(content(oi)), present(content(ti)))
        else:
            chosen, conflicted = _line_merge(repo, path, content(bi), present(content(oi)), present(content(ti)))
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
