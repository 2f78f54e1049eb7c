"""Comments and docstrings in the product state a constraint and name the test that holds it;
they do not quote a timing ("costs ~3 ms"), which is true of one machine on one day and was
copied from module to module. Figures belong to bench/ (its scripts print them) and
docs/performance.md."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# a measured duration: "~3 ms", "1.5 ms", "5-10 ms", "0.3 µs", "~0.15 s at", "2 seconds of"
TIMING = re.compile(r"\d[\d.,]*\s?(?:-\s?\d[\d.,]*\s?)?(?:ms|µs|us|milliseconds|microseconds)\b"
                    r"|~\s?\d[\d.,]*\s?s\b"
                    r"|\d[\d.,]*\s?(?:s|seconds) (?:of|at|per|to|faster|slower|more|less|instead)\b")


def _product_files() -> list[Path]:
    files = [p for top in ("ctx", "ctxgit", "hooks") for p in sorted((ROOT / top).rglob("*.py"))]
    return [*files, ROOT / "bin" / "ctx"]


def _prose(path: Path) -> list[tuple[int, str]]:
    """Each line of a comment or a docstring-like string (triple-quoted) in ``path``."""
    lines: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        text = token.string
        if token.type == tokenize.COMMENT or (token.type == tokenize.STRING
                                              and text.lstrip("rbuRBUfF").startswith(('"""', "'''"))):
            lines.extend((token.start[0] + i, line) for i, line in enumerate(text.splitlines()))
    return lines


def test_the_pattern_finds_what_it_is_for():
    for said in ("importing it costs ~3 ms at every start", "5-10 ms measured on 2 cores", "(~0.15 s at 10,000",
                 "0.5 µs a row", "2 seconds of a write", "~1.5 ms instead of ~60"):
        assert TIMING.search(said), said
    for said in ("a timeout of 15 seconds", "HOOK_TIMEOUT = 15  # seconds", "the 1.5 MB bound", "3 entries",
                 "msg", "items", "1,500 characters"):
        assert not TIMING.search(said), said


def test_no_comment_quotes_a_timing():
    quoted = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
              for path in _product_files() for n, line in _prose(path) if TIMING.search(line)]
    assert not quoted, "a comment states the constraint and names its test, not a timing:\n" + "\n".join(quoted)
