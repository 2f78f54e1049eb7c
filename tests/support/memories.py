"""Fixture files of each harness's memory, in the harness's real layout (the facts of
``ctx/harness/memory_*.py``), for tests/features/test_memory_formats.py and
test_harness_import.py."""

from __future__ import annotations

from pathlib import Path

from ctx.harness.memory import claude as memory_claude

# --- Claude Code -------------------------------------------------------------------------

# the frontmatter of Claude Code 2.1: name, description, then metadata holding the rest
CLAUDE_FEEDBACK = """---
name: Run the tests before a commit
description: the user wants the suite green before every commit
metadata:
  node_type: memory
  type: feedback
  originSessionId: 4f1c2a8e-0d6b-4c5e-9a51-2b7f3e8d9c10
  modified: 2026-11-20T10:11:12.000Z
---
Run `make test` before each commit; the user asked twice.
**Why:** a red main cost a day.
"""
# the older layout: type at the top level
CLAUDE_PROJECT_OLD = """---
name: Upload limit
description: uploads over 2 GB fail at the proxy
type: project
---
The proxy's body limit is 2 GB; raising it is in review.
"""
CLAUDE_USER = """---
name: Role
description: who the user is
metadata:
  node_type: memory
  type: user
---
A data engineer; prefers SQL over pandas.
"""
CLAUDE_REFERENCE = """---
name: Dashboards
description: where the latency graphs are
metadata:
  type: reference
---
grafana.internal/d/latency
"""
CLAUDE_INDEX = """- [Run the tests before a commit](feedback_tests.md) — green before every commit
- [Upload limit](project_upload_limit.md) — 2 GB at the proxy
- [Role](user_role.md) — data engineer
- [Dashboards](reference_dashboards.md) — latency graphs
"""


def claude_folder(home: Path, project: Path) -> Path:
    folder = home / ".claude" / "projects" / memory_claude.project_key(project) / "memory"
    folder.mkdir(parents=True)
    for name, text in (("MEMORY.md", CLAUDE_INDEX), ("feedback_tests.md", CLAUDE_FEEDBACK),
                       ("project_upload_limit.md", CLAUDE_PROJECT_OLD), ("user_role.md", CLAUDE_USER),
                       ("reference_dashboards.md", CLAUDE_REFERENCE)):
        (folder / name).write_text(text)
    return folder


CODEX_SUMMARY = """v1
## User Profile
Works on a payments service in Go; reviews every migration by hand.

## User preferences
- Ask before running database migrations
- Keep commit messages under 72 characters

## General Tips
- `make lint` needs golangci-lint 1.61 or later
"""


def codex_handbook(project: Path) -> str:
    return f"""# Task Group: payments service migrations
scope: schema changes of the payments service and how they are rolled out
applies_to: cwd={project}; reuse_rule=safe for this checkout
## Task 1: add the refunds table, merged
### rollout_summary_files
- rollout_summaries/2026-11-02-refunds.md (cwd={project}, updated_at=2026-11-02T10:00:00Z, thread_id=t1)
### keywords
- migrate, refunds, goose
## User preferences
- when a migration is written, the user asked: "show me the SQL first" -> print it before applying [Task 1]
## Reusable knowledge
- goose migrations live in db/migrations and run in CI [Task 1]
## Failures and how to do differently
- goose up failed on a dirty schema -> run goose status first [Task 1]

# Task Group: another checkout
scope: the billing front end
applies_to: cwd=/somewhere/else/billing-ui; reuse_rule=checkout-specific
## Reusable knowledge
- npm ci, never npm install

# Task Group: release workflow
scope: how releases are cut
applies_to: cwd=release workflow across repos; reuse_rule=general
## Reusable knowledge
- tags are signed
"""


def codex_root(home: Path, project: Path) -> Path:
    root = home / ".codex" / "memories"
    (root / "rollout_summaries").mkdir(parents=True)
    (root / "memory_summary.md").write_text(CODEX_SUMMARY)
    (root / "MEMORY.md").write_text(codex_handbook(project))
    (root / "rollout_summaries" / "2026-11-02-refunds.md").write_text("raw session notes\n")
    return root
