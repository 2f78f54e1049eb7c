"""What a harness's compaction wrote, kept in the context (``ctx event compact``).

Claude Code's PostCompact hook carries ``compact_summary``: the model's whole reply, its
``<analysis>`` scratch and then its ``<summary>``; the model itself keeps only the summary
part, and so does ctx. It is kept as an entry of its own kind, not as a §7 summary:

- §7's summary is written once, at a session's end, by the agent, with a required
  ``## Open`` section the brief reads; a compaction comes in the middle of a session, in
  the harness's form. Written into ``sessions/`` under §7's name it would become "the
  newest summary" of every later start, with no Open section; under another name it would
  be ignored by §7 and by ``ctx search`` alike.
- An entry is what ``ctx search`` finds. It goes into the ``agent`` store (§3.1: an
  agent's working note, of little use to the operator), keyed
  ``compaction_<session>_<YYYY_MM_DD>`` (§3.2: an event's key ends in its date), one per
  session (a later compaction of the session replaces it), tagged ``compaction``, scope
  ``global`` (§3.7: it must outlive the session), basis ``inferred`` (the model's own
  account, nobody checked it).
- The next session sees it (``start_section``) when no summary was written after it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.context import Context
    from ctx.model import Entry

STORE = "agent"
PREFIX = "compaction_"
TAG = "compaction"
BOUND = 8000          # characters kept of a summary (the start payload shows it whole)
INPUT_BOUND = 400_000  # a compact_summary longer than this is not read


def summary_part(text: str) -> str | None:
    """The ``<summary>`` part of a compaction's reply (its last one); without one, the reply
    less every ``<analysis>`` block. None when nothing is left."""
    if not isinstance(text, str) or len(text) > INPUT_BOUND:
        return None
    import re  # (here: ctx start imports this module, and loads no re)
    found = re.findall(r"<summary>(.*?)(?:</summary>|\Z)", text, re.S)
    kept = found[-1] if found else re.sub(r"<analysis>.*?(?:</analysis>|\Z)", "", text, flags=re.S)
    kept = kept.strip()
    if not kept:
        return None
    if len(kept) > BOUND:
        cut = kept[:BOUND]
        kept = cut[:cut.rfind("\n")] if "\n" in cut else cut
        kept = kept.rstrip() + "\n[... cut by ctx at 8,000 characters]"
    return kept


def key_for(session: str, day: str) -> str:
    """``compaction_<first 12 letters and digits of the session id>_<YYYY_MM_DD>``."""
    short = "".join(c for c in session.lower() if c.isascii() and c.isalnum())[:12] or "session"
    return f"{PREFIX}{short}_{day.replace('-', '_')}"


def keep(context: Context, text: str, *, session: str, harness: str, trigger: str | None) -> str | None:
    """Keep the summary part of ``text`` as this session's compaction entry; its key, or None
    when there was nothing to keep. A credential in it is refused (``ctx.errors``), as for
    any write."""
    from ctx import model
    kept = summary_part(text)
    if kept is None:
        return None
    key = key_for(session, model.now()[:10])
    how = f"{harness}'s compaction summary ({'trigger ' + trigger + ', ' if trigger else ''}session {session}), " \
          "its <summary> part, kept by ctx event compact"
    context.set(key, kept, store=STORE, tags=[TAG], scope="global", basis="inferred", derivation=how)
    return key


def newest(context: Context) -> tuple[str, Entry] | None:
    """The newest kept compaction (key, entry), or None: the first in result order (newest
    first), read by the range of its keys, so every ``ctx start`` decodes the compactions'
    rows alone, not every row of the agent store
    (tests/core/test_cache.py, test_start_finds_the_newest_compaction_by_its_keys_alone)."""
    from ctx.storage.index import Where
    found = context.query([STORE], lambda r: r.key.startswith(PREFIX) and TAG in (r.entry.get("tags") or []),
                          1, Where().key_prefix(PREFIX))
    return (found[0].key, found[0].entry) if found else None
