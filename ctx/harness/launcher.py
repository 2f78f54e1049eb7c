"""The launcher (§5.3 C), for a harness with neither hook nor instruction file:
``~/.local/bin/ctx-launch``, a script that starts a harness (``$CTX_HARNESS``, else
``claude``) with ``ctx start``'s output and the instruction as its opening prompt. ctx
replaces the script as a whole, and never a file it did not write."""

from __future__ import annotations

from ctx.errors import InvalidArgument
from ctx.harness.base import Edit, Harness, Wiring, home
from ctx.harness.texts import LAUNCHER_MARK, launcher_script


class Launcher(Harness):
    name = "launcher"
    agent = "Agent"

    start_help = ("~/.local/bin/ctx-launch: a script that starts a harness with ctx start's output "
                  "as its opening prompt")

    def start(self, wiring: Wiring) -> tuple[list[Edit], list[str]]:
        path = home() / ".local" / "bin" / "ctx-launch"

        def change(before: str | None) -> tuple[str, list[str]]:
            if before is not None and LAUNCHER_MARK not in before:
                raise InvalidArgument(f"{path} exists and was not written by ctx; ctx will not change it")
            return launcher_script(wiring.root, wiring.agent, wiring.program), []
        return [Edit(path, change, mode=0o755)], []


HARNESS = Launcher()
