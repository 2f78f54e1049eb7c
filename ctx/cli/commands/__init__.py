"""What each command does and prints, one module per area; the command table
(``ctx/cli/table*.py``) names the function. Each handler takes a ``Run`` and its
parameters by name, and returns an exit status (None for 0) or raises.

A module here loads when a command of its area runs: the table refers to
``commands.entries.get`` inside a lambda, and this package imports ``entries`` on
that first use (``__getattr__``), so a start pays for no handler it does not run.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


def __getattr__(name: str) -> ModuleType:
    if name.startswith("_"):
        raise AttributeError(name)
    try:  # (__import__ with a fromlist gives the module itself; importlib loads warnings, ~0.5 ms)
        return __import__(f"{__name__}.{name}", fromlist=("__name__",))
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no handler module {name!r}") from None
