"""ctx config (kept in <root>/config.json, each change one commit) and the
store policy check of §3.1 that the write path calls."""

from __future__ import annotations

import json
import os

import pytest

from ctx.errors import InvalidArgument, StoreError
from ctx.features.config import get_value
from ctx.policy import check_store_policy
from support.gitutil import commit_count, message, subject, tree_paths


def ok(result):
    assert result.exit_code == 0, (result.output, result.stderr)
    return result


def test_default_is_off_and_reading_writes_nothing(run, root):
    listed = json.loads(ok(run("config", "--json")).stdout)
    assert {k: listed[k] for k in ("enforce-stores", "start-max-chars", "sync-auto", "sync-timeout")} == \
        {"enforce-stores": False, "start-max-chars": 0, "sync-auto": False, "sync-timeout": 3}
    assert ok(run("config", "enforce-stores")).stdout == "enforce-stores = false\n"
    assert not root.exists()


def test_set_is_one_commit_and_setting_it_again_none(run, root):
    ok(run("set", "k", "v"))
    before = commit_count(root)
    result = ok(run("config", "enforce-stores", "true"))
    assert result.stdout == "enforce-stores = true\n"
    assert json.loads((root / "config.json").read_text()) == {"enforce-stores": True}
    assert commit_count(root) == before + 1
    assert "config.json" in tree_paths(root)
    assert subject(root) == "config enforce-stores: true"
    assert "Ctx-Operation: config" in message(root)
    again = ok(run("config", "enforce-stores", "true"))
    assert "(unchanged)" in again.stdout
    assert commit_count(root) == before + 1
    ok(run("config", "enforce-stores", "false"))
    assert get_value(root, "enforce-stores", None) is False
    assert commit_count(root) == before + 2


def test_unknown_keys_of_the_file_are_kept(run, root):
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({"future-key": [1, 2]}))
    ok(run("config", "enforce-stores", "on"))
    assert json.loads((root / "config.json").read_text()) == {"future-key": [1, 2], "enforce-stores": True}


@pytest.mark.parametrize("args, words", [
    (("colour", "blue"), "unknown configuration key"),
    (("colour",), "unknown configuration key"),
    (("enforce-stores", "maybe"), "not a boolean"),
])
def test_bad_keys_and_values_are_usage_errors(run, root, args, words):
    result = run("config", *args)
    assert result.exit_code == 2 and words in result.stderr
    assert not (root / "config.json").exists()


def test_a_broken_config_file_is_reported_not_overwritten(run, root):
    root.mkdir(parents=True)
    (root / "config.json").write_text("{broken")
    result = run("config", "enforce-stores", "true")
    assert result.exit_code == 3 and "not valid JSON" in result.stderr
    assert (root / "config.json").read_text() == "{broken"


def enforce(root, on: bool = True) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps({"enforce-stores": on}))


def test_policy_refuses_an_agent_writing_the_operator_store_without_source_operator(root):
    enforce(root)
    with pytest.raises(InvalidArgument, match="enforce-stores is on.*--source operator"):
        check_store_policy(root, "operator", "Agent One", None)
    with pytest.raises(InvalidArgument, match="source agent"):
        check_store_policy(root, "operator", "Agent One", "agent")
    with pytest.raises(InvalidArgument):
        check_store_policy(root, "operator", "Agent One", "both")


def test_policy_allows_everything_else(root):
    enforce(root)
    check_store_policy(root, "operator", "Agent One", "operator")  # the operator's own words
    check_store_policy(root, "operator", None, None)               # the operator
    check_store_policy(root, "operator", "   ", "agent")            # blank author: the operator
    check_store_policy(root, "shared", "Agent One", None)
    check_store_policy(root, "agent", "Agent One", "agent")


def test_policy_is_off_by_default_and_when_turned_off(root, tmp_path):
    check_store_policy(root, "operator", "Agent One", None)  # no root, no config: off
    enforce(root, on=False)
    check_store_policy(root, "operator", "Agent One", None)


def test_policy_reads_the_config_only_when_it_could_refuse(root):
    root.mkdir(parents=True)
    (root / "config.json").write_text("{broken")
    check_store_policy(root, "shared", "Agent One", None)  # not read
    with pytest.raises(StoreError):
        check_store_policy(root, "operator", "Agent One", None)
    (root / "config.json").write_text(json.dumps({"enforce-stores": "yes"}))
    with pytest.raises(StoreError, match="not valid"):
        check_store_policy(root, "operator", "Agent One", None)


def test_a_machine_key_stays_on_this_machine(run, root):
    """start-max-chars is kept in .git/ctx/machine.json: no commit, not in config.json,
    and ctx start keeps to it."""
    ok(run("set", "k", "v"))
    before = commit_count(root)
    assert ok(run("config", "start-max-chars", "400")).stdout == "start-max-chars = 400\n"
    assert commit_count(root) == before and not (root / "config.json").exists()
    assert json.loads((root / ".git" / "ctx" / "machine.json").read_text()) == {"start-max-chars": 400}
    assert json.loads(ok(run("config", "--json")).stdout)["start-max-chars"] == 400
    assert len(ok(run("start")).stdout) <= 400
    assert len(ok(run("start", "--max-chars", "0")).stdout) > 400  # the option first; 0: none
    refused = run("config", "start-max-chars", "lots")
    assert refused.exit_code == 2 and "not a number of characters" in refused.stderr


def test_a_machine_key_needs_the_repository(run, root):
    ok(run("set", "k", "v", env={"CTX_NO_GIT": "1"}))
    refused = run("config", "start-max-chars", "400", env={"CTX_NO_GIT": "1"})
    assert refused.exit_code == 2 and ".git/ctx/machine.json" in refused.stderr


def test_the_machine_file_is_where_the_git_layer_says(run, root):
    """The core names the file in its state folder; the git layer, its place in .git: they agree."""
    from ctx.context import Context as CoreContext
    from ctx.features.config import MACHINE_FILE, config_path, set_value
    from ctxgit.gitfiles import layout
    ok(run("set", "k", "v"))
    assert config_path(root, layout.state_dir(root), machine=True) == layout.path(root, layout.MACHINE)
    assert os.path.basename(layout.path(root, layout.MACHINE)) == MACHINE_FILE
    bare = CoreContext(root)  # no state folder: machine keys at their defaults, and not set
    ok(run("config", "start-max-chars", "400"))
    assert get_value(root, "start-max-chars", bare.state) == 0
    assert get_value(root, "start-max-chars", layout.state_dir(root)) == 400
    with pytest.raises(InvalidArgument, match="kept per machine"):
        set_value(bare, "start-max-chars", "10")
