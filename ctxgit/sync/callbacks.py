"""libgit2's side of talking to a remote: SSH keys from the agent, passwords from git's
credential helper, never a prompt, and a clear error after a few refusals."""

from __future__ import annotations

import subprocess

import pygit2
from pygit2.enums import CredentialType

from ctx import progress
from ctx.errors import GitError
from ctxgit.plumbing.gitenv import clean_git_env


class Callbacks(pygit2.RemoteCallbacks):
    """SSH keys from the agent, passwords from git's credential helper; a clear
    error after a few refusals instead of a loop."""

    def __init__(self) -> None:
        super().__init__()  # the credential helper is asked only when the remote asks
        self.tries = 0
        self.rejected: dict[str, str] = {}

    def credentials(self, url, username_from_url, allowed_types):
        self.tries += 1
        if self.tries > 3:
            raise GitError(f"{url}: authentication failed (tried the SSH agent and git's credential helper)")
        if allowed_types & CredentialType.SSH_KEY:
            return pygit2.KeypairFromAgent(username_from_url or "git")
        if allowed_types & CredentialType.USERPASS_PLAINTEXT:
            found = _credential_fill(url, username_from_url)
            if found:
                return pygit2.UserPass(*found)
        if allowed_types & CredentialType.USERNAME:
            return pygit2.Username(username_from_url or "git")
        raise GitError(f"{url}: needs credentials ctx cannot supply; "
                       "set up an SSH agent or a git credential helper")

    def transfer_progress(self, stats):
        progress.count(stats.received_objects, stats.total_objects, "receiving objects")

    def push_transfer_progress(self, objects_pushed, total_objects, bytes_pushed):
        progress.count(objects_pushed, total_objects, "sending objects")

    def push_update_reference(self, refname, message):
        if message:
            self.rejected[refname] = message


def _credential_fill(url: str, user: str | None) -> tuple[str, str] | None:
    """Ask ``git credential fill`` (the operator's helper); never prompt."""
    if not url.startswith(("http://", "https://")):
        return None
    from urllib.parse import urlsplit
    parts = urlsplit(url)
    request = f"protocol={parts.scheme}\nhost={parts.netloc}\npath={parts.path.lstrip('/')}\n"
    if user:
        request += f"username={user}\n"
    env = dict(clean_git_env(), GIT_TERMINAL_PROMPT="0")
    try:
        out = subprocess.run(["git", "credential", "fill"], input=request + "\n", env=env,
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    fields = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    if "username" in fields and "password" in fields:
        return fields["username"], fields["password"]
    return None
