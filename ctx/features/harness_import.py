"""``ctx import --from HARNESS``: what a harness's own memory holds, as entries.

The readers of each harness's files live in ``ctx/harness/memory/`` (one module per
harness, each owning its layout) and hand this module plain ``Memory`` records; here they
become entries, in one commit (operation ``import``):

- a memory is one entry, its key derived from where it sits in the source (a file's name,
  a block's title, a bullet's first words), so importing the same files again adds nothing;
- its ``derivation`` names the harness, the file and a digest of the memory's text: a
  memory whose digest changed updates its entry (the history keeps both values); an
  entry whose derivation still matches is kept, even if edited in ctx since;
- its ``author`` is the harness's memory (``claude-code memory``), never the operator:
  a memory the format says is the user's (a Claude ``user``/``feedback`` memory, Codex's
  user preferences) has ``source: operator``, goes to the operator store tagged
  ``preference``, the operator's knowledge typed in by a harness (§3.4): the brief lists
  it among the standing instructions "typed by" that harness; every other memory is ``source:
  agent`` in the shared store; ``basis: reported`` throughout (ctx did not check it);
- an entry of a scope the import read (a key prefix) whose memory is gone from the source
  is kept and listed, never deleted silently;
- a memory that looks like it holds a credential is not imported, and is named (the
  credential scanner of every other write, ``ctx.credentials``); the rest still is.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ctx import model
from ctx.credentials import scan
from ctx.display import visible

IMPORTED_TAG = "imported"
# the user's own knowledge is a standing instruction of the brief, which names who typed it
# (tests/features/test_harness_import.py::test_the_brief_names_the_harness_that_typed_it)
OPERATOR_TAG = "preference"


@dataclass(frozen=True)
class Memory:
    """One memory as a harness keeps it: its entry's key, its text, the file it is in, what
    kind of memory the format calls it, whose knowledge the format says it is, and tags."""

    key: str
    text: str
    file: str
    kind: str
    source: str = "agent"  # "operator" only where the format says it is the user's
    tags: tuple[str, ...] = ()


@dataclass
class Source:
    """What a reader found: the memories, the key prefixes it read whole (an entry under one
    of them whose memory is gone is listed), and the files it read."""

    harness: str
    memories: list[Memory] = field(default_factory=list)
    scopes: set[str] = field(default_factory=set)
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # files skipped, and why


@dataclass
class Skipped:
    key: str
    file: str
    why: str


@dataclass
class HarnessImport:
    """What an import did, or would do (``dry_run``)."""

    harness: str
    added: list[tuple[str, str]] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)
    gone: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_json(self, dry_run: bool) -> dict[str, Any]:
        def rows(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
            return [{"store": s, "key": k} for s, k in pairs]
        return {"dry_run": dry_run, "from": self.harness, "added": rows(self.added),
                "changed": rows(self.changed), "kept": rows(self.kept), "gone": rows(self.gone),
                "skipped": [{"key": s.key, "file": s.file, "why": s.why} for s in self.skipped],
                "conflicts": []}


def store_of(memory: Memory) -> str:
    return "operator" if memory.source == "operator" else "shared"


def author_of(harness: str) -> str:
    return f"{harness} memory"


def derivation_of(harness: str, memory: Memory) -> str:
    digest = hashlib.sha256(memory.text.encode("utf-8")).hexdigest()[:12]
    whose = (" The operator's knowledge, as the harness wrote it down." if memory.source == "operator" else "")
    # one line of visible text: a file's name and a section's title come from the source
    return visible(f"Imported from {harness} ({memory.kind}): {memory.file} (sha256 {digest}).{whose}")


def _credential(memory: Memory) -> tuple[str, str] | None:
    """Why ``memory`` is not imported (a credential in it), and the name to list it by: its
    key, unless the key, made of the memory's first words, spells part of the credential."""
    findings = scan(memory.text)
    if not findings:
        return None
    finding = findings[0]
    why = f"looks like it holds a credential ({finding.description}: {finding.preview})"
    folded = "".join(c if c.isalnum() else " " for c in (finding.secret or "").lower()).split()
    if any(len(part) >= 6 and part in memory.key for part in folded):
        return why, memory.key.rpartition(":")[0] + ":(name withheld: it spells the credential)"
    return why, memory.key


def plan(source: Source, current: dict[str, dict[str, model.Entry]],
         when: str) -> tuple[HarnessImport, dict[tuple[str, str], model.Entry]]:
    """The import of ``source`` into ``current`` (store -> entries), without changing it:
    what it does, and each added or changed entry's new state."""
    result = HarnessImport(source.harness, notes=list(source.notes))
    news: dict[tuple[str, str], model.Entry] = {}
    seen: set[str] = set()
    for memory in source.memories:
        seen.add(memory.key)
        store, key = store_of(memory), memory.key
        refused = _credential(memory)
        if refused:
            result.skipped.append(Skipped(refused[1], memory.file, refused[0]))
            continue
        old = current.get(store, {}).get(key)
        derivation = derivation_of(source.harness, memory)
        if old is not None and old.get("derivation") == derivation:
            result.kept.append((store, key))
            continue
        tags = [IMPORTED_TAG, source.harness, *memory.tags] + (
            [OPERATOR_TAG] if memory.source == "operator" else [])
        news[(store, key)] = model.apply_set(old, memory.text, author=author_of(source.harness), when=when,
                                             source=memory.source, basis="reported", scope="global",
                                             tags=list(dict.fromkeys(tags)), derivation=derivation)
        (result.changed if old is not None else result.added).append((store, key))
    for store in ("operator", "shared"):
        for key, entry in current.get(store, {}).items():
            tags = entry.get("tags")
            if (key not in seen and isinstance(tags, list) and IMPORTED_TAG in tags and source.harness in tags
                    and any(key.startswith(scope) for scope in source.scopes)):
                result.gone.append((store, key))
    return result, news


def run(context: Any, source: Source, *, dry_run: bool = False) -> HarnessImport:
    """Import ``source`` as one commit; with ``dry_run``, write nothing."""
    for memory in source.memories:
        model.validate_key(memory.key)
        context.check_policy(store_of(memory), memory.source)
    if dry_run:
        current = {s.name: s.entries for s in context.stores()}
        return plan(source, current, model.now())[0]
    from ctx.changes import Edit, Outcome
    done: list[HarnessImport] = []

    def mutate(stores: dict[str, Any]) -> Outcome:
        result, news = plan(source, {name: s.entries for name, s in stores.items()}, model.now())
        edits = []
        for (store, key), after in news.items():
            before = stores[store].entries.get(key)
            stores[store].entries[key] = after
            edits.append(Edit(store, key, before, after))
        done.append(result)
        subject = f"import --from {source.harness}: {len(result.added)} added, {len(result.changed)} changed"
        return Outcome(edits, subject=subject)

    context.transact("import", ["operator", "shared"], mutate)
    return done[0]
