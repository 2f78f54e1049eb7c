"""CtxMemoryTool against the SDK's own reference, BetaLocalFilesystemMemoryTool: the same
commands, in the same order, give the same results and the same error texts.

Two differences are taken out before comparing, each the difference between a folder of
files and a store of keys kept in git:
- the size shown beside a directory (the reference shows what the filesystem says of a
  folder, 4K on ext4, something else on tmpfs; ctx, the bytes of the files under it);
- empty directories: git keeps none, and ctx none either (a directory is there while a
  key is under it), so after each command the reference's empty folders are removed.
Where the reference lets an OSError out (a file where a folder should be, a folder moved
into itself), ctx gives a ToolError, which the runner shows the model the same way.

The ctx side writes through the one write path with the files-only recorder (the git side
of it, one commit per change, is tests/memorytool/test_memorytool_ctx.py's).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx.context import Context
from ctx.memorytool import CtxMemoryTool

_LISTING = "Here're the files and directories up to 2 levels deep in "


def outcome(tool: Any, command: dict[str, Any]) -> tuple[str, str]:
    """("ok", result), ("error", a ToolError's text) or ("oserror", its class)."""
    try:
        return "ok", sizes_masked(tool.call(command))
    except ToolError as error:
        return "error", str(error)
    except OSError as error:
        return "oserror", type(error).__name__


def sizes_masked(result: Any) -> Any:
    """A directory listing with each directory's size (its own line, and each "…/" line) as "D"."""
    if not isinstance(result, str) or not result.startswith(_LISTING):
        return result
    header, *rows = result.split("\n")
    masked = []
    for number, row in enumerate(rows):
        size, _, path = row.partition("\t")
        masked.append(f"D\t{path}" if number == 0 or path.endswith("/") else row)
    return "\n".join([header, *masked])


def prune_empty_folders(root: Path) -> None:
    for folder, _dirs, _files in sorted(os.walk(root), key=lambda w: -len(w[0])):
        if Path(folder) != root and not os.listdir(folder):
            os.rmdir(folder)


def files_of(root: Path) -> dict[str, str]:
    return {"/memories/" + str(p.relative_to(root)): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*")) if p.is_file()}


class Pair:
    """The ctx tool and the reference, each on its own empty folder."""

    def __init__(self, where: Path) -> None:
        self.ours = CtxMemoryTool(context=Context(where / "ctx", author="claude"))
        self.reference = BetaLocalFilesystemMemoryTool(str(where / "reference"))
        self.root = Path(self.reference.memory_root)

    def run(self, command: dict[str, Any]) -> None:
        ours, theirs = outcome(self.ours, command), outcome(self.reference, command)
        prune_empty_folders(self.root)
        if theirs[0] == "oserror":
            assert ours[0] == "error", (command, ours, theirs)
        else:
            assert ours == theirs, command
        assert self.ours.tree().files == {k[len("/memories/"):]: v for k, v in files_of(self.root).items()}, command


SCRIPT: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/nothing.md"},
    {"command": "create", "path": "/memories/notes.md", "file_text": "# Notes\nport 8443\nport 8080\n"},
    {"command": "create", "path": "/memories/notes.md", "file_text": "again"},  # over an existing one
    {"command": "create", "path": "/memories/project/plan/steps.md", "file_text": "1. read\n2. write"},
    {"command": "create", "path": "/memories/project/.hidden", "file_text": "not listed"},
    {"command": "create", "path": "/memories/project/plan/deeper/three.md", "file_text": "three levels"},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/project"},
    {"command": "view", "path": "/memories/project/"},
    {"command": "view", "path": "/memories/project/.hidden"},
    {"command": "view", "path": "/memories/notes.md"},
    {"command": "view", "path": "/memories/notes.md", "view_range": [2, 3]},
    {"command": "view", "path": "/memories/notes.md", "view_range": [2, -1]},
    {"command": "view", "path": "/memories/notes.md", "view_range": [0, 1]},
    {"command": "str_replace", "path": "/memories/notes.md", "old_str": "port", "new_str": "p"},  # 2 matches
    {"command": "str_replace", "path": "/memories/notes.md", "old_str": "9090", "new_str": "p"},  # 0 matches
    {"command": "str_replace", "path": "/memories/notes.md", "old_str": "8080", "new_str": "9090"},
    {"command": "str_replace", "path": "/memories/missing.md", "old_str": "a", "new_str": "b"},
    {"command": "str_replace", "path": "/memories/project", "old_str": "a", "new_str": "b"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": 0, "insert_text": "top\n"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": 4, "insert_text": "end"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": 9, "insert_text": "far"},  # out of range
    {"command": "insert", "path": "/memories/notes.md", "insert_line": -1, "insert_text": "before"},
    {"command": "insert", "path": "/memories/missing.md", "insert_line": 0, "insert_text": "x"},
    {"command": "insert", "path": "/memories/project", "insert_line": 0, "insert_text": "x"},
    {"command": "view", "path": "/memories/notes.md"},
    {"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/project/plan/steps.md"},
    {"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/project"},  # onto a folder
    {"command": "rename", "old_path": "/memories/none.md", "new_path": "/memories/other.md"},
    {"command": "rename", "old_path": "/memories", "new_path": "/memories/elsewhere"},
    {"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/archive/2026/notes.md"},
    {"command": "rename", "old_path": "/memories/project", "new_path": "/memories/work"},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/../secrets"},  # outside
    {"command": "view", "path": "/etc/passwd"},
    {"command": "create", "path": "/tmp/x.md", "file_text": "x"},
    {"command": "create", "path": "/memories/../x.md", "file_text": "x"},
    {"command": "create", "path": "/memories/a/../../x.md", "file_text": "x"},
    {"command": "view", "path": "/memories/work/../archive/2026/notes.md"},  # inside after all
    {"command": "view", "path": "/memories/.."},
    {"command": "delete", "path": "/memories/.."},
    {"command": "delete", "path": "/memories"},
    {"command": "delete", "path": "/memories/work/plan/../.."},
    {"command": "delete", "path": "/memories/none"},
    {"command": "delete", "path": "/memories/work/plan/steps.md"},
    {"command": "delete", "path": "/memories/work"},
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories", "file_text": "x"},
    {"command": "str_replace", "path": "/memories", "old_str": "a", "new_str": "b"},
    {"command": "create", "path": "/memories/empty.md", "file_text": ""},
    {"command": "view", "path": "/memories/empty.md"},
    {"command": "insert", "path": "/memories/empty.md", "insert_line": 0, "insert_text": "first"},
    {"command": "str_replace", "path": "/memories/empty.md", "old_str": "", "new_str": "x"},
    {"command": "create", "path": "/memories/empty.md/under", "file_text": "x"},  # a file where a folder is
    {"command": "rename", "old_path": "/memories/archive", "new_path": "/memories/archive/inner"},
]


def test_a_scripted_session_gives_what_the_reference_gives(tmp_path):
    pair = Pair(tmp_path)
    for command in SCRIPT:
        pair.run(command)
    assert sorted(pair.ours.tree().files) == ["archive/2026/notes.md", "empty.md"]


def test_the_comparison_would_see_a_difference(tmp_path):
    """The differential on a tool that answers one command wrongly fails."""
    pair = Pair(tmp_path)
    pair.run({"command": "create", "path": "/memories/a.md", "file_text": "a\nb\n"})
    original = pair.ours.insert
    pair.ours.insert = lambda command: original(command) + "!"
    with pytest.raises(AssertionError):
        pair.run({"command": "insert", "path": "/memories/a.md", "insert_line": 1, "insert_text": "c"})
    assert sizes_masked(_LISTING + "/m, excluding:\n4K\t/m\n3B\t/m/a\n4K\t/m/d/") == \
        _LISTING + "/m, excluding:\nD\t/m\n3B\t/m/a\nD\t/m/d/"


PATHS = ["/memories", "/memories/a.md", "/memories/d", "/memories/d/b.md", "/memories/d/e", "/memories/d/e/c.md",
         "/memories/d/e/f/g.md", "/memories/.h", "/memories/d/.h/x.md", "/memories/d/../a.md", "/memories/..",
         "/memories/../a.md", "/elsewhere/a.md", "/memories/a.md/x"]
FILES = ["/memories/a.md", "/memories/d/b.md", "/memories/d/e/c.md"]
# a path: one of the files the session starts with, most of the time (edits of a file that
# is there), else any of PATHS
PATH = st.one_of(st.sampled_from(FILES), st.sampled_from(FILES), st.sampled_from(PATHS))
TEXT = st.text(alphabet="ab \n", max_size=12)
START = [{"command": "create", "path": path, "file_text": text}
         for path, text in zip(FILES, ["a b\nab\n", "b\n\nb a", ""], strict=True)]
COMMANDS = st.one_of(
    st.fixed_dictionaries({"command": st.just("view"), "path": PATH},
                          optional={"view_range": st.tuples(st.integers(-1, 4), st.integers(-1, 5)).map(list)}),
    st.fixed_dictionaries({"command": st.just("create"), "path": PATH, "file_text": TEXT}),
    st.fixed_dictionaries({"command": st.just("str_replace"), "path": PATH,
                           "old_str": st.sampled_from(["a", "b", "ab", "\n", " ", ""]), "new_str": TEXT}),
    st.fixed_dictionaries({"command": st.just("insert"), "path": PATH,
                           "insert_line": st.integers(-1, 5), "insert_text": TEXT}),
    st.fixed_dictionaries({"command": st.just("delete"), "path": PATH}),
    st.fixed_dictionaries({"command": st.just("rename"), "old_path": PATH,
                           "new_path": PATH}),
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(COMMANDS, min_size=1, max_size=30))
def test_a_random_session_gives_what_the_reference_gives(commands):
    with tempfile.TemporaryDirectory() as where:
        pair = Pair(Path(where))
        for command in START + commands:
            pair.run(command)


def test_error_texts_quote_what_the_reference_quotes():
    """The texts the scripted session compares hold the values the model sent."""
    assert re.fullmatch(r"Path must start with /memories, got: /etc", outcome_text({"command": "view", "path": "/etc"}))


def outcome_text(command: dict[str, Any]) -> str:
    with tempfile.TemporaryDirectory() as where:
        return outcome(Pair(Path(where)).ours, command)[1]
