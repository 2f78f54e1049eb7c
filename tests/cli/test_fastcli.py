"""The fast front door and click's print the same, and take the same options."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx.cli import fast as fastcli
from ctx.cli import table, table_entries
from ctx.cli.app import cli
from ctx.cli.params import FLAG, MULTI, WORDS

CTX = str(Path(sys.executable).parent / "ctx")


def _click_command(name: str) -> tuple[click.Command, click.Context]:
    ctx = click.Context(cli, info_name="ctx")
    command: click.Command = cli
    for word in name.split():
        ctx = click.Context(command, info_name=word, parent=ctx) if command is not cli else ctx
        assert isinstance(command, click.Group)
        found = command.get_command(ctx, word)
        assert found is not None, word
        command = found
        ctx = click.Context(command, info_name=word, parent=ctx)
    return command, ctx


@pytest.mark.parametrize("command", table.commands(), ids=lambda c: c.name)
def test_click_commands_are_the_table(command):
    """Each click command holds exactly the table's parameters: names, spellings, kinds,
    choices, defaults, required; and its help is the table's."""
    made, ctx = _click_command(command.name)
    assert made.help == command.help and (made.short_help or "") == command.summary
    options = [p for p in made.get_params(ctx) if isinstance(p, click.Option) and p.expose_value]
    arguments = [p for p in made.get_params(ctx) if isinstance(p, click.Argument)]
    assert [p.name for p in options] == [o.dest for o in command.options]
    assert [p.name for p in arguments] == [a.dest for a in command.args]
    for param, opt in zip(options, command.options, strict=True):
        assert tuple(param.opts + param.secondary_opts) == opt.flags
        assert param.is_flag == (opt.kind == FLAG) and param.multiple == (opt.kind == MULTI)
        assert param.required == opt.required
        assert getattr(param.type, "choices", None) == (list(opt.choices) if opt.choices else None) or \
            tuple(getattr(param.type, "choices", ())) == opt.choices
        if opt.kind not in (FLAG, MULTI):
            assert param.default == opt.default
    for param, arg in zip(arguments, command.args, strict=True):
        assert (param.nargs == -1) == (arg.kind == WORDS)


def test_the_fast_door_takes_the_everyday_commands():
    assert set(table_entries.fast_commands()) == {"start", "brief", "get", "set", "amend", "supersede", "resolve",
                                          "basis", "delete", "search", "list",
                                          "send", "inbox", "handoff", "remind", "review"}


ARGS = [
    ["get", "k"], ["get", "k", "-v"], ["get", "k", "--json"], ["get", "k", "--all"], ["get", "k", "--all", "--json"],
    ["get", "missing"], ["get", "k", "--store", "operator"], ["get", "k", "-s", "agent"],
    ["get", "k", "--store=operator"],
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


@pytest.mark.slow
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
    """The two runs may straddle a minute or a second: times are not what is compared;
    nor is the second and random part of a new letter's key."""
    import re
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<stamp>", text)
    text = re.sub(r"(comms:[^:\s]+:)\d+-[0-9a-f]+:", r"\1<id>:", text)
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d", "<time>", text)


# the letters' commands (issue 24), with the exit status each must end in
LETTER_ARGS = [
    (["send", "Agent Two", "please", "review", "the", "retry", "--expects", "a report"], 0),
    (["send", "operator", "blocked on the certificate", "--shape", "report", "--json"], 0),
    (["send", "--shape", "ack", "Agent Two", "looks right"], 0),
    (["send", "Agent Two", "x", "--shape", "nope"], 2), (["send", "Agent Two"], 2),
    (["send", "Agent Two", "key", "AKIA" + "ABCDEFGHIJKLMNOP"], 4),
    (["inbox"], 0), (["inbox", "--all", "--json"], 0), (["inbox", "--since", "2026-01-01"], 0),
    (["inbox", "--since", "bad-date"], 2),
    (["handoff", "Agent Two", "--baton", "baton", "--note", "soak passed"], 0),
    (["handoff", "Agent Two", "--baton", "missing", "--note", "x"], 1),
    (["handoff", "Agent Two", "--baton", "baton"], 2),
    (["remind", "k", "+3", "--must-not-forget"], 0), (["remind", "k", "not-a-date"], 2),
    (["remind", "missing", "+3"], 1), (["remind", "k", "2026-12-20", "--json"], 0),
    (["review", "k"], 0), (["review", "k", "--stale", "--json"], 0), (["review", "k2"], 2),
    (["review", "k", "--bogus"], 2),
]


@pytest.mark.slow
def test_both_doors_run_the_letters_commands_alike(root, run, tmp_path, monkeypatch):
    """send, inbox, handoff, remind and review through the fast door and through click, on
    identical contexts: the same output and exit status, errors included."""
    import shutil
    _fill(run)
    assert run("send", "Agent One", "please look at the upload path").exit_code == 0
    assert run("set", "baton", "State: fix merged").exit_code == 0
    twin = tmp_path / "twin"
    shutil.copytree(root, twin, symlinks=True)
    for args, status in LETTER_ARGS:
        env = {**_env(), "CTX_AUTHOR": "Agent One"}
        slow = subprocess.run([CTX, *args], capture_output=True, text=True,
                              env={**env, "CTX_HOME": str(root), "CTX_SLOW_PATH": "1"})
        fast = subprocess.run([CTX, *args], capture_output=True, text=True, env={**env, "CTX_HOME": str(twin)})
        assert (fast.returncode, _untimed(fast.stdout), fast.stderr) == \
               (slow.returncode, _untimed(slow.stdout), slow.stderr), args
        assert fast.returncode == status, (args, fast.stdout, fast.stderr)


@pytest.mark.parametrize("args", [args for args, status in LETTER_ARGS if status != 2 or "bad-date" in args
                                  or "not-a-date" in args or "k2" in args])
def test_the_fast_door_parses_the_letters_commands_itself(args):
    """Only a usage error (click's to report) leaves the fast door; a date ctx cannot read
    and a missing baton are the handler's errors, through the fast door."""
    assert isinstance(fastcli.parse(args[0], args[1:]), dict)


def _at_start() -> set[str]:
    """The modules this interpreter has loaded before any command runs (its site may load
    some: they are not a command's to keep out)."""
    out = subprocess.run([sys.executable, "-c", "import sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def _env():
    import os
    return dict(os.environ)


@pytest.mark.parametrize("args", [["get", "k", "--bogus"], ["get"], ["search", "a", "b"], ["get", "k", "-vs", "x"],
                                  ["list", "--limit", "-1"], ["brief", "--days", "x"], ["get", "k", "--store", "nope"],
                                  ["set", "k", "a", "--tag", "t", "b"], ["supersede", "k"], ["get", "k", "-h"]])
def test_the_fast_door_hands_unusual_arguments_to_click(args):
    with pytest.raises(fastcli.Unsupported):
        fastcli.parse(args[0], args[1:])


@pytest.mark.slow
def test_the_fast_door_never_imports_click_or_pygit2(root, run):
    _fill(run)
    code = ("import sys, runpy; sys.argv = ['ctx'] + sys.argv[1:]\n"
            "from ctx.cli.fast import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('LOADED', 'click' in sys.modules, 'pygit2' in sys.modules)")
    for args in (["get", "k"], ["search", "value"], ["list"], ["brief"], ["start"], ["--version"]):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=_env())
        assert out.stdout.strip().endswith("LOADED False False"), (args, out.stdout, out.stderr)
    for args in (["send", "Agent Two", "hello"], ["inbox"], ["remind", "k", "+2"], ["review", "k"]):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=_env())
        assert "LOADED False" in out.stdout, (args, out.stdout, out.stderr)


@pytest.mark.slow
def test_a_read_loads_only_what_it_uses(root, run):
    """`ctx get` and `ctx list` answer from the index (entries in marshal form): neither
    loads json, threading nor typing, the sqlite3 package's adapters (datetime), nor the
    store's layout code."""
    _fill(run)
    assert run("list").exit_code == 0  # the index is built
    common = ("json", "threading", "typing", "dataclasses", "unicodedata", "ctx.cli.table_letters",
              "ctx.cli.commands.letters")
    code = ("import sys; heavy = sys.argv.pop().split(','); sys.argv = ['ctx'] + sys.argv[1:]\n"
            "from ctx.cli.fast import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('LOADED', [m for m in heavy if m in sys.modules])")
    heavy = (*common, "sqlite3", "datetime", "ctx.storage.textlayout")
    for args in (["get", "k"], ["get", "k", "--store", "operator"], ["list", "--tag", "t1"]):
        out = subprocess.run([sys.executable, "-c", code, *args, ",".join(heavy)], capture_output=True, text=True,
                             env=_env())
        assert out.stdout.strip().endswith("LOADED []"), (args, out.stdout, out.stderr)
        assert "value one" in out.stdout or "operator value" in out.stdout or "list" in args, out.stdout


@pytest.mark.slow
def test_the_reads_load_neither_re_nor_pathlib(root, run):
    """Every read (the brief and start too) runs on ``str`` paths and string methods: re,
    pathlib (with urllib.parse and ipaddress), enum and contextlib cost a process ~8 ms to
    import, a third of a `ctx get` at 10,000 entries; times and days are counted in seconds
    and day numbers (datetime, with math and operator: ~2.5 ms) until something is due."""
    _fill(run)
    assert run("list").exit_code == 0  # the index is built
    heavy = tuple(m for m in ("re", "pathlib", "urllib.parse", "enum", "contextlib", "json", "datetime")
                  if m not in _at_start())
    code = ("import sys; sys.argv = ['ctx'] + sys.argv[1:]\n"
            "from ctx.cli import console\n"
            f"import atexit; atexit.register(lambda: print('LOADED', [m for m in {heavy!r} if m in sys.modules]))\n"
            "console()")
    for args in (["get", "k"], ["list", "--tag", "t1"], ["search", "value"], ["list"], ["brief"], ["start"]):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=_env())
        assert out.stdout.strip().endswith("LOADED []"), (args, out.stdout, out.stderr)


@pytest.mark.slow
def test_a_clean_write_loads_neither_json_nor_re(root, run):
    """A write decodes and encodes its entry with ctx.jsoncodec, and the credential check
    compiles no expression for a value with nothing that could be one: json and re cost a
    process ~8 ms to import, a tenth of a write at 10,000 entries."""
    _fill(run)
    heavy = ("re", "json", "pathlib", "enum", "contextlib")
    code = ("import sys; sys.argv = ['ctx'] + sys.argv[1:]\n"
            "from ctx.cli import console\n"
            f"import atexit; atexit.register(lambda: print('LOADED', [m for m in {heavy!r} if m in sys.modules]))\n"
            "console()")
    letter = " ".join(["token budget decision session replica"] * 100)  # keywords, no assignment
    for args in (["set", "k", "an updated value"], ["set", "newkey_1", "a new value", "--tag", "t1"],
                 ["amend", "k", "a note"], ["set", "letter_1796196422_1", letter], ["set", "key_2", "the 00 of it"]):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=_env())
        assert out.returncode == 0 and out.stdout.strip().endswith("LOADED []"), (args, out.stdout, out.stderr)
    assert "an updated value" in run("get", "k").stdout and "a note" in run("get", "k").stdout
    assert run("get", "key_2").stdout.startswith("shared/key_2\nthe 00 of it\n")


def _wait_until_it_opens(pid: int, path: Path, timeout: float = 30.0) -> None:
    """Until process ``pid`` holds ``path`` open (it waits for the lock then): a fixed
    sleep let the interrupt land while a loaded machine was still starting the process."""
    import os
    import time
    fds = Path(f"/proc/{pid}/fd")
    if not fds.is_dir():
        time.sleep(1.0)  # no /proc: give it a second
        return
    deadline = time.monotonic() + timeout
    wanted = os.path.realpath(path)
    while time.monotonic() < deadline:
        try:
            if any(os.readlink(fd) == wanted for fd in fds.iterdir()):
                return
        except OSError:
            pass  # a descriptor closed while it was read
        time.sleep(0.01)
    raise AssertionError(f"process {pid} never opened {path}")


@pytest.mark.slow
@pytest.mark.parametrize("door", ["fast", "click"])
def test_ctrl_c_exits_130_through_both_doors(root, run, door):
    """A write waiting for the lock is interrupted: one line, exit 130, nothing written."""
    import fcntl
    import os
    import signal
    assert run("set", "k", "v").exit_code == 0
    env = {**_env(), "CTX_HOME": str(root), "CTX_LOCK_TIMEOUT": "60"}
    if door == "click":
        env["CTX_SLOW_PATH"] = "1"
    with open(root / "memory" / ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        # SIGINT as a terminal gives it: a suite started in the background (`pytest &`) has
        # SIGINT ignored, and a process inherits that
        child = subprocess.Popen([CTX, "set", "k", "changed"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        _wait_until_it_opens(child.pid, root / "memory" / ".lock")  # started, and waiting for the lock
        os.kill(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=30)
    assert child.returncode == 130, (out, err)
    assert err.strip().splitlines()[-1] == "ctx: interrupted"
    assert run("get", "k").stdout.startswith("shared/k\nv\n")


@settings(max_examples=300, deadline=None)
@given(st.text("-0123456789٣²a", max_size=4))
def test_a_negative_number_is_what_its_expression_said(token):
    """``-5`` is a word: the check without an expression says what ``^-\\d`` said."""
    from ctx.cli.words import negative_number
    assert negative_number(token) == bool(re.match(r"^-\d", token))


def test_the_tests_run_fixture_drives_the_fast_door(run, monkeypatch):
    """The suite's `run` is the door agents use: the everyday commands never reach click's
    door (made to fail here), and what the fast parser leaves to click still gets there."""
    import ctx.cli.app

    def no_click(args=None):
        raise AssertionError("click's door")
    monkeypatch.setattr(ctx.cli.app, "main", no_click)
    for args in (("set", "k", "one"), ("get", "k"), ("list",), ("search", "one"), ("brief",), ("start",)):
        result = run(*args)
        assert result.exit_code == 0, (args, result.output, result.exception)
    assert "one" in run("get", "k").stdout
    sent = run("get", "--help")  # help is click's
    assert isinstance(sent.exception, AssertionError) and "click's door" in str(sent.exception)
