"""The texts ctx writes into a harness's files, each in one place (tests/golden/ holds
each whole, as written): the pointer (§5.3 B), the session-start hook's command and the
JSON it prints, and the launcher script (§5.3 C).

The failing-command hook's command is here too (``failure_command``).

The pointer is the same for every harness that reads an instruction file (Codex, Gemini
CLI, AGENTS.md); only its budget and the agent's name change.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from ctx.harness.edit import BEGIN, END, FAILURE_MARK, HOOK_MARK

LAUNCHER_MARK = "# ctx:launcher"
SAFE_DEFAULT = ("READ ONLY. Say in a few lines where the last session left off, "
                "then wait for my instruction.")


def pointer(root: Path, agent: str, budget: int, by_hand: str = "") -> str:
    """The §5.3 B pointer, with the root and the name every ``ctx`` should run with;
    ``by_hand``: lines saying what to do at a moment the harness has no hook for."""
    return (f"{BEGIN}\n"
            f"At the start of every session, run `ctx start --max-chars {budget}` and follow\n"
            "the rules it prints. Record what you learn with `ctx set` as you go. You are\n"
            f"{agent}: sign your session summary and your commits with it.\n"
            "When a command fails, run `ctx search --semantic \"<command> <error>\"` before anything else.\n"
            f"{by_hand}"
            f"Run every `ctx` command with `CTX_HOME={shlex.quote(str(root))}` and "
            f"`CTX_AUTHOR={shlex.quote(agent)}` set.\n"
            f"{END}\n")


# the comment that marks each hook ctx writes besides the start (``edit.with_hooks`` finds it)
EVENT_MARKS = {"stop": "# ctx:stop", "end": "# ctx:session-end", "compact": "# ctx:compact"}


def _shell(root: Path, program: str, words: str, agent: str | None, only_under: Path | None, mark: str) -> str:
    """``ctx WORDS`` with its root (and the agent's name when given), its errors ignored
    (nothing on stderr, exit 0), only under ``only_under`` when given, marked ``mark``."""
    names = f"CTX_HOME={shlex.quote(str(root))} "
    if agent:
        names += f"CTX_AUTHOR={shlex.quote(agent)} "
    run = f"{names}{shlex.quote(program)} {words} 2>/dev/null || true"
    if only_under is not None:
        prefix = shlex.quote(str(only_under).rstrip("/") + "/")
        run = f'case "$PWD/" in {prefix}*) {run} ;; esac'
    return f"{run}  {mark}"


def hook_command(root: Path, program: str, budget: int, *, agent: str | None = None,
                 as_json: bool = False, only_under: Path | None = None, harness: str | None = None) -> str:
    """A SessionStart hook's command: ``ctx start``, marked ``HOOK_MARK``. ``as_json``: it
    prints the hook's JSON (``ctx start --format hook``) rather than the plain payload;
    ``harness``: it reads the hook's stdin and notes the session's start (``--harness``)."""
    form = " --format hook" if as_json else ""
    by = f" --harness {harness}" if harness else ""
    return _shell(root, program, f"start --max-chars {budget}{form}{by}", agent, only_under, HOOK_MARK)


def failure_command(root: Path, program: str, harness: str, *, agent: str | None = None,
                    only_under: Path | None = None) -> str:
    """The failing-command hook's command: ``ctx event failure --harness HARNESS``, marked
    ``FAILURE_MARK``."""
    return _shell(root, program, f"event failure --harness {harness}", agent, only_under, FAILURE_MARK)


def event_command(root: Path, program: str, event: str, harness: str, *, agent: str | None = None,
                  only_under: Path | None = None) -> str:
    """The command of the hook ``ctx event EVENT --harness HARNESS`` (stop, end, compact)."""
    return _shell(root, program, f"event {event} --harness {harness}", agent, only_under, EVENT_MARKS[event])


def session_start_json(payload: str) -> str:
    """What ``ctx start --format hook`` prints: the payload as a SessionStart hook's
    additional context, the JSON form Claude Code and Gemini CLI both read (Gemini CLI
    passes a hook's plain output to nobody; this reaches the model whole)."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                              "additionalContext": payload}}, ensure_ascii=False) + "\n"


def launcher_script(root: Path, agent: str, program: str) -> str:
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
  payload=$(timeout 15 {shlex.quote(program)} start 2>/dev/null)
else
  payload=$({shlex.quote(program)} start 2>/dev/null)
fi
[ -n "$payload" ] || payload="(ctx start printed nothing: the context at $CTX_HOME could not be read)"
exec "$harness" "$payload

$instruction"
"""


def after_compression(budget: int) -> str:
    """The pointer's line for a harness with no hook after it compresses the conversation."""
    return (f"After the conversation is compressed, run `ctx start --max-chars {budget}` again: what it\n"
            "printed at the start is gone from the compressed history.\n")


# What `ctx wire` tells the operator of each moment it wires, and how to turn it off
MOMENT_NOTES = {
    "stop": ("at a stop, a session that wrote to ctx and no summary is asked once to write one "
             "(off: ctx config handover-on-stop false)"),
    "compact": ("after a compaction its <summary> is kept as an agent entry, shown at the next start when "
                "no summary follows (off: ctx config keep-compaction false)"),
    "end": ("at a session's end, with ctx config sync-auto true, a background push bounded by sync-timeout "
            "(off: ctx config sync-auto false)"),
}
