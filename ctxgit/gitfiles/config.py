"""The one rule for "which remote do I sync with", over git's configuration as git reads it
(``ctxgit/plumbing/gitconfig.py`` asks git and applies it: ``upstream``).

Every command that talks to a remote or reports on one asks ``upstream``:
``ctx sync``, ``pull``, ``push``, ``status``, the brief's header, auto-sync and
``ctx view``. The rule, with no remote named on the command line:

- main's upstream (``branch.main.remote``, set by the first push or a clone), when
  it names a remote that exists;
- an upstream naming a remote that does not exist is *stale*: nothing is chosen
  and the problem says how to fix it (never a silent fall-back to another remote);
- no upstream: the only remote; of several, ``origin``; of several without
  ``origin``, none (the problem asks for a name);
- no remote at all: none.

A remote named on the command line is used when it exists. Auto-sync runs only
when the upstream is set and names a remote (``Upstream.is_set``).
"""

from __future__ import annotations

from ctxgit.gitfiles.layout import BRANCH


class Upstream:
    """The answer of the rule: ``remote`` (None when none can be used) and, when None,
    ``problem`` (one line that says what to do). ``configured``: what ``branch.main.remote``
    says, if anything; ``remotes``: every remote there is."""

    __slots__ = ("remote", "remotes", "configured", "problem")

    def __init__(self, remote: str | None, remotes: list[str], configured: str | None,
                 problem: str | None) -> None:
        self.remote, self.remotes, self.configured, self.problem = remote, remotes, configured, problem

    @property
    def is_set(self) -> bool:
        """main's upstream is set and names a remote that exists (auto-sync needs it)."""
        return self.configured is not None and self.remote == self.configured

    @property
    def stale(self) -> bool:
        return self.configured is not None and self.configured not in self.remotes

    def __repr__(self) -> str:
        return f"Upstream({self.remote!r}, {self.remotes!r}, {self.configured!r}, {self.problem!r})"


ADD_ONE = "add one: `ctx remote add origin URL`, then `ctx sync`"


def choose(remotes: list[str], configured: str | None, named: str | None = None) -> Upstream:
    """The rule itself, over what git's configuration says (see the module's docstring)."""
    have = ", ".join(remotes) or "none"
    if named is not None:
        if named in remotes:
            return Upstream(named, remotes, configured, None)
        return Upstream(None, remotes, configured, f"no remote named {named!r} (have: {have})")
    if configured is not None:
        if configured in remotes:
            return Upstream(configured, remotes, configured, None)
        fix = (f"`ctx sync {remotes[0]}` makes {remotes[0]} the upstream" if remotes else ADD_ONE)
        return Upstream(None, remotes, configured,
                        f"main's upstream {configured!r} is no remote here; have {have}: {fix}, "
                        f"or `git config --unset branch.{BRANCH}.remote` drops it")
    if len(remotes) == 1:
        return Upstream(remotes[0], remotes, None, None)
    if "origin" in remotes:
        return Upstream("origin", remotes, None, None)
    if not remotes:
        return Upstream(None, remotes, None, f"no remote to use: {ADD_ONE}")
    return Upstream(None, remotes, None,
                    f"several remotes ({have}) and no upstream: name one; "
                    f"`ctx sync {remotes[0]}` makes {remotes[0]} the upstream")
