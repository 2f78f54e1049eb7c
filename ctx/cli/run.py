"""Running one command, the same way from both doors.

``invoke(command, values)`` imports the command's handler (named in the
table), gives it a ``Run`` (where to print, how to open the context), and
turns whatever the core raises into one line on stderr and an exit status
(``exits.py``). The fast door calls it after its own parsing, click's
commands from their callbacks: the two cannot differ past parsing.
"""

from __future__ import annotations

import json
import sys

from ctx.cli.exits import (INTERRUPTED_LINE, ExitStatus, error_line, exit_status_for, internal_error_line,
                           os_error_line)
from ctx.errors import CtxError, InvalidArgument
from ctx.settings import flag

TYPE_CHECKING = False  # typing is for the checker; importing it costs ~3 ms at every start
if TYPE_CHECKING:
    from typing import Any

    from pathlib import Path

    from ctx.cli.params import Command
    from ctx.context import Context
    from ctx.recorder import Recorder


class Run:
    """What a handler gets besides its arguments: output, and the context it works on."""

    def __init__(self) -> None:
        self.contexts: list[Context] = []

    def out(self, text: str, end: str = "\n") -> None:
        sys.stdout.write(text + end)

    def err(self, text: str) -> None:
        sys.stderr.write(text + "\n")

    def json(self, payload: Any) -> None:
        self.out(json.dumps(payload, ensure_ascii=False, indent=2))

    def context(self, **options: Any) -> Context:
        """The context root's ``Context``, its writes recorded by git (``CTX_NO_GIT=1``: files only)."""
        from ctx.context import Context
        context = Context(recorder_factory=git_recorder, **options)
        self.contexts.append(context)
        return context

    def warn(self, context: Context, extra: list[str] | None = None) -> list[str]:
        """Print what the writes had to say besides their result, each thing once; returns it."""
        warnings = list(dict.fromkeys((extra or []) + context.warnings))
        for warning in warnings:
            self.err(f"ctx: {warning}")
        return warnings


def git_recorder(root: Path) -> Recorder:
    """The recorder the front door hands the core; the git layer loads only when a write needs it."""
    from ctxgit.recorder import recorder_for
    return recorder_for(root)


def require_git(what: str) -> None:
    """Refuse, with the reason, what needs the repository when ``CTX_NO_GIT`` turns git off."""
    if flag("CTX_NO_GIT"):
        raise InvalidArgument(f"{what} works on the context's git repository, and CTX_NO_GIT=1 turns git "
                              "off (store files only); unset CTX_NO_GIT to use it")


def handler_of(command: Command):
    from importlib import import_module
    module, _, name = command.handler.partition(":")
    return getattr(import_module(f"ctx.cli.commands.{module}"), name)


def check_words(command: Command, values: dict[str, Any]) -> None:
    """A value of several words must have at least one (§9.1)."""
    from ctx.cli.params import WORDS
    for arg in command.args:
        if arg.kind == WORDS and arg.required and not values.get(arg.dest):
            raise InvalidArgument(f"{command.name} needs a {arg.dest} after the key")


def invoke(command: Command, values: dict[str, Any], run: Run | None = None) -> int:
    """Run ``command`` with parsed ``values``; the exit status (never raises but for CTX_DEBUG)."""
    run = run or Run()
    try:
        check_words(command, values)
        if command.git:
            require_git(f"ctx {command.name}")
        status = handler_of(command)(run, **values)
        sys.stdout.flush()
        return int(status or 0)
    except CtxError as error:
        run.err(error_line(error))
        return int(exit_status_for(error))
    except OSError as error:
        run.err(os_error_line(error))
        return int(ExitStatus.FAILED)
    except KeyboardInterrupt:
        run.err(INTERRUPTED_LINE)
        return int(ExitStatus.INTERRUPTED)
    except Exception as error:  # a bug: one line, a distinct status; CTX_DEBUG=1 for the trace
        if flag("CTX_DEBUG"):
            raise
        run.err(internal_error_line(error))
        return int(ExitStatus.FAILED)
