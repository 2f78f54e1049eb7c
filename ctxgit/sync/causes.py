"""Why a clone, fetch or push could not reach a remote, in one line a person can act on.

git's last ``fatal:`` line is most often "Could not read from remote repository."
whatever went wrong; the line that says why comes before it, from ssh or from
the HTTP client, and libgit2 words the same causes its own way. ``explain``
reads either and names the cause: the host key unknown or changed (with the
command that shows or fixes it), the SSH key refused, the connection refused,
the host not found, the connection timed out, the repository not found, the
user name and password missing or refused (with the credential helper to set
up). ``None`` when the text names none of these: the caller shows git's own line.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from ctxgit.sync.urls import Where, redact, where

HELPERS = ("a git credential helper (`git config --global credential.helper store`, or `cache`, "
           "or your system's: `manager`, `osxkeychain`, `libsecret`)")


def explain(text: str, url: str) -> str | None:
    """The cause ``text`` (git's stderr, or libgit2's error) names, as one line; or None."""
    said = text.lower()
    place = where(url)
    host = place.host or "the remote"
    if "remote host identification has changed" in said or "has changed and you have requested strict" in said:
        return host_key(place, changed=True)
    if "host key verification failed" in said or "no matching host key" in said:
        return host_key(place, changed=False)
    if "invalid or unknown remote ssh hostkey" in said:
        return host_key(place, changed=None)
    if "user rejected certificate" in said or "certificate verify failed" in said or "ssl certificate" in said:
        return f"the TLS certificate of {host} is not trusted here: check the URL, or your system's certificates"
    if "connection refused" in said:
        return (f"{place.shown()} refused the connection: no server listens there "
                "(it is stopped, or the port is wrong)")
    if any(w in said for w in ("could not resolve", "failed to resolve address", "name or service not known",
                               "temporary failure in name resolution", "nodename nor servname")):
        return f"host {host} not found: its name does not resolve (a typo in the URL, or no network)"
    if "timed out" in said:
        return f"{place.shown()} did not answer: the connection timed out"
    if "no route to host" in said or "network is unreachable" in said:
        return f"{host} cannot be reached from this machine (no route to it: no network?)"
    if any(w in said for w in ("permission denied (publickey", "remote rejected authentication",
                               "failed to authenticate ssh session", "too many authentication failures")):
        return key_refused(place)
    if any(w in said for w in ("does not appear to be a git repository", "repository not found",
                               "http status code: 404", "project you were looking for could not be found")) \
            or ("repository '" in said and "' not found" in said):
        return (f"no repository at {redact(url)} (repository not found): check the path, and that "
                "your account may read it")
    if place.http and any(w in said for w in ("could not read username", "could not read password",
                                              "terminal prompts disabled", "no callback set")):
        return no_password(place, url)
    if place.http and any(w in said for w in ("authentication failed", "authentication replays",
                                              "access denied", "status code: 401", "status code: 403")):
        return password_refused(place, url)
    if "connection reset" in said or "connection closed" in said or "kex_exchange_identification" in said:
        return f"{host} closed the connection before answering (is it a git server, on that port?)"
    return None


def host_key(place: Where, changed: bool | None) -> str:
    """The host key refused; ``changed`` None: find out from known_hosts (libgit2 says
    only "invalid or unknown")."""
    if changed is None:
        changed = recorded(place)
    name, scan = place.known_hosts_name(), place.keyscan()
    if changed:
        return (f"the host key of {place.host} has changed since ~/.ssh/known_hosts recorded it (the server "
                "was reinstalled, or someone is in between): ask its admin for the new key's fingerprint, "
                f"compare it with `{scan} | ssh-keygen -lf -`, then `ssh-keygen -R '{name}'` and "
                f"`{scan} >> ~/.ssh/known_hosts`")
    return (f"the host key of {place.host} is unknown (not in ~/.ssh/known_hosts): compare `{scan} | "
            "ssh-keygen -lf -` with the fingerprint the host publishes (GitHub and GitLab list theirs), "
            f"then `{scan} >> ~/.ssh/known_hosts`")


def recorded(place: Where) -> bool:
    """True when ~/.ssh/known_hosts holds a key for this server (so a refused one changed)."""
    known = os.path.expanduser("~/.ssh/known_hosts")
    keygen = shutil.which("ssh-keygen")
    if keygen is None or not os.path.exists(known):
        return False
    try:
        # stdin: not ours, as for every child (tests/reliability/test_visible_printers.py)
        done = subprocess.run([keygen, "-F", place.known_hosts_name(), "-f", known],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and bool(done.stdout.strip())


def key_refused(place: Where, tried: list[str] | None = None) -> str:
    """The server refused every SSH key offered (``tried``: libgit2's, by where each came
    from; ``[]``: there was none to offer)."""
    server = (f"{place.user}@" if place.user else "") + (place.host or "the remote")
    if tried == []:
        said = (f"{server} asks for an SSH key and there is none to offer (no SSH agent, no key in ~/.ssh "
                "or named in ~/.ssh/config)")
    else:
        offered = f" (offered {', '.join(dict.fromkeys(tried))})" if tried else ""
        said = f"{server} refused the SSH key{offered}"
    return (f"{said}: add your public key to your account there (GitHub, GitLab: Settings, SSH keys), "
            "and name the key in ~/.ssh/config (IdentityFile) or load it into an agent (`ssh-add`)")


def no_password(place: Where, url: str) -> str:
    return (f"{place.host} asks for a user name and password, and git has none for it: set up {HELPERS}, "
            f"then run `git ls-remote {redact(url)}` once in a terminal to store them (a token, for "
            "GitHub and GitLab)")


def password_refused(place: Where, url: str) -> str:
    return (f"{place.host} refused the user name and password (authentication failed): make your credential "
            f"helper forget them (`echo url={redact(url)} | git credential reject`), then run `git ls-remote "
            f"{redact(url)}` in a terminal to store the right ones (GitHub and GitLab take a token, not your "
            "password)")
