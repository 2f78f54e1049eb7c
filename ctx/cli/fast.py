"""The fast door: the commands agents run hundreds of times a day, without click.

``ctx`` starts here. For the commands the table marks ``fast`` (get, search,
list, brief, start, the writes of §4 and the letters' commands) it parses ordinary arguments
itself from the same table click's commands are built from (importing
click costs more than a whole ``ctx get``), then runs the command through
``run.invoke`` as click's callback does. Anything unusual — help, an unknown
or repeated option, a bad value, a missing argument, another command — goes
to click (``app.main``), which gives the full help and the usage errors.
A test runs both doors over the same arguments and compares what they print.
"""

from __future__ import annotations

import sys

from ctx.cli.params import FLAG, INT, MULTI, WORDS
from ctx.cli.table_entries import fast_command
from ctx.settings import flag

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctx.cli.params import Command


class Unsupported(Exception):
    """Arguments the fast door leaves to click."""


def option_map(command: Command) -> dict[str, Any]:
    """Each option spelling (``--store``, ``-s``) to its ``Opt``."""
    return {flag: opt for opt in command.options for flag in opt.flags}


def parse(name: str, args: list[str]) -> dict[str, Any]:
    """The arguments of command ``name`` as keyword values, or ``Unsupported``."""
    from ctx.cli.words import OptionBetweenWords, split
    command = fast_command(name)
    if command is None:
        raise Unsupported()
    options = option_map(command)
    try:
        tokens, words = split(args, {flag: opt.kind != FLAG for flag, opt in options.items()})
    except OptionBetweenWords:
        raise Unsupported() from None
    values = command.defaults()
    seen: set[str] = set()
    i = 0
    while i < len(tokens):
        token = tokens[i]
        spelling, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        opt = options.get(spelling)
        if opt is None:
            raise Unsupported()
        if opt.dest in seen and opt.kind != MULTI:
            raise Unsupported()  # a repeated option: click's rules decide
        seen.add(opt.dest)
        if opt.kind == FLAG:
            if eq:
                raise Unsupported()
            values[opt.dest] = True
            i += 1
            continue
        if eq:
            value = inline
        elif i + 1 < len(tokens):
            value, i = tokens[i + 1], i + 1
        else:
            raise Unsupported()
        if opt.choices is not None and value not in opt.choices:
            raise Unsupported()
        if opt.kind == INT:
            if not value.isdigit() or (opt.minimum is not None and int(value) < opt.minimum):
                raise Unsupported()
            values[opt.dest] = int(value)
        elif opt.kind == MULTI:
            values[opt.dest].append(value)
        else:
            values[opt.dest] = value
        i += 1
    if any(opt.required and opt.dest not in seen for opt in command.options):
        raise Unsupported()
    for arg in command.args:
        if arg.kind == WORDS:
            values[arg.dest], words = list(words), []
        elif words:
            if arg.choices is not None and words[0] not in arg.choices:
                raise Unsupported()
            values[arg.dest], words = words[0], words[1:]
        elif arg.required:
            raise Unsupported()
    if words:
        raise Unsupported()  # more words than the command takes
    return values


def main() -> None:
    """The ``ctx`` console entry point."""
    args = sys.argv[1:]
    for number, arg in enumerate(args, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            sys.stderr.write(f"ctx: argument {number} is not valid UTF-8\n")
            sys.exit(2)
    name, rest = (args[0], args[1:]) if args else ("", [])
    if name == "event" and rest:  # a hook's two words (``table_events.py``)
        name, rest = f"event {rest[0]}", rest[1:]
    command = fast_command(name) if args and not flag("CTX_SLOW_PATH") else None
    if command is not None:
        try:
            values = parse(name, rest)
        except Unsupported:
            values = None
        if values is not None:
            from ctx.cli.run import invoke
            sys.exit(invoke(command, values))
    if args[:1] in (["--version"], ["-V"]):
        from ctx import SPEC_VERSION, __version__
        print(f"ctx {__version__} (ctx specification {SPEC_VERSION})")
        sys.exit(0)
    from ctx.cli.app import main as click_main
    click_main()
