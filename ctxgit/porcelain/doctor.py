"""``ctx doctor``: find what is out of order in a context, and repair what is safe.

Safe repairs: create the repository, add missing ``.gitignore`` lines, commit
files changed outside ctx, take a committed lock file out of the index, pack
loose objects. A store file that is not valid JSON is reported and left
exactly as it is; so are conflict markers in a text file (RULES.md, a
summary) and a merge that waits for a human.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ctx.context import Context
from ctx.display import name as shown_name
from ctx.display import visible
from ctx.errors import GitError, StoreError
from ctx.model import STORES
from ctx.storage.files import incomplete_message, is_link, read_store, sweep_temporaries
from ctx.storage.lock import context_lock
from ctxgit.gitfiles import waiting
from ctxgit.plumbing import gitindex, pack
from ctxgit.plumbing.locks import stale_locks
from ctxgit.plumbing.repo import clear_half_made, commit_paths, dirty_paths, half_made, open_repo, system_signature
from ctxgit.recorder import broken_store
from hooks.unsafe_paths import IGNORE_LINES, forbidden

LOOSE_WARN_BYTES = 64 * 1024 * 1024


@dataclass
class Finding:
    problem: str
    repaired: bool = False
    fixable: bool = True
    kind: str = ""

    def line(self) -> str:
        mark = "repaired" if self.repaired else ("needs attention" if not self.fixable else "repairable")
        # a problem quotes file names, keys, authors and messages from the work tree, a store
        # file or a remote: one line of visible text, whatever each part took care of
        return f"[{mark}] {visible(self.problem)}"


def loose_bytes(git_dir: Path) -> tuple[int, int]:
    """The count and total size of loose objects."""
    count = size = 0
    objects = git_dir / "objects"
    try:
        folders = [d for d in os.scandir(objects) if len(d.name) == 2]
    except FileNotFoundError:
        return 0, 0
    for folder in folders:
        for item in os.scandir(folder.path):
            count += 1
            size += item.stat().st_size
    return count, size


def _lock_findings(repo) -> list[Finding]:
    """git lock files in the root's repository and in local-path remotes: a lock a
    killed git left blocks every later update of its ref, so each is named."""
    places = [(Path(repo.path), ".git/")]
    for remote in repo.remotes:
        url = remote.url or ""
        if "://" not in url and Path(url).is_dir():
            git_dir = Path(url) / ".git" if (Path(url) / ".git").is_dir() else Path(url)
            places.append((git_dir, f"{git_dir}/"))
    findings = []
    for git_dir, shown in places:
        for name, age in stale_locks(git_dir):
            findings.append(Finding(f"lock file {shown_name(f'{shown}{name}')} ({_age(age)} old): a git command "
                                    "is using it, or one was interrupted; if none is running, remove it", fixable=False,
                                    kind=f"lock:{shown}{name}"))
    return findings


def _signing_findings(root: Path, repo) -> list[Finding]:
    """With ``require-signed`` on, the commits of the history that no allowed signer signed."""
    from ctxgit.guard.trust import history_problem, require_signed, untrusted_in_history
    try:
        if not require_signed(root):
            return []
    except StoreError as exc:
        return [Finding(str(exc), fixable=False, kind="machine-config")]
    found = untrusted_in_history(repo)
    return [Finding(history_problem(found), fixable=False, kind="unsigned")] if found else []


def _names(paths: list[str], shown: int = 20) -> str:
    """File names for one line: each visible and bounded, at most ``shown`` of them."""
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(shown_name(p) for p in paths[:shown]) + more


def _age(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds} s"
    return f"{seconds // 60} min" if seconds < 7200 else f"{seconds // 3600} h"


def examine(ctx: Context, repair: bool, git: bool = True) -> list[Finding]:
    """What is out of order; with ``repair``, what is safe is repaired. ``git=False``
    (``CTX_NO_GIT``): the store files only, the repository left alone."""
    root = ctx.root
    findings: list[Finding] = []
    if not root.is_dir():
        return [Finding(f"no context root at {root} (run `ctx init`)", fixable=False, kind="root")]
    for name in STORES:
        try:
            store = read_store(root, name)
        except StoreError as exc:
            findings.append(Finding(f"{exc}", fixable=False, kind=f"store:{name}"))
            continue
        if store.exists and store.data.get("type") != name:
            findings.append(Finding(f"memory/{name}.json says its type is {store.data.get('type')!r}: "
                                    "ctx will not write it", fixable=False, kind=f"type:{name}"))
        if store.exists and store.data.get("version") != "1":
            findings.append(Finding(f"memory/{name}.json has format version "
                                    f"{store.data.get('version')!r}: read-only to ctx", fixable=False,
                                    kind=f"version:{name}"))
        if store.incomplete:
            findings.append(Finding(incomplete_message(store), fixable=False, kind=f"fields:{name}"))
    from ctxgit.porcelain import damage
    if not git:
        return findings + [Finding(problem, fixable=kind == "temporaries", kind=kind)
                           for problem, kind in damage.findings(root, None)]
    try:
        repo = open_repo(root)
    except GitError:
        if not half_made(root):
            raise
        repo = None
        findings.append(Finding(f"{root}/.git is not a repository but one half made by an interrupted "
                                "first write; it holds nothing, and ctx makes it again", kind="repo"))
    else:
        if repo is None:
            findings.append(Finding("the context root has no repository", kind="repo"))
    hurt = damage.index_damage(repo) if repo is not None else []
    findings += [Finding(problem, fixable=False, kind=kind) for problem, kind in hurt]
    if repo is not None and not hurt:  # (with the index unreadable, every check below fails)
        text = (root / ".gitignore").read_text(encoding="utf-8") if (root / ".gitignore").exists() else ""
        missing = [line for line in IGNORE_LINES if line not in {x.strip() for x in text.splitlines()}]
        if missing:
            findings.append(Finding(f".gitignore lacks {', '.join(missing)}", kind="gitignore"))
        merge = waiting.read(root)
        if merge is not None:
            findings.append(Finding(f"a merge with {shown_name(merge.label)} is in progress: {merge.next_step()}",
                                    fixable=False, kind="merge"))
        for path, lines in waiting.files_with_markers(root).items():
            shown = ", ".join(str(n) for n in lines[:6]) + (" ..." if len(lines) > 6 else "")
            findings.append(Finding(f"{shown_name(path)} holds conflict markers (lines {shown}): keep what both sides "
                                    "meant and remove the marker lines" + (
                                        "" if merge is not None and path in merge.paths else
                                        ", then any ctx write commits it"),
                                    fixable=False, kind=f"markers:{path}"))
        held = set(merge.paths) if merge is not None else set()
        dirty = [p for p in dirty_paths(repo) if not broken_store(root, p) and p not in held
                 and not is_link(root / p)]  # (a link: named by damage.links, never committed)
        if dirty:
            findings.append(Finding(f"changed outside ctx and not committed: {_names(dirty)}", kind="dirty"))
        tracked = [p for p in gitindex.tracked(repo) if forbidden(p)]
        if tracked:
            findings.append(Finding(f"in the index but never to be committed: {_names(tracked)}",
                                    kind="tracked"))
        findings += _lock_findings(repo)
        findings += _signing_findings(root, repo)
        count, size = loose_bytes(Path(repo.path))
        if size > LOOSE_WARN_BYTES:
            findings.append(Finding(f"{count} loose objects take {size / 1e6:.0f} MB (packing shrinks them)",
                                    kind="loose"))
    findings += [Finding(problem, fixable=kind == "temporaries", kind=kind)
                 for problem, kind in damage.findings(root, repo)]
    if repair and any(f.fixable for f in findings) and not any(f.kind in damage.GIT_DAMAGE for f in findings):
        ctx.make_root()
        with context_lock(root):
            sweep_temporaries(root / "memory", older_than=0)  # (made only under this lock: none is live)
            clear_half_made(root)
            ctx.recorder.prepare()  # creates the repository, .gitignore lines, commits outside changes
            ctx.recorder.settle("doctor: repository repaired", "doctor")
            repo = open_repo(root)
            if repo is not None and any(forbidden(p) for p in gitindex.tracked(repo)):
                # commit_paths never stages a forbidden path and takes it out of the index
                commit_paths(repo, [], "doctor: stop tracking local state\n\nCtx-Operation: doctor\n",
                             system_signature(), untrack=True)
        remaining = {f.kind for f in examine(ctx, repair=False, git=git)}
        for finding in findings:
            finding.repaired = finding.fixable and finding.kind not in remaining
        if repo is not None and "loose" in remaining:
            started = pack.start_gc(root)
            for finding in findings:
                if finding.kind == "loose":
                    finding.repaired = started  # packing runs in the background
        for warning in ctx.warnings:
            findings.append(Finding(warning.removeprefix("warning: "), fixable=False, kind="warning"))
    return findings
