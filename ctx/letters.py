"""Letters between the operator and the agents, and the relay's handoff.

A letter is an entry of the ``shared`` store whose key starts with its recipient's
prefix, ``comms:<recipient>:``, so that ``ctx list --prefix comms:<recipient>:``
finds every letter to one reader, deterministically. The rest of the key is the
second it was sent, six random hex digits (two machines sending the same words to
one reader in the same second still make two keys, and both survive a sync) and a
few words of the text: ``comms:agent_one:1764637704-3fa9c1:please-review-the``.

The recipient part is the name as ``CTX_AUTHOR`` spells it, folded: lower case,
every run of characters that are neither letters nor digits one ``_`` ("Agent One",
"agent one" and "agent-one" are one reader). Without ``CTX_AUTHOR`` the reader and
the sender is ``operator``.

The letter's fields besides §3.3's are kept by every implementation (§3.3:
unknown fields survive): ``from`` and ``to`` (the names as written), ``shape``
(request, report, decision, ack, handoff), ``expects`` (what answer it wants),
``re`` (the key it answers), ``baton`` (a handoff's baton). A letter is open
until a letter with ``re`` naming it exists or it is resolved; letters are never
deleted: they are the record of who asked whom for what.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ctx.changes import Edit
    from ctx.context import Context
    from ctx.storage.files import StoreFile

from ctx import model
from ctx.errors import InvalidArgument, NotFound
from ctx.model import Entry
from ctx.results import Result

PREFIX = "comms:"
STORE = "shared"
SHAPES: tuple[str, ...] = ("request", "report", "decision", "ack", "handoff")
DEFAULT_SHAPE = "request"
OPERATOR = "operator"
CLOSED = ("resolved", "superseded")
SLUG_WORDS = 4
SLUG_CHARS = 40
FORCED = "(value not quoted: stored with --force)"  # as the recorder says it (ctx view hides such text)



def _words(text: str) -> list[str]:
    """The runs of letters and digits (any script) in ``text``, folded."""
    folded = model.fold_name(text)
    return folded.split("_") if folded else []


def reader_name(author: str | None) -> str:
    """Who reads and signs letters: ``CTX_AUTHOR``, else the operator."""
    return author.strip() if author and author.strip() else OPERATOR


def recipient_id(name: str) -> str:
    """The recipient's part of a letter's key: the name folded (see the module's text)."""
    folded = model.fold_name(model.check_name("recipient", name))
    if not folded:
        raise InvalidArgument(f"a recipient needs a name with a letter or a digit, not {name!r}")
    return folded


def prefix_for(name: str) -> str:
    """The key prefix of every letter to ``name``: ``comms:<recipient>:``."""
    return f"{PREFIX}{recipient_id(name)}:"


def _slug(text: str) -> str:
    words = _words(text[:400])[:SLUG_WORDS]
    return "-".join(words)[:SLUG_CHARS].strip("-") or "letter"


def new_key(to: str, text: str, when: str, taken: Callable[[str], bool] | None = None) -> str:
    """A key for a letter to ``to`` sent at ``when`` (RFC 3339), unique here (``taken``:
    whether a key is in use) and, by its random part, across machines."""
    epoch = int(model.parse_ts(when).timestamp())
    while True:
        key = f"{prefix_for(to)}{epoch}-{os.urandom(3).hex()}:{_slug(text)}"
        if taken is None or not taken(key):
            return key


def _check_shape(shape: str) -> None:
    if shape not in SHAPES:
        raise InvalidArgument(f"invalid shape {shape!r}: use one of {', '.join(SHAPES)}")


def letter_entry(author: str | None, to: str, text: str, shape: str, when: str,
                 expects: str | None = None, answers: str | None = None,
                 extra: dict[str, Any] | None = None) -> Entry:
    """A new letter: §3.3's fields (basis reported: the recipient learns what the sender
    says), then the letter's own."""
    entry = model.apply_set(None, text, author=author, when=when, basis="reported", tags=["letter"])
    entry["from"] = reader_name(author)
    entry["to"] = to.strip()
    entry["shape"] = shape
    if expects:
        entry["expects"] = expects
    if answers:
        entry["re"] = answers
    entry.update(extra or {})
    return entry


def _check_texts(ctx: Context, fields: dict[str, Any], force: bool) -> None:
    for name, text in fields.items():
        if isinstance(text, str):
            model.check_text(name, text)
    ctx.refuse_credentials(fields, force)


# --- writes -------------------------------------------------------------------------------

def send(ctx: Context, to: str, text: str, *, shape: str = DEFAULT_SHAPE, expects: str | None = None,
         answers: str | None = None, force: bool = False) -> tuple[str, Entry]:
    """Write a letter to ``to`` (one commit); returns its key and entry. ``answers``
    (``--re``) must name an entry of the shared store."""
    _check_shape(shape)
    recipient_id(to)
    if not text or not text.strip():
        raise InvalidArgument("a letter needs some text")
    if answers is not None:
        model.validate_key(answers)
    _check_texts(ctx, {"text": text, "recipient": to, "expects": expects, "re": answers}, force)
    from ctx.changes import Edit
    made: list[tuple[str, Entry]] = []

    def mutate(files: dict[str, StoreFile]) -> list[Edit]:
        shared = files[STORE]  # one entry read and written: the store is not parsed whole
        if answers is not None and shared.entry(answers) is None:
            raise NotFound(f"no entry {answers!r} in store {STORE!r} to answer (--re)")
        when = model.now()
        key = new_key(to, text, when, lambda k: shared.entry(k) is not None)
        entry = letter_entry(ctx.author, to, text, shape, when, expects, answers)
        shared.put(key, entry)
        made.append((key, entry))
        return [Edit(STORE, key, None, entry)]
    from ctx.display import excerpt
    ctx.transact("send", [STORE], mutate, forced=force,
                 subject=f"send to {to.strip()} ({shape}): {excerpt(text, 50)}" if not force
                 else f"send to {to.strip()} ({shape}) {FORCED}")
    return made[0]


def handoff(ctx: Context, to: str, baton: str, note: str, *, store: str = STORE,
            force: bool = False) -> tuple[Entry, str, Entry]:
    """Hand the baton entry to ``to``: its ``holder`` field names them (the value is
    kept), and they get a handoff letter naming the baton, with the note; one commit
    for both, or nothing. Returns the baton, the letter's key and the letter."""
    model.validate_store(store)
    model.validate_key(baton)
    recipient_id(to)
    if not note or not note.strip():
        raise InvalidArgument("a handoff needs a note (--note)")
    _check_texts(ctx, {"note": note, "recipient": to}, force)
    ctx.check_policy(store, None)
    from ctx.changes import Edit
    made: list[Any] = []

    def mutate(files: dict[str, StoreFile]) -> list[Edit]:
        before = files[store].entry(baton)  # the two entries alone are read and written
        if before is None:
            raise NotFound(f"no baton {baton!r} in store {store!r}")
        after = dict(before)
        after["holder"] = to.strip()
        if ctx.author:
            after["author"] = ctx.author
        files[store].put(baton, after)
        shared = files[STORE]
        when = model.now()
        text = f"The baton {baton} is yours: {note.strip()}"
        key = new_key(to, text, when, lambda k: shared.entry(k) is not None)
        letter = letter_entry(ctx.author, to, text, "handoff", when, expects="ack",
                              extra={"baton": baton if store == STORE else f"{store}/{baton}"})
        shared.put(key, letter)
        made.extend((after, key, letter))
        return [Edit(store, baton, before, after), Edit(STORE, key, None, letter)]
    ctx.transact("handoff", dict.fromkeys([store, STORE]), mutate, forced=force,
                 subject=f"handoff {store}/{baton} to {to.strip()}" + (f" {FORCED}" if force else ""))
    return made[0], made[1], made[2]


# --- reads --------------------------------------------------------------------------------

class Letter:
    """A letter as the inbox shows it: open or answered, new since the last session or not."""

    __slots__ = ("key", "entry", "answered_by", "new")

    def __init__(self, key: str, entry: Entry, answered_by: list[str], new: bool) -> None:
        self.key, self.entry, self.answered_by, self.new = key, entry, answered_by, new

    @property
    def open(self) -> bool:
        return not self.answered_by and self.entry.get("status") not in CLOSED

    @property
    def sender(self) -> str:
        """Who sent it, as every display names them: the entry's author, which ctx writes from
        CTX_AUTHOR; a ``from`` field is only the name as written and says ``operator`` as
        easily as anything (tests/reliability/test_visible_fields.py). No author: the
        operator wrote it, under the name in ``from`` if there is one."""
        author = self.entry.get("author")
        if isinstance(author, str) and author.strip():
            return author
        return self.field("from") or OPERATOR

    def field(self, name: str) -> str:
        value = self.entry.get(name)
        return value if isinstance(value, str) else ""

    def as_json(self) -> dict[str, Any]:
        e = self.entry
        return {"key": self.key, "from": self.field("from") or e.get("author") or OPERATOR,
                "to": self.field("to"), "shape": self.field("shape"), "expects": e.get("expects"),
                "re": e.get("re"), "timestamp": e.get("timestamp"), "status": e.get("status"),
                "text": model.value_text(e.get("value")), "open": self.open,
                "answered_by": self.answered_by, "new": self.new}


def _prefixed(prefix: str):
    from ctx.storage.index import Where
    return Where().key_prefix(prefix)


def letters_to(ctx: Context, reader: str, *, since: Any = None, include_closed: bool = False,
               last_session: str | None = None, limit: int | None = None) -> tuple[list[Letter], int]:
    """The letters to ``reader``, newest first: the open ones (all with ``include_closed``),
    those after ``since`` (a datetime) only; ``new``: written after ``last_session``.
    At most ``limit``; the second value counts those past it."""
    prefix = prefix_for(reader)
    where = _prefixed(prefix)
    if since is not None:
        where.add("ts >= ?", since.timestamp() - 0.001)
    if not include_closed:  # (the open test below decides; this only reads fewer rows)
        where.add("(status IS NULL OR status NOT IN ('resolved', 'superseded'))")

    def mine(r: Result) -> bool:
        return r.key.startswith(prefix) and (since is None or model.ts_key(r.entry.get("timestamp")) >= since)
    found = ctx.query([STORE], mine, None, where)
    if not found:
        return [], 0
    answers = _answers(ctx, prefix)
    seen = model.ts_key(last_session) if last_session else None
    out = []
    for r in found:
        letter = Letter(r.key, r.entry, answers.get(r.key, []),
                        seen is not None and model.ts_key(r.entry.get("created")) > seen)
        if include_closed or letter.open:
            out.append(letter)
    if limit is not None and len(out) > limit:
        return out[:limit], len(out) - limit
    return out, 0


def _answers(ctx: Context, prefix: str) -> dict[str, list[str]]:
    """Each letter to ``prefix`` that a letter answers (``re``), with the keys answering
    it, newest first. The index narrows to letters whose body holds the prefix."""
    where = _prefixed(PREFIX).add("instr(body, ?) > 0", prefix.encode("utf-8"))

    def answer(r: Result) -> bool:
        answered = r.entry.get("re")
        return r.key.startswith(PREFIX) and isinstance(answered, str) and answered.startswith(prefix)
    out: dict[str, list[str]] = {}
    for r in ctx.query([STORE], answer, None, where):
        out.setdefault(r.entry["re"], []).append(r.key)
    return out
