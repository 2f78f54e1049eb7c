"""Context configuration, kept in the context: ``<root>/config.json``.

The file is one JSON object of known keys. It is written through the one
write path (``Context.transact``), so every change is a commit, and it
travels with the context (sync, clone) like the stores. A missing file
means every key has its default.

Keys:

- ``enforce-stores`` (``true``/``false``, default ``false``): enforce the
  store convention of §3.1: an agent (``CTX_AUTHOR`` set) writes the
  ``operator`` store only to record the operator's words, with source
  ``operator``. See ``check_store_policy``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ctx.errors import InvalidArgument, StoreError

CONFIG_NAME = "config.json"


@dataclass(frozen=True)
class Key:
    name: str
    default: Any
    parse: Callable[[str], Any]
    check: Callable[[Any], bool]
    help: str


def _boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "on", "yes", "1"):
        return True
    if lowered in ("false", "off", "no", "0"):
        return False
    raise InvalidArgument(f"not a boolean: {text!r}; use true or false")


KEYS: dict[str, Key] = {
    "enforce-stores": Key("enforce-stores", False, _boolean, lambda v: isinstance(v, bool),
                          "true|false: an agent writes the operator store only with "
                          "source operator (§3.1)"),
}


def _key(name: str) -> Key:
    try:
        return KEYS[name]
    except KeyError:
        raise InvalidArgument(f"unknown configuration key {name!r}: use one of "
                              f"{', '.join(KEYS)}") from None


def config_path(root: Path) -> Path:
    return Path(root) / CONFIG_NAME


def read_config(root: Path) -> dict[str, Any]:
    """The whole configuration object on disk ({} when there is none)."""
    path = config_path(root)
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise StoreError(f"{path}: not valid JSON ({exc}); fix it or restore it "
                         "(`ctx log`), ctx will not overwrite it") from None
    if not isinstance(data, dict):
        raise StoreError(f"{path}: not a JSON object; ctx will not overwrite it")
    return data


def get_value(root: Path, name: str) -> Any:
    """A key's value, or its default when unset; a malformed value is an error."""
    key = _key(name)
    data = read_config(root)
    if name not in data:
        return key.default
    value = data[name]
    if not key.check(value):
        raise StoreError(f"{config_path(root)}: {name} is {value!r}, which is not valid "
                         f"({key.help}); set it again with `ctx config {name} VALUE`")
    return value


def all_values(root: Path) -> dict[str, Any]:
    return {name: get_value(root, name) for name in KEYS}


def set_value(context, name: str, text: str) -> tuple[Any, bool]:
    """Set a key from its text, as one commit (operation ``config``).

    Returns the value and whether it changed. Keys of the file ctx does not
    know are kept.
    """
    key = _key(name)
    value = key.parse(text)
    from ctx.changes import Outcome
    changed: list[bool] = []

    def mutate(_stores) -> Outcome:
        data = read_config(context.root)
        if name in data and data[name] == value:
            changed.append(False)
            return Outcome([])
        data[name] = value
        content = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        changed.append(True)
        return Outcome([], files={CONFIG_NAME: content},
                       subject=f"config {name}: {json.dumps(value)}")
    context.transact("config", [], mutate)
    return value, changed[0]


def check_store_policy(root: Path, store: str, author: str | None, source: str | None) -> None:
    """Refuse an agent's write to the ``operator`` store without source ``operator``,
    when ``enforce-stores`` is on (§3.1).

    ``author`` is the writer's CTX_AUTHOR (None or blank: the operator) and
    ``source`` the source given for the write (None: the default, which for
    an agent is ``agent``). The configuration is read only when the write is
    one the policy could refuse.
    """
    if store != "operator" or not (author or "").strip() or source == "operator":
        return
    if not get_value(root, "enforce-stores"):
        return
    given = f"source {source}" if source else "no source (the default for an agent is agent)"
    raise InvalidArgument(
        f"enforce-stores is on: {author.strip()!r} is an agent and may write the operator store "
        f"only to record the operator's own words, with --source operator; this write has {given}. "
        "Write it to the shared store, or add --source operator if the operator said it (§3.1)")
