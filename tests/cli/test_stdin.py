"""Standard input is read in one place (``Run.stdin``): bytes that are not UTF-8 are exit 2
with one line naming the first bad byte, and nothing is written, for every command that
reads stdin, through the installed executable and through click's door alike."""

from __future__ import annotations

import subprocess

import pytest

from support.gitutil import CTX_EXE, commit_count, merged_env, run_ctx

SUMMARY = b"## Done\n- the upload fix \xe2\x80\x94 caf\xc3\xa9\n## Decisions\n- none\n## Open\n- a\n"
NOT_UTF8 = SUMMARY.replace(b"caf\xc3\xa9", b"caf\xe9")  # Latin-1's e-acute
BAD_AT = NOT_UTF8.index(b"\xe9")


def ctx_bytes(*args: str, stdin: bytes) -> subprocess.CompletedProcess:
    return subprocess.run([str(CTX_EXE), *args], input=stdin, capture_output=True, timeout=60,
                          env=merged_env({"CTX_AUTHOR": "Agent One"}))


@pytest.fixture
def started(root):
    done = run_ctx("set", "k", "v", env={"CTX_AUTHOR": "Agent One"})
    assert done.returncode == 0, done.stderr
    return root


def assert_refused(done, root, commits: int) -> None:
    stderr = done.stderr.decode() if isinstance(done.stderr, bytes) else done.stderr
    assert done.returncode == 2, (done.returncode, stderr)
    assert stderr.splitlines() == [f"ctx: standard input is not UTF-8 text (byte {BAD_AT})"], stderr
    assert "internal error" not in stderr
    assert commit_count(root) == commits
    assert not list((root / "sessions").glob("*.md"))


def test_summary_new_refuses_stdin_that_is_not_utf8(started):
    before = commit_count(started)
    assert_refused(ctx_bytes("summary", "new", "--from-stdin", stdin=NOT_UTF8), started, before)
    done = ctx_bytes("summary", "new", "--from-stdin", stdin=SUMMARY)  # the same text in UTF-8 is taken
    assert done.returncode == 0, done.stderr
    [written] = (started / "sessions").glob("*.md")
    assert "caf\u00e9" in written.read_text(encoding="utf-8")


def test_import_from_stdin_refuses_bytes_that_are_not_utf8(started):
    export = run_ctx("export", env={"CTX_AUTHOR": "Agent One"})
    assert export.returncode == 0, export.stderr
    raw = export.stdout.encode().replace(b'"v"', b'"caf\xe9"')
    bad_at = raw.index(b"\xe9")
    before = commit_count(started)
    done = ctx_bytes("import", "-", stdin=raw)
    assert done.returncode == 2, done.stderr
    assert done.stderr.decode().splitlines() == [f"ctx: standard input is not UTF-8 text (byte {bad_at})"]
    assert commit_count(started) == before


def test_click_door_reads_stdin_through_the_same_helper(run, started):
    before = commit_count(started)
    result = run("summary", "new", "--from-stdin", author="Agent One", input=NOT_UTF8)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stderr.splitlines() == [f"ctx: standard input is not UTF-8 text (byte {BAD_AT})"]
    assert commit_count(started) == before
