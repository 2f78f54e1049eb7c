"""Who a commit names: one home for how ctx spells an author for git.

``CTX_AUTHOR`` is a free name ("Agent Z"); git wants a name and an email
without ``<``, ``>`` or line breaks. Both ways of committing (libgit2's and
the fast one) and the readers of the history ("since your last session")
take the spelling from here.
"""

from __future__ import annotations

SYSTEM_NAME = "system"      # the author of files committed as found (changed outside ctx)
OPERATOR_NAME = "operator"  # the author when nobody is named and git has no identity
EMAIL_DOMAIN = "ctx.invalid"


# (str methods, not expressions: every commit spells its author, and compiling the two
# expressions cost a write more than spelling it)
_SLUG = "".join(chr(c) if chr(c).isascii() and chr(c).isalnum() else "-" for c in range(128)).lower()
_REFUSED = "<>" + "".join(chr(c) for c in range(0x20))


def slug(name: str) -> str:
    """``Agent Z`` as ``agent-z``: the local part of a made-up email (each run of anything
    but ASCII letters and digits one ``-``)."""
    spelled = "".join(_SLUG[ord(c)] if ord(c) < 128 else "-" for c in name.lower())
    return "-".join(part for part in spelled.split("-") if part) or "agent"


def clean(text: str) -> str:
    """git refuses '<', '>' and line breaks in a name or an email: each run of them is one
    space."""
    if not any(c in _REFUSED for c in text):
        return text.strip()
    out: list[str] = []
    gap = False
    for c in text:
        if c in _REFUSED:
            gap = True
            continue
        if gap:
            out.append(" ")
            gap = False
        out.append(c)
    return "".join(out).strip()


def made_email(name: str) -> str:
    return f"{slug(name)}@{EMAIL_DOMAIN}"


def author_identity(author: str, email: str | None = None) -> tuple[str, str]:
    """The name and email a commit by ``author`` carries (``email``: ``CTX_AUTHOR_EMAIL``
    when set, else made from the name); never empty."""
    return clean(author) or OPERATOR_NAME, clean(email or made_email(author)) or f"{OPERATOR_NAME}@{EMAIL_DOMAIN}"


def identity_or_operator(name: str, email: str) -> tuple[str, str]:
    """A name and email made safe for git, ``operator`` where nothing is left."""
    return clean(name) or OPERATOR_NAME, clean(email) or f"{OPERATOR_NAME}@{EMAIL_DOMAIN}"
