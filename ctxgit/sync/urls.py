"""A remote's URL read for what ctx says about it: the host and port it names, whether it
holds a password, and the URL as it may be shown (a password never is).

git accepts ``scheme://[user[:password]@]host[:port]/path``, the scp-like
``[user@]host:path`` and local paths; only the first can carry a password.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SCHEMED = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?:(?P<auth>[^@/]*)@)?(?P<rest>.*)$")
_SCP = re.compile(r"^(?:(?P<user>[^@/:]+)@)?(?P<host>\[[^\]]+\]|[^:/]+):(?!//)")


@dataclass(frozen=True)
class Where:
    """The server a URL names: ``host`` is None for a local path."""

    scheme: str  # "ssh", "https", "http", "git", "file" or "" (a path)
    host: str | None
    port: int | None
    user: str | None

    @property
    def ssh(self) -> bool:
        return self.scheme in ("ssh", "git+ssh", "ssh+git")

    @property
    def http(self) -> bool:
        return self.scheme in ("http", "https")

    def known_hosts_name(self) -> str:
        """How ``known_hosts`` (and ``ssh-keygen -R``) names this server."""
        host = self.host or ""
        return host if self.port in (None, 22) else f"[{host}]:{self.port}"

    def keyscan(self) -> str:
        return "ssh-keyscan " + (f"-p {self.port} " if self.port not in (None, 22) else "") + (self.host or "")

    def shown(self) -> str:
        """The host (and a port other than the scheme's own), for messages."""
        return (self.host or "this machine") + (f" port {self.port}" if self.port is not None else "")


def where(url: str) -> Where:
    found = _SCHEMED.match(url)
    if found:
        scheme = found["scheme"].lower()
        if scheme == "file":
            return Where("file", None, None, None)
        hostport = found["rest"].split("/", 1)[0]
        auth = found["auth"]
        user = auth.split(":", 1)[0] if auth else None
        host, port = hostport, None
        bracket = re.match(r"^\[([^\]]+)\](?::(\d+))?$", hostport)
        if bracket:
            host, port = bracket[1], int(bracket[2]) if bracket[2] else None
        elif hostport.count(":") == 1:
            name, _, number = hostport.partition(":")
            if number.isdigit():
                host, port = name, int(number)
        return Where(scheme, host or None, port, user)
    scp = _SCP.match(url)
    if scp and not url.startswith(("/", ".", "~")):
        return Where("ssh", scp["host"].strip("[]"), None, scp["user"])
    return Where("", None, None, None)


def has_password(url: str) -> bool:
    """True when the URL carries a password (``https://alice:PASSWORD@host/...``)."""
    found = _SCHEMED.match(url)
    return bool(found and found["auth"] and ":" in found["auth"])


def redact(url: str) -> str:
    """The URL with any password shown as ``***``: how ctx prints a URL, everywhere."""
    found = _SCHEMED.match(url)
    if not (found and found["auth"] and ":" in found["auth"]):
        return url
    user = found["auth"].split(":", 1)[0]
    return f"{found['scheme']}://{user}:***@{found['rest']}"


def redact_text(text: str, url: str) -> str:
    """``text`` (a message that may quote ``url`` whole) with the URL's password hidden."""
    return text.replace(url, redact(url)) if has_password(url) else text


def without_password(url: str) -> str:
    """The URL a person should give instead: the same, with no password."""
    found = _SCHEMED.match(url)
    if not (found and found["auth"] and ":" in found["auth"]):
        return url
    return f"{found['scheme']}://{found['auth'].split(':', 1)[0]}@{found['rest']}"
