"""The entry model of spec §3 and the value rules of §9.1, as pure functions.

Nothing here touches the disk: the operations in ``context.py`` read a store,
call these functions to compute the new entry, and write it back. Keeping
the field rules pure makes each MUST of §3/§4 testable on plain dicts.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    import re
    from datetime import datetime
    from typing import Any
# re, json, datetime and unicodedata are imported where used: `ctx get` needs none of them
# (tests/cli/test_fastcli.py: test_the_reads_load_neither_re_nor_pathlib)

from ctx.errors import InvalidArgument

STORES: tuple[str, ...] = ("operator", "shared", "agent")
SOURCES: tuple[str, ...] = ("operator", "agent", "both", "system")
BASES: tuple[str, ...] = ("verified", "reported", "inferred")
SCOPES: tuple[str, ...] = ("global", "session")
STATUSES: tuple[str, ...] = ("amended", "superseded", "resolved")
STATUS_FIELDS: tuple[str, ...] = ("status", "status_timestamp", "status_note", "superseded_by")
DEFAULT_STORE = "shared"
FOCUS_KEY = "current_focus"
BRIEF_DAYS = 7      # §5.2: decisions changed within N x 24 hours (the brief's and start's default)
BRIEF_CHANGES = 10  # §5.2: recent changes shown
INSTRUCTION_TAGS = ("directive", "preference", "constraint")  # §5.2: the operator's standing instructions
MAX_SAFE_INTEGER = 2**53 - 1

# compiled on first use (``_rx``): `ctx get` compiles none of them
_DATE = r"(\d{4})-(\d{2})-(\d{2})"
_RFC3339 = r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?"

if TYPE_CHECKING:
    from typing import TypeAlias

    Entry: TypeAlias = dict[str, Any]  # an entry: a JSON object
else:
    Entry = dict


# --- time -------------------------------------------------------------------

_PATTERNS: dict[str, re.Pattern[str]] = {}


def _rx(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled, once."""
    found = _PATTERNS.get(pattern)
    if found is None:
        import re
        found = _PATTERNS[pattern] = re.compile(pattern)
    return found


def clock() -> float:
    """Seconds since the epoch, as a write reads them: its entry's stamps (``now``) and its
    commit's date. The one seam for a test's clock: ``tests/support/clock.py`` replaces this
    function, so callers look it up as ``model.clock()`` at each call, never import the name
    (tests/core/test_letters.py, tests/git/test_git_history.py)."""
    return time.time()


def now() -> str:
    """The current time in the store's form: RFC 3339, UTC, ``Z``, whole seconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(clock()))


def format_ts(moment: datetime) -> str:
    from datetime import UTC
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_ts(text: str) -> datetime:
    """Parse an RFC 3339 timestamp or a ``YYYY-MM-DD`` date (00:00 UTC that day).

    Raises ``InvalidArgument`` on anything else, so ``--since`` gives a clear
    error. A timestamp without a zone is taken as UTC.
    """
    from datetime import datetime
    if is_stored_stamp(text):
        # read without compiling the two expressions below: a write indexes its
        # entry's time, a list orders and shows a time per entry
        try:
            return datetime.fromisoformat(text[:19] + "+00:00")
        except ValueError:
            pass  # (a day or an hour out of range: the general rule says so)
    return _parse_any_ts(text)


def is_stored_stamp(text: str) -> bool:
    """Whether ``text`` is in the form ``now`` writes, ``YYYY-MM-DDTHH:MM:SSZ`` (ASCII digits)."""
    return (len(text) == 20 and text.isascii()
            and text[4] + text[7] + text[10] + text[13] + text[16] + text[19] == "--T::Z"
            and (text[:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19]).isdigit())


def _parse_any_ts(text: str) -> datetime:
    from datetime import UTC, datetime
    raw = text.strip()
    if _rx(_DATE).fullmatch(raw):
        try:
            return datetime.strptime(raw, "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            raise InvalidArgument(f"not a valid date: {text!r}") from None
    if not _rx(_RFC3339).fullmatch(raw):
        raise InvalidArgument(f"not an RFC 3339 timestamp or YYYY-MM-DD date: {text!r}")
    candidate = raw.replace("z", "Z")
    if candidate.endswith("Z"):
        candidate = candidate[:-1] + "+00:00"
    candidate = candidate.replace("t", "T").replace(" ", "T", 1)
    try:
        moment = datetime.fromisoformat(candidate)
    except ValueError:
        raise InvalidArgument(
            f"not an RFC 3339 timestamp or YYYY-MM-DD date: {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


def ts_key(text: Any) -> datetime:
    """A sort key for a stored timestamp; malformed ones sort as the oldest."""
    if isinstance(text, str):
        try:
            return parse_ts(text)
        except InvalidArgument:
            pass
    from datetime import UTC, datetime
    return datetime(1970, 1, 1, tzinfo=UTC)


def _day_start(year: int, month: int, day: int) -> int | None:
    """00:00 UTC of a day of the proleptic Gregorian calendar in epoch seconds, counted
    as ``datetime`` counts them (days from the civil date); None for no such day."""
    if not (1 <= year <= 9999 and 1 <= month <= 12 and day >= 1):
        return None
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if day > (29 if leap else 28) if month == 2 else day > (30 if month in (4, 6, 9, 11) else 31):
        return None
    shifted = year - (month <= 2)           # the year from March: the leap day comes last
    era, of_era = divmod(shifted, 400)
    of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    of_era_days = of_era * 365 + of_era // 4 - of_era // 100 + of_year
    return (era * 146097 + of_era_days - 719468) * 86400


EPOCH_ORDINAL = 719163  # date(1970, 1, 1).toordinal()


def day_number(text: str) -> int | None:
    """A ``YYYY-MM-DD`` day as days since 1970-01-01 (``date.toordinal()`` less
    ``EPOCH_ORDINAL``); None for anything else."""
    if len(text) != 10 or text[4] + text[7] != "--" or not (text[:4] + text[5:7] + text[8:]).isdigit() \
            or not text.isascii():
        return None
    start = _day_start(int(text[:4]), int(text[5:7]), int(text[8:]))
    return None if start is None else start // 86400


def day_text(number: int) -> str:
    """``day_number``'s inverse: the ``YYYY-MM-DD`` of a day counted from 1970-01-01."""
    era, of_era = divmod(number + 719468, 146097)
    year_of_era = (of_era - of_era // 1460 + of_era // 36524 - of_era // 146096) // 365
    of_year = of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * of_year + 2) // 153     # from March
    day = of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + 3 if shifted_month < 10 else shifted_month - 9
    return f"{year_of_era + era * 400 + (month <= 2):04d}-{month:02d}-{day:02d}"


_DAY_STARTS: dict[str, int | None] = {}  # "YYYY-MM-DD" -> its 00:00 UTC in epoch seconds (None: no such day)


def ts_seconds(text: Any) -> float:
    """``ts_key(text).timestamp()``: seconds since the epoch, 0 for a malformed stamp. A
    stamp in the stored form costs no datetime of its own (a list shows a time per entry,
    an index rebuild keeps one per entry): its day is read once per process."""
    if isinstance(text, str) and is_stored_stamp(text):
        day = text[:10]
        start = _DAY_STARTS.get(day, -1)
        if start == -1:
            start = _DAY_STARTS[day] = _day_start(int(day[:4]), int(day[5:7]), int(day[8:10]))
        hour, minute, second = int(text[11:13]), int(text[14:16]), int(text[17:19])
        if start is not None and hour < 24 and minute < 60 and second < 60:
            return float(start + hour * 3600 + minute * 60 + second)
    return ts_key(text).timestamp()


# --- values (§9.1) --------------------------------------------------------------

_LITERALS = {"true": True, "false": False, "null": None}


def _integer_literal(text: str) -> bool:
    """A JSON integer: ``-?(0|[1-9][0-9]*)``, ASCII digits only."""
    digits = text[1:] if text[:1] == "-" else text
    return digits.isascii() and digits.isdigit() and (digits == "0" or digits[0] != "0")


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def _finite_float(text: str) -> float:
    import math
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(text)
    return number


def parse_value(text: str) -> Any:
    """Turn the joined words of a value into the stored value (§9.1).

    Objects, arrays, ``true``, ``false``, ``null`` and safe integers become
    JSON; anything else stays the string it was, so every implementation
    stores the same value for the same words.
    """
    if text in _LITERALS:
        return _LITERALS[text]
    if len(text) <= 17 and _integer_literal(text):  # 2^53 - 1 has 16 digits
        number = int(text)
        return number if abs(number) <= MAX_SAFE_INTEGER else text
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
        from ctx.jsoncodec import loads
        try:
            value = loads(stripped, parse_constant=_reject_constant, parse_float=_finite_float)
            return value if _depth(value) <= MAX_DEPTH else text  # too deep to write back: text
        except (ValueError, RecursionError):
            return text
    return text


MAX_DEPTH = 200


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


def check_text(name: str, text: str | None) -> None:
    """Refuse text that cannot be stored as UTF-8 (a lone surrogate: invalid UTF-8 from a shell)."""
    if text is None:
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument(f"the {name} is not valid UTF-8") from None


def check_value(value: Any) -> None:
    """``check_text`` over every string inside a value."""
    if isinstance(value, str):
        check_text("value", value)
    elif isinstance(value, dict):
        for k, v in value.items():
            check_text("value", k)
            check_value(v)
    elif isinstance(value, list):
        for v in value:
            check_value(v)


def json_text(value: Any) -> str:
    """A value's JSON text (§9.1): compact, stored member order, non-ASCII as is."""
    from ctx.jsoncodec import compact
    return compact(value)


def value_text(value: Any) -> str:
    """The text a value is searched and displayed by: itself if a string."""
    return value if isinstance(value, str) else json_text(value)


def strip_amend_notes(text: str) -> str:
    """Remove the leading ``[Amended YYYY-MM-DD: …]`` notes (each up to the first "]" that
    ends a line) that amend stacked on a value."""
    while text.startswith("[Amended ") and text[19:21] == ": ":
        date = text[9:19]
        if not (date[4] + date[7] == "--" and (date[:4] + date[5:7] + date[8:]).isdecimal()):
            break
        end = text.find("]\n", 21)
        if end < 0:
            break
        text = text[end + 2:]
    return text


# --- keys and fields ----------------------------------------------------------

# The bounds of what a writer may name (§3.2 lets an implementation refuse such keys): a key, a
# tag or an author has no honest use for a control character (it would print as a line or a
# terminal command: ``ctx/display.py``), nor for thousands of characters (the brief is bounded,
# §5.2). Held by tests/reliability/test_visible_fields.py.
KEY_BOUND = 200
TAG_BOUND = 100
AUTHOR_BOUND = 100
RESERVED_AUTHORS: tuple[str, ...] = ("operator", "system")  # an agent's name never: whose voice they are


def _shown(text: str, bound: int = 60) -> str:
    """A refused text in an error line: its repr, cut (the line stays one short line)."""
    return repr(text) if len(text) <= bound else repr(text[:bound]) + f"... ({len(text):,} characters)"


def validate_key(key: str) -> str:
    check_text("key", key)
    if not key:
        raise InvalidArgument("a key must not be empty")
    if len(key) > KEY_BOUND:
        raise InvalidArgument(f"key {_shown(key)} is longer than {KEY_BOUND} characters; use a shorter one")
    for ch in key:
        if ch.isspace() or _is_control(ch):
            raise InvalidArgument(
                f"key {_shown(key)} holds whitespace or a control character; "
                "use lowercase snake_case")
    return key


def fold_name(name: str) -> str:
    """A name folded as letters' recipients are (``ctx/letters.py``): lower case, every run of
    characters that are neither letters nor digits (any script) one ``_``."""
    return "_".join("".join(c if c.isalnum() else " " for c in name.casefold()).split())


def check_name(what: str, name: str, bound: int = AUTHOR_BOUND) -> str:
    """A name (an author, a recipient) stripped; refused when it holds a control character
    (a space is a name's, a tab or a line break is not) or is longer than ``bound``."""
    check_text(what, name)
    stripped = name.strip()
    if len(stripped) > bound:
        raise InvalidArgument(f"{what} {_shown(stripped)} is longer than {bound} characters")
    if any(_is_control(ch) or (ch.isspace() and ch != " ") for ch in stripped):
        raise InvalidArgument(f"{what} {_shown(stripped)} holds a control character or a line break; "
                              "a name is one line of visible text")
    return stripped


def validate_author(name: str | None, what: str = "CTX_AUTHOR") -> str | None:
    """The author an agent writes as (``CTX_AUTHOR``, §3.4), stripped, or None (the operator).
    Refused besides ``check_name``'s: ``operator`` and ``system`` in any spelling the letters
    fold together (``fold_name``): the one is the operator's voice, the other a tool's."""
    if name is None or not name.strip():
        return None
    stripped = check_name(what, name)
    if fold_name(stripped) in RESERVED_AUTHORS:
        raise InvalidArgument(f"{what}={_shown(stripped)} is not a name an agent may take: "
                              f"{' and '.join(RESERVED_AUTHORS)} are the operator's and ctx's own "
                              f"(leave {what} unset to write as the operator)")
    return stripped


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (``_is_control``): what no one-line field
    takes, typed here or arriving (``ctx/arrival.py``)."""
    return any(_is_control(ch) for ch in text)


def _is_control(ch: str) -> bool:
    """A Unicode control, format, surrogate, private-use or unassigned character (category C*)."""
    if ch.isascii():
        return not ch.isprintable()
    import unicodedata
    return unicodedata.category(ch).startswith("C")


def validate_store(store: str) -> str:
    if store not in STORES:
        raise InvalidArgument(f"unknown store {store!r}: use one of {', '.join(STORES)}")
    return store


def _check_choice(name: str, value: str | None, choices: tuple[str, ...]) -> None:
    if value is not None and value not in choices:
        raise InvalidArgument(f"invalid {name} {value!r}: use one of {', '.join(choices)}")


def text_tags(entry: Entry) -> list[str] | None:
    """The entry's tags that are text, in order: what ``--tag`` finds it by (None: its tags
    are not a list; a tag that is not text, written by hand, matches no ``--tag``)."""
    tags = entry.get("tags")
    return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else None


def validate_tags(tags: list[str] | tuple[str, ...] | None) -> list[str] | None:
    if tags is None:
        return None
    out: list[str] = []
    for tag in tags:
        if not tag or not tag.strip():
            raise InvalidArgument("a tag must not be empty")
        check_text("tag", tag)
        if len(tag) > TAG_BOUND:
            raise InvalidArgument(f"tag {_shown(tag)} is longer than {TAG_BOUND} characters")
        if any(_is_control(ch) or (ch.isspace() and ch != " ") for ch in tag):
            raise InvalidArgument(f"tag {_shown(tag)} holds a control character or a line break")
        if tag not in out:
            out.append(tag)
    return out


def status_label(entry: Entry) -> str:
    """The status as every display shows it: ``amended``, ``superseded by K``…"""
    status = entry.get("status")
    if not status:
        return ""
    if status == "superseded" and entry.get("superseded_by"):
        return f"superseded by {entry['superseded_by']}"
    return str(status)


# --- the field rules of §3.6 and §4.2 ---------------------------------------------

def apply_set(old: Entry | None, value: Any, *, author: str | None, when: str,
              source: str | None = None, basis: str | None = None,
              scope: str | None = None, tags: list[str] | None = None,
              derivation: str | None = None) -> Entry:
    """The entry after ``set`` (§4.2): a new one, or ``old`` updated field by field.

    Fields keep their position in the object, so a rewrite of a file written
    by another implementation changes only what the operation changed.
    """
    _check_choice("source", source, SOURCES)
    _check_choice("basis", basis, BASES)
    _check_choice("scope", scope, SCOPES)
    tags = validate_tags(tags)
    check_value(value)
    check_text("derivation", derivation)
    for tag in tags or []:
        check_text("tag", tag)
    default_source = "agent" if author else "operator"
    if old is None:
        entry: Entry = {"value": value, "source": source or default_source}
        if author:
            entry["author"] = author
        entry["basis"] = basis or "inferred"
        entry["scope"] = scope or "global"
        entry["tags"] = tags or []
        if derivation:
            entry["derivation"] = derivation
        entry["created"] = when
        entry["timestamp"] = when
        return entry
    entry = dict(old)
    entry["value"] = value
    entry["source"] = source or default_source
    if author:
        entry["author"] = author
    else:
        entry.pop("author", None)
    if basis is not None:
        entry["basis"] = basis
    elif entry.get("basis") not in BASES:
        entry["basis"] = "inferred"
    if scope is not None:
        entry["scope"] = scope
    elif entry.get("scope") not in SCOPES:
        entry["scope"] = "global"
    if tags is not None:
        entry["tags"] = tags
    elif not isinstance(entry.get("tags"), list):
        entry["tags"] = []
    if derivation:
        entry["derivation"] = derivation
    else:
        entry.pop("derivation", None)
    if "created" not in entry:
        entry["created"] = when
    entry["timestamp"] = when
    for field in STATUS_FIELDS:
        entry.pop(field, None)
    return entry


def apply_status(old: Entry, status: str, *, author: str | None, when: str,
                 note: str | None = None, by: str | None = None) -> Entry:
    """The entry after amend, supersede or resolve (§3.6)."""
    _check_choice("status", status, STATUSES)
    check_text("note", note)
    check_text("key", by)
    entry = dict(old)
    if status == "amended":
        if not note:
            raise InvalidArgument("amend needs a note")
        entry["value"] = f"[Amended {when[:10]}: {note}]\n{value_text(old.get('value'))}"
    for field in ("status_note", "superseded_by"):
        entry.pop(field, None)
    entry["status"] = status
    entry["status_timestamp"] = when
    if note:
        entry["status_note"] = note
    if status == "superseded":
        if not by:
            raise InvalidArgument("supersede needs --by KEY")
        entry["superseded_by"] = by
    entry["timestamp"] = when
    if author:
        entry["author"] = author
    return entry


def apply_basis(old: Entry, basis: str, *, author: str | None) -> Entry:
    """The entry after ``basis`` (§4.4): the timestamp is left alone."""
    _check_choice("basis", basis, BASES)
    entry = dict(old)
    entry["basis"] = basis
    if author:
        entry["author"] = author
    return entry


BOOKKEEPING = frozenset(("timestamp", "status_timestamp", "created", "author"))  # set by every write


def changed_fields(before: Entry | None, after: Entry | None,
                   skip: frozenset[str] = frozenset()) -> dict[str, tuple[Any, Any]]:
    """The fields whose value differs between two versions of an entry, ``(old, new)``
    (None for a field one side lacks), in the entries' own order; ``skip`` left out."""
    old, new = before or {}, after or {}
    names = dict.fromkeys(list(old) + list(new))
    return {n: (old.get(n), new.get(n)) for n in names if n not in skip and old.get(n) != new.get(n)}
