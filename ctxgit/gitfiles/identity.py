"""Who a commit names: one home for how ctx spells an author for git.

``CTX_AUTHOR`` is a free name ("Agent Z"); git wants a name and an email
without ``<``, ``>`` or line breaks. Both ways of committing (libgit2's and
the fast one) and the readers of the history ("since your last session")
take the spelling from here.
"""

from __future__ import annotations

import re

SYSTEM_NAME = "system"      # the author of files committed as found (changed outside ctx)
OPERATOR_NAME = "operator"  # the author when nobody is named and git has no identity
EMAIL_DOMAIN = "ctx.invalid"


def slug(name: str) -> str:
    """``Agent Z`` as ``agent-z``: the local part of a made-up email."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "agent"


def clean(text: str) -> str:
    """git refuses '<', '>' and line breaks in a name or an email."""
    return re.sub(r"[<>\x00-\x1f]+", " ", text).strip()


def made_email(name: str) -> str:
    return f"{slug(name)}@{EMAIL_DOMAIN}"


def author_identity(author: str, email: str | None = None) -> tuple[str, str]:
    """The name and email a commit by ``author`` carries (``email``: ``CTX_AUTHOR_EMAIL``
    when set, else made from the name); never empty."""
    return clean(author) or OPERATOR_NAME, clean(email or made_email(author)) or f"{OPERATOR_NAME}@{EMAIL_DOMAIN}"


def identity_or_operator(name: str, email: str) -> tuple[str, str]:
    """A name and email made safe for git, ``operator`` where nothing is left."""
    return clean(name) or OPERATOR_NAME, clean(email) or f"{OPERATOR_NAME}@{EMAIL_DOMAIN}"
