"""The rules a write must pass before it takes the lock: the core enforces them.

- ``check_store_policy``: the store convention of §3.1, when the operator turned
  it on (the context's ``enforce-stores`` setting, kept by ``ctx/features/config.py``):
  an agent writes the ``operator`` store only to record the operator's words.
- ``refuse_credentials``: text that looks like a credential is never stored
  (``--force`` when it is not a secret).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from typing import Any

    from ctx.storage.files import StrPath

from ctx import model
from ctx.errors import CredentialRefused, InvalidArgument


def check_store_policy(root: StrPath, store: str, author: str | None, source: str | None) -> None:
    """Refuse an agent's write to the ``operator`` store without source ``operator``,
    when ``enforce-stores`` is on (§3.1).

    ``author`` is the writer's CTX_AUTHOR (None or blank: the operator) and
    ``source`` the source given for the write (None: the default, which for
    an agent is ``agent``). The setting is read only when the write is one
    the policy could refuse.
    """
    if store != "operator" or not author or not author.strip() or source == "operator":
        return
    from ctx.features.config import get_value
    if not get_value(root, "enforce-stores", None):  # a key of the context's: no state folder needed
        return
    given = f"source {source}" if source else "no source (the default for an agent is agent)"
    raise InvalidArgument(
        f"enforce-stores is on: {author.strip()!r} is an agent and may write the operator store "
        f"only to record the operator's own words, with --source operator; this write has {given}. "
        "Write it to the shared store, or add --source operator if the operator said it (§3.1)")


def refuse_credentials(fields: dict[str, Any], force: bool) -> None:
    """Refuse a write whose ``fields`` (name: text, None for none) hold what looks like a
    credential, unless ``force``."""
    if force:
        return
    from ctx.credentials import scan
    for name, content in fields.items():
        if content is None:
            continue
        findings = scan(model.value_text(content))
        if findings:
            kinds = ", ".join(sorted({f.description for f in findings}))
            raise CredentialRefused(
                f"the {name} looks like it holds a credential ({kinds}: "
                f"{findings[0].preview}); credentials must not be stored in ctx. "
                "Use --force if it is not a secret", findings)
