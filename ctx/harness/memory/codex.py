"""Codex's memories, read for ``ctx import --from codex``.

Layout: one root for every project, ``$CODEX_HOME/memories`` (``codex.codex_home()``):

- ``memory_summary.md``: first line ``v1``, then ``## User Profile`` (free prose: one
  memory), ``## User preferences`` and ``## General Tips`` (and any other ``## `` section:
  one memory per bullet). The profile and the preferences are what Codex gathered of the
  user: ``source: operator``.
- ``MEMORY.md``: ``# Task Group: TITLE`` blocks, each with ``scope:``, ``applies_to:
  cwd=...; reuse_rule=...``, ``## Task n`` sections (``### rollout_summary_files``,
  ``### keywords``), ``## User preferences``, ``## Reusable knowledge``, ``## Failures and
  how to do differently``. A block is one memory; a block whose ``cwd=`` is a path is
  imported only in that project (the project under it, or it under the project).
- ``rollout_summaries/*.md`` (one per session) and ``skills/`` are not imported: they are
  the raw material of the two files above.
"""

from __future__ import annotations

from pathlib import Path

from ctx.features.harness_import import Memory, Source
from ctx.harness.codex import codex_home
from ctx.harness.memory import files as mf

HARNESS = "codex"
SUMMARY, HANDBOOK = "memory_summary.md", "MEMORY.md"
OPERATOR_SECTIONS = ("user profile", "user preferences")
GROUP = "# Task Group:"


def default_path() -> Path:
    return codex_home() / "memories"


def _folders(cwd: str) -> list[Path]:
    """The folders a ``cwd=`` names: a path, a comma-separated list of them, or a family
    (``/src/*``: the folder before the first wildcard); none for a workflow scope."""
    out = []
    for part in cwd.split(","):
        where = part.strip().strip("`").split("*", 1)[0].rstrip("/") or "/"
        if part.strip().strip("`").startswith(("/", "~")):
            out.append(Path(where).expanduser())
    return out


def _applies(cwd: str, project: Path) -> bool:
    """Whether a block of ``applies_to: cwd=CWD`` belongs in ``project``: every block of a
    workflow scope; a block of folders when the project is one of them, under one, or
    holds one."""
    folders = _folders(cwd)
    return not folders or any(project == f or project.is_relative_to(f) or f.is_relative_to(project)
                              for f in folders)


def _summary(text: str, shown: str, keys: mf.Keys, source: Source) -> None:
    for title, body in mf.sections(text):
        if not title:
            continue
        whose = "operator" if title.lower() in OPERATOR_SECTIONS else "agent"
        tag = f"codex-{mf.slug(title, 40)}"
        if title.lower() == "user profile":
            if body.strip():
                source.memories.append(Memory(keys.key("user profile", "profile"), mf.cut(body), shown,
                                              "memory_summary.md User Profile", whose, (tag,)))
            continue
        for item in mf.bullets(body):
            source.memories.append(Memory(keys.key(item, "item"), mf.cut(item), shown,
                                          f"memory_summary.md {title}", whose, (tag,)))


def _blocks(text: str) -> list[tuple[str, str]]:
    """``(title, block text)`` of each Task Group block."""
    out: list[tuple[str, list[str]]] = []
    for line in text.split("\n"):
        if line.startswith(GROUP):
            out.append((line[len(GROUP):].strip(), [line]))
        elif out:
            out[-1][1].append(line)
    return [(title, "\n".join(lines)) for title, lines in out]


def _cwd(block: str) -> str:
    for line in block.split("\n"):
        if line.startswith("applies_to:"):
            for part in line[len("applies_to:"):].split(";"):
                name, _, value = part.strip().partition("=")
                if name.strip() == "cwd":
                    return value
    return ""


def read(path: Path | None = None) -> Source:
    root = path or default_path()
    source = Source(HARNESS)
    if not root.is_dir():
        raise mf.missing(root, "Codex memories folder")
    project = mf.project_root()
    users = mf.Keys(f"{HARNESS}:user:")
    here = mf.Keys(f"{HARNESS}:{mf.project_slug(project)}:")
    source.scopes |= {users.prefix, here.prefix}
    summary = mf.read(root / SUMMARY, root, source)
    if summary is not None:
        first, _, rest = summary.partition("\n")
        if first.strip() != "v1":
            source.notes.append(f"{root / SUMMARY}: first line is not v1; read as it is")
            rest = summary
        _summary(rest, str(root / SUMMARY), users, source)
    handbook = mf.read(root / HANDBOOK, root, source)
    for title, block in _blocks(handbook or ""):
        cwd = _cwd(block)
        if not _applies(cwd, project):
            continue
        keys = here if _folders(cwd) else users
        source.memories.append(Memory(keys.key(title, "task_group"), mf.cut(block), str(root / HANDBOOK),
                                      "MEMORY.md Task Group", "agent", ("codex-task-group",)))
    if not source.memories:
        raise mf.empty(root, "Codex memories for this project")
    return source
