"""The trailers ctx writes at the end of each commit message (``Ctx-Operation``,
``Ctx-Store``, ``Ctx-Key``, ``Ctx-Status``), read back: one reader for every
tool that looks at the history (``ctxgit.recorder.message_for`` writes them)."""

from __future__ import annotations

_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-")


def trailers(message: str) -> dict[str, list[str]]:
    """Each ``Ctx-*`` trailer of a commit message, with its values in order: a line
    ``Ctx-NAME: value`` (NAME of ASCII letters and dashes; the space after the colon may be
    left out). String methods, not an expression: the brief reads every new commit's
    trailers, and imports no re (test_fastcli.py: test_the_reads_load_neither_re_nor_pathlib)."""
    found: dict[str, list[str]] = {}
    for line in message.split("\n"):
        if not line.startswith("Ctx-"):
            continue
        name, colon, value = line.partition(":")
        if colon and len(name) > 4 and _NAME_CHARS.issuperset(name):
            found.setdefault(name, []).append(value.strip())
    return found


def names_blanked(message: str) -> str:
    """The message with each ``Ctx-*`` trailer's name and colon turned into spaces (lines and
    columns kept), for the credential scan of ``ctx scan --history``: ``Ctx-Key: app-v2:ports``
    is ctx naming an entry, not a ``key: <token>`` assignment, while a key that is itself a
    token is still found by its provider's rule
    (tests/hooks/test_hooks.py::test_scan_history_does_not_take_ctx_key_trailers_for_api_keys)."""
    lines = message.split("\n")
    for number, line in enumerate(lines):
        name, colon, _ = line.partition(":")
        if line.startswith("Ctx-") and colon and len(name) > 4 and _NAME_CHARS.issuperset(name):
            lines[number] = " " * (len(name) + 1) + line[len(name) + 1:]
    return "\n".join(lines)
