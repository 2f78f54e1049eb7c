"""The command table, continued: letters between agents and the operator, the relay's
handoff, and due dates that bring an entry back (``ctx/letters.py``,
``ctx/resurface.py``). Their handlers are in ``commands/letters.py``. The fast door
takes all five (agents send and read letters as often as they set entries): this
module is loaded on every start, so it holds the rows only."""

from __future__ import annotations

from ctx.cli.params import FLAG, FORCE, JSON, KEY, STORE, WORDS, Arg, Command, Opt

SHAPES = ("request", "report", "decision", "ack", "handoff")  # ctx/letters.py's, listed without importing it
TO = Arg("to", metavar="TO", help="The recipient: an agent's name as its CTX_AUTHOR, or operator.")

LETTERS: tuple[Command, ...] = (
    Command("send", "letters:send", "Write a letter to an agent or the operator.", """\
Write a letter to TO: an entry of the shared store keyed under the
recipient (comms:<recipient>:<second>-<random>:<words>), so that
`ctx list --prefix comms:<recipient>:` finds every letter to them, and
their ctx start shows it under FOR YOU until it is answered (a letter
with --re naming it) or resolved. Names are compared folded: "Agent One",
"agent one" and "agent-one" are one recipient; without CTX_AUTHOR the
sender is operator, and operator is a recipient too. Letters are never
deleted: they are the record of who asked whom for what.""", """\
Examples:
  ctx send "Agent Two" Please review the retry logic in the worker --expects "a report"
  ctx send operator The deploy is blocked on the certificate --shape report
  ctx send "Agent One" Looks right to me --shape ack --re comms:agent_two:1764637704-3fa9c1:please-review
Fields: from, to, shape, expects, re (and a handoff's baton), beside §3.3's;
tags [letter], basis reported.
JSON shape: {"store", "key", "entry", "warnings"}.
""", args=(TO, Arg("text", WORDS, help="The letter (its words are joined by spaces).")),
            options=(Opt("shape", "--shape", choices=SHAPES, default="request", help="What kind of letter."),
                     Opt("expects", "--expects", metavar="TEXT", help="What answer it wants, if any."),
                     Opt("re", "--re", metavar="KEY", help="The letter (or shared entry) this answers."),
                     FORCE, JSON), fast=True, words_rule=True, tool=True),
    Command("inbox", "letters:inbox", "The open letters to you (CTX_AUTHOR, else operator).", """\
The letters to CTX_AUTHOR (unset: operator) that are open (no letter
with --re answers them, not resolved), newest first; those written since
your last session (your newest commit here) are marked new (*). Reads only.""", """\
Examples:
  CTX_AUTHOR="Agent One" ctx inbox
  ctx inbox --all --since 2026-11-01 --json
To answer: ctx send NAME TEXT --re KEY; to close without an answer:
ctx resolve KEY --note "done".
JSON shape: {"reader", "last_session": TIME|null, "letters": [{"key",
  "from", "to", "shape", "expects", "re", "timestamp", "status", "text",
  "open", "answered_by": [key], "new"}]}.
""", options=(Opt("all_letters", "--all", kind=FLAG, help="Also the answered and resolved ones."),
              Opt("since", "--since", metavar="TIME",
                  help="timestamp at or after TIME: RFC 3339, or YYYY-MM-DD (00:00 UTC)."),
              JSON), reads=True, fast=True, tool=True),
    Command("handoff", "letters:handoff", "Hand a baton entry to another agent, with a letter.", """\
Hand the baton entry KEY to TO: its holder field names TO (the value is
kept) and TO gets a handoff letter naming the baton, with the note, in
one commit. The baton must exist (exit 1 otherwise, nothing written); a
note that looks like a credential is refused (exit 4, nothing written).""", """\
Example:
  ctx set relay_upload_fix_baton "State: fix merged; next: promote to prod"
  ctx handoff "Agent Two" --baton relay_upload_fix_baton --note "staging soak passed"
The receiver's first act: an ack letter back (ctx send NAME ... --shape ack
--re KEY), then read the baton.
JSON shape: {"store", "key", "baton", "letter": {"key", "entry"}, "warnings"}.
""", args=(TO,), options=(Opt("baton", "--baton", required=True, metavar="KEY", help="The baton entry."),
                          Opt("note", "--note", required=True, metavar="TEXT", help="What the receiver needs to know."),
                          STORE, FORCE, JSON), fast=True, tool=True),
    Command("remind", "letters:remind", "Give an entry a due date: it comes back in every brief.", """\
Set KEY's due date: from 7 days before it (and while overdue) the entry is
in every brief's DUE section, until it is resolved or superseded. DATE is
YYYY-MM-DD, today, tomorrow or +N (days); one ctx cannot read is exit 2,
nothing written. The value, status and timestamp are left alone.""", """\
Examples:
  ctx remind issue_cert_renewal 2026-12-20 --must-not-forget
  ctx set plan_vendor_call "Call the vendor about the quota" --due +3
Then `ctx review KEY` each time it comes back.
JSON shape: {"store", "key", "entry", "warnings"}.
""", args=(KEY, Arg("date", metavar="DATE", help="YYYY-MM-DD, today, tomorrow or +N days.")),
            options=(Opt("must_not_forget", "--must-not-forget", kind=FLAG,
                         help="Never let its interval grow past 30 days."), STORE, JSON), fast=True, idempotent=True,
            tool=True),
    Command("review", "letters:review", "Record a review of a due entry; set its next date.", """\
Record that KEY was reviewed today and set its next due date: today plus
the last interval (from when the date was set to the date, at least one
day) times 2.5, rounded; at most 30 days for a must-not-forget entry, so
it keeps coming back. With --stale it is due tomorrow instead and named in
the operator's brief until the next review.""", """\
Examples:
  ctx review issue_cert_renewal
  ctx review plan_vendor_call --stale    # at risk: the operator should look
Fields: due, due_set (the day the date was set), last_review, stale,
must_not_forget. An entry without a due date is exit 2.
JSON shape: {"store", "key", "entry", "warnings"}.
""", args=(KEY,), options=(Opt("stale", "--stale", kind=FLAG,
                               help="Stale or at risk: due tomorrow, named in the operator's brief."),
                           STORE, JSON), fast=True, tool=True),
)
