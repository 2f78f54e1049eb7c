"""The command table, continued: the git-native commands (history, log, diff, view,
revert, doctor, hooks, scan, purge) and sync (remote, pull, push, sync, status, clone).
Their handlers are in ``commands/history.py``, ``commands/view.py`` and ``commands/sync.py``."""

from __future__ import annotations

from ctx.cli.params import ANY_STORE, FLAG, INT, JSON, KEY, REMOTE, STORE, Arg, Command, Opt

# cli_only: an MCP tool is always an agent's to call, and an agent may not take a weaker
# protection (ctxgit/sync/arrived.py; test_sync_announces.py)
ACCEPT_WEAKER = Opt("accept_weaker", "--accept-weaker", kind=FLAG, cli_only=True,
                    help="Take a remote commit that turns a protection off (enforce-stores); "
                         "the operator only (exit 4 with CTX_AUTHOR set).")

HISTORY: tuple[Command, ...] = (
    Command("history", "history:history", "Every version of an entry, newest first.", """\
Every version of an entry, newest first: commit, time, author, operation, value.

Exits 1 when the key never existed in the store.""", """\
Examples:
  ctx history decision_db_pool
  ctx history pref_one_question --store operator -n 5 -v
  ctx history k --all-stores --json
Newest first. JSON shape: a list of {"commit", "date", "author", "email",
  "committer", "committer_email", "operation", "store", "key", "event":
  created|changed|deleted, "status", "entry" (null when deleted),
  "subject", "stores", "keys"}.
""", args=(KEY,), options=(STORE, Opt("all_stores", "--all-stores", kind=FLAG,
                                      help="The key's history in every store."),
                          Opt("limit", "-n", kind=INT, minimum=1, help="At most N versions."),
                          Opt("verbose", "-v", "--verbose", kind=FLAG, help="Whole values, not excerpts."), JSON),
            reads=True, git=True, tool=True),
    Command("log", "history:log", "The context's commits, newest first.", """\
The context's commits, one line each: id, local date, author, subject.
The author is who wrote the entry (CTX_AUTHOR); when another account
committed it (the machine's git identity), the line says "Agent Z via
Olive Operator". With KEY, the commits that changed that entry (exit 1
when none ever did). With --verify, each commit's signature is checked as
git checks it and marked good (with its signer), bad, unknown signer or
unsigned: ssh signatures against gpg.ssh.allowedSignersFile, openpgp ones
against your gpg keyring.""", """\
Examples:
  ctx log -n 20
  ctx log decision_db_pool
  ctx log --author "Agent One" --since 2026-11-29 --json
  ctx log --verify -n 10
  ctx log --shown -n 20
Newest first. JSON shape: a list of {"commit", "date", "author", "email",
  "committer", "committer_email", "operation", "stores", "keys",
  "subject"}; with --verify also "signature": good|bad|unknown signer|
  unsigned, "signer", "signature_detail".
With --shown, the shown log instead (this machine's, in .git/ctx/, never
committed, its oldest records dropped past 256 KB): each start payload and
each recall at a failing command that reached a model, newest first, as a
list of {"time", "what": start|recall, "harness", "session", "author",
"keys": [{"store", "key"}]}; --author, --since, KEY and -n filter it.
""", args=(Arg("key", required=False, help="Only the commits that changed this entry."),),
            options=(Opt("store", "--store", "-s", choices=ANY_STORE.choices,
                                       help="Only commits touching this store."),
                     Opt("author", "--author", help="Only commits whose author name or email contains this."),
                     Opt("since", "--since", metavar="TIME",
                         help="Only commits at or after TIME (RFC 3339 or YYYY-MM-DD)."),
                     Opt("limit", "-n", kind=INT, minimum=1, help="At most N commits."),
                     Opt("verify", "--verify", kind=FLAG,
                         help="Check each commit's signature: good, bad, unknown signer or unsigned."),
                     Opt("shown", "--shown", kind=FLAG,
                         help="The shown log: which entries reached which session (start payloads, recalls)."),
                     JSON), reads=True, git=True, tool=True),
    Command("diff", "history:diff", "Entry-level changes between two states.", """\
Entries added, removed and changed (field by field) between two states.

Without REV2 the later state is the store files on disk; without REV and
--since the earlier one is HEAD (so it shows uncommitted outside edits).""", """\
Examples:
  ctx diff --since 2026-11-29        # what changed since my last session
  ctx diff HEAD~10                   # the last ten commits' changes
  ctx diff 3f2a91c0 HEAD --store operator --json
REV is a commit id, HEAD~N, or a date (the last commit of that day).
JSON shape: {"from", "to", "changes": [{"store", "key", "change":
  added|removed|changed, "entry" (added/removed) | "fields": {name:
  {"old", "new"}} (changed)}]}.
""", args=(Arg("rev", required=False, help="The earlier state."), Arg("rev2", required=False, help="The later state.")),
            options=(Opt("store", "--store", "-s", choices=ANY_STORE.choices, help="Only this store."),
                     Opt("since", "--since", metavar="TIME", help="From the state just before TIME."), JSON),
            reads=True, git=True, tool=True),
    Command("view", "view:view", "Write the operator's view: one HTML page to audit the context.", """\
Write one self-contained HTML page to audit the context, and print its path:
the entry counts, the commit shown and the sync state; writes per day by
author (a chart) and every commit, filterable by author and operation; the
entries by store, searchable, each with its versions (values compared word
by word); decisions and open items as in the brief; the newest summaries;
the entries changed most often and those untouched the longest.

No server and no network: style, script and chart are inside the file,
written by default to .git/ctx/view/ (never committed). Only what HEAD
reaches is shown; a value stored with --force shows as a preview, and
anything that looks like a credential is redacted.""", """\
Examples:
  ctx view --open
  ctx view --since 2026-11-23 --author "Agent Two" --out ~/audit.html
JSON shape: {"path", "bytes", "commit", "entries", "commits"}.
""", options=(Opt("out", "--out", metavar="FILE", help="Write the page here (default: .git/ctx/view/ctx-view.html)."),
              Opt("open_page", "--open", kind=FLAG, help="Open it in the default browser."),
              Opt("since", "--since", metavar="DATE", help="Only commits (and the entries they changed) at or "
                                                           "after DATE (RFC 3339 or YYYY-MM-DD)."),
              Opt("author", "--author", metavar="NAME", help="Only commits whose author name or email contains "
                                                             "NAME (and the entries they changed)."), JSON),
            reads=True, git=True, auto_sync=False),
    Command("revert", "history:revert", "Undo one commit's change, as a new commit.", """\
Undo one commit's change to the stores, as a new commit.

The reverted commit stays in history. Refused (exit 4) when a later
commit changed one of the same entries.""", """\
Example:
  ctx revert 3f2a91c0
""", args=(Arg("rev", help="The commit to undo."),), options=(JSON,), git=True),
    Command("doctor", "history:doctor", "Check the context and repair what is safe.", """\
Check the context: store files, repository, uncommitted changes, .gitignore,
git lock files (here and in remotes on a local path), size.

Repairs what is safe (commits outside changes, adds .gitignore lines, makes
again a .git an interrupted first write left empty, packs). A store file ctx
cannot trust is reported, never touched; so is a lock file ctx did not leave.""", """\
Examples:
  ctx doctor            # report and repair what is safe
  ctx doctor --check    # report only; exit 1 when something is wrong
""", options=(Opt("check", "--check", kind=FLAG, help="Report only; change nothing."), JSON)),
    Command("hooks", None, "Install ctx's git pre-commit hook.", "The git hooks of the context root's repository.", """\
Example:
  ctx hooks install
""", group=True),
    Command("hooks install", "history:hooks_install", "Install the pre-commit hook.", """\
Install .git/hooks/pre-commit in the context root: a manual `git commit`
that adds a credential, memory/.lock or a temporary file is refused.

A hook ctx did not write is left as it is (and said so).""", """\
Example:
  ctx hooks install
""", options=(JSON,), idempotent=True, git=True),
    Command("scan", "history:scan", "Find credentials in the context (and its history).", """\
Scan the store files, summaries and RULES.md for credentials.

Findings name the store/key (or file and line) and the commit, never the
secret whole. Remove one with `ctx delete`, or from history with `ctx purge`.""", """\
Examples:
  ctx scan
  ctx scan --history --json
Exit status 1 when something is found. JSON shape: a list of {"commit"
  (null for the current files), "path", "line", "entry" ("store/key field"
  or null), "rule", "kind", "preview"}.
""", options=(Opt("in_history", "--history", kind=FLAG, help="Scan every commit too (blobs and messages)."), JSON),
            reads=True, slow=True),
    Command("purge", "history:purge", "Remove an entry from the whole history.", """\
Remove an entry from every commit, for a secret that slipped through.

Rewrites the commits that hold it (every other entry kept byte for byte,
authors and dates kept, the value scrubbed from commit messages), then
prunes the old commits. Remotes and older clones still hold it.""", """\
Example:
  ctx purge leaked_token --store shared --yes
""", args=(KEY,), options=(STORE, Opt("yes", "--yes", kind=FLAG, help="Really rewrite the history (required)."), JSON),
            destructive=True, git=True, slow=True, auto_sync=False),
)

SYNC: tuple[Command, ...] = (
    Command("remote", "sync:remote", "Remotes to sync with.", """\
List the context's remotes, or add one (any git remote: a bare
repository on a server, GitHub, GitLab, a USB disk).""", """\
Examples:
  ctx remote add origin git@example.com:me/ctx.git
  ctx remote add usb /media/usb/ctx.git
  ctx remote -v
""", options=(Opt("verbose", "-v", "--verbose", kind=FLAG, help="Show each remote's URL."), JSON),
            reads=True, group=True, git=True, auto_sync=False),
    Command("remote add", "sync:remote_add", "Add a remote.",
            """\
Add a remote NAME at URL (a path, file://, ssh or https). A URL with a
password in it is refused: a git credential helper keeps it instead.""",
            """\
Example:
  ctx remote add origin /srv/git/ctx.git
""", args=(Arg("name", help="The remote's name."), Arg("url", help="Where it is.")), idempotent=True, git=True,
            auto_sync=False),
    Command("pull", "sync:pull", "Fetch and merge from a remote.", """\
Fetch REMOTE (default: main's upstream; without one, the only remote, or
origin) and merge it, entry by entry. Never rewrites local history; a merge is a commit with both parents.
Says what changed besides entries and refuses a weaker protection as `ctx sync` does.""", """\
Example:
  ctx pull origin
JSON shape: as `ctx sync --json`'s, with "pushed" and "sent" null.
""", args=(REMOTE,), options=(ACCEPT_WEAKER, JSON), git=True, slow=True, pulls=True, network=True,
            auto_sync=False),
    Command("push", "sync:push", "Push main to a remote.", """\
Push main to REMOTE and make it main's upstream (so `git pull` works too).
Says how many commits it sent ("origin already had everything" when none).
Refused (exit 4) when the remote has changes this machine lacks: `ctx sync`.""", """\
Example:
  ctx push origin
JSON shape: {"pushed": remote, "sent": n}.
""", args=(REMOTE,), options=(JSON,), idempotent=True, git=True, slow=True, network=True, auto_sync=False),
    Command("sync", "sync:sync", "Pull, merge and push: the everyday command.", """\
Pull (merging entry by entry), then push, and say what was received and sent,
and what changed besides entries: RULES.md (by whom), entries deleted per
store, config.json keys (old -> new), summaries added. A remote commit that
turns a protection off (enforce-stores from true to false) is refused (exit 4)
and nothing is taken in, unless the operator passes --accept-weaker.

A push that loses a race to another machine's push (the remote moved on, or
its branch was being updated) is tried again: fetch, merge, push, after a
short random pause, until --timeout seconds have passed. A refusal by the
remote itself (a hook, permissions, a protected branch) is reported once,
with its reason (exit 4). When RULES.md or a summary was changed on both
sides on the same lines, nothing is committed or pushed: the file gets
conflict markers in the work tree, the command exits 4, and the merge waits
until you edit the file and run `ctx sync --continue` (or `--abort`).""", """\
Examples:
  ctx sync                 # with the upstream remote
  ctx sync --timeout 10    # give up retrying after 10 s
  ctx sync --continue      # after editing the file a merge waits for
JSON shape: {"result": "up to date"|"fast-forward"|"merge"|"nothing to pull"
  |"conflict", "commit", "entries", "received", "value_conflicts",
  "renamed", "text_conflicts", "waiting", "pushed": remote|null, "sent",
  "rules": {"changed", "by": [author]}, "deleted": {store: n}, "config":
  [{"key", "old", "new"}], "summaries": [path]}.
""", args=(REMOTE,), options=(
                Opt("timeout", "--timeout", metavar="SECONDS",
                    help="Keep retrying a push that lost a race this long (default 60)."),
                Opt("continue_", "--continue", kind=FLAG,
                    help="Commit the waiting merge with the files as you edited them, then sync."),
                Opt("abort", "--abort", kind=FLAG, help="Drop the waiting merge; put its files back."),
                ACCEPT_WEAKER, JSON), idempotent=True, git=True, slow=True, pulls=True, network=True, auto_sync=False,
            tool=True),
    Command("status", "sync:status", "Where syncing stands on this machine.", """\
Commits not pushed, commits not pulled as of the last fetch, the last sync
and how it ended, whether auto-sync is on, a merge that waits, and files
changed outside ctx and not committed yet. Reads only (no network).""", """\
Examples:
  ctx status
  ctx status --json
JSON shape: {"remote": name|null, "remote_problem": text|null (why no
  remote is chosen), "ahead": n|null, "behind": n|null, "last_sync":
  time|null, "last_sync_result": text|null, "auto_sync": bool,
  "merge_in_progress": bool, "uncommitted": [path]}.
""", options=(JSON,), reads=True, git=True, auto_sync=False),
    Command("clone", "sync:clone", "A new context root from a remote.", """\
Clone URL into PATH (default: $CTX_HOME, else ~/ctx), with hooks, merge
driver and upstream set. An empty remote gives a new context that pushes there.
Through git where it is installed (your ~/.ssh/config, agent and credential
helper as they are), never a prompt; stopped after CTX_REMOTE_TIMEOUT seconds
(60) without a word from the server.""", """\
Examples:
  ctx clone git@example.com:me/ctx.git ~/ctx
  CTX_HOME=~/ctx ctx clone /media/usb/ctx.git
""", args=(Arg("url", help="The remote to clone."), Arg("path", required=False, help="Where (default: $CTX_HOME).")),
            options=(JSON,), git=True, slow=True, network=True, auto_sync=False),
    Command("merge-driver", "sync:merge_driver", "",
            "git's merge driver for store files (configured as merge.ctx.driver).",
            args=(Arg("base"), Arg("ours"), Arg("theirs"), Arg("path", required=False, default="store")), hidden=True,
            auto_sync=False),
)

GIT = HISTORY + SYNC
