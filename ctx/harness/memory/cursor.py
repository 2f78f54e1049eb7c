"""Cursor's project rules, read for ``ctx import --from cursor``.

Layout: ``.cursor/rules/**/*.mdc`` at the project's root, each file one rule: frontmatter
``description``, ``globs`` (often unquoted, ``globs: *.ts,*.tsx``, which is not valid
YAML: read as text, ``files.frontmatter``) and ``alwaysApply``, then the rule's
body. A rule is one memory, ``source: agent`` (a rule file does not say who wrote it).
PATH is the rules folder, or a project folder holding ``.cursor/rules``.
"""

from __future__ import annotations

from pathlib import Path

from ctx.features.harness_import import Memory, Source
from ctx.harness.memory import files as mf

HARNESS = "cursor"
RULES = Path(".cursor") / "rules"


def read(path: Path | None = None) -> Source:
    folder = path or mf.project_root() / RULES
    if path is not None and (path / RULES).is_dir():
        folder = path / RULES
    if not folder.is_dir():
        raise mf.missing(folder, "Cursor rules folder")
    source = Source(HARNESS)
    keys = mf.Keys(f"{HARNESS}:{mf.project_slug(mf.project_root())}:")
    source.scopes.add(keys.prefix)
    for file in mf.files(folder, "*.mdc", source):
        text = mf.read(file, folder, source)
        if text is None:
            continue
        fields, body = mf.frontmatter(text)
        always = fields.get("alwaysApply", "").lower() == "true"
        when = "always applied" if always else (f"for {fields['globs']}" if fields.get("globs") else "")
        head = "; ".join(part for part in (fields.get("description", ""), when) if part)
        value = mf.cut(f"{head}\n\n{body.strip()}" if head else body)
        if not value:
            continue
        tags = ("cursor-rule",) + (("always-apply",) if always else ())
        stem = file.relative_to(folder).with_suffix("").as_posix()
        source.memories.append(Memory(keys.key(stem, "rule"), value, str(file), "rule", "agent", tags))
    if not source.memories:
        raise mf.empty(folder, "Cursor rules")
    return source
