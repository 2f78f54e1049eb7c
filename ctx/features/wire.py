"""Wiring a harness to ctx (spec §5.3, §13.6): a start hook, an instruction
file's pointer, or a launcher script.

Each target is one file. ``plan`` reads it and computes what ctx would
change (shown as a unified diff); ``apply`` writes exactly that, after
reading the file again: it keeps everything else in the file, makes a
backup (``FILE.ctx-backup``) before changing an existing file, and is
idempotent. ctx's part is identifiable, so it is replaced, never doubled:

- Markdown: one block between ``<!-- ctx:begin -->`` and ``<!-- ctx:end -->``;
- Claude Code's settings.json: one SessionStart hook whose command ends
  with the comment ``# ctx:session-start``;
- the launcher: a whole script marked ``# ctx:launcher``.

HOME and the current directory come from the environment.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctx import settings
from ctx.errors import InvalidArgument

TARGETS = ("claude-code", "codex", "agents-md", "gemini", "launcher")
BEGIN, END = "<!-- ctx:begin -->", "<!-- ctx:end -->"
HOOK_MARK = "# ctx:session-start"
LAUNCHER_MARK = "# ctx:launcher"
HOOK_TIMEOUT = 15
DEFAULT_NAMES = {"claude-code": "Claude", "codex": "Codex", "gemini": "Gemini"}
SAFE_DEFAULT = ("READ ONLY. Say in a few lines where the last session left off, "
                "then wait for my instruction.")


def home() -> Path:
    return Path(os.environ.get("HOME") or os.path.expanduser("~"))


def target_path(target: str, project: bool = False) -> Path:
    """The file a target changes; HOME and the current directory from the environment."""
    if target == "claude-code":
        return (Path.cwd() if project else home()) / ".claude" / "settings.json"
    if target == "codex":
        codex_home = (os.environ.get("CODEX_HOME") or "").strip()
        return (Path(codex_home) if codex_home else home() / ".codex") / "AGENTS.md"
    if target == "agents-md":
        return Path.cwd() / "AGENTS.md"
    if target == "gemini":
        return home() / ".gemini" / "GEMINI.md"
    if target == "launcher":
        return home() / ".local" / "bin" / "ctx-launch"
    raise InvalidArgument(f"unknown target {target!r}: use one of {', '.join(TARGETS)}")


def ctx_program() -> str:
    """This installation's ``ctx`` script when it has one, else ``ctx`` on PATH."""
    script = Path(sys.executable).parent / "ctx"
    return str(script) if script.is_file() else "ctx"


# The budget of `ctx start` in each harness (characters), below what the harness passes to
# the model whole:
# - claude-code: a SessionStart hook's output reaches the model inline up to 10,000
#   characters; past that it is replaced by a 2 KB preview (measured with Claude Code 2.1).
# - codex, agents-md: Codex truncates what a command prints for the model (10 KB and 256
#   lines in its first CLI; a 10,000-token budget per tool output since): 8,000 keeps clear.
# - gemini: Gemini CLI passes a shell command's output whole far beyond this; 16,000 is
#   ctx's own choice, about 4,000 tokens, 0.4% of a 1M-token window.
START_BUDGET = {"claude-code": 9000, "codex": 8000, "agents-md": 8000, "gemini": 16000}


def pointer(root: Path, agent: str, budget: int) -> str:
    """The §5.3 B pointer, with the root and the name every ``ctx`` should run with."""
    return (f"{BEGIN}\n"
            f"At the start of every session, run `ctx start --max-chars {budget}` and follow\n"
            "the rules it prints. Record what you learn with `ctx set` as you go. You are\n"
            "prints. Record what you learn with `ctx set` as you go. You are\n"
            f"{agent}: sign your session summary and your commits with it.\n"
            f"Run every `ctx` command with `CTX_HOME={shlex.quote(str(root))}` and "
            f"`CTX_AUTHOR={shlex.quote(agent)}` set.\n"
            f"{END}\n")


def hook_command(root: Path, only_under: Path | None = None) -> str:
    """The SessionStart command: ``ctx start`` with its root, errors ignored."""
    run = (f"CTX_HOME={shlex.quote(str(root))} {shlex.quote(ctx_program())} start "
           f"--max-chars {START_BUDGET['claude-code']} 2>/dev/null || true")
    if only_under is not None:
        prefix = shlex.quote(str(only_under).rstrip("/") + "/")
        run = f'case "$PWD/" in {prefix}*) {run} ;; esac'
    return f"{run}  {HOOK_MARK}"


def launcher_script(root: Path, agent: str) -> str:
    """§5.3 C: start the harness with ``ctx start`` and the instruction as its prompt."""
    return f"""#!/bin/sh
{LAUNCHER_MARK} (written by `ctx wire launcher`; ctx replaces this file as a whole)
# Usage: ctx-launch [HARNESS [INSTRUCTION...]]   e.g. ctx-launch claude "Fix the upload bug"
# Starts HARNESS (default: $CTX_HARNESS, else claude) with the output of `ctx start`
# and the instruction as its opening prompt (spec 5.3 C).
export CTX_HOME="${{CTX_HOME:-{root}}}"
export CTX_AUTHOR="${{CTX_AUTHOR:-{agent}}}"
harness="${{1:-${{CTX_HARNESS:-claude}}}}"
[ $# -gt 0 ] && shift
instruction="$*"
[ -n "$instruction" ] || instruction={shlex.quote(SAFE_DEFAULT)}
if command -v timeout >/dev/null 2>&1; then
  payload=$(timeout 15 {shlex.quote(ctx_program())} start 2>/dev/null)
else
  payload=$({shlex.quote(ctx_program())} start 2>/dev/null)
fi
[ -n "$payload" ] || payload="(ctx start printed nothing: the context at $CTX_HOME could not be read)"
exec "$harness" "$payload

$instruction"
"""


# --- editing the text of each kind of file -----------------------------------------

def with_block(text: str, block: str) -> str:
    """``text`` with ctx's Markdown block replaced, or appended when absent."""
    starts, ends = text.count(BEGIN), text.count(END)
    if starts == 0 and ends == 0:
        if not text:
            return block
        return text.rstrip("\n") + "\n\n" + block
    if starts != 1 or ends != 1 or text.index(BEGIN) > text.index(END):
        raise InvalidArgument(f"the file holds a broken or repeated {BEGIN} … {END} block; "
                              "fix it by hand, ctx will not guess")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + block.rstrip("\n") + tail if tail.startswith("\n") else head + block + tail


def _indent_of(text: str) -> int:
    match = re.search(r"^( +)\S", text, re.M)
    return len(match.group(1)) if match else 2


def json_object(text: str) -> dict[str, Any]:
    """A harness's JSON settings file as an object ({} when empty); anything else is refused."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidArgument(f"not valid JSON ({exc}); ctx will not change it") from None
    if not isinstance(data, dict):
        raise InvalidArgument("the settings file is not a JSON object; ctx will not change it")
    return data


def with_hook(text: str, command: str, timeout: int) -> tuple[str, list[str]]:
    """Claude Code settings with ctx's one SessionStart hook; other content kept."""
    notes: list[str] = []
    data = json_object(text)
    original = copy.deepcopy(data)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict) or not isinstance(hooks.setdefault("SessionStart", []), list):
        raise InvalidArgument("'hooks' or 'hooks.SessionStart' has an unexpected shape; "
                              "ctx will not change it")
    ours = {"type": "command", "command": command, "timeout": timeout}
    groups = hooks["SessionStart"]
    found = False
    for group in groups:
        entries = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(entries, list):
            continue
        for i, hook in enumerate(entries):
            cmd = hook.get("command", "") if isinstance(hook, dict) else ""
            if isinstance(cmd, str) and HOOK_MARK in cmd:
                if not found:
                    entries[i] = ours
                found = True
            elif isinstance(cmd, str) and re.search(r"\bctx start\b|/ctx start\b", cmd):
                notes.append(f"another SessionStart hook already runs ctx start: {cmd!r}")
    if not found:
        groups.append({"hooks": [ours]})
    if text.strip() and data == original:
        return text, notes  # already wired: the file stays byte for byte
    out = json.dumps(data, indent=_indent_of(text), ensure_ascii=False)
    return out + "\n", notes


# --- plan and apply ----------------------------------------------------------------

@dataclass
class WirePlan:
    target: str
    path: Path
    before: str | None
    after: str
    notes: list[str] = field(default_factory=list)
    applied: bool = False
    backup: Path | None = None

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
        return {"target": self.target, "path": str(self.path), "exists": self.before is not None,
                "changed": self.changed, "applied": self.applied,
                "backup": str(self.backup) if self.backup else None,
                "diff": self.diff(), "notes": self.notes}


def _read(path: Path) -> str | None:
    if path.is_dir():
        raise InvalidArgument(f"{path} is a directory; ctx will not change it")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise InvalidArgument(f"{path} is not UTF-8 text; ctx will not change it") from None


def plan(target: str, root: Path, *, agent: str | None = None, project: bool = False,
         only_under: Path | None = None, timeout: int = HOOK_TIMEOUT) -> WirePlan:
    """What wiring ``target`` would change; reads only."""
    path = target_path(target, project)
    before = _read(path)
    name = (agent or settings.author() or "").strip() or DEFAULT_NAMES.get(target)
    notes: list[str] = []
    if target == "claude-code":
        after, notes = with_hook(before or "", hook_command(root, only_under), timeout)
        notes.append("set CTX_AUTHOR to the agent's name in the harness's environment (§5.3)")
    elif target == "launcher":
        if before is not None and LAUNCHER_MARK not in before:
            raise InvalidArgument(f"{path} exists and was not written by ctx; ctx will not change it")
        after = launcher_script(root, name or "Agent")
    else:
        if not name:
            raise InvalidArgument("the pointer names the agent: give --agent NAME or set CTX_AUTHOR")
        after = with_block(before or "", pointer(root, name, START_BUDGET[target]))
        if target == "codex" and (path.parent / "AGENTS.override.md").exists():
            notes.append(f"{path.parent / 'AGENTS.override.md'} exists: Codex reads it instead of "
                         "AGENTS.md; move the ctx block there")
    return WirePlan(target, path, before, after, notes)


def _backup_path(path: Path) -> Path:
    candidate = path.with_name(path.name + ".ctx-backup")
    n = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.ctx-backup.{n}")
        n += 1
    return candidate


def apply(wire: WirePlan) -> WirePlan:
    """Write the plan: only if the file is still as planned; a backup first."""
    if not wire.changed:
        return wire
    if _read(wire.path) != wire.before:
        raise InvalidArgument(f"{wire.path} changed while ctx was reading it; run again")
    wire.path.parent.mkdir(parents=True, exist_ok=True)
    mode = 0o755 if wire.target == "launcher" else 0o644
    if wire.before is not None:
        mode = wire.path.stat().st_mode & 0o7777
        wire.backup = _backup_path(wire.path)
        wire.backup.write_bytes(wire.path.read_bytes())
        os.chmod(wire.backup, mode)
    from ctx.storage.files import atomic_write
    # the harness's folder may be a link (dotfiles): the file goes where it leads, as before
    atomic_write(wire.path.parent.resolve() / wire.path.name, wire.after.encode("utf-8"), mode=mode)
    wire.applied = True
    return wire
