"""Running one command, the same way from both doors.

``invoke(command, values)`` loads the command's handler (referred to by its
row of the table), gives it a ``Run`` (where to print, how to open the context), and
turns whatever the core raises into one line on stderr and an exit status
(``exits.py``). The fast door calls it after its own parsing, click's
commands from their callbacks: the two cannot differ past parsing.
"""

from __future__ import annotations

import sys

from ctx.cli.exits import INTERRUPTED_LINE, ExitStatus, error_line, exit_status_for, internal_error_line, os_error_line
from ctx.errors import CtxError, InvalidArgument
from ctx.settings import flag

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ctx.cli.params import Command
    from ctx.context import Context
    from ctx.recorder import Recorder
    from ctx.storage.files import StrPath


class Run:
    """What a handler gets besides its arguments: output, and the context it works on."""

    makes_both = False  # ``result`` makes only the form it prints (the text, or the JSON)

    def __init__(self) -> None:
        self.contexts: list[Context] = []

    def out(self, text: str, end: str = "\n") -> None:
        sys.stdout.write(text + end)

    def err(self, text: str) -> None:
        sys.stderr.write(text + "\n")

    def json(self, payload: Any) -> None:
        from ctx.jsoncodec import dumps  # not at the top: most runs print text
        self.out(dumps(payload))

    def result(self, payload: Any, text: str | None | Callable[[], str | None], as_json: bool) -> None:
        """A command's final result: ``payload`` as JSON with ``--json``, else ``text``
        (None: nothing). The one place both are known, so a capture (the MCP server)
        gets the text and the JSON of a command that runs once. Either may be a function
        that makes it: the terminal makes only the one it prints."""
        if as_json:
            self.json(made(payload))
        else:
            shown = made(text)
            if shown is not None:
                self.out(shown)

    def stdin(self) -> str:
        """Standard input, whole, as text: what ``--from-stdin`` and ``import -`` read. The
        one place the front door reads it (tests/cli/test_stdin.py)."""
        return stdin_text(sys.stdin.buffer.read())

    def hook_stdin(self) -> bytes | None:
        """A harness hook's input on stdin, bounded in size and time (``hookinput.py``);
        None when there is none to read."""
        from ctx.cli.hookinput import read_raw
        return read_raw()

    def context(self, **options: Any) -> Context:
        """The context root's ``Context``, its writes recorded by git (``CTX_NO_GIT=1``: files only)."""
        context = open_context(**options)
        self.contexts.append(context)
        return context

    def warn(self, context: Context, extra: list[str] | None = None) -> list[str]:
        """Print what the writes had to say besides their result, each thing once; returns it."""
        warnings = list(dict.fromkeys((extra or []) + context.warnings))
        if warnings:  # (they quote file names and keys: one visible line each)
            from ctx.display import visible
            for warning in warnings:
                self.err(visible(f"ctx: {warning}"))
        return warnings


class CapturingRun(Run):
    """A ``Run`` that keeps what a command prints instead of printing it (the MCP server):
    ``text`` (stdout, exactly as the CLI prints it), ``errors`` (the stderr lines) and
    ``result_payload`` (the payload handed to ``result``, whether or not it was printed
    as JSON). ``given`` stands in for stdin."""

    makes_both = True  # ``result`` keeps the text and the JSON

    def __init__(self, given: str = "") -> None:
        super().__init__()
        self.given = given
        self.parts: list[Any] = []  # text, or a JSON payload (formatted only if ``text`` is asked)
        self.errors: list[str] = []
        self.result_payload: Any = None
        self.has_result = False

    @property
    def text(self) -> str:
        from ctx.jsoncodec import dumps
        return "".join(part if isinstance(part, str) else dumps(part[0]) + "\n"
                       for part in self.parts)

    def out(self, text: str, end: str = "\n") -> None:
        self.parts.append(text + end)

    def err(self, text: str) -> None:
        self.errors.append(text)

    def json(self, payload: Any) -> None:
        self.parts.append((payload,))

    def result(self, payload: Any, text: str | None | Callable[[], str | None], as_json: bool) -> None:
        payload, text = made(payload), made(text)  # both: the text, and the JSON as structured content
        self.result_payload, self.has_result = payload, True
        super().result(payload, text, as_json)

    def stdin(self) -> str:
        return self.given

    def hook_stdin(self) -> bytes | None:
        return self.given.encode("utf-8")


def stdin_text(raw: bytes) -> str:
    """``raw`` decoded as UTF-8; bytes that are not are an argument error naming the first bad
    byte (never text carrying them on to a write that fails)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidArgument(f"standard input is not UTF-8 text (byte {error.start})") from None


def made(thing: Any) -> Any:
    """``thing``, or what it makes when it is a function (``Run.result``'s lazy parts)."""
    return thing() if callable(thing) else thing


def open_context(**options: Any) -> Context:
    """A ``Context`` wired as the front door wires it: git records its writes, this machine's
    state is kept where ``ctxgit`` keeps it. Every door that writes opens its context here
    (``Run.context``, and ``ctx.memorytool``, the door of Anthropic's memory tool)."""
    from ctx.context import Context
    from ctxgit.gitfiles.layout import state_dir
    return Context(recorder_factory=git_recorder, state_of=state_dir, **options)


def git_recorder(root: StrPath) -> Recorder:
    """The recorder the front door hands the core; the git layer loads only when a write needs it."""
    from ctxgit.recorder import recorder_for
    return recorder_for(root)


def require_git(what: str) -> None:
    """Refuse, with the reason, what needs the repository when ``CTX_NO_GIT`` turns git off."""
    if flag("CTX_NO_GIT"):
        raise InvalidArgument(f"{what} works on the context's git repository, and CTX_NO_GIT=1 turns git "
                              "off (store files only); unset CTX_NO_GIT to use it")


def handler_of(command: Command) -> Callable[..., Any]:
    """The function that does ``command``'s work, named by its row (``"entries:get"``): the
    one place a handler's name is resolved, its module loading now, on first use."""
    if command.handler is None:
        raise InvalidArgument(f"ctx {command.name} needs a subcommand")
    from ctx.cli.params import HANDLERS
    module, _, function = command.handler.partition(":")
    # (__import__ with a fromlist gives the module itself; importlib loads warnings)
    return getattr(__import__(f"{HANDLERS}.{module}", fromlist=("__name__",)), function)


def check_words(command: Command, values: dict[str, Any]) -> None:
    """A value of several words must have at least one (§9.1)."""
    from ctx.cli.params import WORDS
    for arg in command.args:
        if arg.kind == WORDS and arg.required and not values.get(arg.dest):
            raise InvalidArgument(f"{command.name} needs a {arg.dest} after the key")


def after_write(run: Run) -> None:
    """After a write: auto-sync's background push (``ctxgit/sync/trigger.py``) when this
    machine turned it on (a file read when off); then, every few writes
    (``ctxgit/porcelain/sincelag.py``), the history log that "since your last session"
    reads is brought up to HEAD (``ctx start`` writes nothing, so it reads every commit
    past the log each time); and git's configuration is kept for the reads when it
    changed (``ctxgit/plumbing/gitconfig.py``). Never fails the write."""
    if flag("CTX_NO_GIT"):
        return
    authored = {context.where for context in run.contexts if context.author}
    for root in dict.fromkeys(context.where for context in run.contexts):
        try:
            from ctx.storage.files import read_bytes
            from ctxgit.gitfiles.layout import MACHINE, path
            if b"sync-auto" in read_bytes(path(root, MACHINE)):
                from ctxgit.sync.trigger import after_write as start_push
                start_push(root)
        except OSError:
            pass
        from ctxgit.plumbing import gitconfig
        gitconfig.keep(root)
        if root in authored:  # only an author has a last session to tell news from
            from ctxgit.porcelain import sincelag
            sincelag.keep(root)
    from ctx import phases
    phases.lap("after")


def _call(command: Command, run: Run, values: dict[str, Any]) -> Any:
    if not command.slow:
        return handler_of(command)(run, **values)
    from ctx import progress
    with progress.showing(f"ctx {command.name}", sys.stderr):
        return handler_of(command)(run, **values)


def invoke(command: Command, values: dict[str, Any], run: Run | None = None) -> int:
    """Run ``command`` with parsed ``values``; the exit status (never raises but for CTX_DEBUG)."""
    run = run or Run()
    try:
        check_words(command, values)
        if command.git:
            require_git(f"ctx {command.name}")
        status = _call(command, run, values)
        sys.stdout.flush()
        if not status and not command.reads and command.auto_sync:
            after_write(run)
        elif not status and command.pulls and not flag("CTX_NO_GIT"):
            from ctxgit.porcelain import sincelag
            for root in dict.fromkeys(context.root for context in run.contexts if context.author):
                sincelag.keep(root, now=True)
        return int(status or 0)
    except CtxError as error:
        run.err(error_line(error))
        return int(exit_status_for(error))
    except OSError as error:
        run.err(os_error_line(error))
        return ExitStatus.FAILED
    except KeyboardInterrupt:
        run.err(INTERRUPTED_LINE)
        return ExitStatus.INTERRUPTED
    except Exception as error:  # a bug: one line, a distinct status; CTX_DEBUG=1 for the trace
        if flag("CTX_DEBUG"):
            raise
        run.err(internal_error_line(error))
        return ExitStatus.FAILED
