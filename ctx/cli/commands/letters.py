"""Letters, the relay's handoff, and due dates: send, inbox, handoff, remind, review."""

from __future__ import annotations

from ctx.cli.output import write_done

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from ctx.cli.run import Run
    from ctx.context import Context
    from ctx.letters import Letter


def send(run: Run, to: str, text: list[str], shape: str, expects: str | None, re: str | None,
         force: bool, as_json: bool) -> None:
    from ctx import letters
    from ctx.display import name
    context = run.context()
    key, entry = letters.send(context, to, " ".join(text), shape=shape, expects=expects, answers=re,
                              force=force)
    write_done(run, context, {"store": letters.STORE, "key": key, "entry": entry},
               f"sent {letters.STORE}/{name(key)} to {name(entry['to'])}", as_json)


def last_session(context: Context) -> str | None:
    """When this author last wrote here (their newest commit), or None (no author, no git)."""
    from ctx.cli.commands.entries import since
    try:
        found = since(context, write=True)
    except Exception:  # the marks are left out; the letters are still listed
        return None
    return found.last if found is not None else None


def letter_line(letter: Letter) -> str:
    from ctx.brief import SENDER_BOUND
    from ctx.display import excerpt, local_time, name
    e = letter.entry
    marks = []
    if letter.answered_by:
        marks.append(f"[answered by {name(letter.answered_by[0])}]")
    if e.get("status"):
        marks.append(f"[{name(e['status'])}]")
    expects = f" (expects: {excerpt(e['expects'], 60)})" if isinstance(e.get("expects"), str) else ""
    return (f"{'*' if letter.new else ' '} {local_time(e.get('timestamp'))} "
            f"from {name(letter.sender, SENDER_BOUND)} "
            f"({name(letter.field('shape'), SENDER_BOUND)}){' ' + ' '.join(marks) if marks else ''}: "
            f"{excerpt(e.get('value'), 100)}{expects}\n    {name(letter.key)}")


def inbox(run: Run, all_letters: bool, since: str | None, as_json: bool) -> None:
    from ctx import letters
    from ctx.display import name
    from ctx.model import parse_ts
    after = parse_ts(since) if since is not None else None
    context = run.context()
    reader = letters.reader_name(context.author)
    last = last_session(context) if context.author else None
    found, _ = letters.letters_to(context, reader, since=after, include_closed=all_letters, last_session=last)

    def text() -> str:
        kind = ("letter" if all_letters else "open letter") + ("" if len(found) == 1 else "s")
        shown = name(reader)
        if not found:
            return f"no {kind} to {shown}" + (f" since {since}" if since else "")
        new = sum(1 for letter in found if letter.new)
        head = f"{len(found)} {kind} to {shown}, newest first"
        if new:
            head += f" ({new} new since your last session: *)"
        return head + "\n" + "\n".join(letter_line(letter) for letter in found)
    run.result(lambda: {"reader": reader, "last_session": last, "letters": [x.as_json() for x in found]},
               text, as_json)


def handoff(run: Run, to: str, baton: str, note: str, store: str, force: bool, as_json: bool) -> None:
    from ctx import letters
    from ctx.display import name
    context = run.context()
    entry, key, letter = letters.handoff(context, to, baton, note, store=store, force=force)
    write_done(run, context, {"store": store, "key": baton, "baton": entry,
                              "letter": {"key": key, "entry": letter}},
               f"handed {store}/{baton} to {name(letter['to'])}; letter {letters.STORE}/{name(key)}", as_json)


def remind(run: Run, key: str, date: str, must_not_forget: bool, store: str, as_json: bool) -> None:
    from ctx import resurface
    context = run.context()
    entry = resurface.remind(context, key, date, must_not_forget=must_not_forget, store=store)
    write_done(run, context, {"store": store, "key": key, "entry": entry},
               f"{store}/{key} is due {entry['due']}{' (must not forget)' if entry.get('must_not_forget') else ''}",
               as_json)


def review(run: Run, key: str, stale: bool, store: str, as_json: bool) -> None:
    from ctx import resurface
    context = run.context()
    entry = resurface.review(context, key, stale=stale, store=store)
    stale_note = " (stale: the operator's brief names it)" if stale else ""
    write_done(run, context, {"store": store, "key": key, "entry": entry},
               f"reviewed {store}/{key}: next due {entry['due']}{stale_note}", as_json)
