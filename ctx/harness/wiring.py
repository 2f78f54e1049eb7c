"""``ctx wire TARGET [--mcp]`` (spec §5.3, §13.6), made from the harness's module:
``plan`` reads each file the harness's wiring changes and computes what ctx would write
(shown as a unified diff); ``apply`` writes exactly that, after reading each file again.
Everything else in a file is kept, an existing file is backed up (``FILE.ctx-backup``)
before it changes, and applying twice changes nothing.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctx import settings
from ctx.errors import InvalidArgument
from ctx.harness.base import Wiring, this_ctx
from ctx.harness.edit import read
from ctx.harness.registry import MCP_TARGETS, harness


@dataclass
class FileChange:
    """One file of a wiring: its text before (None: absent) and after."""

    path: Path
    before: str | None
    after: str
    mode: int = 0o644
    backup: Path | None = None
    applied: bool = False

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        if not self.changed:
            return ""
        old = (self.before or "").splitlines(keepends=True)
        new = self.after.splitlines(keepends=True)
        lines = difflib.unified_diff(old, new, "/dev/null" if self.before is None else str(self.path),
                                     str(self.path))
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                       for line in lines)

    def as_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "exists": self.before is not None, "changed": self.changed,
                "applied": self.applied, "backup": str(self.backup) if self.backup else None,
                "diff": self.diff()}


@dataclass
class WirePlan:
    """What wiring one target changes: one file or more (Gemini CLI: its hook and its pointer)."""

    target: str
    files: list[FileChange]
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return any(f.changed for f in self.files)

    @property
    def applied(self) -> bool:
        return any(f.applied for f in self.files)

    @property
    def paths(self) -> str:
        return ", ".join(str(f.path) for f in self.files)

    def diff(self) -> str:
        return "".join(f.diff() for f in self.files)

    def as_json(self) -> dict[str, Any]:
        return {"target": self.target, "changed": self.changed, "applied": self.applied,
                "files": [f.as_json() for f in self.files], "notes": self.notes}


def agent_name(target: str, agent: str | None) -> str:
    """--agent, else CTX_AUTHOR, else the harness's own default; refused when none."""
    name = (agent or settings.author() or "").strip() or harness(target).agent
    if not name:
        raise InvalidArgument("the pointer names the agent: give --agent NAME or set CTX_AUTHOR")
    from ctx.model import validate_author
    return validate_author(name, "--agent") or name  # (the name every session writes as: refused as CTX_AUTHOR is)


def plan(target: str, root: Path, *, agent: str | None = None, project: bool = False,
         only_under: Path | None = None, mcp: bool = False, trust: bool = False) -> WirePlan:
    """What wiring ``target`` (its MCP side with ``mcp``) would change; reads only."""
    found = harness(target)
    if mcp and not found.has_mcp:
        raise InvalidArgument(f"{target} has no MCP side ctx can wire; --mcp takes {', '.join(MCP_TARGETS)}")
    if mcp and only_under is not None:
        raise InvalidArgument("--only-under is for a start hook, not --mcp")
    if trust and not (mcp and target == "gemini"):
        raise InvalidArgument("--trust is for gemini --mcp: Gemini CLI's \"trust\": true")
    wiring = Wiring(root, agent_name(target, agent), this_ctx(), project, only_under, trust)
    edits, notes = found.mcp(wiring) if mcp else found.start(wiring)
    if not mcp and found.failure_event:
        notes = notes + [f"its {found.failure_event} hook gives a failing command the entries that answer it: "
                         "off with `ctx config recall-on-failure false`; what reached which session is noted in "
                         "`ctx log --shown`: off with `ctx config shown-log false`"]
    files = []
    for edit in edits:
        before = read(edit.path)
        after, said = edit.change(before)
        files.append(FileChange(edit.path, before, after, edit.mode))
        notes = notes + said
    return WirePlan(target, files, notes)


def _backup_path(path: Path) -> Path:
    candidate = path.with_name(path.name + ".ctx-backup")
    n = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.ctx-backup.{n}")
        n += 1
    return candidate


def apply(wire: WirePlan) -> WirePlan:
    """Write the plan: only if every file is still as planned; a backup of each first."""
    changes = [f for f in wire.files if f.changed]
    for change in changes:
        if read(change.path) != change.before:
            raise InvalidArgument(f"{change.path} changed while ctx was reading it; run again")
    for change in changes:
        _write(change)
    return wire


def _write(change: FileChange) -> None:
    from ctx.storage.files import atomic_write
    path = change.path
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = change.mode
    if change.before is not None:
        mode = path.stat().st_mode & 0o7777
        change.backup = _backup_path(path)
        atomic_write(change.backup.parent.resolve() / change.backup.name, path.read_bytes(), mode=mode)
    # the harness's folder may be a link (dotfiles): the file goes where it leads
    atomic_write(path.parent.resolve() / path.name, change.after.encode("utf-8"), mode=mode)
    change.applied = True
