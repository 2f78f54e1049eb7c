"""The fast front door: the commands agents run hundreds of times a day, without click.

``ctx`` starts here. For get, search, list, brief, start and the writes of
§4 with ordinary arguments, it parses the arguments itself (importing click
costs more than a whole ``ctx get`` otherwise) and runs the same function in
``commands.py`` that the click command runs. Anything else — help, an
unknown or invalid option, a bad value, another command — goes to click
(``cli.main``), which gives the full help and the error messages. A test
runs both doors over the same arguments and compares what they print.
"""

from __future__ import annotations

import gc
import os
import sys

from ctx.model import BASES, SCOPES, SOURCES, STATUSES, STORES

FLAG, VALUE, MULTI, INT = "flag", "value", "multi", "int"
_STORE = {"--store": ("store", VALUE, STORES), "-s": ("store", VALUE, STORES)}
_JSON = {"--json": ("as_json", FLAG, None)}
_FORCE = {"--force": ("force", FLAG, None)}
_VERBOSE = {"-v": ("verbose", FLAG, None), "--verbose": ("verbose", FLAG, None)}
_FILTERS = {
    "--store": ("store", VALUE, STORES), "-s": ("store", VALUE, STORES),
    "--tag": ("tags", MULTI, None), "--source": ("source", VALUE, SOURCES),
    "--status": ("status", VALUE, STATUSES + ("current",)), "--scope": ("scope", VALUE, SCOPES),
    "--since": ("since", VALUE, None), "--prefix": ("prefix", VALUE, None),
}
_DAYS = {"--days": ("days", INT, None), "--changes": ("changes", INT, None)}

# command: (options, positional names, whether the rest are words, defaults)
SPECS: dict[str, tuple[dict, tuple[str, ...], bool, dict]] = {
    "get": ({**_STORE, "--all": ("all_stores", FLAG, None), "--at": ("at", VALUE, None), **_VERBOSE, **_JSON},
            ("key",), False, {"store": "shared", "all_stores": False, "at": None}),
    "search": ({**_FILTERS, "--limit": ("limit", INT, None), **_VERBOSE, **_JSON}, ("pattern",), False,
               {"pattern": "", "limit": 50}),
    "list": ({**_FILTERS, "--keys-only": ("keys_only", FLAG, None), "--limit": ("limit", INT, None),
              **_VERBOSE, **_JSON}, (), False, {"limit": None, "keys_only": False}),
    "brief": ({**_DAYS, **_JSON}, (), False, {"days": 7, "changes": 10}),
    "start": (dict(_DAYS), (), False, {"days": 7, "changes": 10}),
    "set": ({**_STORE, "--source": ("source", VALUE, SOURCES), "--basis": ("basis", VALUE, BASES),
             "--scope": ("scope", VALUE, SCOPES), "--tag": ("tags", MULTI, None),
             "--derivation": ("derivation", VALUE, None), **_FORCE, **_JSON},
            ("key",), True, {"store": "shared", "source": None, "basis": None, "scope": None,
                             "derivation": None}),
    "amend": ({**_STORE, **_FORCE, **_JSON}, ("key",), True, {"store": "shared"}),
    "supersede": ({"--by": ("by", VALUE, None), "--note": ("note", VALUE, None), **_STORE, **_FORCE, **_JSON},
                  ("key",), False, {"store": "shared", "note": None}),
    "resolve": ({"--note": ("note", VALUE, None), **_STORE, **_FORCE, **_JSON}, ("key",), False,
                {"store": "shared", "note": None}),
    "basis": ({**_STORE, **_JSON}, ("key", "basis"), False, {"store": "shared"}),
    "delete": ({**_STORE, **_JSON}, ("key",), False, {"store": "shared"}),
}
_FILTER_NAMES = ("store", "tags", "source", "status", "scope", "since", "prefix")


class Unsupported(Exception):
    """Arguments the fast door leaves to click."""


def parse(command: str, args: list[str]) -> dict:
    """The arguments of ``command`` as keyword values, or ``Unsupported``."""
    from ctx.cli.words import OptionBetweenWords, split
    options, positional, wordy, defaults = SPECS[command]
    takes = {name: kind != FLAG for name, (_, kind, _) in options.items()}
    try:
        tokens, words = split(args, takes)
    except OptionBetweenWords:
        raise Unsupported() from None
    values: dict = dict(defaults)
    values.update({dest: False for dest, kind, _ in options.values() if kind == FLAG})
    values.update({dest: [] for dest, kind, _ in options.values() if kind == MULTI})
    seen: set[str] = set()
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        if name not in options:
            raise Unsupported()
        dest, kind, choices = options[name]
        if kind == FLAG:
            if eq:
                raise Unsupported()
            values[dest] = True
            i += 1
            continue
        if eq:
            value = inline
        elif i + 1 < len(tokens):
            value, i = tokens[i + 1], i + 1
        else:
            raise Unsupported()
        if dest in seen and kind != MULTI:
            raise Unsupported()  # a repeated option: click's rules decide
        seen.add(dest)
        if choices is not None and value not in choices:
            raise Unsupported()
        if kind == INT:
            if not value.isdigit():
                raise Unsupported()
            values[dest] = int(value)
        elif kind == MULTI:
            values[dest].append(value)
        else:
            values[dest] = value
        i += 1
    if wordy:
        if len(words) < 2:
            raise Unsupported()  # set/amend with no value: click says what is missing
        values[positional[0]], values["words"] = words[0], words[1:]
    else:
        required = [p for p in positional if p not in defaults]
        if len(words) > len(positional) or len(words) < len(required):
            raise Unsupported()
        values.update(zip(positional, words))
    if command == "supersede" and "by" not in values:
        raise Unsupported()
    return values


def run(command: str, values: dict) -> int:
    """Run one parsed command through ``commands``; returns the exit status."""
    from ctx.cli import entries as commands
    from ctx.errors import CtxError
    from ctx.cli.exits import exit_status_for, internal_error_line, os_error_line

    def out(text: str) -> None:
        sys.stdout.write(text + "\n")

    def err(text: str) -> None:
        sys.stderr.write(text + "\n")
    try:
        ctx = commands.context(cache="read" if command == "start" else "update")
        v = values
        if command in ("search", "list"):
            found = commands.filters(*(v.get(name) if name != "tags" else v["tags"] for name in _FILTER_NAMES))
            if command == "search":
                commands.search(ctx, out, v["pattern"], found, v["limit"], v["verbose"], v["as_json"])
            else:
                commands.list_(ctx, out, found, v["keys_only"], v["limit"], v["verbose"], v["as_json"])
        elif command == "get":
            commands.get(ctx, out, v["key"], v["store"], v["all_stores"], v["at"], v["verbose"], v["as_json"])
        elif command == "brief":
            commands.brief(ctx, out, v["days"], v["changes"], v["as_json"])
        elif command == "start":
            commands.start(ctx, out, v["days"], v["changes"])
        elif command == "set":
            commands.set_(ctx, out, err, v["key"], v["words"], v["store"], v["source"], v["basis"], v["scope"],
                          v["tags"], v["derivation"], v["force"], v["as_json"])
        elif command == "amend":
            commands.amend(ctx, out, err, v["key"], v["words"], v["store"], v["force"], v["as_json"])
        elif command == "supersede":
            commands.supersede(ctx, out, err, v["key"], v["by"], v["note"], v["store"], v["force"], v["as_json"])
        elif command == "resolve":
            commands.resolve(ctx, out, err, v["key"], v["note"], v["store"], v["force"], v["as_json"])
        elif command == "basis":
            commands.basis(ctx, out, err, v["key"], v["basis"], v["store"], v["as_json"])
        elif command == "delete":
            commands.delete(ctx, out, err, v["key"], v["store"], v["as_json"])
        sys.stdout.flush()
        return 0
    except CtxError as error:
        err(f"ctx: {error}")
        return int(exit_status_for(error))
    except OSError as error:
        err(os_error_line(error))
        return 6
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        if os.environ.get("CTX_DEBUG"):
            raise
        err(internal_error_line(error))
        return 6


def main() -> None:
    """The ``ctx`` console entry point."""
    # One short command per process, building large acyclic JSON trees: the cyclic
    # garbage collector finds nothing to free and costs a third of parsing a big store.
    gc.disable()
    args = sys.argv[1:]
    for number, arg in enumerate(args, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            sys.stderr.write(f"ctx: argument {number} is not valid UTF-8\n")
            sys.exit(2)
    if args and args[0] in SPECS and not os.environ.get("CTX_SLOW_PATH"):
        try:
            values = parse(args[0], args[1:])
        except Unsupported:
            values = None
        if values is not None:
            sys.exit(run(args[0], values))
    if args[:1] in (["--version"], ["-V"]):
        from ctx import SPEC_VERSION, __version__
        print(f"ctx {__version__} (ctx specification {SPEC_VERSION})")
        sys.exit(0)
    from ctx.cli.app import main as click_main
    click_main()
