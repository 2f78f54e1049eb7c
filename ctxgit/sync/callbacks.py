"""libgit2's side of talking to a remote (``CTX_GIT_TRANSPORT=libgit2``, or no git):
the host key checked against ``~/.ssh/known_hosts`` as ssh checks it, SSH keys from the
agent and then from ``~/.ssh`` and ``~/.ssh/config``, passwords from git's credential
helper, never a prompt, a one-line error naming the cause, and a time limit."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pygit2
from pygit2.enums import CredentialType

from ctx import progress, settings
from ctx.errors import GitError
from ctxgit.sync import causes
from ctxgit.sync.urls import where

DEFAULT_KEYS = ("id_ed25519", "id_ecdsa", "id_rsa")


class Callbacks(pygit2.RemoteCallbacks):
    """One clone, fetch or push: what was offered, when the server last said something."""

    def __init__(self, url: str = "") -> None:
        super().__init__()  # the credential helper is asked only when the remote asks
        self.url = url
        self.heard = time.monotonic()
        self.rejected: dict[str, str] = {}
        self._keys: list[tuple[str, pygit2.Keypair | pygit2.KeypairFromAgent]] | None = None
        self._passwords = 0
        self.tried: list[str] = []  # the SSH keys offered, by where they came from

    def certificate_check(self, certificate, valid, host):
        """libgit2 has checked the host key against ~/.ssh/known_hosts (or the TLS
        certificate); pygit2 would let an ssh key through whatever it found. A key
        known_hosts does not hold passes only where the operator turned the check off
        for this host (``StrictHostKeyChecking no`` in ~/.ssh/config), as with ssh."""
        self.heard = time.monotonic()
        if valid:
            return True
        place = where(self.url)
        return place.ssh and ssh_settings(place.host).get("stricthostkeychecking") == ["false"]

    def credentials(self, url, username_from_url, allowed_types):
        self.heard = time.monotonic()
        place = where(url or self.url)
        if allowed_types & CredentialType.SSH_KEY:
            if self._keys is None:
                self._keys = ssh_keys(username_from_url or place.user or "git", place.host)
            if not self._keys:
                raise GitError(causes.key_refused(place, self.tried))
            self.tried.append(self._keys[0][0])
            return self._keys.pop(0)[1]
        if allowed_types & CredentialType.USERPASS_PLAINTEXT:
            self._passwords += 1
            if self._passwords > 1:
                raise GitError(causes.password_refused(place, url or self.url))
            found = _credential_fill(url, username_from_url)
            if found:
                return pygit2.UserPass(*found)
            raise GitError(causes.no_password(place, url or self.url))
        if allowed_types & CredentialType.USERNAME:
            return pygit2.Username(username_from_url or "git")
        raise GitError(f"{url}: asks for a kind of credentials ctx cannot give (only SSH keys and passwords)")

    def explain(self, error: Exception) -> str:
        """The cause of a failed clone, fetch or push, in one line."""
        text = str(error)
        if isinstance(error, GitError):  # one of ours, raised above: it says it already
            return text
        if self.tried and any(w in text.lower() for w in ("authentication", "userauth", "publickey")):
            return causes.key_refused(where(self.url), self.tried)
        return causes.explain(text, self.url) or text

    def sideband_progress(self, string):
        self.heard = time.monotonic()

    def transfer_progress(self, stats):
        self.heard = time.monotonic()
        progress.count(stats.received_objects, stats.total_objects, "receiving objects")

    def push_transfer_progress(self, objects_pushed, total_objects, bytes_pushed):
        self.heard = time.monotonic()
        progress.count(objects_pushed, total_objects, "sending objects")

    def push_update_reference(self, refname, message):
        if message:
            self.rejected[refname] = message


def ssh_keys(user: str, host: str | None) -> list[tuple[str, pygit2.Keypair | pygit2.KeypairFromAgent]]:
    """The keys ssh would offer, in its order: the agent's, then the files ~/.ssh/config
    names for this host (``ssh -G``), then the usual ones in ~/.ssh."""
    found: list[tuple[str, pygit2.Keypair | pygit2.KeypairFromAgent]] = []
    if os.environ.get("SSH_AUTH_SOCK"):
        found.append(("the SSH agent", pygit2.KeypairFromAgent(user)))
    files = ssh_settings(host).get("identityfile", []) + [os.path.join("~", ".ssh", name) for name in DEFAULT_KEYS]
    for name in dict.fromkeys(files):
        path = os.path.expanduser(name)
        if os.path.isfile(path):
            public = f"{path}.pub" if os.path.isfile(f"{path}.pub") else None
            found.append((name, pygit2.Keypair(user, public, path, "")))
    return found


def ssh_settings(host: str | None) -> dict[str, list[str]]:
    """What ~/.ssh/config says for ``host`` (``ssh -G``: every setting, resolved), by
    lower-case name; empty without ssh."""
    ssh = shutil.which("ssh")
    if ssh is None or not host:
        return {}
    try:
        done = subprocess.run([ssh, "-G", host], capture_output=True, text=True, timeout=10,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    found: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        name, _, value = line.partition(" ")
        if value:
            found.setdefault(name.lower(), []).append(value)
    return found


def bounded(work, callbacks: Callbacks, what: str, deadline=None) -> None:
    """Run libgit2's ``work`` (a clone, fetch or push) in a thread, given up after
    CTX_REMOTE_TIMEOUT seconds without a word from the server or when ``deadline`` (a
    ``transport.Deadline``) runs out; a thread given up on is left behind (the process
    ends soon after; the remote flock goes with it)."""
    import threading

    from ctxgit.sync.transport import no_answer
    idle = settings.seconds("CTX_REMOTE_TIMEOUT")
    failure: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # handed to the caller
            failure.append(exc)
    began = callbacks.heard = time.monotonic()
    thread = threading.Thread(target=run, name=f"ctx-{what}", daemon=True)
    thread.start()
    while True:
        thread.join(0.05)
        if not thread.is_alive():
            break
        now = time.monotonic()
        if now - callbacks.heard >= idle:
            raise no_answer(callbacks.url, what, idle, "CTX_REMOTE_TIMEOUT")
        if deadline is not None and deadline.passed():
            raise no_answer(callbacks.url, what, deadline.seconds, deadline.why, callbacks.heard > began)
    if failure:
        raise failure[0]


def _credential_fill(url: str, user: str | None) -> tuple[str, str] | None:
    """Ask ``git credential fill`` (the operator's helper); never prompt."""
    if not url.startswith(("http://", "https://")):
        return None
    from urllib.parse import urlsplit
    parts = urlsplit(url)
    request = f"protocol={parts.scheme}\nhost={parts.netloc.rpartition('@')[2]}\npath={parts.path.lstrip('/')}\n"
    if user:
        request += f"username={user}\n"
    from ctxgit.sync.transport import git_env
    try:
        out = subprocess.run(["git", "credential", "fill"], input=request + "\n", env=git_env(None),
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    fields = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    if "username" in fields and "password" in fields:
        return fields["username"], fields["password"]
    return None
