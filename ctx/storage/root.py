"""The context root (§8.1) and RULES.md (§6); where the root is comes from
``settings.home()`` (§9.2)."""

from __future__ import annotations

import os

from ctx.errors import ContextRootError
from ctx.storage.files import DIR_MODE, atomic_write, ensure_private_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.storage.files import StrPath

RULES_NAME = "RULES.md"

RULES_TEMPLATE = """\
# Rules for every agent

- **ctx is the shared memory.** Project knowledge goes into ctx, where
  the operator and every agent can find it. An agent's private memory
  holds at most a pointer to ctx.
- **Write only through `ctx`.** Do not edit the store files directly:
  ctx keeps the lock, the timestamps and the status fields correct.
- **Recall on error.** When a command fails, search ctx for the command
  and its error before anything else (someone may have met it):
  `ctx search --semantic "<command> <error message>"`.
- **READ means read.** When the operator says READ or READ ONLY, change
  nothing (ctx, files, version control) until they say WRITE.
- **Sign your own work.** End each session with a one-page summary in
  `sessions/`, headed with your own name (`**Agent:** <name>`). Set
  `CTX_AUTHOR` to the same name. Commits carry your own co-author
  trailer.
"""


def check_root(root: StrPath) -> None:
    """Raise a clear error when the root exists but cannot be a context root."""
    if os.path.exists(root) and not os.path.isdir(root):
        raise ContextRootError(f"context root {root} is a file, not a directory "
                               "(check CTX_HOME)")


class LayoutReport:
    """What ``ensure_layout`` found and what it created."""

    __slots__ = ("root", "created", "existed")

    def __init__(self, root: StrPath, created: list[str] | None = None, existed: bool = True) -> None:
        self.root, self.created, self.existed = root, created or [], existed


def ensure_layout(root: StrPath, memory_only: bool = False) -> LayoutReport:
    """Create what is missing of §8.1's layout; never overwrite anything.

    The root and its directories get mode 0700, RULES.md gets 0600 (§11).
    ``memory_only`` stops after ``memory/``, where the lock file lives.
    """
    check_root(root)
    report = LayoutReport(root=root, existed=os.path.exists(root))
    if not report.existed:
        try:
            os.makedirs(root, mode=DIR_MODE)
            report.created.append(str(root))
        except FileExistsError:  # another process made it meanwhile (two first writes at once)
            check_root(root)
            report.existed = True
        except OSError as exc:
            raise ContextRootError(f"cannot create the context root {root}: {exc.strerror}") from None
    for name in ("memory",) if memory_only else ("memory", "sessions"):
        path = os.path.join(root, name)
        if not os.path.exists(path):
            try:
                ensure_private_dir(path)
            except OSError as exc:
                raise ContextRootError(f"cannot create {path}: {exc.strerror}") from None
            report.created.append(f"{name}/")
        else:
            ensure_private_dir(path)
    rules = os.path.join(root, RULES_NAME)
    if memory_only:
        return report
    if not os.path.lexists(rules):
        try:  # whole or not at all (a RULES.md cut short would be kept and committed as it is)
            atomic_write(os.path.join(os.path.realpath(root), RULES_NAME), RULES_TEMPLATE.encode("utf-8"),
                         create_only=True)
        except FileExistsError:
            pass
        except OSError as exc:
            raise ContextRootError(f"cannot write {rules}: {exc.strerror}") from None
        else:
            report.created.append(RULES_NAME)
    return report
