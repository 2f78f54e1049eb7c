"""The fast front door and click's print the same, and take the same options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest

from ctx.cli import fast as fastcli
from ctx.cli.app import cli

CTX = str(Path(sys.executable).parent / "ctx")


def test_every_fast_option_is_a_click_option_of_the_same_kind():
    root = click.Context(cli, info_name="ctx")
    for name, (options, positional, wordy, _) in fastcli.SPECS.items():
        command = cli.get_command(root, name)
        ctx = click.Context(command, info_name=name, parent=root)
        click_options = {}
        for param in command.get_params(ctx):
            if isinstance(param, click.Option):
                for opt in param.opts + param.secondary_opts:
                    click_options[opt] = (param.name, param.is_flag, param.multiple)
        for opt, (dest, kind, choices) in options.items():
            assert opt in click_options, (name, opt)
            click_dest, is_flag, multiple = click_options[opt]
            assert (kind == fastcli.FLAG) == is_flag, (name, opt)
            assert (kind == fastcli.MULTI) == multiple, (name, opt)
            assert dest == click_dest, (name, opt)
        # the fast door may take fewer options (it hands the rest to click), never others
        arguments = [p.name for p in command.get_params(ctx) if isinstance(p, click.Argument)]
        assert list(positional) == arguments[:len(positional)], name


ARGS = [
    ["get", "k"], ["get", "k", "-v"], ["get", "k", "--json"], ["get", "k", "--all"], ["get", "k", "--all", "--json"],
    ["get", "missing"], ["get", "k", "--store", "operator"], ["get", "k", "-s", "agent"], ["get", "k", "--store=operator"],
    ["get", "pref", "--store", "operator", "-v", "--json"],
    ["search", "value"], ["search", ""], ["search"], ["search", "VALUE", "--limit", "1"], ["search", "x", "--json"],
    ["search", "v", "--tag", "t1", "--tag", "t2"], ["search", "v", "--since", "2026-01-01"],
    ["search", "v", "--since", "bad-date"], ["search", "v", "--status", "current"], ["search", "--prefix", "k"],
    ["list"], ["list", "--keys-only"], ["list", "--json"], ["list", "--keys-only", "--json"], ["list", "--limit", "2"],
    ["list", "--store", "operator", "-v"], ["list", "--source", "agent"], ["list", "--scope", "session"],
    ["brief"], ["brief", "--json"], ["brief", "--days", "0", "--changes", "3"], ["start"], ["start", "--changes", "1"],
    ["set", "n1", "a", "value", "--tag", "x"], ["set", "--store", "agent", "n2", "-5"], ["set", "n3", "--", "--lit"],
    ["set", "n4", "one", "--tag", "mid", "two"], ["set", "n5", "{\"a\": 1}", "--json"], ["set", "n6"],
    ["set", "n7", "x", "--basis", "maybe"], ["set", "n8", "AKIA" + "ABCDEFGHIJKLMNOP"],
    ["amend", "k", "a", "note"], ["amend", "nope", "x"], ["resolve", "k", "--note", "done", "--json"],
    ["supersede", "k", "--by", "nowhere"], ["basis", "k", "verified"], ["delete", "n1"], ["delete", "n1"],
    ["get", "--help"], ["set", "--nope", "k", "v"],
]


def _fill(run):
    assert run("set", "k", "value one", "--tag", "t1").exit_code == 0
    assert run("set", "k", "operator value", "--store", "operator").exit_code == 0
    assert run("set", "pref", "ask first", "--store", "operator", "--tag", "preference").exit_code == 0
    assert run("set", "k2", "value two", "--scope", "session", "--tag", "t2", author="Agent").exit_code == 0


def test_both_doors_print_the_same(root, run, tmp_path, monkeypatch):
    """Each argument list runs twice on identical contexts: click's door and the fast one."""
    import shutil
    _fill(run)
    twin = tmp_path / "twin"
    shutil.copytree(root, twin, symlinks=True)
    for args in ARGS:
        monkeypatch.setenv("CTX_HOME", str(root))
        slow = subprocess.run([CTX, *args], capture_output=True, text=True, env={**_env(), "CTX_SLOW_PATH": "1"})
        monkeypatch.setenv("CTX_HOME", str(twin))
        fast = subprocess.run([CTX, *args], capture_output=True, text=True, env=_env())
        assert (fast.returncode, _untimed(fast.stdout), fast.stderr) == \
               (slow.returncode, _untimed(slow.stdout), slow.stderr), args


def _untimed(text: str) -> str:
    """The two runs may straddle a minute or a second: times are not what is compared."""
    import re
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<stamp>", text)
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d", "<time>", text)


def _env():
    import os
    return dict(os.environ)


@pytest.mark.parametrize("args", [["get", "k", "--bogus"], ["get"], ["search", "a", "b"], ["get", "k", "-vs", "x"],
                                  ["list", "--limit", "-1"], ["brief", "--days", "x"], ["get", "k", "--store", "nope"],
                                  ["set", "k", "a", "--tag", "t", "b"], ["supersede", "k"], ["get", "k", "-h"]])
def test_the_fast_door_hands_unusual_arguments_to_click(args):
    with pytest.raises(fastcli.Unsupported):
        fastcli.parse(args[0], args[1:])


def test_the_fast_door_never_imports_click_or_pygit2(root, run):
    _fill(run)
    code = ("import sys, runpy; sys.argv = ['ctx'] + sys.argv[1:]\n"
            "from ctx.cli.fast import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('LOADED', 'click' in sys.modules, 'pygit2' in sys.modules)")
    for args in (["get", "k"], ["search", "value"], ["list"], ["brief"], ["start"], ["--version"]):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=_env())
        assert out.stdout.strip().endswith("LOADED False False"), (args, out.stdout, out.stderr)
