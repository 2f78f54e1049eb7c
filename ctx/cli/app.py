"""click's door: the ``ctx`` group and a click command for every row of the table.

Every command is built from its ``Command`` in ``table.py`` (arguments,
options, choices, defaults, help); its callback hands the parsed values to
``run.invoke``, as the fast door does, so errors, messages and exit
statuses are the same through both. click adds what only it does: full
``--help``, usage errors, prompts, and shell completion (entry keys too).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

import click

from ctx import SPEC_VERSION, __version__
from ctx.cli.exits import INTERRUPTED_LINE, ExitStatus
from ctx.cli.params import FLAG, INT, MULTI, WORDS, Arg, Command, Opt
from ctx.cli.run import invoke
from ctx.cli.table import commands
from ctx.cli.words import OptionBetweenWords, split

ROOT_HELP = f"""ctx: one shared memory for an operator and their AI agents.

\b
Conforms to ctx specification {SPEC_VERSION} (core level).
Context root: $CTX_HOME, default ~/ctx.
Author of writes: $CTX_AUTHOR (a blank value counts as unset); with it
set, a new entry's source defaults to agent, otherwise to operator.

\b
Start here:
  ctx init --focus "What the work is about now"
  ctx set decision_db_pool "Use a pool of 20" --tag decision --basis verified
  ctx start                 # rules, brief and newest summary

\b
Exit status: 0 ok, 1 key not found, 2 invalid argument, 3 store file or
root unusable (never overwritten), 4 refused (a credential, a conflict),
5 busy (lock held too long), 6 other failed write, 130 interrupted.
"""


class CtxGroup(click.Group):
    """The root group: commands listed in the table's order, not sorted."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)


class WordsCommand(click.Command):
    """Options before or after a command's words, never between them (§9.1).

    ``--`` ends the options; a word like ``-5`` is a word, not an option.
    The arguments are normalised to ``OPTIONS -- WORDS`` (``words.split``)
    before click sees them, so click never mistakes a value for an option.
    """

    def takes_value(self, ctx: click.Context) -> dict[str, bool]:
        out: dict[str, bool] = {}
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                for name in param.opts + param.secondary_opts:
                    out[name] = not (param.is_flag or param.count)
        return out

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            options, words = split(args, self.takes_value(ctx))
        except OptionBetweenWords as exc:
            raise click.UsageError(exc.message, ctx) from None
        return super().parse_args(ctx, options + ["--"] + words)


def complete_key(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Entry keys for shell completion, from the read index (of the chosen store, if any)."""
    try:
        from ctx.cli.run import Run
        from ctx.results import Filters
        store = ctx.params.get("store")
        context = Run().context(cache="read")
        found = context.select(Filters(store=store, prefix=incomplete), None, 200)
        return sorted({r.key for r in found})
    except Exception:  # completion must never print a traceback into the shell
        return []


def _value_type(choices: tuple[str, ...] | None, kind: str, minimum: int | None) -> click.ParamType:
    if choices is not None:
        return click.Choice(choices)
    if kind == INT:
        return click.IntRange(min=minimum)
    return click.STRING


def _option(opt: Opt) -> click.Option:
    shown = opt.default is not None and opt.kind != FLAG
    if opt.kind == FLAG:
        return click.Option([*opt.flags, opt.dest], is_flag=True, default=False, help=opt.help)
    return click.Option([*opt.flags, opt.dest], type=_value_type(opt.choices, opt.kind, opt.minimum),
                        default=opt.default, show_default=shown, multiple=opt.kind == MULTI,
                        required=opt.required, metavar=opt.metavar, help=opt.help)


def _argument(arg: Arg) -> click.Argument:
    if arg.kind == WORDS:
        return click.Argument([arg.dest], nargs=-1, required=False)
    return click.Argument([arg.dest], required=arg.required, default=arg.default, metavar=arg.metavar,
                          type=_value_type(arg.choices, arg.kind, None),
                          shell_complete=complete_key if arg.dest == "key" else None)


def _epilog(text: str) -> str:
    """Each paragraph kept as written (click's ``\\b``)."""
    return "\n\n".join("\b\n" + part for part in text.split("\n\n")) if text else ""


def _callback(command: Command):
    def callback(**values: Any) -> None:
        if command.group and click.get_current_context().invoked_subcommand is not None:
            return  # `ctx remote add ...`: the subcommand does the work
        for name, value in values.items():
            if isinstance(value, tuple):
                values[name] = list(value)
        status = invoke(command, values)
        if status:
            click.get_current_context().exit(status)
    return callback


def build(command: Command) -> click.Command:
    """The click command (or group) of one row of the table."""
    params: list[click.Parameter] = [_argument(a) for a in command.args] + [_option(o) for o in command.options]
    settings: dict[str, Any] = dict(name=command.name.rpartition(" ")[2], params=params, help=command.help,
                                    short_help=command.summary or None, epilog=_epilog(command.epilog),
                                    hidden=command.hidden)
    if command.group:
        return click.Group(callback=_callback(command) if command.handler else None,
                           invoke_without_command=bool(command.handler), **settings)
    return (WordsCommand if command.words_rule else click.Command)(callback=_callback(command), **settings)


def make_cli() -> click.Group:
    root = CtxGroup("ctx", help=ROOT_HELP, context_settings={"help_option_names": ["-h", "--help"]},
                    params=[click.Option(["-V", "--version"], is_flag=True, expose_value=False, is_eager=True,
                                         callback=_print_version, help="Show the version and exit.")])
    groups: dict[str, click.Group] = {}
    for command in commands():
        parent, _, _ = command.name.rpartition(" ")
        made = build(command)
        (groups[parent] if parent else root).add_command(made)
        if isinstance(made, click.Group):
            groups[command.name] = made
    return root


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"ctx {__version__} (ctx specification {SPEC_VERSION})")
        ctx.exit()


cli = make_cli()


def main(args: list[str] | None = None) -> None:
    """click's door, for everything the fast door leaves to it. Ctrl-C exits 130, as there."""
    try:
        status = cli.main(args=args, prog_name="ctx", standalone_mode=False)
    except click.exceptions.Exit as done:
        status = done.exit_code
    except click.ClickException as error:
        error.show()
        status = error.exit_code
    except (click.Abort, KeyboardInterrupt):
        click.echo(INTERRUPTED_LINE, err=True)
        status = ExitStatus.INTERRUPTED
    sys.exit(int(status or 0))
