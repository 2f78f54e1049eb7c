"""The command table, continued: the git-native commands (history, log, diff,
revert, doctor, hooks, scan, purge) and sync (remote, pull, push, sync, clone).
Their handlers are in ``commands/history.py`` and ``commands/sync.py``."""

from __future__ import annotations

from ctx.cli.params import ANY_STORE, FLAG, INT, JSON, KEY, REMOTE, STORE, Arg, Command, Opt

HISTORY: tuple[Command, ...] = (
    Command("history", "history:history", "Every version of an entry, newest first.", """\
Every version of an entry, newest first: commit, time, author, operation, value.

Exits 1 when the key never existed in the store.""", """\
Examples:
  ctx history decision_db_pool
  ctx history pref_one_question --store operator -n 5 -v
  ctx history k --all-stores --json
Newest first. JSON shape: a list of {"commit", "date", "author", "email",
  "operation", "store", "key", "event": created|changed|deleted, "status",
  "entry" (null when deleted), "subject", "stores", "keys"}.
""", args=(KEY,), options=(STORE, Opt("all_stores", "--all-stores", kind=FLAG, help="The key's history in every store."),
                          Opt("limit", "-n", kind=INT, minimum=1, help="At most N versions."),
                          Opt("verbose", "-v", "--verbose", kind=FLAG, help="Whole values, not excerpts."), JSON),
            reads=True, git=True),
    Command("log", "history:log", "The context's commits, newest first.", """\
The context's commits, one line each: id, local date, author, subject.
With KEY, the commits that changed that entry (exit 1 when none ever did).""", """\
Examples:
  ctx log -n 20
  ctx log decision_db_pool
  ctx log --author "Agent One" --since 2026-11-29 --json
Newest first. JSON shape: a list of {"commit", "date", "author", "email",
  "operation", "stores", "keys", "subject"}.
""", args=(Arg("key", required=False, help="Only the commits that changed this entry."),),
            options=(Opt("store", "--store", "-s", choices=ANY_STORE.choices,
                                       help="Only commits touching this store."),
                     Opt("author", "--author", help="Only commits whose author name or email contains this."),
                     Opt("since", "--since", metavar="TIME", help="Only commits at or after TIME (RFC 3339 or YYYY-MM-DD)."),
                     Opt("limit", "-n", kind=INT, minimum=1, help="At most N commits."), JSON), reads=True, git=True),
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
                     Opt("since", "--since", metavar="TIME", help="From the state just before TIME."), JSON), reads=True, git=True),
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
    Command("hooks", "", "Install ctx's git pre-commit hook.", "The git hooks of the context root's repository.", """\
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
            reads=True),
    Command("purge", "history:purge", "Remove an entry from the whole history.", """\
Remove an entry from every commit, for a secret that slipped through.

Rewrites the commits that hold it (every other entry kept byte for byte,
authors and dates kept, the value scrubbed from commit messages), then
prunes the old commits. Remotes and older clones still hold it.""", """\
Example:
  ctx purge leaked_token --store shared --yes
""", args=(KEY,), options=(STORE, Opt("yes", "--yes", kind=FLAG, help="Really rewrite the history (required)."), JSON),
            destructive=True, git=True),
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
            reads=True, group=True, git=True),
    Command("remote add", "sync:remote_add", "Add a remote.", "Add a remote NAME at URL (a path, file://, ssh or https).",
            """\
Example:
  ctx remote add origin /srv/git/ctx.git
""", args=(Arg("name", help="The remote's name."), Arg("url", help="Where it is.")), idempotent=True, git=True),
    Command("pull", "sync:pull", "Fetch and merge from a remote.", """\
Fetch REMOTE (default: the upstream, or origin) and merge it, entry by
entry. Never rewrites local history; a merge is a commit with both parents.""", """\
Example:
  ctx pull origin
""", args=(REMOTE,), options=(JSON,), git=True),
    Command("push", "sync:push", "Push main to a remote.", """\
Push main to REMOTE and make it main's upstream (so `git pull` works too).
Refused (exit 4) when the remote has changes this machine lacks: `ctx sync`.""", """\
Example:
  ctx push origin
""", args=(REMOTE,), options=(JSON,), idempotent=True, git=True),
    Command("sync", "sync:sync", "Pull, merge and push: the everyday command.",
            "Pull (merging entry by entry), then push; retried when someone pushed in between.", """\
Example:
  ctx sync            # with the upstream remote
""", args=(REMOTE,), options=(JSON,), idempotent=True, git=True),
    Command("clone", "sync:clone", "A new context root from a remote.", """\
Clone URL into PATH (default: $CTX_HOME, else ~/ctx), with hooks, merge
driver and upstream set. An empty remote gives a new context that pushes there.""", """\
Examples:
  ctx clone git@example.com:me/ctx.git ~/ctx
  CTX_HOME=~/ctx ctx clone /media/usb/ctx.git
""", args=(Arg("url", help="The remote to clone."), Arg("path", required=False, help="Where (default: $CTX_HOME).")),
            options=(JSON,), git=True),
    Command("merge-driver", "sync:merge_driver", "", "git's merge driver for store files (configured as merge.ctx.driver).",
            args=(Arg("base"), Arg("ours"), Arg("theirs"), Arg("path", required=False, default="store")), hidden=True),
)

GIT = HISTORY + SYNC
