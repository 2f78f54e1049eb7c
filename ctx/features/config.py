"""Configuration: the context's, and this machine's.

The context's keys are kept in ``<root>/config.json``: one JSON object of
known keys, written through the one write path (``Context.transact``), so
every change is a commit, and it travels with the context (sync, clone)
like the stores. This machine's keys are kept in ``machine.json`` in the
root's state folder (``Context.state``, which the front door puts inside the
repository): never committed, never synced, one machine's own. A missing
file (or no state folder) means every key has its default.

Keys:

- ``enforce-stores`` (context; ``true``/``false``, default ``false``): enforce
  the store convention of §3.1: an agent (``CTX_AUTHOR`` set) writes the
  ``operator`` store only to record the operator's words, with source
  ``operator``. The rule is the core's (``ctx/policy.py``); this module keeps the setting.
  It protects the operator: an agent may read it, never change it (``Conflict``, exit 4).
- ``recall-on-failure`` (context; ``true``/``false``, default ``true``): ``ctx event
  failure`` (a harness's failing-command hook, ``ctx wire``) gives back the entries that
  answer the failure; ``false``: it prints nothing (``ctx/failure_recall.py``).
- ``shown-log`` (context; ``true``/``false``, default ``true``): every start payload and
  every recall that reaches a model is noted in the local shown log (``ctx/shown.py``,
  ``ctx log --shown``); ``false``: nothing is noted (what is there stays).
- ``handover-on-stop`` (context; ``true``/``false``, default ``true``): the Stop hook
  ``ctx wire`` writes (``ctx event stop``) blocks a session's stop once, asking for its
  summary, when it wrote to the context and wrote no summary (``ctx/handover.py``).
- ``keep-compaction`` (context; ``true``/``false``, default ``true``): ``ctx event
  compact`` keeps the ``<summary>`` part of a harness's compaction as an agent entry
  (``ctx/compaction.py``).
- ``start-max-chars`` (machine; a number of characters, default 0: none):
  the budget of ``ctx start`` when neither the option nor the agent
  runtime's context window sets one.
- ``sync-auto`` (machine; ``true``/``false``, default ``false``): auto-sync
  (``ctxgit/sync/auto.py``): a background push after each write, a pull
  before ``ctx start`` and ``ctx brief``. Stored as JSON ``true``/``false``
  (the write path checks it for ``true`` without loading this module).
- ``sync-timeout`` (machine; seconds, default 3): how long ``ctx start`` and
  ``ctx brief`` wait for that pull before showing the local context.
- ``require-signed`` (machine; ``true``/``false``, default ``false``): ``ctx
  sync`` and ``ctx pull`` refuse (exit 4) a remote commit that is unsigned or
  signed by a key git does not trust here (``gpg.ssh.allowedSignersFile``, the
  gpg keyring), naming it and its author; ``ctx doctor`` lists such commits
  already in the history (``ctxgit/plumbing/signing.py``). ctx never adds a key.
  It protects the operator: an agent may read it, never change it.
"""

from __future__ import annotations

import os

from ctx.errors import Conflict, InvalidArgument, StoreError
from ctx.storage.files import read_bytes

TYPE_CHECKING = False  # ctx start reads this module, and no read imports dataclasses or typing (test_fastcli.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ctx.storage.files import StrPath

CONFIG_NAME = "config.json"
MACHINE_FILE = "machine.json"  # in the state folder (ctxgit/gitfiles/layout.py's MACHINE names it for git)


class Key:
    """One configuration key: its default, how text parses to a value, and how a value is checked."""

    __slots__ = ("name", "default", "parse", "check", "help", "machine", "protects")

    def __init__(self, name: str, default: Any, parse: Callable[[str], Any], check: Callable[[Any], bool],
                 help: str, machine: bool = False, protects: bool = False) -> None:
        self.name = name
        self.default = default
        self.parse = parse
        self.check = check
        self.help = help
        self.machine = machine  # kept per machine (MACHINE_FILE), not in the synced config.json
        # It protects the operator from an agent's writes or a remote's commits: the operator's to
        # change, never an agent's (tests/reliability/test_operator_voice.py)
        self.protects = protects


def _boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "on", "yes", "1"):
        return True
    if lowered in ("false", "off", "no", "0"):
        return False
    raise InvalidArgument(f"not a boolean: {text!r}; use true or false")


def _count(text: str) -> int:
    stripped = text.strip()
    if not stripped.isdigit():
        raise InvalidArgument(f"not a number of characters: {text!r}; use 0 or more (0: no budget)")
    return int(stripped)


def _seconds(text: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        value = -1.0
    if not 0 < value <= 3600:
        raise InvalidArgument(f"not a number of seconds: {text!r}; use more than 0, at most 3600")
    return int(value) if value == int(value) else value


KEYS: dict[str, Key] = {
    "enforce-stores": Key("enforce-stores", False, _boolean, lambda v: isinstance(v, bool),
                          "true|false: an agent writes the operator store only with "
                          "source operator (§3.1)", protects=True),
    "recall-on-failure": Key("recall-on-failure", True, _boolean, lambda v: isinstance(v, bool),
                             "true|false: a harness's failing-command hook gives back the entries that "
                             "answer the failure (ctx event failure)"),
    "shown-log": Key("shown-log", True, _boolean, lambda v: isinstance(v, bool),
                     "true|false: note each start payload and recall that reaches a model in the "
                     "local shown log (ctx log --shown)"),
    "handover-on-stop": Key("handover-on-stop", True, _boolean, lambda v: isinstance(v, bool),
                            "true|false: a session that wrote to the context and no summary is asked "
                            "once, at its stop, to write one (ctx event stop)"),
    "keep-compaction": Key("keep-compaction", True, _boolean, lambda v: isinstance(v, bool),
                           "true|false: what a harness's compaction wrote is kept as an agent entry, "
                           "shown at the next start when no summary follows (ctx event compact)"),
    "start-max-chars": Key("start-max-chars", 0, _count,
                           lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
                           "characters, 0 for none: this machine's budget for ctx start", machine=True),
    "sync-auto": Key("sync-auto", False, _boolean, lambda v: isinstance(v, bool),
                     "true|false: this machine pushes after each write and pulls before "
                     "ctx start and ctx brief", machine=True),
    "sync-timeout": Key("sync-timeout", 3, _seconds,
                        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= 3600,
                        "seconds: how long ctx start and ctx brief wait for auto-sync's pull", machine=True),
    "require-signed": Key("require-signed", False, _boolean, lambda v: isinstance(v, bool),
                          "true|false: this machine's sync and pull refuse a remote commit that is "
                          "unsigned or not signed by an allowed signer", machine=True, protects=True),
}

# The context's keys (synced in config.json) whose value true protects the operator: a remote's
# commit that turns one off is refused unless the operator accepts it (ctxgit/sync/arrived.py;
# test_sync_announces.py). A machine key that protects (require-signed) no remote can change.
PROTECTIVE = tuple(k.name for k in KEYS.values() if k.protects and not k.machine)


def _key(name: str) -> Key:
    try:
        return KEYS[name]
    except KeyError:
        raise InvalidArgument(f"unknown configuration key {name!r}: use one of "
                              f"{', '.join(KEYS)}") from None


def config_path(root: StrPath, state: StrPath | None, machine: bool = False) -> str | None:
    """The context's file (``root/config.json``), or with ``machine`` this machine's
    (in the state folder ``state``; None when there is no state folder)."""
    if not machine:
        return os.path.join(root, CONFIG_NAME)
    return os.path.join(state, MACHINE_FILE) if state is not None else None


def read_config(path: StrPath | None) -> dict[str, Any]:
    """The whole configuration object in the file ``path`` ({} when there is none)."""
    if path is None:
        return {}
    try:
        raw = read_bytes(path)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    from ctx.jsoncodec import loads  # only when there is a file: ctx start reads this module at every session
    try:
        data = loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise StoreError(f"{path}: not valid JSON ({exc}); fix it or restore it "
                         "(`ctx log`), ctx will not overwrite it") from None
    if not isinstance(data, dict):
        raise StoreError(f"{path}: not a JSON object; ctx will not overwrite it")
    return data


def get_value(root: StrPath, name: str, state: StrPath | None) -> Any:
    """A key's value, or its default when unset; a malformed value is an error.
    ``state``: the root's state folder, where a machine key is kept (``Context.state``)."""
    key = _key(name)
    data = read_config(config_path(root, state, key.machine))
    if name not in data:
        return key.default
    value = data[name]
    if not key.check(value):
        raise StoreError(f"{config_path(root, state, key.machine)}: {name} is {value!r}, which is not valid "
                         f"({key.help}); set it again with `ctx config {name} VALUE`")
    return value


def all_values(root: StrPath, state: StrPath | None) -> dict[str, Any]:
    return {name: get_value(root, name, state) for name in KEYS}


def _json_file(data: dict[str, Any]) -> bytes:
    """A configuration file's bytes: indented JSON, non-ASCII as is, a final newline."""
    from ctx.jsoncodec import dumps
    return (dumps(data) + "\n").encode("utf-8")


def set_value(context, name: str, text: str) -> tuple[Any, bool]:
    """Set a key from its text, as one commit (operation ``config``).

    Returns the value and whether it changed. Keys of the file ctx does not
    know are kept.
    """
    key = _key(name)
    value = key.parse(text)
    if key.protects and context.author:
        # An agent that could turn enforce-stores off could then write the operator store as it
        # likes; one that could turn require-signed off could take a forged commit in. Reading
        # the setting stays anyone's. (Who runs as the operator's own user can still edit the
        # file by hand: docs/trust.md says what signing adds.)
        raise Conflict(f"{name} protects the operator: only the operator may change it, and "
                       f"CTX_AUTHOR={context.author!r} is an agent (unset CTX_AUTHOR to change it)")
    if key.machine:
        return _set_machine_value(context.root, context.state, name, value)
    from ctx.changes import Outcome
    changed: list[bool] = []

    def mutate(_stores) -> Outcome:
        data = read_config(config_path(context.root, None))
        if name in data and data[name] == value:
            changed.append(False)
            return Outcome([])
        data[name] = value
        changed.append(True)
        import json
        return Outcome([], files={CONFIG_NAME: _json_file(data)}, subject=f"config {name}: {json.dumps(value)}")
    context.transact("config", [], mutate)
    return value, changed[0]


def _set_machine_value(root: StrPath, state: StrPath | None, name: str, value: Any) -> tuple[Any, bool]:
    """A per-machine key: written atomically under the context lock, never committed.
    The state folder is made when missing, its parent (the repository) never."""
    from ctx.storage.files import atomic_write
    from ctx.storage.lock import context_lock
    path = config_path(root, state, machine=True)
    if path is None or not os.path.isdir(os.path.dirname(os.path.dirname(os.path.abspath(path)))):
        where = f" ({path})" if path is not None else ""
        raise InvalidArgument(f"{name} is kept per machine in the context's repository{where}, "
                              f"and {root} has none yet: write something first (or unset CTX_NO_GIT)")
    with context_lock(root):
        data = read_config(path)
        if name in data and data[name] == value:
            return value, False
        data[name] = value
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        atomic_write(path, _json_file(data))
    return value, True

