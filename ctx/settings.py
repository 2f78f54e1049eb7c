"""Every ``CTX_*`` environment variable ctx reads: declared once, parsed here.

``VARIABLES`` names each one with its kind, its default and what it does;
``describe()`` prints that table (for the docs and ``--help``). The rest of
ctx asks the small functions below (``home()``, ``lock_timeout()``,
``flag("CTX_NO_GIT")``...) and never reads ``os.environ`` for a ``CTX_*``
name itself. The same rules hold for every variable:

- The environment is read at each call, never cached (tests change it
  between calls). ``env`` (a mapping) stands in for ``os.environ``.
- Surrounding whitespace is ignored, and a blank value (empty, or only
  spaces) counts as unset: the default applies.
- A value ctx cannot read is an error, never quietly the default: a typo
  in a timeout would otherwise go unnoticed until it mattered. The
  function raises ``InvalidArgument`` with one line naming the variable
  and its value (the front door exits 2), e.g.
  ``CTX_LOCK_TIMEOUT='abc' is not a number of seconds (the default is 60)``.
- Kinds: *seconds* is a number, 0 or more, finite (``60``, ``0.5``);
  *bytes* a whole number, 0 or more; *choice* one of the listed words, in
  any case; *text* is taken as it is; *path* has ``~`` expanded and is
  made absolute.
- A *flag* is off when unset, blank, ``0``, ``false``, ``no`` or ``off``
  (any case) and on for any other value, so a flag has no bad value (the
  front door reads ``CTX_DEBUG`` while reporting another error).

This module is imported on the fast path of every ``ctx get``: only ``os``
and ``ctx.errors`` at run time, nothing is parsed until it is asked for.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

from ctx.errors import InvalidArgument

PATH, TEXT, SECONDS, BYTES, COUNT, CHOICE, FLAG = "path", "text", "seconds", "bytes", "count", "choice", "flag"

# name: (kind, default, what it does); the front door and the launcher's entries are here too
VARIABLES: dict[str, tuple[str, Any, str]] = {
    "CTX_HOME": (PATH, "~/ctx", "the context root"),
    "CTX_AUTHOR": (TEXT, None, "the agent writing (unset: the operator); signs its writes"),
    "CTX_AUTHOR_EMAIL": (TEXT, None, "the email of CTX_AUTHOR's commits (unset: made from the name)"),
    "CTX_LOCK_TIMEOUT": (SECONDS, 60.0, "how long a write waits for another writer's context lock"),
    "CTX_GIT_RETRY_SECONDS": (SECONDS, 10.0, "how long a commit waits for another git's index.lock"),
    # A person waits for this at the terminal. What it waits for is bounded already: auto-sync's
    # background sync gives up after 60 s in all (ctxgit/sync/auto.py SYNC_TIMEOUT), and any fetch
    # or push is stopped after CTX_REMOTE_TIMEOUT (60 s) without a word from the server. 90 s
    # outlasts either with room to let go, so the wait ends in the command going ahead, not in
    # a give-up; 600 s kept a person at a silent terminal for ten minutes.
    "CTX_REMOTE_WAIT_SECONDS": (SECONDS, 90.0, "how long a fetch or push waits while another ctx (or "
                                "auto-sync's background push) talks to a remote"),
    "CTX_REMOTE_TIMEOUT": (SECONDS, 60.0, "how long a clone, fetch or push may go without a word from the "
                           "server before it is stopped"),
    "CTX_PACK_THRESHOLD": (BYTES, 32 * 1024 * 1024, "loose object bytes that start a background packing "
                           "(`git repack`; a whole `git gc` once enough packs gather)"),
    "CTX_GIT_TRANSPORT": (CHOICE, "git", "fetch and push with git (where it is on the PATH) or libgit2"),
    "CTX_NO_GIT": (FLAG, False, "keep store files only: no commits"),
    "CTX_NO_CACHE": (FLAG, False, "neither read nor write the search index cache"),
    "CTX_GIT_SLOW": (FLAG, False, "ask git what changed outside ctx at every write, never the one-commit way"),
    "CTX_DEBUG": (FLAG, False, "show the traceback of an internal error"),
    "CTX_PHASES": (TEXT, None, "a file each command appends its time per phase to, as a JSON line "
                   "(bench/run.py --phases)"),
    "CTX_SLOW_PATH": (FLAG, False, "run every command through the full (click) front door"),
    "CTX_HARNESS": (TEXT, "claude", "the harness the launcher script starts (read by the script)"),
    "CTX_CONTEXT_WINDOW_CHARS": (COUNT, None, "the agent's context window, in characters: ctx start "
                                 "keeps to 5% of it"),
    "CTX_CONTEXT_WINDOW_TOKENS": (COUNT, None, "the agent's context window, in tokens (4 characters "
                                  "each), when the runtime names no characters"),
}
CHOICES = {"CTX_GIT_TRANSPORT": ("git", "libgit2")}
FLAG_OFF = ("", "0", "false", "no", "off")


def _raw(name: str, kind: str, env: Mapping[str, str] | None) -> tuple[str, Any]:
    """The value of ``name`` stripped ("" when unset) and its default."""
    declared = VARIABLES.get(name)
    if declared is None or declared[0] != kind:
        raise KeyError(f"{name} is not declared as a {kind} in ctx/settings.py")
    value = (os.environ if env is None else env).get(name)
    return (value or "").strip(), declared[1]


def text(name: str, env: Mapping[str, str] | None = None) -> str | None:
    raw, default = _raw(name, TEXT, env)
    return raw or default


def path(name: str, env: Mapping[str, str] | None = None) -> str:
    """An absolute path, ``~`` expanded. A ``str``: no read imports pathlib (with the
    urllib.parse, ipaddress and re it brings): tests/cli/test_fastcli.py: test_the_reads_load_neither_re_nor_pathlib."""
    raw, default = _raw(name, PATH, env)
    return absolute(os.path.expanduser(raw or default))


def absolute(raw: str) -> str:
    """``str(Path(raw).absolute())`` without pathlib: joined to the working folder when
    relative, "." parts and repeated slashes dropped, ".." kept (``abspath`` would drop
    them as text, but the parent of a link is not the folder the text names)."""
    if not os.path.isabs(raw):
        raw = os.path.join(os.getcwd(), raw)
    head = "//" if raw.startswith("//") and not raw.startswith("///") else "/"
    return head + "/".join(p for p in raw.split("/") if p and p != ".")


def _number(name: str, kind: str, convert: Callable[[str], Any], unit: str,
            env: Mapping[str, str] | None) -> Any:
    """A number, 0 or more and finite, or the default when unset; else one line naming it."""
    raw, default = _raw(name, kind, env)
    if not raw:
        return default
    try:
        value = convert(raw)
    except ValueError:
        value = -1
    if not 0 <= value < float("inf"):  # also refuses nan
        shown = "unset" if default is None else f"{default:g}" if isinstance(default, float) else str(default)
        raise InvalidArgument(f"{name}={raw!r} is not a {unit} (the default is {shown})")
    return value


def seconds(name: str, env: Mapping[str, str] | None = None) -> float:
    return _number(name, SECONDS, float, "number of seconds", env)


def byte_count(name: str, env: Mapping[str, str] | None = None) -> int:
    return _number(name, BYTES, int, "whole number of bytes", env)


def count(name: str, env: Mapping[str, str] | None = None) -> int | None:
    """A whole number, 0 or more; None when unset."""
    unit = "tokens" if name.endswith("_TOKENS") else "characters"
    return _number(name, COUNT, int, f"whole number of {unit}", env)


def choice(name: str, env: Mapping[str, str] | None = None) -> str:
    raw, default = _raw(name, CHOICE, env)
    if not raw:
        return default
    value = raw.lower()
    if value not in CHOICES[name]:
        raise InvalidArgument(f"{name}={raw!r} is not one of {', '.join(CHOICES[name])} "
                              f"(the default is {default})")
    return value


def flag(name: str, env: Mapping[str, str] | None = None) -> bool:
    raw, _ = _raw(name, FLAG, env)
    return raw.lower() not in FLAG_OFF


# --- one function per variable ctx reads ---------------------------------------------

def home(env: Mapping[str, str] | None = None) -> str:
    """``CTX_HOME``: the context root, ``~/ctx`` by default."""
    return path("CTX_HOME", env)


def author(env: Mapping[str, str] | None = None) -> str | None:
    """``CTX_AUTHOR``, stripped; None (the operator) when unset or blank (§3.4). Every
    command, the MCP server's included, reads the writer here: a name that is not one line
    of visible text, too long, or the operator's or ctx's own (``model.validate_author``)
    is ``InvalidArgument``, exit 2, before anything is read or written."""
    raw = text("CTX_AUTHOR", env)
    if raw is None:
        return None
    from ctx.model import validate_author  # (model is on every command's path already)
    return validate_author(raw)


def describe() -> str:
    """The table of every variable: name, default, what it does (one line each)."""
    rows = []
    for name, (kind, default, meaning) in VARIABLES.items():
        if kind == FLAG:
            shown = "off"
        elif default is None:
            shown = "unset"
        elif kind == SECONDS:
            shown = f"{default:g} s"
        elif kind == BYTES:
            shown = f"{default >> 20} MiB" if default and not default % (1 << 20) else f"{default} bytes"
        else:
            shown = str(default)
        rows.append((name, shown, meaning))
    width = max(len(r[0]) for r in rows)
    shown_width = max(len(r[1]) for r in rows)
    return "\n".join(f"{n:<{width}}  {s:<{shown_width}}  {m}" for n, s, m in rows)
