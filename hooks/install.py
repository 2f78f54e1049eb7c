"""Install ctx's pre-commit hook in a context root's repository.

A hook ctx did not write is never overwritten: ``install`` says so and leaves
it. The hook runs this installation's Python (so it works without ``ctx`` on
``PATH``), falling back to ``ctx-scan`` on ``PATH``.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

MARKER = "# ctx-pre-commit-hook"

TEMPLATE = """#!/bin/sh
{marker} v1: written by ctx (`ctx hooks install`); ctx may rewrite this file.
# Refuses a commit that adds a credential, or the lock file / temporary files.
py={python}
if [ -x "$py" ] && "$py" -c "import hooks.scanner" >/dev/null 2>&1; then
  exec "$py" -m hooks.scanner --staged
fi
if command -v ctx-scan >/dev/null 2>&1; then
  exec ctx-scan --staged
fi
echo "ctx pre-commit hook: ctx-scan not found; reinstall ctx, or remove $0" >&2
exit 1
"""


@dataclass
class InstallResult:
    path: Path
    status: str  # "installed", "updated", "unchanged", "foreign", "redirected"
    hooks_path: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("installed", "updated", "unchanged")

    def message(self) -> str:
        if self.status == "redirected":
            return (f"core.hooksPath is set ({self.hooks_path}): git runs hooks from there, not "
                    f"from {self.path.parent}; add `ctx-scan --staged` to its pre-commit hook")
        if self.status == "foreign":
            return (f"{self.path} exists and was not written by ctx; left as it is "
                    "(call `ctx-scan --staged` from it to get ctx's checks)")
        return f"pre-commit hook {self.status}: {self.path}"


def hook_text(python: str | None = None) -> str:
    """The hook script, running ``python`` (default: this installation's)."""
    return TEMPLATE.format(marker=MARKER, python=shlex.quote(python or sys.executable))


def install(root: Path) -> InstallResult:
    """Write ``.git/hooks/pre-commit`` unless a hook ctx did not write is there."""
    hooks_dir = root / ".git" / "hooks"
    path = hooks_dir / "pre-commit"
    redirected = _hooks_path(root)
    if redirected:
        return InstallResult(path, "redirected", redirected)
    text = hook_text()
    status = "installed"
    if path.exists() or path.is_symlink():
        try:
            current = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            current = ""
        if MARKER not in current:
            return InstallResult(path, "foreign")
        if current == text:
            return InstallResult(path, "unchanged")
        status = "updated"
    hooks_dir.mkdir(parents=True, exist_ok=True)
    from ctx.storage.files import atomic_write
    atomic_write(path.parent.resolve() / path.name, text.encode("utf-8"), mode=0o700)
    return InstallResult(path, status)


def _hooks_path(root: Path) -> str:
    """``core.hooksPath`` as git would read it for this repository, or ''."""
    import subprocess
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        result = subprocess.run(["git", "-C", str(root), "config", "--get", "core.hooksPath"],
                                env=env, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return result.stdout.strip()
