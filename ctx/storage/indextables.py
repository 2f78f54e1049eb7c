"""The read index's file and every table in it: declared here, and made only here.

The file is ``FILE`` in the root's state folder (``Context.state``): this machine's own cache,
never committed nor synced, derived from the stores and from git, so it may be
removed at any time (``ctx reindex`` does) and each part of it is rebuilt on
its next use. Its name carries its layout's version: a file of an older one
(``OLD_FILES``) is removed when the current one is made, never read.

Its tables come in groups, each used by one module and rebuilt by its own rule:

- ``ENTRIES`` (``ctx/storage/index.py``): a row per entry, and a store's rows are
  rebuilt from its file whenever the file's identity (size, mtime, inode) is
  not the one recorded in ``meta``; ``entry_tags`` a row per entry and tag it is
  found by (``model.text_tags``), kept with the entries' rows in the same
  transactions, so a filter by tag reads the rows of its tags alone: each row holds
  the entry's time and store rank beside its key (columns named apart from the
  entries' own, so a query may join the two tables), and its key is the result
  order, so a list by one tag walks its rows in the order it prints them; ``layout``
  keeps where a store's entries sit in its file, so a write splices one entry
  without parsing the file;
- ``FTS`` and ``WORDS`` (``ctx/storage/index.py``, for ``search`` and ``search
  --semantic``): made on first use, a store's rows copied again from
  ``entries`` when its identity moved on (``fts_meta``, ``words_meta``); the
  vector sets of ``ctx/meaning/`` likewise;
- ``SINCE_LOG`` (``ctxgit/porcelain/since.py``): the history's commits and the
  keys they changed, appended up to HEAD; dropped and read again from git when
  its ``log_state`` names another ``SINCE_LOG_VERSION`` or is missing, emptied
  when the history was rewritten;
- ``HISTORY`` (``ctxgit/porcelain/histindex.py``, ``ctx history``): a key's
  versions and the commit they reach; read again when that commit is no longer
  an ancestor of HEAD.

The core declares the git layer's tables as text (their SQL) and never imports
the git layer; the git layer makes and drops its tables through ``create`` and
``drop``. A new table (or a changed one) is declared here: a changed layout of a
group that has a version bumps it; of one that has none, ``FILE``'s version.

Imported on every read (by ``index.py``): strings only (the instruction tags from ``ctx/model.py``).
"""

from __future__ import annotations

from ctx.model import INSTRUCTION_TAGS

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

FILE = "index-v6.sqlite"
# the layouts before it, and what came with them (v2: no due column; v3: tag_lines, kept by the
# writes of a ctx that knew no entry_tags, and index-v3.known beside it; v4: by_operator, not
# by_instruction; v5: entry_tags without the entries' order, each entry's value inside its body);
# tests/core/test_entrytags.py, test_an_index_of_an_older_layout_is_removed_never_read
OLD_FILES = "index-v[12345].*"
MARSHAL_VERSION = 4  # the format every Python since 3.4 reads and writes (the rows' bodies)
RACY_NS = 2_000_000_000  # a file indexed within this of its mtime may change unseen: its CRC is checked

ENTRIES = "entries"
FTS = "fts"
WORDS = "words"
SINCE_LOG = "since-log"
HISTORY = "history"

SINCE_LOG_VERSION = "2"  # kept in log_state; another value: the since-log is dropped and read again

SEP = "\x1f"  # the tags column: each tag between two of these

# What the brief's INSTRUCTIONS and DECISIONS sections read (ctx/brief.py), each with an index of
# its own rows only, newest first: a query that names the very same condition walks those rows
# and stops at its limit, however many other entries the stores hold (without them the two
# sections read every row of their stores and sort what passed; tests/core/test_cache.py,
# test_the_brief_reads_instructions_and_decisions_by_indexes_of_their_own). Literals, not
# parameters: SQLite takes a partial index only for a query whose terms it can see hold.
DECISION_ROWS = f"(instr(tags, '{SEP}decision{SEP}') > 0 OR substr(key, 1, 8) = 'decision')"
# the standing instructions (ctx/brief.py's test, which decides): the operator's voice, not
# superseded, under an instruction tag, no decision
INSTRUCTION_ROWS = ("source = 'operator' AND (status IS NULL OR status != 'superseded') AND ("
                    + " OR ".join(f"instr(tags, '{SEP}{tag}{SEP}') > 0" for tag in INSTRUCTION_TAGS)
                    + f") AND NOT {DECISION_ROWS}")
INSTRUCTION_INDEX = "by_instruction"  # walked by the brief's INSTRUCTIONS (``Where.through``)
DUE_INDEX = "by_due"  # the rows with a due date: few, walked by ``Where.through`` (ctx/resurface.py)

_SQL: dict[str, str] = {
    ENTRIES: """
CREATE TABLE IF NOT EXISTS meta(store TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, ino INTEGER,
                                racy INTEGER, digest INTEGER, count INTEGER);
CREATE TABLE IF NOT EXISTS entries(store TEXT, key TEXT, rank INTEGER, ts REAL, source TEXT,
                                   status TEXT, scope TEXT, tags TEXT, lkey TEXT, lvalue TEXT,
                                   body BLOB, due TEXT, value BLOB, PRIMARY KEY(store, key)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS by_time ON entries(ts DESC, rank, key);
CREATE INDEX IF NOT EXISTS """ + DUE_INDEX + """ ON entries(due) WHERE due IS NOT NULL;
CREATE INDEX IF NOT EXISTS """ + INSTRUCTION_INDEX + """ ON entries(ts DESC, rank, key)
    WHERE """ + INSTRUCTION_ROWS + """;
CREATE INDEX IF NOT EXISTS by_decision ON entries(ts DESC, rank, key) WHERE """ + DECISION_ROWS + """;
CREATE TABLE IF NOT EXISTS fts_meta(store TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, ino INTEGER);
CREATE TABLE IF NOT EXISTS layout(store TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, ino INTEGER,
                                  incomplete BLOB, body INTEGER, close INTEGER);
CREATE TABLE IF NOT EXISTS entry_tags(tag TEXT, tag_ts REAL, tag_rank INTEGER, tag_key TEXT, tag_store TEXT,
                                      PRIMARY KEY(tag, tag_ts DESC, tag_rank, tag_key, tag_store)) WITHOUT ROWID;
""",
    FTS: ("CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(store UNINDEXED, key UNINDEXED, text, "
          "tokenize='unicode61 remove_diacritics 0');"),
    # any word of the query, stemmed (porter), ranked by bm25(); and each store's vectors of a
    # model, as one set: the keys, the digests of the texts read, the vectors (ctx/meaning/)
    WORDS: """
CREATE VIRTUAL TABLE IF NOT EXISTS words USING fts5(store UNINDEXED, key UNINDEXED, text,
                                                    tokenize='porter unicode61 remove_diacritics 0');
CREATE TABLE IF NOT EXISTS words_meta(store TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, ino INTEGER);
CREATE TABLE IF NOT EXISTS vector_sets(store TEXT, model TEXT, size INTEGER, mtime INTEGER, ino INTEGER,
                                       keys BLOB, ids BLOB, vecs BLOB, PRIMARY KEY(store, model));
""",
    SINCE_LOG: """
CREATE TABLE IF NOT EXISTS log_state(name TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log_commits(seq INTEGER PRIMARY KEY, id TEXT, time INTEGER, author TEXT,
                                       operation TEXT, merge INTEGER);
CREATE INDEX IF NOT EXISTS log_by_author ON log_commits(author, merge, seq);
CREATE TABLE IF NOT EXISTS log_keys(seq INTEGER, store TEXT, key TEXT, author TEXT, time INTEGER,
                                    operation TEXT, PRIMARY KEY(seq, store, key)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS log_by_key ON log_keys(store, key, seq);
CREATE TABLE IF NOT EXISTS log_latest(store TEXT, key TEXT, seq INTEGER, author TEXT, time INTEGER,
                                      operation TEXT, prev TEXT, PRIMARY KEY(store, key)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS log_latest_by_seq ON log_latest(seq);
""",
    HISTORY: """
CREATE TABLE IF NOT EXISTS hist_keys(stores TEXT, key TEXT, tip TEXT, versions TEXT,
                                     PRIMARY KEY(stores, key));
""",
}


def sql(group: str) -> str:
    """The statements that make ``group``'s tables (each ``IF NOT EXISTS``)."""
    return _SQL[group]


def _made(group: str) -> list[tuple[bool, str]]:
    """``(a table?, name)`` of everything ``group``'s statements make, in their order."""
    made = []
    for line in _SQL[group].splitlines():
        words = line.split()
        table = words[:2] == ["CREATE", "TABLE"] or words[:3] == ["CREATE", "VIRTUAL", "TABLE"]
        if table or words[:2] == ["CREATE", "INDEX"]:
            made.append((table, words[words.index("EXISTS") + 1].split("(", 1)[0]))
    return made


def tables(group: str) -> list[str]:
    """The names of ``group``'s tables (not their indexes), in the order they are made."""
    return [name for table, name in _made(group) if table]


def names(group: str) -> list[str]:
    """The names of everything ``group`` makes: its tables, then its indexes."""
    return tables(group) + [name for table, name in _made(group) if not table]


_NAMES: dict[str, list[str]] = {}  # ``names`` of each group, once per process


def create(db: sqlite3.Connection, group: str) -> None:
    """Make ``group``'s tables in ``db`` where they are missing (the index file, or a
    database in memory standing in for it). One statement at a time: unlike
    ``executescript``, this never commits a transaction the caller has open. When every
    name is there already (as ``IF NOT EXISTS`` checks: by name), one query instead of a
    statement each: every write and most reads open the file."""
    wanted = _NAMES.get(group)
    if wanted is None:
        wanted = _NAMES[group] = names(group)
    marks = ",".join("?" * len(wanted))
    if db.execute(f"SELECT count(*) FROM sqlite_master WHERE name IN ({marks})", wanted).fetchone()[0] \
            == len(wanted):
        return
    for statement in _SQL[group].split(";"):
        if statement.strip():
            db.execute(statement)


def drop(db: sqlite3.Connection, group: str) -> None:
    """Drop ``group``'s tables (and so their indexes): the next use makes and fills them again."""
    for name in tables(group):
        db.execute(f"DROP TABLE IF EXISTS {name}")
