"""ctx/settings.py: every CTX_* variable declared once, parsed one way per kind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st

from ctx import settings
from ctx.errors import InvalidArgument
from support.contexts import Context

REPO = Path(__file__).resolve().parents[2]
NAME = re.compile(r"\bCTX_[A-Z][A-Z0-9_]*")
# a CTX_ name read straight from the environment, not through ctx/settings.py
DIRECT_READ = re.compile(r"""(?:environ\s*(?:\.get\s*\(|\[)|getenv\s*\()\s*["'](CTX_[A-Z0-9_]+)""")


def _sources():
    for package in ("ctx", "ctxgit", "hooks"):
        for path in sorted((REPO / package).rglob("*.py")):
            yield path.relative_to(REPO).as_posix(), path.read_text(encoding="utf-8")


# --- every name is declared, and read only here ------------------------------------

def test_every_ctx_name_in_the_source_is_declared():
    undeclared = {f"{name} ({where})" for where, text in _sources() for name in NAME.findall(text)
                  if name not in settings.VARIABLES}
    assert not undeclared, "declare these in ctx/settings.py: " + ", ".join(sorted(undeclared))


# what the front door (ctx/cli/) still reads itself, until it moves to settings.flag(); then: set()
FRONT_DOOR_PENDING: set[str] = set()


def test_only_settings_reads_ctx_names_from_the_environment():
    direct = {(where, name) for where, text in _sources() if where != "ctx/settings.py"
              for name in DIRECT_READ.findall(text)
              if not (where.startswith("ctx/cli/") and name in FRONT_DOOR_PENDING)}
    assert not direct, sorted(direct)


def test_the_direct_read_pattern_finds_reads():
    source = 'a = os.environ.get("CTX_X")\nb = os.environ["CTX_Y"]\nc = os.getenv( "CTX_Z", "1")\n'
    assert DIRECT_READ.findall(source) == ["CTX_X", "CTX_Y", "CTX_Z"]


def test_importing_settings_loads_nothing_but_the_errors():
    code = ("import sys; before = set(sys.modules); import ctx.settings; "
            "print(' '.join(sorted(set(sys.modules) - before)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # __future__: every module's `from __future__ import annotations` loads it (a stdlib module
    # of constants; an editable install's import finder used to have loaded it already)
    assert done.stdout.split() == ["__future__", "ctx", "ctx.errors", "ctx.settings"]


def test_describe_lists_every_variable_with_its_default():
    lines = settings.describe().splitlines()
    assert [line.split()[0] for line in lines] == list(settings.VARIABLES)
    table = dict(line.split(None, 1) for line in lines)
    assert table["CTX_LOCK_TIMEOUT"].startswith("60 s ")
    assert table["CTX_PACK_THRESHOLD"].startswith("32 MiB ")
    assert table["CTX_HOME"].startswith("~/ctx ")
    assert table["CTX_AUTHOR"].startswith("unset ")
    assert table["CTX_NO_GIT"].startswith("off ")
    assert table["CTX_GIT_TRANSPORT"].startswith("git ")


def test_an_undeclared_name_is_a_bug_not_a_default():
    with pytest.raises(KeyError):
        settings.flag("CTX_NO_SUCH_THING")
    with pytest.raises(KeyError):
        settings.seconds("CTX_NO_GIT")  # declared, but as a flag


# --- each variable: default, a valid value, blank, a bad value ----------------------

BLANKS = ("", "   ", "\t\n")

SECONDS = [("CTX_LOCK_TIMEOUT", lambda env=None: settings.seconds("CTX_LOCK_TIMEOUT", env), 60.0),
           ("CTX_GIT_RETRY_SECONDS", lambda env=None: settings.seconds("CTX_GIT_RETRY_SECONDS", env), 10.0),
           ("CTX_REMOTE_WAIT_SECONDS", lambda env=None: settings.seconds("CTX_REMOTE_WAIT_SECONDS", env), 90.0),
           ("CTX_REMOTE_TIMEOUT", lambda env=None: settings.seconds("CTX_REMOTE_TIMEOUT", env), 60.0)]


@pytest.mark.parametrize("name, read, default", SECONDS)
def test_seconds(monkeypatch, name, read, default):
    monkeypatch.delenv(name, raising=False)
    assert read() == default
    for blank in BLANKS:
        assert read({name: blank}) == default
    assert read({name: "0.5"}) == 0.5
    assert read({name: " 2 "}) == 2.0
    assert read({name: "0"}) == 0.0
    monkeypatch.setenv(name, "3")  # read at each call
    assert read() == 3.0
    monkeypatch.setenv(name, "4")
    assert read() == 4.0


@pytest.mark.parametrize("name, read, default", SECONDS)
@pytest.mark.parametrize("bad", ["abc", "-1", "nan", "inf", "10s", "1,5"])
def test_seconds_refuses_a_bad_value_in_one_line(name, read, default, bad):
    with pytest.raises(InvalidArgument) as caught:
        read({name: bad})
    assert str(caught.value) == f"{name}={bad!r} is not a number of seconds (the default is {default:g})"


def test_the_lock_timeout_message():
    with pytest.raises(InvalidArgument, match=r"^CTX_LOCK_TIMEOUT='abc' is not a number of seconds "
                                              r"\(the default is 60\)$"):
        settings.seconds("CTX_LOCK_TIMEOUT", {"CTX_LOCK_TIMEOUT": "abc"})


def test_pack_threshold(monkeypatch):
    monkeypatch.delenv("CTX_PACK_THRESHOLD", raising=False)
    assert settings.byte_count("CTX_PACK_THRESHOLD") == 32 * 1024 * 1024
    for blank in BLANKS:
        assert settings.byte_count("CTX_PACK_THRESHOLD", {"CTX_PACK_THRESHOLD": blank}) == 32 * 1024 * 1024
    assert settings.byte_count("CTX_PACK_THRESHOLD", {"CTX_PACK_THRESHOLD": "1"}) == 1
    assert settings.byte_count("CTX_PACK_THRESHOLD", {"CTX_PACK_THRESHOLD": "0"}) == 0
    for bad in ("lots", "1.5", "-1", "32M"):
        with pytest.raises(InvalidArgument) as caught:
            settings.byte_count("CTX_PACK_THRESHOLD", {"CTX_PACK_THRESHOLD": bad})
        assert str(caught.value) == (f"CTX_PACK_THRESHOLD={bad!r} is not a whole number of bytes "
                                     "(the default is 33554432)")


def test_git_transport(monkeypatch):
    monkeypatch.delenv("CTX_GIT_TRANSPORT", raising=False)
    assert settings.choice("CTX_GIT_TRANSPORT") == "git"
    for blank in BLANKS:
        assert settings.choice("CTX_GIT_TRANSPORT", {"CTX_GIT_TRANSPORT": blank}) == "git"
    assert settings.choice("CTX_GIT_TRANSPORT", {"CTX_GIT_TRANSPORT": "libgit2"}) == "libgit2"
    assert settings.choice("CTX_GIT_TRANSPORT", {"CTX_GIT_TRANSPORT": " LibGit2 "}) == "libgit2"
    assert settings.choice("CTX_GIT_TRANSPORT", {"CTX_GIT_TRANSPORT": "git"}) == "git"
    with pytest.raises(InvalidArgument) as caught:
        settings.choice("CTX_GIT_TRANSPORT", {"CTX_GIT_TRANSPORT": "ssh"})
    assert str(caught.value) == "CTX_GIT_TRANSPORT='ssh' is not one of git, libgit2 (the default is git)"


@examples(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["/", "//", ".", "..", "a", "b c", "é", "./", "../", "x/"]), max_size=8).map("".join))
def test_a_path_is_made_absolute_as_pathlib_makes_it(raw):
    """CTX_HOME as ``Path(raw).absolute()`` made it, without pathlib: ".." kept."""
    assert settings.absolute(raw or ".") == str(Path(raw or ".").absolute())


def test_home(monkeypatch, tmp_path):
    home = Path(os.environ["HOME"])
    monkeypatch.delenv("CTX_HOME")
    assert settings.home() == str(home / "ctx")
    for blank in BLANKS:
        assert settings.home({"CTX_HOME": blank}) == str(home / "ctx")
    assert settings.home({"CTX_HOME": " ~/elsewhere "}) == str(home / "elsewhere")
    assert settings.home({"CTX_HOME": str(tmp_path / "a b")}) == str(tmp_path / "a b")
    monkeypatch.chdir(tmp_path)
    assert settings.home({"CTX_HOME": "relative"}) == str(tmp_path / "relative")  # made absolute
    assert settings.home({"CTX_HOME": "relative/./x//"}) == str(tmp_path / "relative" / "x")
    assert settings.home({"CTX_HOME": "a/../b"}) == str(tmp_path / "a" / ".." / "b")  # (a may be a link)


@pytest.mark.parametrize("name, read", [("CTX_AUTHOR", settings.author),
                                        ("CTX_AUTHOR_EMAIL", lambda env=None: settings.text("CTX_AUTHOR_EMAIL", env))])
def test_text(monkeypatch, name, read):
    monkeypatch.delenv(name, raising=False)
    assert read() is None
    for blank in BLANKS:
        assert read({name: blank}) is None
    assert read({name: "  Agent One \t"}) == "Agent One"
    monkeypatch.setenv(name, "x@example.org")
    assert read() == "x@example.org"


def test_harness_is_declared_for_the_launcher_script():
    assert settings.text("CTX_HARNESS", {}) == "claude"
    assert settings.text("CTX_HARNESS", {"CTX_HARNESS": " codex "}) == "codex"


FLAGS = ["CTX_NO_GIT", "CTX_NO_CACHE", "CTX_GIT_SLOW", "CTX_DEBUG", "CTX_SLOW_PATH"]


@pytest.mark.parametrize("name", FLAGS)
def test_flags_are_never_bad(monkeypatch, name):
    monkeypatch.delenv(name, raising=False)
    assert settings.flag(name) is False
    for off in (*BLANKS, "0", " 0 ", "false", "No", "OFF"):
        assert settings.flag(name, {name: off}) is False, off
    for on in ("1", "true", "yes", "on", "anything"):
        assert settings.flag(name, {name: on}) is True, on
    monkeypatch.setenv(name, "1")
    assert settings.flag(name) is True


@pytest.mark.parametrize("name,unit", [("CTX_CONTEXT_WINDOW_CHARS", "characters"),
                                       ("CTX_CONTEXT_WINDOW_TOKENS", "tokens")])
def test_context_window_counts(name, unit):
    assert settings.count(name, {}) is None
    assert settings.count(name, {name: "  "}) is None
    assert settings.count(name, {name: " 200000 "}) == 200000
    for bad in ("-1", "1e6", "lots", "12.5"):
        with pytest.raises(InvalidArgument, match=f"{name}='{re.escape(bad)}' is not a whole number of {unit}"):
            settings.count(name, {name: bad})


def test_the_declared_kinds_match_the_tests():
    tested = {n for n, _, _ in SECONDS} | set(FLAGS) | {
        "CTX_PACK_THRESHOLD", "CTX_GIT_TRANSPORT", "CTX_HOME", "CTX_AUTHOR", "CTX_AUTHOR_EMAIL", "CTX_HARNESS",
        "CTX_CONTEXT_WINDOW_CHARS", "CTX_CONTEXT_WINDOW_TOKENS", "CTX_PHASES"}  # CTX_PHASES: test_phases.py
    assert tested == set(settings.VARIABLES)  # a new variable needs its test here


# --- where they are read -----------------------------------------------------------

def test_a_bad_lock_timeout_stops_a_write_before_it_changes_anything(monkeypatch, root):
    Context().set("k", "v")
    before = (root / "memory" / "shared.json").read_bytes()
    monkeypatch.setenv("CTX_LOCK_TIMEOUT", "soon")
    with pytest.raises(InvalidArgument, match="CTX_LOCK_TIMEOUT='soon'"):
        Context().set("k", "w")
    assert (root / "memory" / "shared.json").read_bytes() == before


def test_context_reads_home_author_and_no_cache_at_construction(monkeypatch, tmp_path):
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "other"))
    monkeypatch.setenv("CTX_AUTHOR", "  Agent Two ")
    monkeypatch.setenv("CTX_NO_CACHE", "1")
    context = Context()
    assert (context.root, context.author, context.cache_mode) == (tmp_path / "other", "Agent Two", "off")
    monkeypatch.setenv("CTX_NO_CACHE", "0")
    monkeypatch.setenv("CTX_AUTHOR", " ")
    context = Context()
    assert (context.author, context.cache_mode) == (None, "update")


def test_a_bad_git_setting_stops_a_write_before_the_store_changes(monkeypatch, root):
    from ctxgit.recorder import GitRecorder
    Context(recorder_factory=GitRecorder).set("k", "v")
    before = (root / "memory" / "shared.json").read_bytes()
    for name in ("CTX_PACK_THRESHOLD", "CTX_GIT_RETRY_SECONDS"):
        monkeypatch.setenv(name, "bad")
        with pytest.raises(InvalidArgument, match=f"^{name}='bad'"):
            Context(recorder_factory=GitRecorder).set("k", "w")
        assert (root / "memory" / "shared.json").read_bytes() == before
        monkeypatch.delenv(name)
